"""One GPU's own layout (`layouts.<id>` in answers, `--current-precision`/`--target-precision`
and the like on the command line): its number format and KV-cache format, its TP/PP/EP,
micro-batch or requests in flight, nodes, sharding and recompute. A blank field is the
workload's value, said beside it; the dialog returns only what was given. On a target, the
workload's TP/PP/CP/EP and requests in flight are the current side's: blank there means the
target is re-tuned (said so, with what the current side runs), and a target may name the
stack it would run (`stacks.<id>`: PyTorch/XLA on a TPU), which the software gate checks.

The fields are the Workload step's own (`fields.field_for`), so a layout reads numbers with
the same rules and words; which fields a GPU may override is core's `LayoutOverride`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Input, Label, Select, Static

from advisor.core import parse_stack
from advisor.tui.fields import FieldDef, choice_label, field_for, show_value
from advisor.tui.numbers import show_number
from advisor.tui.widgets.field import FormField, Parsed, text_input

RETUNED = frozenset({"tp", "pp", "cp", "ep", "vp", "micro_batch"})
"""The knobs that describe the current side: blank on a target, it is re-tuned."""


def layout_keys() -> tuple[str, ...]:
    """What a GPU may run differently, as core's LayoutOverride names it: number formats and
    TP/PP/EP first (its count is set on the price row)."""
    from advisor.core import LayoutOverride

    first = ("precision", "kv_dtype", "tp", "pp", "ep")
    keys = [k for k in LayoutOverride.model_fields if k != "gpus"]
    return tuple(sorted(keys, key=lambda k: first.index(k) if k in first else len(first)))


def layout_fields(mode: str) -> list[FieldDef]:
    return [f for f in (field_for(k, mode) for k in layout_keys()) if f is not None]


def describe_layout(given: dict[str, Any], mode: str) -> str:
    """A GPU's own layout in a few words: "fp8, KV fp8, TP 2"."""
    parts = []
    for f in layout_fields(mode):
        if f.key not in given:
            continue
        value = given[f.key]
        if f.key == "precision":
            parts.append(str(value))
        elif f.key == "kv_dtype":
            parts.append(f"KV {value}")
        elif f.key in ("tp", "pp", "ep", "cp", "vp"):
            parts.append(f"{f.key.upper()} {value}")
        else:
            parts.append(f"{f.label} {show_value(f, value)}")
    return ", ".join(parts)


def check_layout(given: dict[str, Any]) -> str | None:
    """Core's own refusal of a layout, in one line, or None."""
    from pydantic import ValidationError

    from advisor.core import LayoutOverride

    try:
        LayoutOverride.model_validate(given)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        return f"{where}: {str(err['msg']).removeprefix('Value error, ')}"
    return None


