"""Step 2: what runs. The common path on top: mode, model (a preset, or custom dimensions
with the MLP kind and the parameter count as you type), sequence lengths, GPUs, precision,
token budget, micro-batch, TP/PP/EP and the framework; for serving the output length, KV
format, requests in flight, the engine and the latency limits, with their units. Below:
what your job measures today (the anchor, optional), and an "Advanced" group with the rest
of the layout as you run it (global batch, sharding, recompute, optimizer, offload, fused
kernels, VP, CP, nodes, packing), the attention kernel and the NIC.

A field left blank is not an answer: the engine's default applies, and the row says which
value that is and where it comes from, beside the layout the engine re-tunes to on the
current GPU. Cross-field rules are the engine's own (`Workload`), shown beside Next.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.markup import escape
from textual.message import Message
from textual.widgets import Collapsible, Input, Label, Select, Static

from advisor.tui.fields import (
    DIMS,
    FIELDS,
    MLP_KIND,
    PLACEHOLDER,
    SERVING,
    UP_FRONT,
    FieldDef,
    choice_label,
    core_default,
    field_for,
    is_required,
    show_value,
)
from advisor.tui.fields import any_field_def as any_field
from advisor.tui.numbers import echo, format_seq_lens, needs_echo, show_count, show_number
from advisor.tui.screens.base import StepScreen
from advisor.tui.widgets.field import FormField, text_input
from advisor.tui.widgets.measured import MeasuredForm, measured_error

if TYPE_CHECKING:
    from advisor.core import LayoutChoice, Report
    from advisor.tui.messages import Kind

CUSTOM = "custom"
CONFIG = "config"
"""The model field's third way: a Hugging Face config.json (or a hub id), read on Enter."""
KEYS = tuple(dict.fromkeys(f.key for f in FIELDS))
"""One row per workload field; a field with a label per mode (micro-batch / requests in
flight) relabels as the mode changes."""
NEEDED = frozenset({"osl"})
"""Fields the engine has no default for in the modes that show them (serving's OSL)."""
COMMON = tuple(k for k in KEYS
               if k in UP_FRONT or not any(f.advanced for f in FIELDS if f.key == k))


class PickSelect(Select[Any]):
    """A Select that also says when its list closes on the option it opened on (Textual's
    says only when the value changes): the example model, picked again or left chosen
    when the list is closed, is the user's answer."""

    class Picked(Message):
        def __init__(self, select: PickSelect) -> None:
            super().__init__()
            self.select = select

        @property
        def control(self) -> PickSelect:
            return self.select

    _opened_on: Any = None

    def watch_expanded(self, expanded: bool) -> None:
        """Beside Select's own watcher of its public `expanded`: the list opened, or closed
        (the value a pick sets is already in place by then)."""
        if expanded:
            self._opened_on = self.value
        elif self.value == self._opened_on:
            self.post_message(self.Picked(self))


def core_model_default(key: str) -> Any:
    """The engine's default for a model dimension (`ModelSpec`), e.g. a gated MLP."""
    from advisor.core import ModelSpec

    return ModelSpec.model_fields[key].default


def retuned_value(key: str, layout: LayoutChoice) -> Any:
    """The re-tuned layout's choice for a field, or None when the layout does not set it."""
    if key == "global_batch":
        dp = layout.gpus // (layout.tp * layout.pp * layout.cp)
        return layout.micro_batch * layout.accumulation * dp
    return getattr(layout, key, None)


SERVING_RETUNED = frozenset({"micro_batch", "tp", "pp", "ep"})
"""Serving knobs that, left blank, are each side's own re-tune (the engine's defaults list
says so), not the form's 1."""


