"""The chrome every step shares: where you are, Back/Next, and the keys."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import Button, Footer, Label, Static

from advisor.tui.state import STEPS


class StepHeader(Static):
    """A strip of all steps with the current one lit and the ones already reached as links
    (a click goes back or forward to them); below 112 columns the names shrink to numbers
    and the current title is spelled out, so 80 columns never wraps."""

    DEFAULT_CSS = """
    StepHeader {
        height: 1;
        background: $panel;
    }
    """

    def __init__(self, step: int, reached: int) -> None:
        super().__init__(id="step-header")
        self.step = step
        self.reached = reached

    def on_mount(self) -> None:
        self.update(self._render_strip(self.app.size.width))

    def set_reached(self, reached: int) -> None:
        if reached != self.reached:
            self.reached = reached
            self.update(self._render_strip(self.app.size.width))

    def on_resize(self, event: Resize) -> None:
        self.update(self._render_strip(event.size.width))

    def _render_strip(self, width: int) -> Content:
        """The names when they fit in one line, else numbers and the current title."""
        strip = self._strip(wide=True)
        return strip if strip.cell_length <= width else self._strip(wide=False)

    def _strip(self, wide: bool) -> Content:
        parts: list[Content] = [Content.styled(" advisor ", "bold reverse"), Content("  ")]
        if not wide:
            parts.append(Content.styled(f"Step {self.step + 1} of {len(STEPS)}: ", "bold"))
            parts.append(Content.styled(f"{STEPS[self.step][1]}   ", "bold $accent"))
        for i, (_, name) in enumerate(STEPS):
            label = f"{i + 1} {name.split()[0]}" if wide else str(i + 1)
            if i == self.step:
                parts.append(Content.styled(f" {label} ", "bold reverse $accent"))
            elif i <= self.reached:  # a link: a click goes there
                parts.append(Content.from_markup(
                    f" [$success underline @click=app.goto_step({i})]$label[/] ", label=label))
            else:
                parts.append(Content.styled(f" {label} ", "dim"))
        return Content("").join(parts)


class NavBar(Horizontal):
    """Back and Next as buttons for mouse users; the same actions as the footer keys."""

    DEFAULT_CSS = """
    NavBar {
        height: auto;
        max-height: 2;
        dock: bottom;
        margin-bottom: 1;
        padding: 0 1;
        background: $panel;
    }
    NavBar #hint {
        width: 1fr;
        height: auto;
        padding: 0 2;
        color: $text-muted;
        text-align: right;
    }
    NavBar #hint.-blocked {
        color: $warning;
    }
    """

    def __init__(self, first: bool, last: bool, next_label: str = "Next") -> None:
        super().__init__(id="nav")
        self.first = first
        self.last = last
        self.next_label = next_label

    def compose(self) -> ComposeResult:
        yield Button("◀ Back", id="back", compact=True, disabled=self.first, action="screen.back")
        yield Label("", id="hint")
        if not self.last:
            yield Button(f"{self.next_label} ▶", id="next", compact=True, variant="primary",
                         action="screen.next")

    def set_hint(self, text: str, ok: bool) -> None:
        hint = self.query_one("#hint", Label)
        hint.update(text)
        hint.set_class(not ok, "-blocked")
        if not self.last:
            self.query_one("#next", Button).disabled = not ok


class StepFooter(Footer):
    """Textual's footer, rebuilt once per refresh however often the keys change before it
    (a step switch changes them several times: the focus, the Next state, the screen), not
    once per change: a change while a rebuild is on its way adds none."""

    _queued = False

    def bindings_changed(self, screen: Screen) -> None:
        if self._queued:
            return
        super().bindings_changed(screen)
        # Textual's handler rebuilds the footer after the next refresh exactly when these
        # hold; the rebuild reads the keys as they are by then.
        self._queued = screen.app.app_focus and self.is_attached and screen is self.screen

    def compose(self) -> ComposeResult:
        self._queued = False  # a change from here on is not in this rebuild
        yield from super().compose()
