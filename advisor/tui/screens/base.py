"""The step screen every wizard step derives from: header, body, Back/Next, footer.

Screens write valid values into the shared `WizardState` (through its methods) as the
user types, so Back never loses work and Next only has to ask `ready()`. A step talks to
the app only through messages (`advisor.tui.messages`): it asks for a result, or for
another step, and the result comes back as a message; no screen imports the app.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult, CSSPathType
from textual.binding import Binding
from textual.containers import Container
from textual.content import Content
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import LoadingIndicator, Static

from advisor.heap import keep_for_the_session
from advisor.tui.messages import (
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
from advisor.tui.state import STEPS, Context
from advisor.tui.widgets.stepper import NavBar, StepFooter, StepHeader

NARROW = 110
"""Below this many columns, side-by-side panels stack (80×24 must stay usable)."""
SHORT = 30
"""Below this many rows, tables give up height to the forms below them."""

if TYPE_CHECKING:
    from advisor.core import Report


class StepScreen(Screen[None]):
    STEP: ClassVar[int]
    CSS_PATH: ClassVar[CSSPathType | None] = "../steps.tcss"
    """The steps' own rules, beside the app's stylesheet; Welcome needs none of them."""
    NEXT_LABEL: ClassVar[str] = "Next"
    AUTO_FOCUS = ""  # each step focuses its main widget itself: one focus change, one footer

    BINDINGS: ClassVar = [
        Binding("escape", "back", "Back", key_display="esc"),
        Binding("ctrl+n", "next", "Next", key_display="^n"),
    ]

    def __init__(self, ctx: Context, ahead: bool = False) -> None:
        """`ahead`: built in the background before the user gets here, so the state may
        have moved on by the time it is first shown, which then redraws like a revisit."""
        # -narrow from the start: toggling it after mount would restyle every widget again.
        size = self.app.size
        narrow = " -narrow" if size.width < NARROW else ""
        short = " -short" if size.height < SHORT else ""
        super().__init__(classes=f"step step-{STEPS[self.STEP][0]}{narrow}{short}")
        self.ctx = ctx
        self.state = ctx.state
        self._nav: tuple[bool, str] | None = None
        self._shown = ahead
        self.built = False
        """Composed and focused: keys typed for it may go to it."""

    def compose(self) -> ComposeResult:
        yield StepHeader(self.STEP, self.state.reached)
        with Container(id="body"):
            yield from self.compose_body()
        yield NavBar(first=self.STEP == 0, last=len(STEPS) - 1 == self.STEP,
                     next_label=self.NEXT_LABEL)
        yield StepFooter()

    def compose_body(self) -> ComposeResult:
        yield from ()

    def mounted(self) -> None:
        """A step's own setup once its widgets are mounted (focus, first fill)."""

    def on_mount(self) -> None:
        """The step's own setup (`mounted`), then keys typed while it was built may go on:
        after the focus it asked for. A step built ahead that the app closes on is left
        as it is: its widgets may be only half mounted, and nothing will show it."""
        if not self.app.is_running:
            return
        self.mounted()
        self.refresh_nav()
        self.built = True
        keep_for_the_session()  # a built step stays installed for the session
        self.app.post_message(StepReady(self, self.STEP))

    def on_resize(self, event: Resize) -> None:
        self.set_class(event.size.width < NARROW, "-narrow")
        self.set_class(event.size.height < SHORT, "-short")

    def on_screen_resume(self) -> None:
        if self._shown:
            self.refresh_view()
        self._shown = True
        if self.built:
            self.app.post_message(StepReady(self, self.STEP))

    def refresh_view(self) -> None:
        """The step is shown again: other steps may have changed the state it depends on.

        Subclasses redraw their own parts and call this last.
        """
        self.set_class(self.app.size.width < NARROW, "-narrow")
        self.set_class(self.app.size.height < SHORT, "-short")
        self.query_one(StepHeader).set_reached(self.state.reached)
        self._nav = None
        self.refresh_nav()

    def ready(self) -> tuple[bool, str]:
        """(may go on, what to tell the user): the hint beside the Next button."""
        return True, ""

    def ask_for(self, kind: Kind) -> None:
        """Ask the app for a result: it comes back as `computed` (or `compute_failed`)."""
        self.app.post_message(AskResult(kind))

    def hardware_changed(self) -> None:
        """Detection finished after the first paint."""

    async def catalog_loaded(self) -> None:
        """The catalog finished loading after the first paint (only the first step is up
        then)."""

    def computed(self, kind: Kind, report: Report) -> None:
        """A result this step did not ask for as its own (e.g. the Workload preview)."""

    def computing(self, kind: Kind) -> None:
        """A result is being made for answers that changed."""

    def compute_failed(self, kind: Kind, text: str) -> None:
        """The engine refused the answers for a result this step asked for on the side."""

    def on_hardware_detected(self, _: HardwareDetected) -> None:
        self.hardware_changed()

    async def on_catalog_loaded(self, _: CatalogLoaded) -> None:
        """The step fills in what needed the catalog, then keys held for it may go on."""
        await self.catalog_loaded()
        self.app.post_message(StepReady(self, self.STEP))

    def on_result_ready(self, message: ResultReady) -> None:
        self.computed(message.kind, message.report)

    def on_result_computing(self, message: ResultComputing) -> None:
        self.computing(message.kind)

    def on_result_failed(self, message: ResultFailed) -> None:
        self.compute_failed(message.kind, message.text)

    def refresh_nav(self) -> None:
        """Called on every keystroke in a form, so it touches the widgets only on a change:
        a bindings refresh rebuilds the footer."""
        nav = self.ready()
        if nav == self._nav:
            return
        ok, hint = nav
        self.query_one(NavBar).set_hint(hint, ok)
        if self._nav is None or self._nav[0] != ok:
            self.refresh_bindings()
        self._nav = nav

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":
            return self.STEP > 0
        if action == "next":
            if len(STEPS) - 1 == self.STEP:
                return False
            return True if self.ready()[0] else None
        return True

    def action_next(self) -> None:
        if self.ready()[0]:
            self.app.post_message(GoToStep(self.STEP + 1))

    def action_back(self) -> None:
        if self.STEP > 0:
            self.app.post_message(GoToStep(self.STEP - 1))


