"""The export dialog: where to write the report. Enter writes, esc cancels."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class ExportScreen(ModalScreen[Path | None]):
    BINDINGS: ClassVar = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, default: Path) -> None:
        super().__init__()
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical(id="export"):
            yield Label("[b]Export the decision report (TOML)[/b]")
            yield Input(str(self.default), id="export-path")
            yield Label("enter writes it (atomically: an existing file is replaced only when "
                        "the new one is complete); esc cancels", id="export-help")

    @on(Input.Submitted)
    def _submit(self, event: Input.Submitted) -> None:
        path = Path(event.value.strip() or str(self.default)).expanduser()
        if path.is_dir():
            path = path / self.default.name
        self.dismiss(path)

    def action_cancel(self) -> None:
        self.dismiss(None)