class LayoutScreen(ModalScreen[dict[str, Any] | None]):
    """Edit one GPU's layout; dismisses with the fields given (empty: as the workload), or
    None when cancelled."""

    BINDINGS: ClassVar = [Binding("escape", "cancel", "Cancel"),
                          Binding("ctrl+n", "apply", "Apply", key_display="^n")]
    DEFAULT_CSS = """
    LayoutScreen {
        align: center middle;
    }
    LayoutScreen #layout {
        width: 90%;
        max-width: 100;
        height: auto;
        max-height: 100%;
        border: thick $primary;
        background: $surface;
        padding: 0 1;
    }
    LayoutScreen #layout-rows {
        height: auto;
        max-height: 16;
    }
    LayoutScreen #layout-status {
        height: auto;
        color: $text-muted;
    }
    LayoutScreen #layout-status.-error {
        color: $error;
    }
    LayoutScreen #layout-buttons {
        height: 1;
        margin-top: 1;
    }
    LayoutScreen #layout-buttons Button {
        margin-right: 2;
    }
    """

    def __init__(self, gpu_id: str, mode: str, given: dict[str, Any],
                 workload: dict[str, str], current: bool = True, stack: str = "") -> None:
        """`workload`: each field's value on the workload, as words (what blank means);
        `current`: this is the current GPU (a target's blank degrees are re-tuned); `stack`:
        a target's own stack as typed ('' for the job's)."""
        super().__init__()
        self.gpu_id = gpu_id
        self.mode = mode
        self.given = dict(given)
        self.workload = workload
        self.current = current
        self.stack = stack

    def compose(self) -> ComposeResult:
        with Vertical(id="layout"):
            yield Label(f"[b]{escape(self.gpu_id)}: what runs differently on this GPU[/b]")
            blank = ("as the workload" if self.current else
                     "as the workload, or re-tuned for this GPU where the workload says what "
                     "the current side runs")
            yield Static(f"[dim]Blank: {blank} (said on the right). A format of its "
                         "own asks \"fp8 here, nvfp4 there\"; the dtype gate checks each GPU "
                         "against its own.[/]", markup=True)
            with VerticalScroll(id="layout-rows"):
                if not self.current:
                    yield FormField("stack", Input(
                        self.stack, id="l-stack", compact=True,
                        placeholder="the job's stack (Software step)",
                        validators=[Parsed(lambda t: parse_stack(t) if t.strip() else None)]),
                        note=self._stack_note(), id="lf-stack")
                for f in layout_fields(self.mode):
                    yield FormField(f.label, self._widget(f), note=self._note(f),
                                    id=f"lf-{f.key}")
            yield Static("", id="layout-status", markup=True)
            with Horizontal(id="layout-buttons"):
                yield Button("Apply ^n", id="layout-apply", variant="primary", compact=True)
                yield Button("All as the workload", id="layout-clear", compact=True)
                yield Button("Cancel", id="layout-cancel", compact=True)
        yield Footer()  # its own keys, not the step's below it

    def _widget(self, f: FieldDef) -> Any:
        value = self.given.get(f.key)
        if f.kind == "choice":
            return Select(f.choices, id=f"l-{f.key}", allow_blank=True, compact=True,
                          value=value if value is not None else Select.NULL,
                          prompt=f"{self.workload.get(f.key, '-')} (workload)")
        blank = "re-tuned" if self._retuned(f.key) else \
            f"{self.workload.get(f.key, '-')} (workload)"
        return text_input(show_number(value), f"l-{f.key}", f.parse, placeholder=blank)

    def _retuned(self, key: str) -> bool:
        """A target's blank degree or batch is its own re-tune, not the current side's."""
        return not self.current and key in RETUNED

    def _note(self, f: FieldDef) -> str:
        if f.key in self.given:
            return "[b]this GPU's own[/b]"
        if self._retuned(f.key):
            return (f"[dim]re-tuned for this GPU; the current side runs "
                    f"{escape(self.workload.get(f.key, '-'))}[/]")
        return f"[dim]as the workload: {escape(self.workload.get(f.key, '-'))}[/]"

    def _stack_note(self) -> str:
        return ("[b]this GPU's own[/b]: the software gate checks it" if self.stack.strip()
                else "[dim]blank: the job's stack; give the one it would run (torch-xla, "
                "torch-neuronx, a ROCm build...)[/]")

    def on_mount(self) -> None:
        first = next(iter(self.query("#layout-rows Select, #layout-rows Input")), None)
        if first is not None:
            first.focus()

    def _set(self, key: str, value: Any) -> None:
        if value is None:
            self.given.pop(key, None)
        else:
            self.given[key] = value
        f = field_for(key, self.mode)
        if f is not None:
            self.query_one(f"#lf-{key}", FormField).set_note(self._note(f))
        self._status()

    def _status(self) -> str | None:
        error = check_layout(self.given)
        status = self.query_one("#layout-status", Static)
        status.set_class(error is not None, "-error")
        status.update(f"✘ {escape(error)}" if error else
                      escape(describe_layout(self.given, self.mode)) or "all as the workload")
        return error

    @on(Select.Changed)
    def _chosen(self, event: Select.Changed) -> None:
        key = (event.select.id or "").removeprefix("l-")
        self._set(key, None if event.value is Select.NULL else event.value)

    @on(Input.Changed, "#l-stack")
    def _stack_typed(self, event: Input.Changed) -> None:
        event.stop()
        self.stack = event.value
        self.query_one("#lf-stack", FormField).set_note(self._stack_note())

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        result = event.validation_result
        if result is not None and not result.is_valid:
            return
        key = (event.input.id or "").removeprefix("l-")
        f = field_for(key, self.mode)
        if f is not None:
            self._set(key, f.parse(event.value))

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.action_apply()

    @on(Button.Pressed, "#layout-apply")
    def action_apply(self) -> None:
        invalid = [r for r in self.query(FormField) if r.has_class("-invalid")]
        if invalid:
            self.query_one("#layout-status", Static).update(
                f"[$error]✘ fix {escape(invalid[0].label)} first[/]")
            return
        if self._status() is None:
            stack = {"stack": parse_stack(self.stack) if self.stack.strip() else None} \
                if not self.current else {}
            self.dismiss({**self.given, **stack})

    @on(Button.Pressed, "#layout-clear")
    def _clear(self) -> None:
        self.dismiss({})

    @on(Button.Pressed, "#layout-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


def workload_words(state_given: dict[str, Any], mode: str) -> dict[str, str]:
    """Each layout field's workload value in words, for what a blank means on one GPU."""
    from advisor.tui.fields import core_default

    out = {}
    for f in layout_fields(mode):
        value = state_given.get(f.key, core_default(f.key))
        out[f.key] = (choice_label(f, value) if f.kind == "choice" else
                      show_value(f, value))
    return out