class WorkloadScreen(StepScreen):
    STEP = 1

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._dims: dict[str, int] = {}
        self._layout: LayoutChoice | None = None
        self._defaults: dict[str, tuple[str, str]] = {}
        """Field -> (value, source) from the last report's list of defaults."""
        self._shown_report: Report | None = None
        """The report the notes were last drawn from: the same one again redraws nothing."""
        self._computed_mode: str | None = None
        """The mode the defaults and the re-tuned layout above were computed for: after a
        switch of mode they say nothing until the engine has the new answers."""
        self._choice_defs: dict[str, FieldDef] = {}
        """The field definition each choice row's options come from (they follow the mode)."""
        self._from_config = False
        """The config.json way is chosen: the model is what its path reads as, once read."""

    @property
    def mode(self) -> str:
        return str(self.state.given.get("mode", core_default("mode")))

    # -- building ---------------------------------------------------------------------

    def compose_body(self) -> ComposeResult:
        from advisor.core import PRESETS

        given = self.state.given
        models = [(f"{name} ({spec.params_total / 1e9:.1f}B)", name)
                  for name, spec in PRESETS.items()] + [("custom dimensions", CUSTOM),
                                                        ("from a config.json", CONFIG)]
        with VerticalScroll(id="form", can_focus=False):
            yield Static("Blank or untouched fields use the engine's defaults (dim); "
                         "each row says which value and where it comes from.",
                         classes="prompt", id="form-intro")
            yield FormField("model", PickSelect(models, value=self._preset(), id="preset",
                                                allow_blank=False, compact=True), id="f-model")
            yield Static("", id="model-info", markup=True)
            yield Vertical(id="dims")
            for key in COMMON:
                yield self._row(key, given)
            with Collapsible(title="Anchor: what your job measures today (optional)",
                             id="measured", collapsed=not self.state.measured):
                yield Vertical(id="measured-box")
            with Collapsible(title="Advanced: the rest of the layout you run today, kernels, "
                             "network", id="advanced", collapsed=not self._advanced_given()):
                yield Static("", id="retuned-intro", markup=True)
                yield Vertical(id="advanced-rows")

    def _advanced_given(self) -> bool:
        return any(k not in COMMON for k in self.state.given if k not in ("model", "seq_lens"))

    def _preset(self) -> str:
        model = self.state.given.get("model")
        if self._from_config or not isinstance(model, str | dict):  # a ModelSpec, read
            return CONFIG
        return model if isinstance(model, str) else CUSTOM

    def _row(self, key: str, given: Mapping[str, Any]) -> FormField:
        f = field_for(key, self.mode) or any_field(key)
        if f.kind == "choice":
            self._choice_defs[key] = f
            value = given.get(key, Select.NULL)
            choices = f.choices
            if isinstance(value, tuple) and not any(v == value for _, v in choices):
                choices = (*choices, (", ".join(value), value))  # an answers file's own set
            widget: Any = Select(choices, id=key, allow_blank=True, compact=True,
                                 value=value if any(v == value for _, v in choices)
                                 else Select.NULL,
                                 prompt=f"{choice_label(f, core_default(key))} (default)")
        else:
            value = given.get(key)
            text = "" if value is None else (
                format_seq_lens(value) if f.kind == "list" else
                show_count(value, f.spec) if f.spec is not None and f.spec.suffixes
                else show_number(value))
            widget = text_input(text, key, self._parser(key),
                                placeholder=self._placeholder(f))
            if f.kind == "list":
                widget.add_class("-wide")
        return FormField(f.label, widget, id=f"f-{key}")

    def _parser(self, key: str) -> Any:
        def parse(text: str) -> Any:
            f = field_for(key, self.mode) or any_field(key)
            if not text.strip() and key == "seq_lens":
                raise ValueError("the engine needs at least one sequence length, e.g. 4k")
            return f.parse(text)
        return parse

    def _placeholder(self, f: FieldDef) -> str:
        if is_required(f.key) or f.key in NEEDED:
            return "required"
        if f.key in SERVING_RETUNED and self.mode in SERVING:  # not 1: the re-tune's batch
            return "re-tuned (default)"
        default = core_default(f.key)
        shown = PLACEHOLDER.get(f.key, "none") if default is None else show_value(f, default)
        return f"{shown} (default)"

    def _rows(self) -> dict[str, FormField]:
        """The rows mounted so far, by field (the Advanced ones once it is first opened)."""
        return {row.id.removeprefix("f-"): row for row in self.query(FormField)
                if row.id and row.id.removeprefix("f-") in KEYS}

    @on(Collapsible.Expanded, "#advanced")
    def _expanded(self) -> None:
        self._build_advanced()

    @on(Collapsible.Expanded, "#measured")
    def _build_measured(self) -> None:
        """Built when first opened, as Advanced is: a dozen widgets the common path skips."""
        box = self.query_one("#measured-box", Vertical)
        if not box.children:
            box.mount(MeasuredForm(self.state, self.mode, id="measured-form"))

    def _build_advanced(self) -> None:
        """The Advanced rows are mounted when the group is first opened: twenty-odd fields
        fewer to build for the common path."""
        box = self.query_one("#advanced-rows", Vertical)
        if box.children:
            return
        box.mount_all([self._row(key, self.state.given) for key in KEYS if key not in COMMON])
        self.call_after_refresh(self._after_advanced)

    def _after_advanced(self) -> None:
        self._show_mode()
        self._notes()

    def mounted(self) -> None:
        if not self.query_one("#advanced", Collapsible).collapsed:
            self._build_advanced()
        if not self.query_one("#measured", Collapsible).collapsed:
            self._build_measured()
        self._show_model()
        self._show_mode()
        self._intro()
        self._notes()
        self.query_one("#preset").focus()
        if self.is_current:  # one built ahead asks when it is first shown (refresh_view)
            self.ask_for(self.kind)

    def refresh_view(self) -> None:
        """Other steps edit the token budget and the current GPU."""
        budget = self.query_one("#token_budget", Input)
        value = self.state.given.get("token_budget")
        try:
            same = any_field("token_budget").parse(budget.value) == value
        except ValueError:
            same = True
        if not same:
            f = any_field("token_budget")
            budget.value = show_count(value, f.spec) if f.spec else show_number(value)
        self.ask_for(self.kind)
        super().refresh_view()

    # -- notes: defaults, interpretation, re-tuned layout ---------------------------------

    @property
    def kind(self) -> Kind:
        """Before any target is chosen, a preview; after, the Report every step shows."""
        return "report" if self.state.targets else "preview"

    def computed(self, kind: str, report: Report) -> None:
        if kind != self.kind or report is self._shown_report:  # a revisit, nothing changed
            return
        self._shown_report = report
        d = report.decision
        sweep = d.current.sweep
        self._layout = sweep[0].layout if sweep else None
        self._defaults = {x.field.removeprefix("workload."): (x.value, x.source)
                          for x in d.defaults}
        self._computed_mode = d.answers.workload.mode
        self._intro()
        self._notes()

    def _current(self) -> bool:
        return self._computed_mode == self.mode

    def _intro(self) -> None:
        layout = self._layout if self._current() else None
        serving = self.mode not in ("pretrain", "finetune", "lora")
        text = ("[dim]blank: as the engine's default; [/][$accent]re-tuned[/][dim]: what the "
                f"engine picks on {escape(self.state.current or '')} (the verdict's basis, "
                "beside your layout as run):[/] "
                + escape(layout.describe(serving)) if layout is not None else
                "[dim]blank: as the engine's default; the re-tuned layout shows once the "
                "engine has the answers[/]")
        self.query_one("#retuned-intro", Static).update(text)

    def compute_failed(self, kind: str, text: str) -> None:
        if kind == self.kind:
            self._shown_report = None
            self._layout = None
            self._intro()
            self._notes()

    def _note(self, key: str, row: FormField) -> str:
        f = field_for(key, self.mode)
        if f is None:
            return ""
        widget = row.field
        typed = key in self.state.given and key not in self.state.examples
        parts: list[str] = []
        if key in self.state.examples:
            parts.append("[$warning]example value[/]: type yours")
        elif typed:
            if isinstance(widget, Input) and needs_echo(widget.value) and f.kind != "list":
                value = self.state.given[key]
                parts.append(echo(value, f.unit))
            parts.append(f"[dim]{escape(f.hint)}[/]" if f.hint else "")
        elif key in NEEDED:
            parts.append(f"[$warning]required[/] [dim]{escape(f.hint)}[/]")
        else:
            defaults = self._defaults if self._current() else {}
            value, source = defaults.get(key, (None, "advisor's default"))
            default = core_default(key)
            plain = show_value(f, default) if default is not None else None
            shown = show_value(f, value) if value is not None else None
            extra = f" {escape(shown)}" if shown is not None and shown != plain else ""
            source = "advisor's" if source == "advisor's default" else source
            parts.append(f"[$warning]default[/]{extra} [dim]({escape(source)})[/]")
            if f.hint and f.kind == "choice":
                parts.append(f"[dim]{escape(f.hint)}[/]")
        layout = self._layout if self._current() else None
        if layout is not None:
            chosen = retuned_value(key, layout)
            if chosen is not None and key not in ("gpus",):
                parts.append(f"[$accent]re-tuned:[/] {escape(show_value(f, chosen))}")
        return "  ".join(p for p in parts if p)

    def _notes(self) -> None:
        for key, row in self._rows().items():
            f = field_for(key, self.mode)
            if f is not None:
                row.set_note(self._note(key, row))
                if isinstance(row.field, Select) and key != "mode":
                    self._default_prompt(row.field, f)

    def _default_prompt(self, select: Select[Any], f: FieldDef) -> None:
        """A blank choice shows the default the engine used (FSDP named: ZeRO-3), not
        always the form's own."""
        used = (self._defaults if self._current() else {}).get(f.key, (None, ""))[0]
        value = next((v for _, v in f.choices if str(v) == used), core_default(f.key))
        select.prompt = f"{choice_label(f, value)} (default)"

    # -- model and mode -------------------------------------------------------------------

    def _show_mode(self) -> None:
        mode = self.mode
        for key, row in self._rows().items():
            f = field_for(key, mode)
            row.display = f is not None
            if f is None:
                continue
            row.set_label(f.label)
            widget = row.field
            if isinstance(widget, Input):
                widget.placeholder = self._placeholder(f)
                widget.validate(widget.value)
            elif isinstance(widget, Select) and widget.id != "mode":
                self._choices_for(widget, f)
        for form in self.query(MeasuredForm):
            form.set_mode(mode)

    def _choices_for(self, select: Select[Any], f: FieldDef) -> None:
        """A choice whose options differ by mode (a training framework, a serving engine):
        the options follow the mode, and a given value the mode does not take is dropped."""
        shown = self._choice_defs.get(f.key)
        if shown is None or shown.choices == f.choices:
            self._choice_defs[f.key] = f
            return
        self._choice_defs[f.key] = f
        value = self.state.given.get(f.key)
        takes = any(v == value for _, v in f.choices)
        with self.prevent(Select.Changed):
            select.set_options(f.choices)
            select.prompt = f"{choice_label(f, core_default(f.key))} (default)"
            if takes:
                select.value = value
        if value is not None and not takes:
            self.state.give(f.key, None)

    def _show_model(self) -> None:
        """Custom dimensions, or the config's path, are mounted only when chosen; the
        custom model's parameter count follows what is typed."""
        from advisor.core import PRESETS

        preset = self._preset()
        dims = self.query_one("#dims", Vertical)
        info = self.query_one("#model-info", Static)
        info.display = True
        shown = dims.children[0].id if dims.children else None
        if shown is not None and shown != {CUSTOM: "f-dim-layers", CONFIG: "f-model-config"
                                           }.get(preset):
            dims.remove_children()
        if preset == CUSTOM:
            if not dims.children:
                model = self.state.given.get("model")
                base = model if isinstance(model, dict) else {}
                self._dims = {f.key: base[f.key] for f in DIMS if f.key in base}
                gated = base.get("gated_mlp", core_model_default("gated_mlp"))
                rows = [FormField(f.label, text_input(
                    show_number(self._dims.get(f.key)), f"dim-{f.key}", self._dim_parser(f)),
                    note=f"e.g. {f.spec.example}" if f.spec else "", id=f"f-dim-{f.key}")
                    for f in DIMS]
                rows.append(FormField(MLP_KIND.label, Select(
                    MLP_KIND.choices, value=gated, id="dim-gated_mlp", allow_blank=False,
                    compact=True), note=f"[dim]{escape(MLP_KIND.hint)}[/]",
                    id="f-dim-gated_mlp"))
                dims.mount_all(rows)
            info.update(self._custom_info())
            return
        if preset == CONFIG:
            model = self.state.given.get("model")
            read = None if isinstance(model, str | dict | None) else model
            if not dims.children:
                path = Input(self._config_ref(read) if read else "",
                             id="model-config", compact=True, classes="-wide",
                             placeholder="PATH/config.json")
                dims.mount(FormField("config.json", path, note=self._config_note(),
                                     id="f-model-config"))
            info.update(self._describe(read) if read else
                        "[$warning]give the path of a Hugging Face config.json (or its "
                        "folder, or a hub id) and press Enter[/]")
            return
        self._describe_preset(PRESETS[preset], info)

    @staticmethod
    def _config_ref(spec: Any) -> str:
        """What reads `spec` again: its hub id (its name), else its file (its source's)."""
        source = str(spec.source)
        return spec.name if source.startswith("https://") else source.rsplit(" (", 1)[0]

    @staticmethod
    def _config_note() -> str:
        return ("[dim]Enter reads it: the families `advisor compare --model` reads; a hub id "
                "needs huggingface_hub[/]")

    def _describe_preset(self, m: Any, info: Static) -> None:
        note = "  [$warning]example model: choose yours[/]" \
            if "model" in self.state.examples else ""
        info.update(self._describe(m) + note)

    @staticmethod
    def _describe(m: Any) -> str:
        moe = f", MoE {m.active_experts}/{m.experts} experts" if m.experts else ""
        mlp = "gated MLP" if m.gated_mlp else "plain MLP"
        window = (f", a {m.sliding_window:,}-token window on {m.sliding_layers} layers"
                  if m.sliding_window else "")
        return (f"[dim]{m.params_total / 1e9:.1f}B params, {m.layers} layers, hidden "
                f"{m.hidden}, {m.heads} heads / {m.kv_heads} KV, {mlp}{moe}{window}[/]")

    def _custom_info(self) -> str:
        """The custom model's size as the engine counts it, or what it still needs."""
        from pydantic import ValidationError

        from advisor.core import ModelSpec

        model = self.state.given.get("model")
        missing = [f.label for f in DIMS if not isinstance(model, dict) or f.key not in model]
        if missing:
            return f"[$warning]custom dimensions: give {', '.join(missing)}[/]"
        assert isinstance(model, dict)
        try:
            spec = ModelSpec.model_validate(model)
        except ValidationError as exc:
            msg = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
            return f"[$error]✘ {escape(msg)}[/]"
        mlp = "gated MLP" if spec.gated_mlp else "plain MLP"
        return (f"custom: [b]{spec.params_total / 1e9:.1f}B params[/b] [dim](counted from the "
                f"dimensions below, {mlp})[/]")

    def _dim_parser(self, f: FieldDef) -> Any:
        def parse(text: str) -> Any:
            if not text.strip():
                raise ValueError(f"{f.label}: needed for a custom model, e.g. "
                                 f"{f.spec.example if f.spec else ''}")
            return f.parse(text)
        return parse

    # -- events -----------------------------------------------------------------------

    @on(PickSelect.Picked, "#preset")
    def _picked(self) -> None:
        """Picking the example model (again), or closing the list on it, makes it the
        user's answer."""
        if "model" in self.state.examples:
            self.state.keep_example("model")
            self._show_model()
            self._notes()

    @on(Select.Changed)
    def _selected(self, event: Select.Changed) -> None:
        key = event.select.id
        if key is None:
            return
        if key == "preset":
            self._model_chosen(event.value)
        elif key == "dim-gated_mlp":
            model = self.state.given.get("model")
            base = model if isinstance(model, dict) else {"name": "custom"}
            if base.get("gated_mlp") != event.value:
                self.state.give("model", {**base, "gated_mlp": event.value})
            self.query_one("#model-info", Static).update(self._custom_info())
        else:
            value = None if event.value is Select.NULL else event.value
            if self.state.given.get(key) != value:
                self.state.give(key, value)
            if key == "mode":
                self._show_mode()
        self._changed()

    def _model_chosen(self, value: Any) -> None:
        from advisor.core import PRESETS

        self._from_config = value == CONFIG
        current = self.state.given.get("model")
        if value == CUSTOM:
            if not isinstance(current, dict):
                spec = PRESETS.get(current) if isinstance(current, str) else current
                dims = {f.key: getattr(spec, f.key) for f in (*DIMS, MLP_KIND)} if spec else {}
                self.state.give("model", {"name": "custom", **dims})
        elif value not in (Select.NULL, CONFIG) and current != value:
            self.state.give("model", value)
        self._show_model()

    @on(Input.Submitted, "#model-config")
    def _config_submitted(self, event: Input.Submitted) -> None:
        """A config is read off the event loop: a hub id goes over the network."""
        self.query_one("#f-model-config", FormField).set_note("[dim]reading...[/]")
        self.run_worker(partial(self._read_config, event.value.strip()), thread=True,
                        exclusive=True, group="model-config")

    def _read_config(self, ref: str) -> None:
        from advisor.core import InputError
        from advisor.io.model_config import read_config

        try:
            spec: Any = read_config(ref)
        except InputError as exc:
            self.app.call_from_thread(self._config_read, None, exc.one_line())
        else:
            self.app.call_from_thread(self._config_read, spec, None)

    def _config_read(self, spec: Any, error: str | None) -> None:
        row = self.query_one("#f-model-config", FormField)
        row.set_note(self._config_note())
        row.show_error(error)
        if spec is not None:
            self.state.give("model", spec)
            self.query_one("#model-info", Static).update(self._describe(spec))
        self._changed()

    @on(MeasuredForm.Changed)
    def _measured(self) -> None:
        self._changed()

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        key = event.input.id or ""
        valid = bool(event.validation_result and event.validation_result.is_valid)
        row = event.input.parent
        where = f"{row.label} on Workload" if isinstance(row, FormField) else key
        if valid:
            self.state.set_invalid(where, None)
        elif event.validation_result is not None:
            self.state.set_invalid(where, event.validation_result.failure_descriptions[0])
        if key.startswith("dim-"):
            if valid:
                self._dims[key.removeprefix("dim-")] = int(
                    next(f for f in DIMS if f"dim-{f.key}" == key).parse(event.value))
                model = self.state.given.get("model")
                base = model if isinstance(model, dict) else {"name": "custom"}
                self.state.give("model", {**base, **self._dims})
            self.query_one("#model-info", Static).update(self._custom_info())
        elif valid and key in KEYS:
            f = field_for(key, self.mode) or any_field(key)
            value = f.parse(event.value)
            if key in self.state.examples and value == self.state.given.get(key):
                pass  # the example as it mounted, not typed
            elif self.state.given.get(key) != value or key in self.state.examples:
                self.state.give(key, value)
        self._changed()

    def _changed(self) -> None:
        self._notes()
        self.refresh_nav()
        if self.is_current and self._workload_error() is None:
            self.ask_for(self.kind)

    # -- Next -----------------------------------------------------------------------

    def _workload_error(self) -> str | None:
        from pydantic import ValidationError

        from advisor.core import InputError, Workload
        try:
            Workload.model_validate(self.state.workload_data())
        except ValidationError as exc:
            err = exc.errors()[0]
            return str(err["msg"]).removeprefix("Value error, ")
        except InputError as exc:
            return exc.message
        return None

    def action_next(self) -> None:
        """Going on keeps the starting example as the answer: it is no longer an example."""
        if self.ready()[0]:
            self.state.keep_example()
        super().action_next()

    def ready(self) -> tuple[bool, str]:
        bad = [f for f in self.query(FormField) if f.display and f.has_class("-invalid")]
        if bad:
            return False, f"fix {bad[0].label} first"
        error = self._workload_error()
        if error is not None:
            return False, error
        measured = measured_error(self.state.measured)
        if measured is not None:
            return False, f"what you measured: {measured}"
        if self._from_config and isinstance(self.state.given.get("model"), str | dict):
            return False, "read a config.json first: its path, then Enter"
        from advisor.core import Workload

        wl = Workload.model_validate(self.state.workload_data())
        return True, (f"{wl.model.name}: {wl.model.params_total / 1e9:.1f}B params on "
                      f"{wl.gpus} GPUs, {wl.precision}")


__all__ = ["Label", "WorkloadScreen"]
