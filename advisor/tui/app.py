"""The wizard app: owns the state, swaps step screens, and asks the engine for the Report.

The wizard is a way of filling `Answers`. Every computed step (the gates, Performance,
Configurations, Verdict) renders one `Report` that `advisor.core.run` builds from the
answers as they stand, with the probe records `advisor decide` would use (the ones
filed with `advisor probe import`, plus the wizard's own run); export writes that same
Report. Nothing here computes, filters or re-phrases a result.

Each step's screen is built on its first visit and kept (`install_screen`), so a revisit
redraws only what the answers changed. Screens and app talk through the typed messages of
`advisor.tui.messages`: a step asks for a result or a step, the app answers with a result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass
from functools import partial
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.worker import Worker, WorkerState, get_current_worker

from advisor.heap import keep_for_the_session, loading_for_the_session
from advisor.tui.hardware import Hardware, detect_hardware
from advisor.tui.messages import (
    KINDS,
    AskResult,
    CatalogLoaded,
    GoToStep,
    HardwareDetected,
    Kind,
    ResultComputing,
    ResultFailed,
    ResultReady,
    StepReady,
)
from advisor.tui.runner import ProbeRunner
from advisor.tui.screens.base import StepScreen
from advisor.tui.state import STEP_IDS, STEPS, Context, WizardState

if TYPE_CHECKING:
    from advisor.core import Answers, Catalog, ProbeRecord, Report

SCREENS = ("welcome.WelcomeScreen", "workload.WorkloadScreen", "targets.TargetsScreen",
           "gates.DtypeScreen", "gates.SoftwareScreen", "probes.ProbesScreen",
           "performance.PerformanceScreen", "configs.ConfigsScreen", "verdict.VerdictScreen")
"""Each step's screen class, as module.Class under advisor.tui.screens, in STEPS order."""

WARM_UP_AFTER_S = 0.5
"""Long enough after launch that loading the engine never delays the first paint."""
BUILD_AHEAD_AFTER_S = 0.3
"""After a step is shown, the next is built off screen: long enough that the shown step's
own first work (its first frame, the engine request) goes first."""
STEPS_MODE = "steps"
"""The mode the steps and dialogs are shown in. The app's default mode is not shown after
launch: a step built ahead is pushed onto its screen stack, where Textual composes and
mounts it without showing it (`push_screen(mode=...)`)."""


def screen_class(step: int) -> type[StepScreen]:
    """A step's screen class, its module imported on first use."""
    module, _, name = SCREENS[step].rpartition(".")
    cls: type[StepScreen] = getattr(import_module(f"advisor.tui.screens.{module}"), name)
    return cls


@dataclass(frozen=True)
class Inputs:
    """What a Report is computed from; equal Inputs reuse the Report already made."""

    answers: Answers
    given: str
    """The answers as given (defaults left out): equal answers with different defaults
    given (8 GPUs typed, or left at the default 8) list different defaults."""
    own: tuple[tuple[str, int], ...]
    """The wizard's own probe records (catalog id, object id): a new run is a new input."""
    stored: bool


def effective_probes(answers: Answers, catalog: Catalog, state: WizardState
                     ) -> dict[str, ProbeRecord]:
    """The records `advisor decide` would use for these GPUs (the imported ones, unless the
    user turned them off), with the wizard's own records on top for their GPUs."""
    from advisor.io.probe_store import probes_for

    ids = [s.gpu for s in answers.compared(catalog)]
    probes = probes_for(ids, catalog, stored=state.use_stored)
    probes.update({g: r for g, r in state.probe_records.items() if g in ids})
    return probes


class AdvisorApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "advisor"
    BINDINGS: ClassVar = [
        Binding("ctrl+q", "quit", "Quit", priority=True, key_display="^q"),
        Binding("f1", "help", "Help", key_display="F1"),
        Binding("question_mark", "help", "Help", show=False),
        Binding("ctrl+s", "save_svg", "Screenshot", show=False),
    ]

    def __init__(self, catalog: Catalog | Callable[[], Catalog], hardware: Hardware | None,
                 runner: ProbeRunner, state: WizardState | None = None, start: int = 0,
                 screenshot_dir: Path | None = None, export_dir: Path | None = None,
                 report: Report | None = None) -> None:
        """`catalog`: the catalog, or how to load it: then the first step paints before it
        is loaded (in a thread) and fills in after. `report`: a resumed report, shown as is
        until an answer changes."""
        super().__init__()
        self._load_catalog = catalog if callable(catalog) else None
        self.ctx = Context(hardware=hardware or Hardware(pending=True), runner=runner,
                           state=state or WizardState(),
                           loaded=None if callable(catalog) else catalog)
        self.start = start
        self.screenshot_dir = screenshot_dir or Path.cwd()
        self.export_dir = export_dir or Path.cwd()
        self.exported: Path | None = None
        self.results: dict[Kind, tuple[Inputs, Any]] = {}
        self._loaded = report
        self._computing: set[Kind] = set()
        self._pending: dict[Kind, Inputs] = {}
        """Inputs asked for while that kind was being computed: made next, once."""
        self._holds: set[str] = {"catalog"} if self._load_catalog else set()
        """Why keys typed now must wait: "key" (the one before is still on its way through
        the widgets: it may move the focus), "screen" (a new step is being built),
        "catalog" (the first step's table is not there yet)."""
        self._held: list[events.Key] = []
        self._detect_pending = False
        """This box is still to be looked at, once the catalog has filled in a step."""
        self._saved: str | None = None
        """The answers as last saved or resumed (JSON of what was given): quit asks when
        the answers differ from them."""

    @property
    def state(self) -> WizardState:
        return self.ctx.state

    @property
    def report(self) -> Report | None:
        """The Report of the answers as they stand, if it has been made."""
        return self.held("report")

    @property
    def typing_ahead(self) -> bool:
        """Whether keys typed are still on their way: held for a step being built, or
        following the key before them up the widgets."""
        return bool(self._held) or "key" in self._holds

    @property
    def step(self) -> int | None:
        """Index of the step on screen, or None while a dialog is on top."""
        return self.screen.STEP if isinstance(self.screen, StepScreen) else None

    def on_mount(self) -> None:
        if self._loaded is not None:
            with suppress(Exception):  # shown as an error when a step asks for the report
                inputs = self.inputs("report")
                # Shown as saved while the answers are the report's; any edit recomputes.
                if inputs.answers == self._loaded.decision.answers:
                    self.results["report"] = (inputs, self._loaded)
                    self._saved = inputs.given
        self.add_mode(STEPS_MODE, Screen)
        self.switch_mode(STEPS_MODE)
        self.goto(self.start)
        if self._load_catalog is not None:
            self.call_after_refresh(self.run_worker, self._load, thread=True, group="catalog",
                                    exit_on_error=False, description="load the catalog")
        else:
            self._catalog_ready()

    def _load(self) -> None:
        """The catalog (its models, the shipped data and any pulled overlay) after the first
        paint; bad data ends the app with the CLI's one line and exit code 2."""
        from advisor.core import EXIT_INPUT_ERROR, InputError

        assert self._load_catalog is not None
        try:
            catalog = self._load_catalog()
        except InputError as exc:
            self.call_from_thread(self.exit, return_code=EXIT_INPUT_ERROR,
                                  message=f"advisor: error: {exc.one_line()}")
            return
        self.call_from_thread(self.call_later, self._loaded_catalog, catalog)

    async def _loaded_catalog(self, catalog: Catalog) -> None:
        """The first step fills in (under a dialog too); keys held meanwhile go on once it
        says it has (`StepReady`), after the focus it asks for, or at once to a dialog."""
        self.ctx.loaded = catalog
        for screen in self.screen_stack:
            if isinstance(screen, StepScreen):
                screen.post_message(CatalogLoaded())
        if not isinstance(self.screen, StepScreen):
            await self._release("catalog")
        keep_for_the_session()
        self._catalog_ready()

    def _catalog_ready(self) -> None:
        """What needs the catalog: this box's GPUs named by catalog id (looked for once the
        step on screen has shown what the catalog filled in, `on_step_ready`), the engine's
        warm-up."""
        self.set_timer(WARM_UP_AFTER_S, self._warm_up)
        self._detect_pending = self.ctx.hardware.pending

    def _start_detecting(self) -> None:
        if self._detect_pending and self.is_running:
            self._detect_pending = False
            self.run_worker(self._detect, thread=True, exclusive=True, group="detect",
                            description="detect hardware")

    def _warm_up(self) -> None:
        """After the first paint, load the engine (numpy, its models) in a thread while the
        user reads Welcome, so the first step that asks for a Report does not wait on it."""
        self.run_worker(_import_engine, thread=True, group="warm-up",
                        description="load the engine")

    def _detect(self) -> None:
        """nvidia-smi can take seconds; the first screen paints without waiting for it."""
        self.call_from_thread(self._detected, detect_hardware(self.ctx.catalog))

    def _detected(self, hardware: Hardware) -> None:
        self.ctx.hardware = hardware
        self.screen.post_message(HardwareDetected())

    def goto(self, step: int) -> None:
        """Show a step; the one way steps change. A step shown for the first time is built
        now: keys typed before it has its focus wait for it (`StepReady`), so they land
        in the field they were typed for, never in the step left behind."""
        self.state.reach(step)
        name = f"step-{step}"
        if not self.is_screen_installed(name):
            self.install_screen(screen_class(step)(self.ctx), name=name)
        screen = self.get_screen(name)
        if isinstance(screen, StepScreen) and not screen.built:
            self._holds.add("screen")
        if isinstance(self.screen, StepScreen):
            self.switch_screen(name)
        else:
            self.push_screen(name)

    def build_ahead(self, step: int) -> None:
        """Build the next step off screen once this one is up, so going on shows a step
        already composed (a revisit) instead of building it while the user waits."""
        if step >= len(STEPS) or self.is_screen_installed(f"step-{step}"):
            return
        # After the shown step's first frame, and a moment for its own first work.
        self.call_after_refresh(self.set_timer, BUILD_AHEAD_AFTER_S,
                                partial(self._build_ahead, step))

    def _build_ahead(self, step: int) -> None:
        name = f"step-{step}"
        if self.is_screen_installed(name) or not self.is_running:  # got there first, or quit
            return
        if self._holds:  # keys on their way: they go first
            self.set_timer(BUILD_AHEAD_AFTER_S, partial(self._build_ahead, step))
            return
        self.install_screen(screen_class(step)(self.ctx, ahead=True), name=name)
        self.push_screen(name, mode=self.DEFAULT_MODE)  # composed and mounted, not shown

    def action_goto_step(self, step: int) -> None:
        """The stepper's links and the palette: any step already reached."""
        if step <= self.state.reached and isinstance(self.screen, StepScreen) \
                and step != self.step:
            self.goto(step)

    async def on_event(self, event: events.Event) -> None:
        """Typed keys go to the focused widget one at a time: the next waits until the one
        before has finished its way up the widgets (a Tab, ^n or enter handled there may move
        the focus or the step), and while a new step composes. Quit never waits."""
        if not isinstance(event, events.Key) or event.is_forwarded or event.key == "ctrl+q":
            await super().on_event(event)
            return
        if self._holds:
            self._held.append(event)
            return
        target = self.focused or self.screen
        await super().on_event(event)
        if event.is_forwarded:  # not taken by a priority binding: follow it up the widgets
            self._holds.add("key")
            if not target.call_later(self._follow, event, target):  # after it, in its queue
                self._holds.discard("key")

    def _follow(self, event: events.Key, node: Any) -> None:
        """Runs in each node's queue just after the key was handled there, from the focused
        widget up to the app (whose bindings run last): whether the key stopped on the way
        or went on to the parent, what it did there is done once this reaches the app."""
        parent = node.parent
        if node is self or parent is None or not parent.call_later(self._follow, event,
                                                                   parent):
            self.call_later(self._release, "key")  # at the app, or the widget went away

    async def _release(self, reason: str) -> None:
        """In the app's queue: held keys go on in the order typed, each one as the one before
        lands (or leads to a new step, which holds the rest until it has its focus)."""
        self._holds.discard(reason)
        while not self._holds and self._held:
            await self.on_event(self._held.pop(0))

    async def on_step_ready(self, message: StepReady) -> None:
        """The step on screen has its focus: keys typed while it was built (or while it
        filled in the catalog) go to it, and the next step is built ahead. A step built
        ahead, off screen, releases nothing."""
        if self._detect_pending:  # after the frame that shows the step filled in
            self.call_after_refresh(self._start_detecting)
        stack = self.screen_stack  # empty while the app closes
        if stack and message.screen is stack[-1]:
            if self.ctx.loaded is not None:
                self._holds.discard("catalog")
            await self._release("screen")
            self.build_ahead(message.step + 1)

    def on_go_to_step(self, message: GoToStep) -> None:
        self.goto(message.step)

    def on_ask_result(self, message: AskResult) -> None:
        self.request(message.kind)

    # -- the engine -------------------------------------------------------------------

    def answers(self, kind: Kind = "report") -> Answers:
        state, catalog, hardware = self.state, self.ctx.catalog, self.ctx.hardware
        if kind == "preview":
            return state.preview_answers(catalog, hardware)
        answers = state.to_answers(catalog, hardware)
        if kind != "ranking":
            return answers
        from advisor.core import ranking_answers

        return ranking_answers(answers, catalog)

    def inputs(self, kind: Kind) -> Inputs:
        own = tuple(sorted((g, id(r)) for g, r in self.state.probe_records.items()))
        answers = self.answers(kind)
        return Inputs(answers, answers.model_dump_json(exclude_unset=True), own,
                      self.state.use_stored)

    def held(self, kind: Kind) -> Report | None:
        """The result already made from the answers as they stand, if any (no work)."""
        held = self.results.get(kind)
        if held is None:
            return None
        try:
            inputs = self.inputs(kind)
        except Exception:  # answers that do not hold together have no result
            return None
        return held[1] if held[0] == inputs else None

    def request(self, kind: Kind = "report") -> None:
        """A computed step asks for its result: the one already made from these inputs, or
        one made now in a worker. Answers the engine cannot take are shown as an error."""
        try:
            inputs = self.inputs(kind)
        except Exception as exc:
            self._deliver_error(kind, error_text(exc))
            return
        self._serve(kind, inputs)

    def _serve(self, kind: Kind, inputs: Inputs) -> None:
        """The result made from `inputs` if it is held, else a run of them."""
        held = self.results.get(kind)
        if held is not None and held[0] == inputs:
            self.screen.post_message(ResultReady(kind, held[1]))
            return
        self.screen.post_message(ResultComputing(kind))
        if kind in self._computing:  # one run of a kind at a time: the newest waits
            self._pending[kind] = inputs
        else:
            self._start(kind, inputs)

    def _start(self, kind: Kind, inputs: Inputs) -> None:
        """One engine run in a thread. Runs of the same kind never overlap: a thread cannot
        be stopped, so answers typed key by key would otherwise start a run per key, all
        competing with the screen for the interpreter."""
        self._computing.add(kind)
        self.run_worker(partial(self._compute, kind, inputs), thread=True, group=kind,
                        exit_on_error=False, description=f"advisor.core.run: {kind}")

    def _next(self, kind: Kind, done: Inputs | None) -> bool:
        """A run of `kind` ended: start the newest inputs asked for meanwhile, if they differ
        from the ones just computed (True: the result just made is already stale)."""
        self._computing.discard(kind)
        pending = self._pending.pop(kind, None)
        if pending is None or pending == done:
            return False
        self._serve(kind, pending)
        return True

    def _compute(self, kind: Kind, inputs: Inputs) -> None:
        from advisor.core import run
        from advisor.io.catalog_store import provenance

        catalog = self.ctx.catalog
        probes = effective_probes(inputs.answers, catalog, self.state)
        report = run(inputs.answers, catalog, probes, provenance())
        if not get_current_worker().is_cancelled:  # the app is closing
            self.call_from_thread(self._computed, kind, inputs, report)

    def _computed(self, kind: Kind, inputs: Inputs, report: Report) -> None:
        self.results[kind] = (inputs, report)
        if not self._next(kind, inputs):
            self.screen.post_message(ResultReady(kind, report))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "warm-up" and event.state == WorkerState.SUCCESS:
            keep_for_the_session()  # the engine's modules and their schemas
        kind = next((k for k in KINDS if k == event.worker.group), None)
        if kind is not None and event.state == WorkerState.ERROR \
                and not self._next(kind, None):
            self._deliver_error(kind, error_text(event.worker.error))

    def _deliver_error(self, kind: Kind, text: str) -> None:
        self.screen.post_message(ResultFailed(kind, text))

    # -- actions ----------------------------------------------------------------------

    def action_help(self) -> None:
        from advisor.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_export(self) -> None:
        report = self.report
        if report is None:
            self.notify("Nothing to export yet: the report is made from the answers at the "
                        "gate steps.", severity="warning")
            return
        from advisor.tui.screens.export import ExportScreen

        self.push_screen(ExportScreen(self.export_dir / "advisor-report.toml", report),
                         self._exported)

    def _exported(self, path: Path | None) -> None:
        if path is not None:
            self.exported = path
            self._saved = self._given()
            self.notify(f"report written to {path}", title="Export")

    def _given(self) -> str | None:
        """The answers as given (JSON), or None while they do not hold together."""
        try:
            return self.inputs("report").given
        except Exception:  # incomplete answers: nothing an answers file could hold yet
            return None

    @property
    def unsaved(self) -> bool:
        """Whether quitting would lose answers: they differ from the ones last saved (or
        resumed), or the user has begun a form whose answers are not complete yet."""
        given = self._given()
        if given is None:
            return self.state.reached >= 1
        return given != self._saved

    def action_save_answers(self, then_quit: bool = False) -> None:
        try:
            answers = self.answers("report")
        except Exception as exc:
            self.notify(f"The answers cannot be saved yet: {error_text(exc)}",
                        severity="warning")
            return
        from advisor.tui.screens.export import AnswersScreen

        def saved(path: Path | None) -> None:
            if path is None:
                return
            self._saved = self._given()
            self.notify(f"answers written to {path}", title="Save answers")
            if then_quit:
                self._quit_now()

        self.push_screen(AnswersScreen(self.export_dir / "advisor-answers.toml", answers),
                         saved)

    def action_copy_summary(self) -> None:
        report = self.report
        if report is None:
            self.notify("No verdict yet.", severity="warning")
            return
        from advisor.present import markdown
        from advisor.present.report import summary_blocks, title
        from advisor.tui.screens.export import SummaryScreen

        text = markdown.document(summary_blocks(report), title(report))
        self.copy_to_clipboard(text)
        self.push_screen(SummaryScreen(text, self.export_dir / "advisor-summary.md"),
                         self._exported)

    def action_rank(self) -> None:
        if self.report is None:
            self.notify("No report yet.", severity="warning")
            return
        from advisor.tui.screens.ranking import RankingScreen

        self.push_screen(RankingScreen(self.ctx))

    def action_save_svg(self) -> None:
        """The screen as SVG in screenshot_dir, through advisor's one writer (Textual's own
        save_screenshot would replace a link or a device at that path)."""
        from datetime import datetime

        from advisor.core import InputError
        from advisor.io.atomic import write_output

        name = f"{self.title}_{datetime.now():%Y-%m-%dT%H_%M_%S_%f}.svg"
        try:
            path = write_output(self.screenshot_dir / name, self.export_screenshot())
        except InputError as exc:
            self.notify(exc.one_line(), severity="error", title="Screenshot")
            return
        self.notify(f"saved {path}", title="Screenshot")

    async def action_quit(self) -> None:
        """Unsaved answers: ask once, offering to save them (or the report); a second ^q, or
        nothing to lose, quits."""
        from advisor.tui.screens.quit import QuitScreen

        if isinstance(self.screen, QuitScreen) or not self.unsaved:
            self._quit_now()
            return
        try:
            self.answers("report")
            why = None
        except Exception as exc:
            why = error_text(exc)
        self.push_screen(QuitScreen(why, self.report is not None), self._quit_chosen)

    def _quit_chosen(self, choice: str | None) -> None:
        if choice == "quit":
            self._quit_now()
        elif choice == "answers":
            self.action_save_answers(then_quit=True)
        elif choice == "report":
            report = self.report
            if report is None:
                return
            from advisor.tui.screens.export import ExportScreen

            def exported(path: Path | None) -> None:
                self._exported(path)
                if path is not None:
                    self._quit_now()

            self.push_screen(ExportScreen(self.export_dir / "advisor-report.toml", report),
                             exported)

    def _quit_now(self) -> None:
        """Ask running probes to stop first, so exit never waits on a long measurement."""
        self.workers.cancel_all()
        self.exit()

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            if command.title != "Screenshot":  # ours writes to a known folder and says where
                yield command
        yield SystemCommand("Save screenshot (SVG)", "Write the current screen to an SVG file "
                            f"in {self.screenshot_dir}", self.action_save_svg)
        yield SystemCommand("Help and glossary", "Keys, and what MAMF, binding resource, "
                            "re-tuned and break-even mean", self.action_help)
        yield SystemCommand("Save answers (TOML)", "Write the answers as an answers file that "
                            "`advisor decide --answers` reads", self.action_save_answers)
        if self.report is not None:
            yield SystemCommand("Export report (TOML)", "Write the decision report, with a "
                                "path prompt", self.action_export)
            yield SystemCommand("Copy summary", "Put the verdict on the clipboard as Markdown",
                                self.action_copy_summary)
            yield SystemCommand("Rank every GPU", "Which catalog GPU is best for this workload?",
                                self.action_rank)
        for i, (_, title) in enumerate(STEPS):
            if i <= self.state.reached and i != self.step:
                yield SystemCommand(f"Go to step {i + 1}: {title}", "Jump to a step you have "
                                    "already reached", partial(self.action_goto_step, i))


