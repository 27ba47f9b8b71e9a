"""The wizard app: owns the state, swaps step screens, and runs the engine (decide, the
configuration sweep) in workers.

Every screen reads and writes `WizardState`; a screen shown again redraws from
it, so each one shows the answers as they stand. Work that must outlive a
screen (decide, sweep) runs on the app; a probe run belongs to its screen. Only
Welcome's modules load before the first paint; the other steps' load when built.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Iterable
from functools import partial
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from pydantic import ValidationError
from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState, get_current_worker

from advisor.core.errors import InputError
from advisor.core.model.catalog import Catalog
from advisor.tui.hardware import Hardware, detect_hardware
from advisor.tui.runner import ProbeRunner
from advisor.tui.screens.base import ComputedScreen, StepScreen
from advisor.tui.screens.welcome import WelcomeScreen
from advisor.tui.state import STEP_IDS, STEPS, Computed, Context, Inputs, WizardState

if TYPE_CHECKING:
    from textual.widget import AwaitMount

    from advisor.core.decide import Decision
    from advisor.core.economics.configs import ConfigSweep

SCREENS = ("welcome.WelcomeScreen", "workload.WorkloadScreen", "targets.TargetsScreen",
           "gates.DtypeScreen", "gates.SoftwareScreen", "probes.ProbesScreen",
           "performance.PerformanceScreen", "configs.ConfigsScreen", "verdict.VerdictScreen")
"""Each step's screen class, as module.Class under advisor.tui.screens, in STEPS order."""


def screen_class(step: int) -> type[StepScreen]:
    """A step's screen class, its module imported on first use."""
    module, _, name = SCREENS[step].rpartition(".")
    cls: type[StepScreen] = getattr(import_module(f"advisor.tui.screens.{module}"), name)
    return cls


def _decide(inputs: Inputs, catalog: Catalog) -> Decision:
    from advisor.core.decide import decide  # numpy loads here, not at startup

    return decide(inputs[0], catalog, inputs[1])


def _sweep(inputs: Inputs, catalog: Catalog) -> ConfigSweep:
    from advisor.core.economics.configs import sweep_configs

    return sweep_configs(inputs[0], catalog, inputs[1])


AHEAD = tuple(STEP_IDS.index(s) for s in ("workload", "targets", "configs"))
"""Steps built before they are reached, the slowest to build first (forms, the catalog
table, price fields), so that a first showing is about as quick as a revisit. None of
them depends on the hardware, which may still be being detected."""
AHEAD_AFTER_S = 0.5
"""Long enough after launch that building ahead never delays the first paint."""
ENGINES: dict[str, Callable[[Inputs, Catalog], object]] = {"decision": _decide, "sweep": _sweep}
"""How each computed result is made; a worker group of the same name runs it."""


class AdvisorApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "advisor"
    BINDINGS: ClassVar = [
        Binding("ctrl+q", "quit", "Quit", priority=True, key_display="^q"),
        Binding("ctrl+s", "save_svg", "Screenshot", show=False),
    ]

    def __init__(self, catalog: Catalog, hardware: Hardware | None, runner: ProbeRunner,
                 state: WizardState | None = None, start: int = 0,
                 screenshot_dir: Path | None = None, export_dir: Path | None = None,
                 own_process: bool = False) -> None:
        """`own_process`: the app is the process (`advisor`), so it may tune the garbage
        collector; tests and scripts that run many apps in one process leave it alone."""
        super().__init__()
        self.own_process = own_process
        self.ctx = Context(catalog=catalog, hardware=hardware or Hardware(pending=True),
                           runner=runner, state=state or WizardState())
        self.start = start
        self.screenshot_dir = screenshot_dir or Path.cwd()
        self.export_dir = export_dir or Path.cwd()
        self.exported: Path | None = None
        self.built_ahead = asyncio.Event()
        """Set once every AHEAD screen is built and mounted: what a test waits on."""
        self._ahead_mounts: list[AwaitMount] = []
        self._ahead_stopped = False

    @property
    def state(self) -> WizardState:
        return self.ctx.state

    @property
    def step(self) -> int | None:
        """Index of the step on screen, or None while a dialog is on top."""
        return self.screen.STEP if isinstance(self.screen, StepScreen) else None

    def on_mount(self) -> None:
        self.goto(self.start)
        if self.ctx.hardware.pending:
            self._detect()
        self.set_timer(AHEAD_AFTER_S, self._build_ahead)

    def _build_ahead(self) -> None:
        """While the user reads the first screen, do what later steps would otherwise do on
        a key press: build the slowest screens off screen (composed and mounted as Textual
        does on a first push, not shown), one per call; then import the other steps'
        modules, and the engine in a thread."""
        if self._ahead_stopped:
            return
        for step in AHEAD:
            name = f"step-{step}"
            if not self.is_screen_installed(name):
                self.install_screen(screen_class(step)(self.ctx, ahead=True), name=name)
                # registers it: compose and mount, no layout or paint
                self._ahead_mounts.append(self._get_screen(name)[1])
                self.set_timer(0.05, self._build_ahead)
                return
        for step in range(len(STEPS)):
            screen_class(step)
        self._load_engine()
        self.call_next(self._ahead_done)

    async def _ahead_done(self) -> None:
        for mounted in self._ahead_mounts:
            await mounted
        self.built_ahead.set()

    async def stop_building_ahead(self) -> None:
        """Build no more screens ahead, and wait for those being mounted now: closing the
        app while a screen is half mounted makes its handlers query widgets that are gone."""
        self._ahead_stopped = True
        for mounted in self._ahead_mounts:
            await mounted

    @work(thread=True, group="ahead", description="load the engine")
    def _load_engine(self) -> None:
        """numpy and the engine's models (~150 ms), so the first decision does not wait."""
        import_module("advisor.core.model.answers")
        import_module("advisor.core.decide")
        if self.own_process:
            self.call_from_thread(self._settle_gc)

    def _settle_gc(self) -> None:
        """The long-lived objects (Textual, the catalog, the screens, numpy) go to the
        collector's permanent generation, and it runs less often: a full collection over
        them took 40-60 ms, enough to push a step transition over budget whenever one fell
        on a key press."""
        gc.collect()
        gc.freeze()
        gc.set_threshold(10_000, 20, 20)

    @work(thread=True, exclusive=True, group="detect", description="detect hardware")
    def _detect(self) -> None:
        """nvidia-smi can take seconds; the first screen paints without waiting for it."""
        self.call_from_thread(self._detected, detect_hardware(self.ctx.catalog))

    def _detected(self, hardware: Hardware) -> None:
        self.ctx.hardware = hardware
        if isinstance(self.screen, WelcomeScreen):
            self.screen.show_hardware()

    def goto(self, step: int) -> None:
        """Show a step; the one way steps change. Each step's screen is built on its first
        visit and kept: a revisit redraws what the state changed (`refresh_view`), which
        is several times faster than composing the form or catalog table again."""
        self.state.reached = max(self.state.reached, step)
        if step > STEP_IDS.index("software"):
            from advisor.tui.gating import apply_gates

            apply_gates(self.ctx, "software")
        name = f"step-{step}"
        if not self.is_screen_installed(name):
            self.install_screen(screen_class(step)(self.ctx), name=name)
        if isinstance(self.screen, StepScreen):
            self.switch_screen(name)
        else:
            self.push_screen(name)

    def inputs(self) -> Inputs:
        """What the engine computes from; equal Inputs reuse the result already computed."""
        state = self.state
        return state.to_answers(state.stack or self.ctx.hardware.stack), state.probes()

    def request(self, what: Computed) -> None:
        """A computed step asks for its result: reuse the one made from these answers, or
        make it once in a worker. Answers the engine cannot take are shown as an error."""
        try:
            inputs = self.inputs()
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            self._show_error(what, f"{where}: {err['msg']}" if where else err["msg"])
            return
        except (ValueError, InputError) as exc:
            self._show_error(what, str(exc))
            return
        result, made_for = getattr(self.state, what), getattr(self.state, f"{what}_for")
        if result is not None and made_for is None:
            # Results with no inputs recorded came from a resumed report, all from the same
            # answers: they stand for the answers as loaded, before any edit.
            for name in ENGINES:
                if getattr(self.state, name) is not None:
                    setattr(self.state, f"{name}_for", inputs)
            made_for = inputs
        if result is not None and made_for == inputs:
            self._computed(what, inputs, result)
        else:
            self.run_worker(partial(self._compute, what, inputs), thread=True, exclusive=True,
                            group=what, exit_on_error=False, description=what)

    def _compute(self, what: Computed, inputs: Inputs) -> None:
        result = ENGINES[what](inputs, self.ctx.catalog)
        if not get_current_worker().is_cancelled:  # newer answers are being computed
            self.call_from_thread(self._computed, what, inputs, result)

    def _computed(self, what: Computed, inputs: Inputs, result: object) -> None:
        setattr(self.state, what, result)
        setattr(self.state, f"{what}_for", inputs)
        screen = self.screen
        if isinstance(screen, ComputedScreen) and what == screen.COMPUTES:
            screen.show_result(result)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group in ENGINES and event.state == WorkerState.ERROR:
            error = event.worker.error
            text = error.one_line() if isinstance(error, InputError) else repr(error)
            self._show_error(event.worker.group, text)

    def _show_error(self, what: str, text: str) -> None:
        screen = self.screen
        if isinstance(screen, ComputedScreen) and what == screen.COMPUTES:
            screen.show_error(text)

    def action_export(self) -> None:
        if self.state.decision is None:
            self.notify("Nothing to export yet: reach Performance first.", severity="warning")
            return
        from advisor.tui.screens.export import ExportScreen

        self.push_screen(ExportScreen(self.export_dir / "advisor-report.toml"), self._export)

    def _export(self, path: Path | None) -> None:
        from advisor.tui.export import export_report

        state = self.state
        decision = state.decision
        if path is None or decision is None:
            return
        try:
            written = export_report(decision, self.ctx.catalog, state.probes(), path,
                                    state.decision_sweep())
        except (OSError, InputError) as exc:
            self.notify(f"could not write {path}: {exc}", severity="error", title="Export")
            return
        self.exported = written
        self.notify(f"report written to {written}", title="Export")

    def action_save_svg(self) -> None:
        """The screen as SVG in screenshot_dir, through advisor's one writer (Textual's own
        save_screenshot would replace a link or a device at that path)."""
        from datetime import datetime

        from advisor.io.atomic import write_output

        name = f"{self.title}_{datetime.now():%Y-%m-%dT%H_%M_%S_%f}.svg"
        try:
            path = write_output(self.screenshot_dir / name, self.export_screenshot())
        except InputError as exc:
            self.notify(exc.one_line(), severity="error", title="Screenshot")
            return
        self.notify(f"saved {path}", title="Screenshot")

    async def action_quit(self) -> None:
        """Ask running probes to stop first, so exit never waits on a long measurement."""
        self.workers.cancel_all()
        await self.stop_building_ahead()
        self.exit()

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            if command.title != "Screenshot":  # ours writes to a known folder and says where
                yield command
        yield SystemCommand("Save screenshot (SVG)", "Write the current screen to an SVG file "
                            f"in {self.screenshot_dir}", self.action_save_svg)
        if self.state.decision is not None:
            yield SystemCommand("Export report (TOML)", "Write the decision report, with a "
                                "path prompt", self.action_export)
        for i, (_, title) in enumerate(STEPS):
            if i <= self.state.reached and i != self.step:
                yield SystemCommand(f"Go to step {i + 1}: {title}", "Jump to a step you have "
                                    "already reached", lambda i=i: self.goto(i))


def run_app(resume: Path | None = None) -> int:
    """`advisor` with no subcommand: load the catalog and this box, then run the wizard.

    Bad input (a broken catalog overlay, an unreadable report) raises InputError
    before the screen is taken over, so the CLI prints it as one line.
    """
    from advisor.io.catalog_store import effective_catalog
    from advisor.tui.runner import PackageProbeRunner

    catalog = effective_catalog()
    state, start = None, 0
    if resume is not None:
        from advisor.tui.export import load_report, state_from_report

        state, start = state_from_report(load_report(resume)), len(STEPS) - 1
    app = AdvisorApp(catalog, None, PackageProbeRunner(), state=state, start=start,
                     own_process=True)
    app.run()
    return app.return_code or 0
