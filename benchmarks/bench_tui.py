"""How fast the wizard feels, relative to a bare Textual app measured in the same run.

    python benchmarks/bench_tui.py [--runs 5]

First paint: a fresh interpreter, from its start to the first step on screen and settled
(every message handled, every repaint written), with the real effective catalog and this
box's detection (hardware detection runs in a worker after the first paint, as in the
app); the first frame written is shown too. The reference is a fresh interpreter starting
a one-widget Textual app the same way, launched alternately with advisor.

Transitions: ctrl+n / esc through every step with the Pilot harness, timed from the key
press to the new screen's first frame. Each step's screen is built on its first visit
(lap 1) and kept (lap 2 is a revisit); the engine's Report is made in a worker and is
not waited for by the timing. The reference is a bare Textual app switching between two
one-widget screens, timed the same way, before and after.

Every figure is a ratio to its reference, min and median: a loaded box slows both, so no
absolute budget is judged. A launch that crashes shows its stderr; the run fails (exit 1)
only for a crash, a step that does not advance, or torch imported at startup.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _ratio import line, ratios

ROOT = Path(__file__).resolve().parents[1]

FIRST_PAINT = r"""
import time
t0 = time.perf_counter()
import asyncio, json
from advisor.io.catalog_store import effective_catalog
from advisor.tui.app import AdvisorApp
from advisor.tui.runner import PackageProbeRunner
from advisor.tui.screens.base import StepScreen

async def main():
    catalog = effective_catalog()
    app = AdvisorApp(catalog, None, PackageProbeRunner())
    frames = []
    display = app._display

    def timed_display(screen, renderable):
        display(screen, renderable)
        if renderable is not None and isinstance(screen, StepScreen):
            frames.append(time.perf_counter() - t0)

    app._display = timed_display
    async with app.run_test(size=(120, 40)) as pilot:
        while not frames:
            await pilot.pause()
        await pilot.pause()
        painted = time.perf_counter() - t0
    import sys
    print(json.dumps({"first_paint_s": painted, "first_frame_s": frames[0],
                      "torch_loaded": "torch" in sys.modules}))

asyncio.run(main())
"""

REFERENCE_PAINT = r"""
import time
t0 = time.perf_counter()
import asyncio, json
from textual.app import App
from textual.widgets import Static

class Bare(App):
    def compose(self):
        yield Static("reference")

async def main():
    app = Bare()
    frames = []
    display = app._display

    def timed_display(screen, renderable):
        display(screen, renderable)
        if renderable is not None:
            frames.append(time.perf_counter() - t0)

    app._display = timed_display
    async with app.run_test(size=(120, 40)) as pilot:
        while not frames:
            await pilot.pause()
        await pilot.pause()
        painted = time.perf_counter() - t0
    print(json.dumps({"first_paint_s": painted, "first_frame_s": frames[0],
                      "torch_loaded": False}))

asyncio.run(main())
"""


class Crashed(Exception):
    """A launch that failed; its message carries the launch's own stderr."""


