"""Step 6: measure this box (quick or full), skip to catalog figures, or import a record.

The run happens in a thread worker; each step posts a `ProbeUpdate` that moves
the progress bar and adds a row to the results table. Cancel sets a flag the
runner polls between steps, so the run ends cleanly and keeps what it measured.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.markup import escape
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, Input, Label, ProgressBar, RadioButton, RadioSet, Static
from textual.worker import Worker, WorkerState, get_current_worker

from advisor.core.errors import InputError
from advisor.core.model.probe_record import ProbeRecord
from advisor.core.text import clean
from advisor.io.documents import load_probe_record
from advisor.textfmt import fmt_num
from advisor.tui.runner import ProbeMode, ProbeProgress, ProbeRow, rows_of
from advisor.tui.screens.base import StepScreen

CHOICES = (
    ("quick", "Quick run on this box (about a minute)"),
    ("full", "Full run on this box (several minutes)"),
    ("catalog", "Skip: catalog figures for every GPU"),
    ("import", "Import a record made on another box"),
)


@dataclass
class ProbeUpdate(Message):
    progress: ProbeProgress


@dataclass
class ProbeDone(Message):
    record: ProbeRecord
    cancelled: bool


class ProbesScreen(StepScreen):
    STEP = 5
    BINDINGS: ClassVar = [
        Binding("ctrl+r", "run", "Run probes", key_display="^r"),
        Binding("ctrl+x", "cancel", "Cancel run", key_display="^x"),
    ]

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.stop = threading.Event()
        self.running = False

    def compose_body(self) -> ComposeResult:
        default = self._default_choice()
        with Horizontal(id="probe-top"):
            with Vertical(id="probe-choice"):
                with RadioSet(id="choice"):
                    for key, label in CHOICES:
                        yield RadioButton(label, value=key == default, name=key)
                yield Input(placeholder="path to probe record (.json)", id="record-path",
                            compact=True)
            yield Static(self._about(), id="probe-about", markup=True)
        yield ProgressBar(show_eta=False, id="progress")
        with Horizontal(id="probe-tables"):
            status: DataTable[str] = DataTable(id="probe-status", cursor_type="none")
            status.add_column("stage", key="stage", width=12)
            status.add_column("status", key="status", width=22)
            yield status
            results: DataTable[str] = DataTable(id="probe-results", cursor_type="none")
            for label, width in (("probe", 9), ("measured", 38), ("value", 9), ("unit", 6)):
                results.add_column(label, width=width)
            yield results
        yield Label("", id="probe-message")

    def _default_choice(self) -> str:
        state = self.state
        if state.probe_source == "run" and state.probe_record is not None:
            return "quick" if state.probe_note.startswith("quick") else "full"
        if state.probe_source is not None:
            return state.probe_source
        return "quick" if self.ctx.hardware.has_gpu else "catalog"

    def _about(self) -> str:
        if self.ctx.hardware.has_gpu:
            return ("Probes measure what this box really achieves (matmul, attention, memory "
                    "bandwidth), so projections start from facts, not spec sheets.")
        return ("[$warning]No GPU here[/]: probes would measure this CPU, which says little "
                "about GPUs. Use catalog figures, or import a record made with "
                "[b]python -m probes run[/b] on your GPU box.")

    def on_mount(self) -> None:
        self.query_one("#choice", RadioSet).focus()
        self._sync_choice()
        if self.state.probe_record is not None:
            self._fill_results(self.state.probe_record)
            self.query_one("#probe-message", Label).update(self.state.probe_note)

    @property
    def choice(self) -> str:
        pressed = self.query_one("#choice", RadioSet).pressed_button
        return pressed.name if pressed and pressed.name else "catalog"

    @on(RadioSet.Changed)
    def _sync_choice(self) -> None:
        choice = self.choice
        self.query_one("#record-path").display = choice == "import"
        if choice == "catalog":
            self._use(None, "catalog", "using catalog figures for every GPU")
        elif choice != self.state.probe_source and not (
                choice in ("quick", "full") and self.state.probe_source == "run"):
            self.state.probe_source = None
        self.refresh_nav()

    def _use(self, record: ProbeRecord | None, source: str, note: str) -> None:
        self.state.probe_record = record
        self.state.probe_source = source  # type: ignore[assignment]
        self.state.probe_note = note
        self.query_one("#probe-message", Label).update(note)

    @on(Input.Submitted, "#record-path")
    def _import(self, event: Input.Submitted) -> None:
        path = Path(event.value).expanduser()
        try:
            record = load_probe_record(path)
        except InputError as exc:
            self.query_one("#probe-message", Label).update(f"[$error]{escape(exc.one_line())}[/]")
            return
        self._fill_results(record)
        dev = record.stamp.device
        name = escape(clean(dev.name))  # someone else's text, shown as markup
        self._use(record, "import", f"imported {escape(path.name)}: {dev.count} × {name}"
                  + (" (interrupted run)" if record.interrupted else ""))
        self.refresh_nav()

    def _fill_results(self, record: ProbeRecord) -> None:
        table = self.query_one("#probe-results", DataTable)
        table.clear()
        for row in rows_of(record):
            table.add_row(row.probe, row.what, _value(row), row.unit)

    def action_run(self) -> None:
        if self.running or self.choice not in ("quick", "full"):
            if not self.running:
                self.notify("Choose a quick or full run first.", severity="warning")
            return
        mode: ProbeMode = "quick" if self.choice == "quick" else "full"
        self.query_one("#probe-status", DataTable).clear()
        self.query_one("#probe-results", DataTable).clear()
        self.query_one("#progress", ProgressBar).update(total=100, progress=0)
        self.stop.clear()
        self.running = True
        self.state.probe_source = None
        self.query_one("#probe-message", Label).update(f"running {mode} probes… ^x cancels")
        self.refresh_nav()
        self._run(mode)

    @work(thread=True, exclusive=True, group="probes", exit_on_error=False,
          description="probes")
    def _run(self, mode: ProbeMode) -> None:
        worker = get_current_worker()
        record = self.ctx.runner.run(
            mode, self._post_progress, lambda: self.stop.is_set() or worker.is_cancelled)
        self.post_message(ProbeDone(record, self.stop.is_set()))

    def _post_progress(self, progress: ProbeProgress) -> None:
        """Called from the worker thread; post_message is the thread-safe way in."""
        self.post_message(ProbeUpdate(progress))

    def on_probe_update(self, message: ProbeUpdate) -> None:
        """A new stage marks the previous ones done; rows go straight into the results."""
        p = message.progress
        self.query_one("#progress", ProgressBar).update(progress=round(p.fraction * 100))
        status = self.query_one("#probe-status", DataTable)
        for key in status.rows:
            if key.value != p.stage:
                status.update_cell(key, "status", "done")
        text = f"running: {p.message}" if p.message else "running"
        if p.stage == "done":  # the runner's closing update, not a stage of its own
            pass
        elif p.stage in status.rows:
            status.update_cell(p.stage, "status", text)
        else:
            status.add_row(p.stage, text, key=p.stage)
        results = self.query_one("#probe-results", DataTable)
        for row in p.rows:
            results.add_row(row.probe, row.what, _value(row), row.unit)

    def on_probe_done(self, message: ProbeDone) -> None:
        self.running = False
        record = message.record
        status = self.query_one("#probe-status", DataTable)
        last = list(status.rows)[-1:] if status.rows else []
        for key in last:
            text = "stopped" if message.cancelled else "done"
            status.update_cell(key, "status", text)
        n = len(rows_of(record))
        note = (f"{self.choice} run cancelled: kept the {n} result{'s' if n != 1 else ''} "
                "measured so far" if message.cancelled
                else f"{self.choice} run complete: {n} results")
        if record.stamp.device.kind == "cpu":
            note += " (measured on the CPU: shown for reference, not used to project GPUs)"
        if n:
            self._use(record, "run", note)
        else:
            self.query_one("#probe-message", Label).update(note + "; nothing to keep")
        self.refresh_nav()

    @on(Worker.StateChanged)
    def _failed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            self.running = False
            self.query_one("#probe-message", Label).update(
                f"[$error]probes failed: {escape(str(event.worker.error))}[/]; skip or import "
                "instead")
            self.refresh_nav()

    def action_cancel(self) -> None:
        if self.running:
            self.stop.set()
            self.query_one("#probe-message", Label).update("cancelling after the current step…")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel":
            return self.running
        if action == "run":
            return not self.running
        if action in ("back", "next") and self.running:
            return None
        return super().check_action(action, parameters)

    def ready(self) -> tuple[bool, str]:
        if self.running:
            return False, "probes running: wait or ^x to cancel"
        source = self.state.probe_source
        if source == "catalog":
            return True, "catalog figures"
        if source in ("run", "import") and self.state.probe_record is not None:
            return True, "using the probe results above"
        if self.choice == "import":
            return False, "type the record's path and press enter"
        return False, "press ^r to run the probes"


def _value(row: ProbeRow) -> str:
    """The figure, or why there is none (a probe that could not run says so)."""
    if row.status != "ok" or row.value is None:
        return row.status if row.status != "ok" else "-"
    return fmt_num(row.value, None if row.value < 100 else 0)
