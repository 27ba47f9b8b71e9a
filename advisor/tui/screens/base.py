"""The step screen every wizard step derives from: header, body, Back/Next, footer.

Screens write valid values into the shared `WizardState` as the user types, so
Back never loses work and Next only has to ask `ready()`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.content import Content
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import Footer, LoadingIndicator, Static

from advisor.tui.state import STEPS, Context
from advisor.tui.widgets.stepper import NavBar, StepHeader

NARROW = 110
"""Below this many columns, side-by-side panels stack (80×24 must stay usable)."""

if TYPE_CHECKING:
    from advisor.core.decide import Decision
    from advisor.tui.app import AdvisorApp


class StepScreen(Screen[None]):
    STEP: ClassVar[int]
    NEXT_LABEL: ClassVar[str] = "Next"
    AUTO_FOCUS = None  # each step focuses its main widget itself: one focus change, one footer

    BINDINGS: ClassVar = [
        Binding("escape", "back", "Back", key_display="esc"),
        Binding("ctrl+n", "next", "Next", key_display="^n"),
    ]

    def __init__(self, ctx: Context) -> None:
        # -narrow from the start: toggling it after mount would restyle every widget again.
        narrow = " -narrow" if self.app.size.width < NARROW else ""
        super().__init__(classes=f"step step-{STEPS[self.STEP][0]}{narrow}")
        self.ctx = ctx
        self.state = ctx.state
        self._nav: tuple[bool, str] | None = None
        self._shown = False

    @property
    def wizard(self) -> AdvisorApp:
        from advisor.tui.app import AdvisorApp

        assert isinstance(self.app, AdvisorApp)
        return self.app

    def compose(self) -> ComposeResult:
        yield StepHeader(self.STEP, self.state.reached)
        with Container(id="body"):
            yield from self.compose_body()
        yield NavBar(first=self.STEP == 0, last=len(STEPS) - 1 == self.STEP,
                     next_label=self.NEXT_LABEL)
        yield Footer()

    def compose_body(self) -> ComposeResult:
        yield from ()

    def on_mount(self) -> None:
        """Runs after the subclass's own on_mount (Textual calls each class's handler)."""
        self.refresh_nav()

    def on_resize(self, event: Resize) -> None:
        self.set_class(event.size.width < NARROW, "-narrow")

    def on_screen_resume(self) -> None:
        if self._shown:
            self.refresh_view()
        self._shown = True

    def refresh_view(self) -> None:
        """The step is shown again: other steps may have changed the state it depends on.

        Subclasses redraw their own parts and call this last.
        """
        self.set_class(self.app.size.width < NARROW, "-narrow")
        self.query_one(StepHeader).set_reached(self.state.reached)
        self._nav = None
        self.refresh_nav()

    def ready(self) -> tuple[bool, str]:
        """(may go on, what to tell the user): the hint beside the Next button."""
        return True, ""

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
            self.wizard.goto(self.STEP + 1)

    def action_back(self) -> None:
        if self.STEP > 0:
            self.wizard.goto(self.STEP - 1)


class DecisionScreen(StepScreen):
    """A step that renders the Decision: asks the app for it on mount, shows it when ready.

    The app computes the decision once per set of answers (in a worker) and
    hands the same object to Performance and Verdict.
    """

    def compose_body(self) -> ComposeResult:
        yield LoadingIndicator(id="deciding")
        yield Static("", id="decide-error", markup=True)
        with Container(id="decision"):
            yield from self.compose_decision()

    def compose_decision(self) -> ComposeResult:
        yield from ()

    def on_mount(self) -> None:
        self._ask()

    def refresh_view(self) -> None:
        self._ask()
        super().refresh_view()

    def _ask(self) -> None:
        self.query_one("#deciding").display = True
        self.query_one("#decision").display = False
        self.query_one("#decide-error").display = False
        self.wizard.request_decision()

    def show_decision(self, decision: Decision) -> None:
        self.query_one("#deciding").display = False
        self.query_one("#decision").display = True
        self.render_decision(decision)
        self.refresh_nav()

    def show_error(self, message: str) -> None:
        self.query_one("#deciding").display = False
        error = self.query_one("#decide-error", Static)
        error.display = True
        error.update(Content.assemble(("Cannot project these answers: ", "bold $error"), message,
                                      "\n\nGo back (esc) and change them."))

    def render_decision(self, decision: Decision) -> None:
        raise NotImplementedError

    def ready(self) -> tuple[bool, str]:
        if self.state.decision is None or self.query_one("#decision").display is False:
            return False, "projecting…"
        return True, ""