def launch(script: str, what: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    if done.returncode != 0:
        raise Crashed(f"{what} exited {done.returncode}; its stderr:\n{done.stderr.rstrip()}")
    try:
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise Crashed(f"{what} printed no result; stdout:\n{done.stdout}\n"
                      f"stderr:\n{done.stderr.rstrip()}") from None
    return result


def first_paints(runs: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    subject, reference = [], []
    for _ in range(runs):
        reference.append(launch(REFERENCE_PAINT, "the reference Textual app"))
        subject.append(launch(FIRST_PAINT, "advisor"))
    return subject, reference


class Timer:
    """Frames as the app hands them to the terminal driver, and key press to the first
    frame of the screen the key leads to (the Pilot's own waiting is not counted)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.frames: list[tuple[float, object]] = []
        display = app._display

        def timed_display(screen: Any, renderable: Any) -> None:
            display(screen, renderable)
            if renderable is not None:
                self.frames.append((time.perf_counter(), screen))

        app._display = timed_display

    async def press(self, pilot: Any, key: str) -> float | None:
        before = self.app.screen
        self.frames.clear()
        t0 = time.perf_counter()
        await pilot.press(key)
        await self.app.workers.wait_for_complete()
        await pilot.pause()
        if self.app.screen is before:
            return None
        return next(t for t, screen in self.frames if screen is self.app.screen) - t0


async def reference_transitions(count: int) -> list[float]:
    """A bare Textual app switching between two one-widget screens."""
    from textual.app import App
    from textual.binding import Binding
    from textual.screen import Screen
    from textual.widgets import Static

    class Page(Screen[None]):
        BINDINGS = [Binding("ctrl+n", "app.switch_screen('b')"),  # noqa: RUF012
                    Binding("escape", "app.switch_screen('a')")]

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

        def compose(self) -> Any:
            yield Static(self.text)

    class Bare(App[None]):
        def on_mount(self) -> None:
            self.install_screen(Page("a"), "a")
            self.install_screen(Page("b"), "b")
            self.push_screen("a")

    app = Bare()
    timer = Timer(app)
    out: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for i in range(count):
            seconds = await timer.press(pilot, "ctrl+n" if i % 2 == 0 else "escape")
            if seconds is None:
                raise Crashed("the reference app did not switch screens")
            out.append(seconds)
    return out


async def transitions() -> list[tuple[str, float]]:
    from advisor.io.catalog_store import effective_catalog
    from advisor.tui.app import AdvisorApp
    from advisor.tui.state import STEPS, WizardState

    sys.path.insert(0, str(ROOT / "tests" / "tui"))
    import doubles as demo  # the tests' fixed boxes and fake runner, not shipped
    from doubles import FakeProbeRunner

    catalog = effective_catalog()
    targets = [g.id for g in catalog.gpus if g.id in ("b200-sxm", "h200-sxm")]
    state = WizardState(current="h100-sxm", targets=targets, probe_choice="none")
    app = AdvisorApp(catalog, demo.gpu_box(), FakeProbeRunner(), state=state)
    timer = Timer(app)
    timings: list[tuple[str, float]] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()  # hardware detection, the first paint's work

        async def timed(key: str, label: str) -> None:
            seconds = await timer.press(pilot, key)
            if seconds is None:
                hint = app.screen.query_one("#hint").render()
                raise Crashed(f"stuck on {label}: {hint}")
            timings.append((label, seconds))

        for lap in (1, 2):  # lap 1 includes Textual's one-off parse of each widget's CSS
            for i in range(len(STEPS) - 1):
                await timed("ctrl+n", f"lap {lap}: {STEPS[i][1]} -> {STEPS[i + 1][1]}")
            for i in range(len(STEPS) - 1, 0, -1):
                await timed("escape", f"lap {lap}: {STEPS[i][1]} <- back")
    return timings


async def all_transitions() -> tuple[list[tuple[str, float]], list[float]]:
    before = await reference_transitions(16)
    subject = await transitions()
    after = await reference_transitions(16)
    return subject, before + after


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="launches of each (default 5)")
    args = parser.parse_args()
    try:
        subject, reference = first_paints(args.runs)
        steps, ref_steps = asyncio.run(all_transitions())
    except Crashed as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    print(f"first paint, {args.runs} launches of each, against a one-widget Textual app:")
    for key, what in (("first_paint_s", "settled"), ("first_frame_s", "first frame")):
        print(line(f"  {what}", [s[key] for s in subject], [r[key] for r in reference]))
    ref_mid = statistics.median(ref_steps)
    print(f"transitions, against a bare Textual screen switch "
          f"({min(ref_steps) * 1e3:.1f} / {ref_mid * 1e3:.1f} ms min / median here):")
    for label, seconds in steps:
        print(f"  {label:<48} {seconds / ref_mid:6.1f}x  ({seconds * 1e3:.1f} ms)")
    lo, mid = ratios([s for _, s in steps], ref_steps)
    worst_label, worst = max(steps, key=lambda t: t[1])
    print(f"  all transitions: {lo:.1f}x min, {mid:.1f}x median; slowest {worst / ref_mid:.1f}x "
          f"({worst_label})")
    torch = any(s["torch_loaded"] for s in subject)
    print(f"torch imported at startup: {torch}")
    return 1 if torch else 0


if __name__ == "__main__":
    sys.exit(main())
