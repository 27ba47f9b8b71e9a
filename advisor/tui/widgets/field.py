"""One form row: label, input, and a note that turns into the error while input is invalid.

Number inputs are plain text inputs: Textual's `type="integer"` drops characters it does
not expect ("4.5" becomes "45"), so here the text stays as typed and a validator either
takes it or says why not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.validation import ValidationResult, Validator
from textual.widget import Widget
from textual.widgets import Input, Label


class FormField(Horizontal):
    """Errors show inline, on the row that caused them, as the user types; long notes and
    errors wrap onto more lines instead of being cut off."""

    DEFAULT_CSS = """
    FormField {
        height: auto;
    }
    FormField .field-label {
        width: 20;
        color: $text-muted;
    }
    FormField Input {
        width: 16;
    }
    FormField Input.-wide {
        width: 26;
    }
    FormField Select {
        width: 26;
    }
    FormField .field-note {
        width: 1fr;
        height: auto;
        padding-left: 1;
        color: $text-muted;
    }
    FormField.-invalid .field-note {
        color: $error;
    }
    """

    def __init__(self, label: str, field: Widget | None = None, note: str = "",
                 id: str | None = None, classes: str = "") -> None:
        super().__init__(id=id, classes=f"form-field {classes}".strip())
        self.label = label
        self.field = field
        self.note = note
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        yield Label(self.label, classes="field-label")
        if self.field is not None:
            yield self.field
        yield Label(self.note, classes="field-note", markup=True)

    def _label(self, cls: str) -> Label | None:
        """The row's label or note; None until the row is composed (it then shows the
        values set before)."""
        return next(self.query(cls).results(Label), None)

    def set_label(self, label: str) -> None:
        if label != self.label:
            self.label = label
            widget = self._label(".field-label")
            if widget is not None:
                widget.update(label)

    def set_note(self, note: str) -> None:
        if note == self.note:
            return
        self.note = note
        widget = self._label(".field-note")
        if self.error is None and widget is not None:
            widget.update(note)

    def show_error(self, error: str | None) -> None:
        """Touch the widgets only on a change: each Input reports once as it mounts."""
        if error == self.error:
            return
        self.error = error
        self.set_class(error is not None, "-invalid")
        note = self._label(".field-note")
        if note is None:
            return
        if error is None:
            note.update(self.note)
        else:
            from textual.content import Content

            note.update(Content.styled(f"✘ {error}", "$error"))

    @on(Input.Changed)
    def _validate(self, event: Input.Changed) -> None:
        result = event.validation_result
        errors = result.failure_descriptions if result and not result.is_valid else []
        self.show_error(errors[0] if errors else None)


class Parsed(Validator):
    """Valid when `parse` accepts the text; its ValueError message is the inline error."""

    def __init__(self, parse: Callable[[str], object]) -> None:
        super().__init__()
        self.parse = parse

    def validate(self, value: str) -> ValidationResult:
        try:
            self.parse(value)
        except ValueError as exc:
            return self.failure(str(exc))
        return self.success()


def text_input(value: str, id: str, parse: Callable[[str], object], placeholder: str = "",
               name: str | None = None) -> Input:
    """A compact text input validated by `parse` (blank is passed to `parse` too)."""
    return Input(value, id=id, compact=True, placeholder=placeholder, name=name,
                 validators=[Parsed(parse)], valid_empty=False)


def sync_input(field: Input, value: Any, parse: Callable[[str], object],
               show: Callable[[Any], str]) -> None:
    """Show a value another step changed; a field that already says it, or that holds a
    half-typed invalid entry, is left alone."""
    try:
        same = parse(field.value) == value
    except ValueError:
        return
    if not same:
        field.value = show(value)
