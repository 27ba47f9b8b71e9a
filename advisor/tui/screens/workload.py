"""Step 2: what runs. Mode, model, sequence lengths, batch and packing, precision,
parallelism, GPU count and token budget, each validated inline as it is typed;
cross-field rules come from the engine's `Workload` and show beside Next."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_args

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.validation import Integer
from textual.widgets import Checkbox, Input, Label, Select, Static

from advisor.core.model.presets import PRESETS
from advisor.core.model.workload import TRAINING_MODES, Precision
from advisor.tui.forms import (
    CUSTOM,
    FORM_DEFAULTS,
    build_workload,
    format_count,
    format_seq_lens,
    hidden_settings,
    packs,
    parse_budget,
    parse_seq_lens,
)
from advisor.tui.screens.base import StepScreen
from advisor.tui.widgets.field import FormField, Parsed, sync_input

MODES = (("Pre-training", "pretrain"), ("Fine-tuning (full)", "finetune"),
         ("LoRA fine-tuning", "lora"), ("Inference: prefill", "prefill"),
         ("Inference: decode", "decode"))
SHARDING = (("DDP: no sharding", 0), ("ZeRO-1: optimizer", 1), ("ZeRO-2: + gradients", 2),
            ("FSDP / ZeRO-3", 3))
DIMS = (("layers", "layers", 1, 1024), ("hidden", "hidden size", 64, 65536),
        ("heads", "attention heads", 1, 1024), ("kv_heads", "KV heads", 1, 1024),
        ("ffn", "FFN size", 64, 262144), ("vocab", "vocabulary", 256, 1_048_576))
PARSERS: dict[str, Callable[[str], object]] = {"seq_lens": parse_seq_lens,
                                               "token_budget": parse_budget}


def _int_input(key: str, value: int, low: int, high: int) -> Input:
    return Input(str(value), id=key, type="integer", compact=True,
                 validators=[Integer(minimum=low, maximum=high)])


def _select(key: str, options: Any, value: Any) -> Select[Any]:
    return Select(options, value=value, id=key, allow_blank=False, compact=True)


class WorkloadScreen(StepScreen):
    STEP = 1

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for key, value in FORM_DEFAULTS.items():
            self.state.workload.setdefault(key, value)

    def compose_body(self) -> ComposeResult:
        w = self.state.workload
        models = [(f"{name} ({spec.params_total / 1e9:.1f}B)", name)
                  for name, spec in PRESETS.items()] + [("custom dimensions", CUSTOM)]
        with Horizontal(id="form"):
            with Vertical(id="form-model"):
                yield Label("[b]Model[/b]", classes="prompt")
                yield FormField("mode", _select("mode", MODES, w["mode"]))
                yield FormField("model", _select("preset", models, w["preset"]))
                yield Static("", id="model-info", markup=True)
                yield Vertical(id="dims")
            with Vertical(id="form-run"):
                yield Label("[b]Run[/b]", classes="prompt")
                yield FormField("seq lengths", Input(
                    format_seq_lens(w["seq_lens"]), id="seq_lens", compact=True,
                    validators=[Parsed(parse_seq_lens)]), note="to sweep, e.g. 4k, 32k")
                yield FormField("micro-batch", _int_input("micro_batch", w["micro_batch"], 1, 4096),
                                note="sequences per GPU")
                yield FormField("packing", Checkbox("documents packed, doc mask", w["packing"],
                                                    id="packing", compact=True), id="f-packing")
                yield FormField("mean doc len", _int_input("doc_len", w["doc_len"], 1, 10**7),
                                note="tokens per packed document", id="f-doc_len")
                yield FormField("precision", _select("precision",
                                                     [(p, p) for p in get_args(Precision)],
                                                     w["precision"]))
                yield FormField("sharding", _select("zero_stage", SHARDING, w["zero_stage"]),
                                id="f-zero_stage")
                yield FormField("tensor parallel", _int_input("tp", w["tp"], 1, 1024),
                                note="GPUs per TP group")
                yield FormField("recompute", Checkbox("activation checkpointing",
                                                      w["checkpointing"], id="checkpointing",
                                                      compact=True), id="f-checkpointing")
                yield FormField("GPUs", _int_input("gpus", w["gpus"], 1, 100000),
                                note="how many run the job")
                yield FormField("token budget", Input(
                    format_count(w["token_budget"]), id="token_budget", compact=True,
                    placeholder="none", valid_empty=True, validators=[Parsed(parse_budget)]),
                    note="to train or serve, e.g. 300B")
                kept = self._kept()
                if kept:
                    yield Static(kept, id="kept", markup=True)

    def on_mount(self) -> None:
        self._show_optional()
        self.query_one("#mode").focus()

    def refresh_view(self) -> None:
        """The configurations step edits the token budget too."""
        sync_input(self.query_one("#token_budget", Input), self.state.workload["token_budget"],
                   parse_budget, format_count)
        super().refresh_view()

    def _kept(self) -> str:
        """What a resumed report sets that this form has no field for: kept as it was."""
        loaded = self.state.loaded
        kept = hidden_settings(loaded.workload) if loaded is not None else []
        return f"[dim]also from the report (no field here): {', '.join(kept)}[/]" if kept else ""

    def _dim_fields(self) -> list[FormField]:
        w = self.state.workload
        return [FormField(label, _int_input(key, w[key], low, high), note=f"{low:,}–{high:,}",
                          id=f"f-{key}") for key, label, low, high in DIMS]

    def _show_optional(self) -> None:
        """Custom dimensions are mounted only when chosen: six rows fewer to build per visit."""
        custom = self.state.workload["preset"] == CUSTOM
        dims = self.query_one("#dims", Vertical)
        if custom and not dims.children:
            dims.mount_all(self._dim_fields())
        elif not custom and dims.children:
            dims.remove_children()
        w = self.state.workload
        training = w["mode"] in TRAINING_MODES
        for field in ("#f-zero_stage", "#f-checkpointing"):
            self.query_one(field).display = training
        self.query_one("#f-packing").display = packs(w["mode"])
        self.query_one("#f-doc_len").display = bool(w["packing"]) and packs(w["mode"])
        info = self.query_one("#model-info", Static)
        info.display = not custom
        if not custom:
            m = PRESETS[self.state.workload["preset"]]
            moe = f", MoE {m.active_experts}/{m.experts} experts" if m.experts else ""
            info.update(f"[dim]{m.params_total / 1e9:.1f}B params, {m.layers} layers, hidden "
                        f"{m.hidden}, {m.heads} heads / {m.kv_heads} KV{moe}[/]")

    @on(Select.Changed)
    def _select(self, event: Select.Changed) -> None:
        if event.select.id and event.value is not Select.NULL:
            self.state.workload[event.select.id] = event.value
        self._show_optional()
        self.refresh_nav()

    @on(Checkbox.Changed)
    def _checked(self, event: Checkbox.Changed) -> None:
        if event.checkbox.id:
            self.state.workload[event.checkbox.id] = event.value
        self._show_optional()
        self.refresh_nav()

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        key = event.input.id
        if key and event.validation_result and event.validation_result.is_valid:
            self.state.workload[key] = PARSERS.get(key, int)(event.value)
        self.refresh_nav()

    def ready(self) -> tuple[bool, str]:
        bad = [f for f in self.query(FormField) if f.display and f.has_class("-invalid")]
        if bad:
            return False, f"fix {bad[0].label} first"
        try:
            wl = build_workload(self.state.workload)
        except ValueError as exc:
            return False, str(exc)
        return True, (f"{wl.model.name}: {wl.model.params_total / 1e9:.1f}B params on "
                      f"{wl.gpus} GPUs, {wl.precision}")
