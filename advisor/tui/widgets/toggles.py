"""Checkboxes and radio buttons whose state reads without colour: a mark when on, a blank
when off (Textual's own draw the same X in two colours)."""

from __future__ import annotations

from typing import ClassVar

from textual.widgets import Checkbox, RadioButton


class _Marked:
    """Sets the inner glyph from the value; Textual draws `BUTTON_INNER` between the sides."""

    MARKS: ClassVar[tuple[str, str]]
    BUTTON_INNER: str
    value: bool

    def _set_mark(self) -> None:
        self.BUTTON_INNER = self.MARKS[1] if self.value else self.MARKS[0]

    def on_mount(self) -> None:
        self._set_mark()
        self.refresh()  # type: ignore[attr-defined]  # the widget's, after _Marked in the MRO

    def watch_value(self) -> None:
        self._set_mark()
        super().watch_value()  # type: ignore[misc]  # ToggleButton's, after _Marked in the MRO


class Tick(_Marked, Checkbox):
    """[✔] when on, [ ] when off."""

    BUTTON_LEFT = "["
    BUTTON_RIGHT = "]"
    MARKS = (" ", "✔")


class Choice(_Marked, RadioButton):
    """(●) for the chosen one, ( ) for the others."""

    BUTTON_LEFT = "("
    BUTTON_RIGHT = ")"
    MARKS = (" ", "●")