def _import_engine() -> None:
    import_module("advisor.core.entry")
    import_module("advisor.core.report.document")


def error_text(exc: BaseException | None) -> str:
    """One line for answers the engine refuses: the field it names, as the wizard labels it,
    then what is wrong; a validation error's first problem likewise."""
    from pydantic import ValidationError

    from advisor.core import InputError
    from advisor.present.words import field_label

    if isinstance(exc, InputError):
        return exc.one_line(field_label)
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        where = field_label(".".join(str(p) for p in err["loc"]))
        msg = str(err["msg"]).removeprefix("Value error, ")
        return f"{where}: {msg}" if where else msg
    return str(exc) if exc is not None else "unknown error"


def load_catalog() -> Catalog:
    """The effective catalog (shipped, with any pulled overlay), its models imported only
    now: in the loading worker, after the first paint, not before it."""
    from advisor.io.catalog_store import effective_catalog

    return effective_catalog()


def run_app(resume: Path | None = None) -> int:
    """`advisor` with no subcommand: the wizard, which loads the catalog and looks at this
    box after its first paint.

    An unreadable report raises InputError before the screen is taken over, so the CLI
    prints it as one line; a broken catalog overlay ends the wizard with the same line and
    exit code 2.
    """
    app = wizard_app(resume)
    app.run()
    return app.return_code or 0


def wizard_app(resume: Path | None = None) -> AdvisorApp:
    """The app `advisor` runs (and benchmarks/bench_tui.py times): the real probe runner,
    the catalog loaded after the first paint, or at once with a resumed report."""
    from advisor.tui.runner import PackageProbeRunner

    catalog: Catalog | Callable[[], Catalog] = load_catalog  # after the first paint
    state, start, report = None, 0, None
    if resume is not None:  # the verdict needs the catalog at once
        with loading_for_the_session():  # the engine's models, the catalog and the report
            from advisor.io.documents import load_report
            from advisor.tui.export import state_from_report

            catalog = load_catalog()
            report = load_report(resume)
            state, start = state_from_report(report), len(STEPS) - 1
    app = AdvisorApp(catalog, None, PackageProbeRunner(), state=state, start=start,
                     report=report)
    keep_for_the_session()  # Textual's modules, and a resumed report with its catalog
    return app


__all__ = ["STEP_IDS", "AdvisorApp", "run_app", "screen_class", "wizard_app"]
