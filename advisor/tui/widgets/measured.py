"""What the user measured their job doing today, on the current GPU: the anchor of a decision.

One row per `MeasuredRun` figure the mode takes (tokens/s per GPU, step time, MFU and the
attention share for training; output tokens/s, requests in flight, TTFT and TPOT for
serving; peak memory for both), and a note saying where the figure comes from. Valid
entries go straight into `WizardState.measured`, as `[measured]` names them; a blank row is
not an answer. The engine anchors the decision on them and says what it moved.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Static

from advisor.tui.fields import MEASURED, PERCENT, FieldDef
from advisor.tui.numbers import show_number
from advisor.tui.widgets.field import FormField, text_input

if TYPE_CHECKING:
    from advisor.tui.state import WizardState

KEYS = tuple(dict.fromkeys(f.key for f in MEASURED))


def measured_field(key: str, mode: str) -> FieldDef | None:
    return next((f for f in MEASURED if f.key == key and mode in f.modes), None)


@cache
def _measured_run() -> TypeAdapter[Any]:
    """Core's MeasuredRun, reached through the Answers field that holds it."""
    from advisor.core import Answers

    annotation: Any = Answers.model_fields["measured"].annotation
    return TypeAdapter(annotation)


def measured_error(measured: Mapping[str, Any]) -> str | None:
    """Why the engine would refuse these figures as a measured run (core's own words)."""
    if not measured:
        return None
    try:
        _measured_run().validate_python(dict(measured))
    except ValidationError as exc:
        return str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
    return None


class MeasuredForm(Vertical):
    """The figures of the user's own run; posts `Changed` when `state.measured` changes."""

    DEFAULT_CSS = """
    MeasuredForm {
        height: auto;
    }
    MeasuredForm #measured-intro, MeasuredForm #measured-status {
        height: auto;
        color: $text-muted;
    }
    MeasuredForm #measured-status.-error {
        color: $warning;
    }
    MeasuredForm #m-note {
        width: 1fr;
    }
    """

    class Changed(Message):
        """`state.measured` holds new figures: the decision must be anchored again."""

    def __init__(self, state: WizardState, mode: str, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state = state
        self.mode = mode

    def compose(self) -> ComposeResult:
        yield Static("What your job does today on the current GPU, at the first sequence "
                     "length and in your layout: give any one throughput figure. The decision "
                     "is then anchored on it, and every step says what it moved.",
                     id="measured-intro")
        for key in KEYS:
            f = measured_field(key, self.mode) or next(x for x in MEASURED if x.key == key)
            yield FormField(f.label, text_input(self._shown(key), f"m-{key}",
                                                self._parser(key), placeholder="not measured"),
                            note=f"[dim]{f.hint}[/]" if f.hint else "", id=f"fm-{key}")
        yield FormField("where from", Input(str(self.state.measured.get("note", "")),
                                            id="m-note", compact=True,
                                            placeholder="a run id, a dashboard (optional)"),
                        id="fm-note")
        yield Static("", id="measured-status", markup=True)

    def _shown(self, key: str) -> str:
        value = self.state.measured.get(key)
        if value is None:
            return ""
        return show_number(value * 100 if key in PERCENT else value)

    def _parser(self, key: str) -> Any:
        def parse(text: str) -> Any:
            f = measured_field(key, self.mode) or next(x for x in MEASURED if x.key == key)
            return f.parse(text)
        return parse

    def on_mount(self) -> None:
        self.set_mode(self.mode)

    def set_mode(self, mode: str) -> None:
        """Show the figures this mode takes; a figure it does not take is dropped. Before
        its rows are composed, only the mode is kept (its mount applies it)."""
        self.mode = mode
        if not self.query(FormField):
            return
        for key in KEYS:
            row = self.query_one(f"#fm-{key}", FormField)
            f = measured_field(key, mode)
            row.display = f is not None
            if f is None:
                if self.state.set_measured(key, None):
                    self.post_message(self.Changed())
                continue
            row.set_label(f.label)
            row.set_note(f"[dim]{f.hint}[/]" if f.hint else "")
        self._status()

    def _status(self) -> None:
        error = measured_error(self.state.measured)
        status = self.query_one("#measured-status", Static)
        status.set_class(error is not None, "-error")
        status.update(f"✘ {error}" if error else "" if not self.state.measured else
                      "the decision is anchored on these figures")

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        key = (event.input.id or "").removeprefix("m-")
        if key == "note":
            value: Any = event.value.strip() or None
        else:
            result = event.validation_result
            f = measured_field(key, self.mode)
            where = f"{f.label if f else key} (measured) on Workload"
            if result is not None and not result.is_valid:
                self.state.set_invalid(where, result.failure_descriptions[0])
                self.post_message(self.Changed())
                return
            self.state.set_invalid(where, None)
            value = f.parse(event.value) if f is not None else None
            if value is not None and key in PERCENT:
                value = value / 100
        changed = self.state.set_measured(key, value)
        self._status()
        if changed:
            self.post_message(self.Changed())
