"""The wizard app: owns the state, swaps step screens, and runs the one decide call.

Every screen reads and writes `WizardState`; a screen shown again redraws from
it, so each one shows the answers as they stand. Work that must outlive a
screen (decide) runs on the app; a probe run belongs to its screen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from pydantic import ValidationError
from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState, get_current_worker

from advisor.core.catalog import Catalog
from advisor.core.errors import InputError
from advisor.tui.gating import apply_gates
from advisor.tui.hardware import Hardware, detect_hardware
from advisor.tui.runner import ProbeRunner
from advisor.tui.screens.base import ComputedScreen, StepScreen
from advisor.tui.screens.configs import ConfigsScreen
from advisor.tui.screens.export import ExportScreen
from advisor.tui.screens.gates import DtypeScreen, SoftwareScreen
from advisor.tui.screens.performance import PerformanceScreen
from advisor.tui.screens.probes import ProbesScreen
from advisor.tui.screens.targets import TargetsScreen
from advisor.tui.screens.verdict import VerdictScreen
from advisor.tui.screens.welcome import WelcomeScreen
from advisor.tui.screens.workload import WorkloadScreen
from advisor.tui.state import STEPS, Computed, Context, Inputs, WizardState

if TYPE_CHECKING:
    from advisor.core.configs import ConfigSweep
    from advisor.core.decide import Decision

SCREENS: tuple[type[StepScreen], ...] = (
    WelcomeScreen, WorkloadScreen, TargetsScreen, DtypeScreen, SoftwareScreen, ProbesScreen,
    PerformanceScreen, ConfigsScreen, VerdictScreen,
)


def _decide(inputs: Inputs, catalog: Catalog) -> Decision:
    from advisor.core.decide import decide  # numpy loads here, not at startup

    return decide(inputs[0], catalog, inputs[1])


def _sweep(inputs: Inputs, catalog: Catalog) -> ConfigSweep:
    from advisor.core.configs import sweep_configs

    return sweep_configs(inputs[0], catalog, inputs[1])


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
                 screenshot_dir: Path | None = None, export_dir: Path | None = None) -> None:
        super().__init__()
        self.ctx = Context(catalog=catalog, hardware=hardware or Hardware(pending=True),
                           runner=runner, state=state or WizardState())
        self.start = start
        self.screenshot_dir = screenshot_dir or Path.cwd()
        self.export_dir = export_dir or Path.cwd()
        self.exported: Path | None = None

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
        if step > SoftwareScreen.STEP:
            apply_gates(self.ctx, "software")
        name = f"step-{step}"
        if not self.is_screen_installed(name):
            self.install_screen(SCREENS[step](self.ctx), name=name)
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
        path = self.save_screenshot(path=str(self.screenshot_dir))
        self.notify(f"saved {path}", title="Screenshot")

    async def action_quit(self) -> None:
        """Ask running probes to stop first, so exit never waits on a long measurement."""
        self.workers.cancel_all()
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
    from advisor.catalog_store import effective_catalog
    from advisor.tui.runner import PackageProbeRunner

    catalog = effective_catalog()
    state, start = None, 0
    if resume is not None:
        from advisor.tui.export import load_report, state_from_report

        state, start = state_from_report(load_report(resume)), len(STEPS) - 1
    app = AdvisorApp(catalog, None, PackageProbeRunner(), state=state, start=start)
    app.run()
    return app.return_code or 0
