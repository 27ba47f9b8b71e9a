"""Dialogs that write files: the report (TOML) and the copied summary (Markdown).

A path is checked before anything is written (`advisor.io.atomic.check_output_path`): a
missing folder is refused with a clear message (nothing creates folders behind your back),
and an existing file is replaced only after you confirm. The write goes through advisor's
one writer (`write_output`): atomic, so an interrupted export never leaves half a file.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

if TYPE_CHECKING:
    from advisor.core import Answers, Report


def check_path(text: str, default: Path) -> tuple[Path | None, str]:
    """(the file to write, why not): a folder gets the default name; a missing folder is
    refused, never created."""
    from advisor.core import InputError
    from advisor.io.atomic import check_output_path

    path = Path(text.strip() or str(default)).expanduser()
    if path.is_dir():
        path = path / default.name
    try:
        check_output_path(path, example=default.name)
    except InputError as exc:
        if not path.parent.exists():
            return None, (f"the folder {path.parent} does not exist: create it first, or "
                          "choose another")
        return None, exc.message
    return path, ""


class WriteDialog(ModalScreen[Path | None]):
    """Ask for a path, confirm before replacing a file, write, say what happened."""

    BINDINGS: ClassVar = [Binding("escape", "cancel", "Cancel")]
    TITLE_TEXT = ""
    HELP = "enter writes it; esc cancels"

    def __init__(self, default: Path) -> None:
        super().__init__()
        self.default = default
        self.pending: Path | None = None

    def body(self) -> str:
        return ""

    def content(self) -> str:
        raise NotImplementedError

    def compose(self) -> ComposeResult:
        with Vertical(id="export", classes="dialog"):
            yield Label(f"[b]{self.TITLE_TEXT}[/b]")
            text = self.body()
            if text:
                yield Static(text, id="dialog-body", markup=True)
            yield Input(str(self.default), id="export-path")
            yield Label(self.HELP, id="export-help")
            with Horizontal(id="confirm"):
                yield Button("Replace it", id="replace", variant="warning", compact=True)
                yield Button("Cancel", id="keep", compact=True)

    def on_mount(self) -> None:
        self.query_one("#confirm").display = False
        self.query_one("#export-path", Input).focus()

    def _say(self, text: str, error: bool = False) -> None:
        label = self.query_one("#export-help", Label)
        label.set_class(error, "-error")
        label.update(text)

    @on(Input.Changed, "#export-path")
    def _edited(self) -> None:
        self.pending = None
        self.query_one("#confirm").display = False
        self._say(self.HELP)

    @on(Input.Submitted, "#export-path")
    def _submit(self, event: Input.Submitted) -> None:
        path, why = check_path(event.value, self.default)
        if path is None:
            self._say(f"✘ {why}", error=True)
            return
        if path.is_file() and self.pending != path:
            self.pending = path
            self.query_one("#confirm").display = True
            self._say(f"{path} exists: replace it? (enter or the button replaces it; edit the "
                      "path to choose another)", error=True)
            return
        self._write(path)

    @on(Button.Pressed, "#replace")
    def _replace(self) -> None:
        if self.pending is not None:
            self._write(self.pending)

    @on(Button.Pressed, "#keep")
    def _keep(self) -> None:
        self.action_cancel()

    def _write(self, path: Path) -> None:
        from advisor.core import InputError
        from advisor.io.atomic import write_output

        try:
            written = write_output(path, self.content())
        except InputError as exc:
            self._say(f"✘ {exc.one_line()}", error=True)
            return
        self.dismiss(written)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ExportScreen(WriteDialog):
    TITLE_TEXT = "Export the decision report (TOML)"
    HELP = ("enter writes it (atomically: a file is replaced only when the new one is "
            "complete, and only after you confirm); esc cancels")

    def __init__(self, default: Path, report: Report) -> None:
        super().__init__(default)
        self.report = report

    def content(self) -> str:
        from advisor.core import report_to_toml

        return report_to_toml(self.report)


class AnswersScreen(WriteDialog):
    TITLE_TEXT = "Save the answers (TOML)"
    HELP = "enter writes it (`advisor decide --answers FILE` reads it back); esc cancels"

    def __init__(self, default: Path, answers: Answers) -> None:
        super().__init__(default)
        self.answers = answers

    def content(self) -> str:
        from advisor.core import answers_to_toml

        return answers_to_toml(self.answers)


class SummaryScreen(WriteDialog):
    TITLE_TEXT = "Summary copied to the clipboard"
    HELP = "enter also saves it to this file; esc closes"

    def __init__(self, text: str, default: Path) -> None:
        super().__init__(default)
        self.text = text

    def body(self) -> str:
        first = "\n".join([line for line in self.text.splitlines() if line][:5])
        return (f"[dim]{escape(first)}\n…[/]\n[dim]Copied as Markdown through your terminal "
                "(OSC 52; some terminals need it allowed). To keep it, save it:[/]")

    def content(self) -> str:
        return self.text
