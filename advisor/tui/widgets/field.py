"""One form row: label, input, and a note that turns into the error while input is invalid."""

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
    """Errors show inline, on the row that caused them, as the user types."""

    def __init__(self, label: str, field: Widget | None = None, note: str = "",
                 id: str | None = None) -> None:
        super().__init__(id=id, classes="form-field")
        self.label = label
        self.field = field
        self.note = note
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        yield Label(self.label, classes="field-label")
        if self.field is not None:
            yield self.field
        yield Label(self.note, classes="field-note", markup=True)

    def set_note(self, note: str) -> None:
        self.note = note
        if self.error is None:
            self.query_one(".field-note", Label).update(note)

    def show_error(self, error: str | None) -> None:
        """Touch the widgets only on a change: each Input reports once as it mounts."""
        if error == self.error:
            return
        self.error = error
        self.set_class(error is not None, "-invalid")
        self.query_one(".field-note", Label).update(error if error is not None else self.note)

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


def sync_input(field: Input, value: object, parse: Callable[[str], object],
               show: Callable[[Any], str]) -> None:
    """Show a value another step changed; a field that already says it, or that holds a
    half-typed invalid entry, is left alone."""
    if field.is_valid and parse(field.value) != value:
        field.value = show(value)