class ComputedScreen(StepScreen):
    """A step that shows what the app computes from the answers in a worker: a loading
    indicator until the result arrives, then the result or why it cannot be computed.

    The app caches each result against the answers it came from, so a revisit with
    nothing changed gets the result already drawn, and nothing is laid out again.
    """

    COMPUTES: ClassVar[Kind] = "report"
    FIX_HINT: ClassVar[str] = "Go back (esc) and change them."
    _drawn: Report | None = None
    """The result last drawn."""
    _current = False
    """Whether it is the result of the answers as they stand (no newer one on its way)."""

    def compose_body(self) -> ComposeResult:
        yield from self.compose_inputs()
        yield LoadingIndicator(id="computing")
        yield Static("", id="compute-error", markup=True)
        with Container(id="result"):
            yield from self.compose_result()

    def compose_inputs(self) -> ComposeResult:
        yield from ()

    def compose_result(self) -> ComposeResult:
        yield from ()

    def mounted(self) -> None:
        if self.is_current:  # one built ahead asks when it is first shown (refresh_view)
            self.ask()

    def refresh_view(self) -> None:
        self.ask()
        super().refresh_view()

    def ask(self) -> None:
        """Ask the app for the result the answers now call for. The one on screen stays
        until the app says a new one is being made (`computing`): a revisit with nothing
        changed gets back the result already drawn, and nothing is laid out again."""
        if self._drawn is None:
            self._waiting()
        self.ask_for(self.COMPUTES)

    @property
    def shown(self) -> bool:
        return bool(self.query_one("#result").display)

    @property
    def drawn_report(self) -> Report | None:
        """The report on screen, if it is the one of the answers as they stand."""
        return self._drawn if self._current else None

    def computed(self, kind: Kind, report: Report) -> None:
        if kind == self.COMPUTES:
            self.show_result(report)

    def computing(self, kind: Kind) -> None:
        if kind == self.COMPUTES:
            self._waiting()
            self.refresh_nav()

    def compute_failed(self, kind: Kind, text: str) -> None:
        if kind == self.COMPUTES:
            self.show_error(text)

    def _waiting(self) -> None:
        self._current = False
        self.query_one("#computing").display = True
        self.query_one("#result").display = False
        self.query_one("#compute-error").display = False

    def show_result(self, result: Report) -> None:
        """Show the result; one already drawn (a revisit, nothing changed) is not redrawn."""
        self._current = True
        self.query_one("#computing").display = False
        self.query_one("#compute-error").display = False
        self.query_one("#result").display = True
        if result is not self._drawn:
            self.render_result(result)
            self._drawn = result
        self.refresh_nav()

    def render_result(self, result: Report) -> None:
        raise NotImplementedError

    def show_error(self, message: str) -> None:
        self._current = False
        self.show_message(Content.assemble(("Cannot project these answers: ", "bold $error"),
                                           message, f"\n\n{self.FIX_HINT}"))

    def show_message(self, message: str | Content) -> None:
        """In place of the result: why there is none (markup, or Content kept as is)."""
        self.query_one("#computing").display = False
        self.query_one("#result").display = False
        error = self.query_one("#compute-error", Static)
        error.display = True
        error.update(message)
        self.refresh_nav()


class ReportScreen(ComputedScreen):
    """A step that renders the Report: the app runs the engine once per set of answers and
    hands the same object to every computed step and to export."""

    COMPUTES = "report"

    def ready(self) -> tuple[bool, str]:
        if self.query_one("#compute-error").display:
            return False, "the engine cannot take these answers: go back and change them"
        if not self.shown:
            return False, "projecting…"
        return True, ""
