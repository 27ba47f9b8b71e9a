"""ctrl+q with answers not saved: ask once, and offer to keep them first.

The answers file (`answers_to_toml`, what `advisor decide --answers` reads back) keeps what
was typed; the report keeps the verdict too. A second ctrl+q quits without saving.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Label, Static

QuitChoice = Literal["answers", "report", "quit"]


class QuitScreen(ModalScreen[QuitChoice | None]):
    """Dismisses with what to do: save the answers, export the report, quit, or None (stay)."""

    BINDINGS: ClassVar = [Binding("escape", "stay", "Stay"),
                          Binding("a", "choose('answers')", "Save answers", show=False),
                          Binding("r", "choose('report')", "Export report", show=False)]
    DEFAULT_CSS = """
    QuitScreen {
        align: center middle;
    }
    QuitScreen #quit {
        width: 90%;
        max-width: 76;
        height: auto;
        border: thick $warning;
        background: $surface;
        padding: 0 1;
    }
    QuitScreen #quit-why, QuitScreen #quit-keys {
        height: auto;
        color: $text-muted;
    }
    QuitScreen #quit-buttons {
        height: auto;
        margin-top: 1;
    }
    QuitScreen #quit-buttons Button {
        margin-right: 1;
    }
    """

    def __init__(self, answers_why: str | None, has_report: bool) -> None:
        """`answers_why`: why the answers cannot be saved yet (None: they can)."""
        super().__init__()
        self.answers_why = answers_why
        self.has_report = has_report

    def compose(self) -> ComposeResult:
        with Vertical(id="quit"):
            yield Label("[b]Quit? Your answers are not saved.[/b]")
            why = ("Save them as an answers file (`advisor decide --answers FILE` reads it "
                   "back) or export the report, or press ^q again to quit without saving.")
            if self.answers_why is not None:
                why += f"\nThe answers cannot be saved yet: {self.answers_why}"
            yield Static(why, id="quit-why", markup=False)
            with Horizontal(id="quit-buttons"):
                yield Button("Save answers", id="quit-answers", variant="primary",
                             compact=True, disabled=self.answers_why is not None)
                yield Button("Export report", id="quit-report", compact=True,
                             disabled=not self.has_report)
                yield Button("Quit", id="quit-quit", variant="warning", compact=True)
                yield Button("Stay", id="quit-stay", compact=True)
            yield Static("a saves the answers · r exports the report · ^q quits · esc stays",
                         id="quit-keys", markup=False)
        yield Footer()  # its own keys, not the step's below it

    def on_mount(self) -> None:
        first = "#quit-answers" if self.answers_why is None else "#quit-stay"
        self.query_one(first, Button).focus()

    def action_choose(self, choice: QuitChoice) -> None:
        if choice == "answers" and self.answers_why is not None:
            return
        if choice == "report" and not self.has_report:
            return
        self.dismiss(choice)

    def action_stay(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        choice = (event.button.id or "").removeprefix("quit-")
        if choice == "stay":
            self.dismiss(None)
        else:
            self.action_choose(choice)  # type: ignore[arg-type]
