"""Step 6: measure this box (quick or full), or not, or import a record made elsewhere; and
whether to use the records filed with `advisor probe import` (as `advisor decide` does).

The run happens in a thread worker; each step posts a `ProbeUpdate` that moves the
progress bar and adds a row to the results table. Cancel sets a flag the runner polls
between steps: the run ends at the next step, keeps what it measured, and says so; the
bar stays where it stopped. The time each run takes is the probes package's own plan
estimate for this kind of box.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.markup import escape
from textual.message import Message
from textual.widgets import DataTable, Input, ProgressBar, RadioSet, Static
from textual.worker import Worker, WorkerState, get_current_worker

from advisor.core import clean
from advisor.present.humanize import fmt_num
from advisor.tui.runner import ProbeMode, ProbeProgress, ProbeRow, rows_of
from advisor.tui.screens.base import StepScreen
from advisor.tui.widgets.toggles import Choice, Tick

if TYPE_CHECKING:
    from advisor.core import ProbeRecord


@dataclass
class ProbeUpdate(Message):
    progress: ProbeProgress


@dataclass
class ProbeDone(Message):
    record: ProbeRecord
    cancelled: bool


def about(seconds: float | None) -> str:
    """The plan's estimate, which its time budgets cap: a run takes up to about this."""
    if seconds is None:
        return ""
    if seconds < 90:
        return f"up to about {max(5, math.ceil(seconds / 5) * 5)} s"
    return f"up to about {math.ceil(seconds / 60)} min"


def record_line(gpu: str, r: ProbeRecord) -> str:
    """A record's stamp in one line; its text is someone else's, so it is sanitised."""
    from advisor.core import clean

    s = r.stamp
    torch = s.versions.torch or "no torch"
    return clean(f"{gpu}: {s.device.name} on {s.hostname}, {s.date}, torch {torch}")


