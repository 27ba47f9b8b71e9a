"""Step 2: what runs. Mode, model, sequence lengths, batch and packing, precision,
parallelism, GPU count and token budget, each validated inline as it is typed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.validation import Integer
from textual.widgets import Checkbox, Input, Label, Select

from advisor.core.gates.dtype import PRECISIONS
from advisor.tui.forms import format_count, format_seq_lens, parse_count, parse_seq_lens
from advisor.tui.screens.base import StepScreen
from advisor.tui.widgets.field import FormField, Parsed

MODES = (("Pre-training", "pretrain"), ("Fine-tuning", "finetune"), ("Inference", "inference"))
PARALLELISM = (("DDP (full replica per GPU)", "ddp"), ("ZeRO-1 / sharded optimizer", "zero1"),
               ("ZeRO-2 / + sharded grads", "zero2"), ("FSDP / ZeRO-3", "fsdp"))
RECIPES = tuple((p, p) for p in ("bf16", "fp16", "fp8", "mxfp8", "nvfp4", "mxfp4", "fp32")
                if p in PRECISIONS)
DIMS = (("layers", "layers", 1, 1024), ("hidden", "hidden size", 64, 65536),
        ("heads", "attention heads", 1, 1024), ("kv_heads", "KV heads", 1, 1024),
        ("ffn", "FFN size", 64, 262144), ("vocab", "vocabulary", 256, 1_048_576))
PARSERS: dict[str, Callable[[str], object]] = {"seq_lens": parse_seq_lens,
                                               "token_budget": parse_count}
CUSTOM = "custom"
DEFAULTS: dict[str, Any] = {
    "mode": "pretrain", "preset": CUSTOM, "layers": 32, "hidden": 4096, "heads": 32,
    "kv_heads": 8, "ffn": 14336, "vocab": 128256, "seq_lens": (4096, 8192),
    "micro_batch": 1, "packing": False, "precision": "bf16", "parallelism": "fsdp",
    "gpus": 8, "token_budget": 100 * 10**9,
}


def _int_input(key: str, value: int, low: int, high: int) -> Input:
    return Input(str(value), id=key, type="integer", compact=True,
                 validators=[Integer(minimum=low, maximum=high)])


class WorkloadScreen(StepScreen):
    STEP = 1

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for key, value in DEFAULTS.items():
            self.state.workload.setdefault(key, value)

    def compose_body(self) -> ComposeResult:
        w = self.state.workload
        with Horizontal(id="form"):
            with Vertical(id="form-model"):
                yield Label("[b]Model[/b]", classes="prompt")
                yield FormField("mode", Select(MODES, value=w["mode"], id="mode",
                                               allow_blank=False, compact=True))
                yield FormField("model", Select(self._preset_options(), value=w["preset"],
                                                id="preset", allow_blank=False, compact=True))
                for key, label, low, high in DIMS:
                    yield FormField(label, _int_input(key, w[key], low, high),
                                    note=f"{low:,}–{high:,}", id=f"f-{key}")
            with Vertical(id="form-run"):
                yield Label("[b]Run[/b]", classes="prompt")
                yield FormField("seq lengths", Input(
                    format_seq_lens(w["seq_lens"]), id="seq_lens", compact=True,
                    validators=[Parsed(parse_seq_lens)]), note="to sweep, e.g. 4k, 32k")
                yield FormField("micro-batch", _int_input("micro_batch", w["micro_batch"], 1, 4096),
                                note="sequences per GPU per step")
                yield FormField("packing", Checkbox("documents packed per sequence",
                                                    w["packing"], id="packing", compact=True))
                yield FormField("precision", Select(RECIPES, value=w["precision"],
                                                    id="precision", allow_blank=False,
                                                    compact=True))
                yield FormField("parallelism", Select(PARALLELISM, value=w["parallelism"],
                                                      id="parallelism", allow_blank=False,
                                                      compact=True))
                yield FormField("GPUs", _int_input("gpus", w["gpus"], 1, 100000),
                                note="how many run the job")
                yield FormField("token budget", Input(
                    format_count(w["token_budget"]), id="token_budget", compact=True,
                    validators=[Parsed(parse_count)]), note="tokens to process, e.g. 300B")

    def _preset_options(self) -> list[tuple[str, str]]:
        return [("custom dimensions", CUSTOM)]

    def on_mount(self) -> None:
        self._show_dims()
        self.query_one("#mode").focus()
        super().on_mount()

    def _show_dims(self) -> None:
        custom = self.state.workload["preset"] == CUSTOM
        for key, *_ in DIMS:
            self.query_one(f"#f-{key}").display = custom

    @on(Select.Changed)
    def _select(self, event: Select.Changed) -> None:
        if event.select.id and event.value is not Select.NULL:
            self.state.workload[event.select.id] = event.value
        if event.select.id == "preset":
            self._show_dims()
        self.refresh_nav()

    @on(Checkbox.Changed, "#packing")
    def _packing(self, event: Checkbox.Changed) -> None:
        self.state.workload["packing"] = event.value
        self.refresh_nav()

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        key = event.input.id
        if key and event.validation_result and event.validation_result.is_valid:
            parse: Callable[[str], object] = PARSERS.get(key, int)
            self.state.workload[key] = parse(event.value)
        self.refresh_nav()

    def ready(self) -> tuple[bool, str]:
        bad = [f for f in self.query(FormField) if f.display and f.has_class("-invalid")]
        if bad:
            return False, f"fix {bad[0].label} first"
        w = self.state.workload
        return True, f"{w['gpus']} GPUs, {w['precision']}, {format_seq_lens(w['seq_lens'])}"
