"""The wizard app: owns the state, swaps step screens, and runs the one decide call.

Screens are rebuilt on every visit from `WizardState`, so each one shows the
answers as they stand. Work that must outlive a screen (decide) runs on the
app; probe runs belong to their screen and stop when it is left.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from advisor.core.catalog import Catalog
from advisor.tui.gating import apply_gates
from advisor.tui.hardware import Hardware, detect_hardware
from advisor.tui.runner import ProbeRunner
from advisor.tui.screens.base import StepScreen
from advisor.tui.screens.gates import DtypeScreen, SoftwareScreen
from advisor.tui.screens.probes import ProbesScreen
from advisor.tui.screens.targets import TargetsScreen
from advisor.tui.screens.welcome import WelcomeScreen
from advisor.tui.screens.workload import WorkloadScreen
from advisor.tui.state import STEPS, Context, WizardState

SCREENS: tuple[type[StepScreen], ...] = (
    WelcomeScreen, WorkloadScreen, TargetsScreen, DtypeScreen, SoftwareScreen, ProbesScreen,
)


class AdvisorApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "advisor"
    BINDINGS: ClassVar = [
        Binding("ctrl+q", "quit", "Quit", priority=True, key_display="^q"),
        Binding("ctrl+s", "save_svg", "Screenshot", show=False),
    ]

    def __init__(self, catalog: Catalog, hardware: Hardware | None, runner: ProbeRunner,
                 state: WizardState | None = None, start: int = 0,
                 screenshot_dir: Path | None = None) -> None:
        super().__init__()
        self.ctx = Context(catalog=catalog, hardware=hardware or Hardware(pending=True),
                           runner=runner, state=state or WizardState())
        self.start = start
        self.screenshot_dir = screenshot_dir or Path.cwd()

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
        """Show a step, built fresh from the state; the one way screens change."""
        self.state.reached = max(self.state.reached, step)
        if step > SoftwareScreen.STEP:
            apply_gates(self.ctx, "software")
        screen = SCREENS[step](self.ctx)
        if isinstance(self.screen, StepScreen):
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    def action_save_svg(self) -> None:
        path = self.save_screenshot(path=str(self.screenshot_dir))
        self.notify(f"saved {path}", title="Screenshot")

    async def action_quit(self) -> None:
        """Ask running probes to stop first, so exit never waits on a long measurement."""
        for screen in self.screen_stack:
            self.workers.cancel_node(screen)
        self.exit()

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Save screenshot (SVG)", "Write the current screen to an SVG file "
                            f"in {self.screenshot_dir}", self.action_save_svg)
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

    app = AdvisorApp(effective_catalog(), None, PackageProbeRunner())
    app.run()
    return app.return_code or 0