class ProbesScreen(StepScreen):
    STEP = 5
    BINDINGS: ClassVar = [
        Binding("ctrl+r", "run", "Run", key_display="^r"),
        Binding("ctrl+x", "cancel", "Cancel", key_display="^x"),
    ]

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.stop = threading.Event()
        self.running = False
        self.shown_record: ProbeRecord | None = None
        self._stored: dict[str, ProbeRecord] | None = None

    def _choices(self) -> list[tuple[str, str]]:
        gpu = self.ctx.hardware.has_gpu
        runner = self.ctx.runner
        out = []
        for mode, what in (("quick", "Quick run on this box"), ("full", "Full run on this box")):
            est = about(runner.estimate_s(mode, gpu))  # type: ignore[arg-type]
            out.append((mode, f"{what} ({est})" if est else what))
        out += [("none", "No run: imported records and catalog figures"),
                ("import", "Import a record file made on another box")]
        if self.state.probe_choice == "report":
            out.append(("report", "The records the resumed report used"))
        return out

    def compose_body(self) -> ComposeResult:
        default = self._default_choice()
        with Horizontal(id="probe-top"):
            with Vertical(id="probe-choice"):
                with RadioSet(id="choice"):
                    for key, label in self._choices():
                        yield Choice(label, value=key == default, name=key)
                yield Input(placeholder="path to probe record (.json), then enter",
                            id="record-path", compact=True)
                yield Tick("use records filed with `advisor probe import`",
                           self.state.use_stored, id="use-stored", compact=True)
            yield Static(self._about(), id="probe-about", markup=True)
        yield ProgressBar(total=100, show_eta=False, id="progress")
        with Horizontal(id="probe-tables"):
            status: DataTable[str] = DataTable(id="probe-status", cursor_type="none")
            status.add_column("stage", key="stage", width=12)
            status.add_column("status", key="status", width=22)
            yield status
            results: DataTable[str] = DataTable(id="probe-results", cursor_type="none")
            for label, width in (("probe", 9), ("measured", 32), ("value", 9), ("unit", 6)):
                results.add_column(label, width=width)
            yield results
        yield Static("", id="probe-message", markup=True)

    def _default_choice(self) -> str:
        if self.state.probe_choice is not None:
            return self.state.probe_choice
        return "none"

    def _about(self) -> str:
        if self.ctx.hardware.has_gpu:
            return ("Probes measure what this box really achieves (matmul, attention, memory "
                    "bandwidth), so projections start from facts, not spec sheets.")
        return ("[$warning]No GPU here[/]: a run would measure this CPU, which says nothing "
                "about GPUs (it is shown, not used). Use catalog figures, or import a record "
                "made with [b]python -m probes run[/b] on your GPU box.")

    def mounted(self) -> None:
        self.query_one("#choice", RadioSet).focus()
        self.query_one("#progress").display = False
        self._sync_choice()
        record = next(iter(self.state.probe_records.values()), None)
        if record is not None:
            self._fill_results(record)
        self._message()

    def refresh_view(self) -> None:
        self._message()
        super().refresh_view()

    # -- what will be used ---------------------------------------------------------------

    def stored(self) -> dict[str, ProbeRecord]:
        if self._stored is None:
            from advisor.core import InputError
            from advisor.io.probe_store import stored_probes

            try:
                self._stored = stored_probes()
            except InputError as exc:
                self.notify(exc.one_line(), severity="error", title="Probe store")
                self._stored = {}
        return self._stored

    def _message(self, extra: str = "") -> None:
        """What the projection will use, GPU by GPU, said once."""
        gpus = set(self.state.gpus())
        lines = [extra] if extra else []
        own = {g: r for g, r in self.state.probe_records.items() if g in gpus}
        for g, r in own.items():
            lines.append(f"[b]used[/b] for {escape(record_line(g, r))}"
                         + (" [$warning](interrupted run: missing figures fall back to the "
                            "catalog)[/]" if r.interrupted else ""))
        stored = {g: r for g, r in self.stored().items() if g in gpus and g not in own}
        if stored:
            verb = "[b]used[/b]" if self.state.use_stored else "[dim]ignored[/]"
            lines += [f"{verb} filed record {escape(record_line(g, r))}"
                      for g, r in stored.items()]
        if not own and not (stored and self.state.use_stored):
            lines.append("no probe record for these GPUs: catalog figures for every GPU")
        self.query_one("#probe-message", Static).update("\n".join(lines))

    @property
    def choice(self) -> str:
        pressed = self.query_one("#choice", RadioSet).pressed_button
        return pressed.name if pressed and pressed.name else "none"

    @on(RadioSet.Changed)
    def _sync_choice(self) -> None:
        choice = self.choice
        self.query_one("#record-path").display = choice == "import"
        if choice != self.state.probe_choice and not self.running:
            if choice == "none":
                self._use({}, "none")
            elif self.state.probe_choice in ("quick", "full") and choice in ("quick", "full"):
                pass  # the measured record stays until a new run replaces it
        self.refresh_bindings()
        self.refresh_nav()

    def _use(self, records: dict[str, ProbeRecord], choice: str) -> None:
        self.state.use_probes(records, choice)  # type: ignore[arg-type]
        self._message()

    @on(Tick.Changed, "#use-stored")
    def _stored_toggled(self, event: Tick.Changed) -> None:
        self.state.set_use_stored(event.value)
        self._message()

    @on(Input.Submitted, "#record-path")
    def _import(self, event: Input.Submitted) -> None:
        from advisor.core import InputError
        from advisor.io.documents import load_probe_record

        path = Path(event.value).expanduser()
        try:
            record = load_probe_record(path)
            cid = record.stamp.device.catalog_id
            gpu = self.ctx.catalog.gpu(cid).id if cid else self.state.current
        except InputError as exc:
            self._message(f"[$error]✘ {escape(exc.one_line())}[/]")
            return
        if record.stamp.device.kind == "cpu" or gpu is None:
            self._message("[$error]✘ that record was measured on a CPU: it says nothing "
                          "about any GPU[/]")
            return
        self._fill_results(record)
        self._use({gpu: record}, "import")
        self.refresh_nav()

    def _fill_results(self, record: ProbeRecord) -> None:
        self.shown_record = record
        table = self.query_one("#probe-results", DataTable)
        table.clear()
        for row in rows_of(record):
            table.add_row(row.probe, clean(row.what), _value(row), row.unit)

    # -- a run ------------------------------------------------------------------------

    def action_run(self) -> None:
        if self.running or self.choice not in ("quick", "full"):
            return
        mode: ProbeMode = "quick" if self.choice == "quick" else "full"
        self.query_one("#probe-status", DataTable).clear()
        self.query_one("#probe-results", DataTable).clear()
        bar = self.query_one("#progress", ProgressBar)
        bar.update(total=100, progress=0)
        bar.display = True
        self.stop.clear()
        self.running = True
        self.state.use_probes({}, self.state.probe_choice)
        est = about(self.ctx.runner.estimate_s(mode, self.ctx.hardware.has_gpu))
        self.query_one("#probe-message", Static).update(
            f"running the {mode} probes{' (' + est + ')' if est else ''}… ^x cancels and "
            "keeps what is measured so far")
        self.refresh_bindings()
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
        """A new stage marks the previous ones done; rows go straight into the results.
        After a cancel the bar stays where the run stopped."""
        p = message.progress
        if not self.stop.is_set():
            self.query_one("#progress", ProgressBar).update(progress=round(p.fraction * 100))
        status = self.query_one("#probe-status", DataTable)
        for key in status.rows:
            if key.value != p.stage:
                status.update_cell(key, "status", "done")
        text = f"running: {p.message}" if p.message else "running"
        if p.stage != "done":  # the runner's closing update is not a stage of its own
            if p.stage in status.rows:
                status.update_cell(p.stage, "status", text)
            else:
                status.add_row(p.stage, text, key=p.stage)
        results = self.query_one("#probe-results", DataTable)
        for row in p.rows:
            results.add_row(row.probe, row.what, _value(row), row.unit)

    def on_probe_done(self, message: ProbeDone) -> None:
        self.running = False
        record = message.record
        self.shown_record = record
        status = self.query_one("#probe-status", DataTable)
        for key in list(status.rows)[-1:]:
            status.update_cell(key, "status", "stopped" if message.cancelled else "done")
        n = len(rows_of(record))
        bar = self.query_one("#progress", ProgressBar)
        if message.cancelled:
            note = (f"[$warning]cancelled at {bar.percentage or 0:.0%}[/]: kept the {n} "
                    f"result{'s' if n != 1 else ''} measured so far; the rest come from the "
                    "catalog")
        else:
            took = f" in {record.seconds_total:.0f} s" if record.seconds_total else ""
            note = f"{self.choice} run complete{took}: {n} results"
        gpu = record.stamp.device.catalog_id or self.state.current
        if record.stamp.device.kind == "cpu" or gpu is None:
            note += ("; [$warning]measured on the CPU: shown for reference, not used to "
                     "project GPUs[/]")
            self._use({}, self.choice)
        elif n:
            self._use({gpu: record}, self.choice)
        else:
            note += "; nothing to keep"
            self._use({}, self.choice)
        self._message(note)
        self.refresh_bindings()
        self.refresh_nav()

    @on(Worker.StateChanged)
    def _failed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "probes" and event.state == WorkerState.ERROR:
            self.running = False
            self._message(f"[$error]✘ probes failed: {escape(str(event.worker.error))}[/]; "
                          "choose no run or import instead")
            self.refresh_bindings()
            self.refresh_nav()

    def action_cancel(self) -> None:
        if self.running:
            self.stop.set()
            self.query_one("#probe-message", Static).update(
                "cancelling after the current step… (what is measured is kept)")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel":
            return self.running
        if action == "run":
            return not self.running and self.choice in ("quick", "full")
        if action in ("back", "next") and self.running:
            return None
        return super().check_action(action, parameters)

    def ready(self) -> tuple[bool, str]:
        if self.running:
            return False, "probes running: wait, or ^x to cancel"
        choice = self.choice
        if choice in ("quick", "full") and self.state.probe_choice != choice:
            return False, "press ^r to run the probes, or choose no run"
        if choice == "import" and self.state.probe_choice != "import":
            return False, "type the record's path and press enter"
        return True, ""


def _value(row: ProbeRow) -> str:
    """The figure, or why there is none (a probe that could not run says so)."""
    if row.status != "ok":
        return row.status
    return fmt_num(row.value, 0 if row.value is not None and row.value >= 100 else None)
