"""The probes step tells the truth: the keys that work now, a cancel that keeps what was
measured and says so (the bar stays where it stopped), no idle progress bar, estimates
from the probes package's own plan, and the records the decision will use."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import threading
import time

from textual.widgets import DataTable, Input, ProgressBar

from advisor.tui.demo import DemoProbeRunner, settle
from advisor.tui.runner import plan_estimate_s
from advisor.tui.screens.probes import ProbesScreen, about

from .conftest import WIDE, text_of

STEP = ProbesScreen.STEP


class HoldingRunner(DemoProbeRunner):
    """Waits before step `hold_at` until told to stop, so a test can cancel in the middle
    with results already shown; `holding` is set once it waits there."""

    def __init__(self, hold_at: int) -> None:
        super().__init__()
        self.hold_at = hold_at
        self.holding = threading.Event()

    def run(self, mode, on_progress, should_stop):
        asked = itertools.count()  # the demo runner asks once before each step

        def stop() -> bool:
            if next(asked) == self.hold_at:
                self.holding.set()
                while not should_stop():
                    time.sleep(0.01)
            return should_stop()

        return super().run(mode, on_progress, stop)


def shown_keys(app) -> list[str]:
    return [b.description for _, b, enabled, _ in app.screen.active_bindings.values()
            if b.show and enabled]


async def choose(pilot, name: str) -> None:
    screen = pilot.app.screen
    for button in screen.query("#choice Choice"):
        if button.name == name:
            button.value = True
    await settle(pilot)


async def test_idle_then_run_fills_results_and_uses_the_record(make_app, ready_state):
    app = make_app(state=ready_state(), start=STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.choice == "none", "no run by default: nothing is measured unasked"
        assert not screen.query_one("#progress", ProgressBar).display, "no idle bar"
        assert "Run" not in shown_keys(app), "^r only when a run is chosen"
        await choose(pilot, "quick")
        assert "Run" in shown_keys(app) and "Cancel" not in shown_keys(app)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert app.state.probe_choice == "quick"
        record = app.state.probe_records["h100-sxm"]
        assert record.complete
        assert screen.query_one("#probe-results", DataTable).row_count == 5
        assert "used for h100-sxm" in text_of(screen.query_one("#probe-message"))
        await pilot.press("ctrl+n")
        await settle(pilot)
        report = app.report
        assert report is not None and report.probes["h100-sxm"] == record


async def test_cancel_keeps_partial_results_and_says_so(make_app, ready_state):
    runner = HoldingRunner(hold_at=2)
    app = make_app(state=ready_state(), runner=runner, start=STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        await choose(pilot, "quick")
        await pilot.press("ctrl+r")
        await asyncio.get_running_loop().run_in_executor(None, runner.holding.wait, 5)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ProbesScreen) and screen.running
        keys = shown_keys(app)
        assert "Cancel" in keys and "Run" not in keys, "the keys that work now"
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, ProbesScreen), "no leaving while probes run"
        bar = screen.query_one("#progress", ProgressBar)
        before = bar.progress
        await pilot.press("ctrl+x")
        await settle(pilot)
        record = app.state.probe_records["h100-sxm"]
        assert record.interrupted and not record.complete
        assert len(record.matmul) == 1 and len(record.attention) == 1
        assert screen.query_one("#probe-results", DataTable).row_count == 2
        assert bar.progress == before < 100, "the bar stays where the run stopped"
        message = text_of(screen.query_one("#probe-message"))
        assert "cancelled at 40%" in message and "kept the 2 results" in message
        assert "interrupted run" in message


async def test_a_cpu_run_is_shown_not_used(make_app, ready_state, cpu_box):
    app = make_app(state=ready_state(), hardware=cpu_box,
                   runner=DemoProbeRunner(device="cpu", kind="cpu"), start=STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        await choose(pilot, "quick")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert app.state.probe_records == {}
        assert "not used to project GPUs" in text_of(app.screen.query_one("#probe-message"))


def test_estimates_are_the_plan_s_own():
    gpu, cpu = plan_estimate_s("quick", True), plan_estimate_s("quick", False)
    assert 10 < gpu < 40 and cpu < gpu
    assert about(gpu) == f"up to about {math.ceil(gpu / 5) * 5} s"  # rounded up: a cap
    assert about(plan_estimate_s("full", True)).endswith("min")


async def test_labels_carry_the_estimate(make_app, ready_state):
    app = make_app(state=ready_state(), start=STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        label = str(next(b for b in app.screen.query("#choice Choice") if b.name == "quick")
                    .label)
        assert about(plan_estimate_s("quick", True)) in label


async def test_stored_records_are_used_like_decide_and_can_be_turned_off(
        make_app, ready_state, advisor_home):
    record = DemoProbeRunner(device="NVIDIA B200").run("quick", lambda _: None, lambda: False)
    folder = advisor_home / "probes"
    folder.mkdir()
    (folder / "b200-sxm.json").write_text(record.model_dump_json(by_alias=True),
                                          encoding="utf-8")
    app = make_app(state=ready_state(targets=["b200-sxm"]), start=STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        assert "filed record b200-sxm" in text_of(app.screen.query_one("#probe-message"))
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert "b200-sxm" in app.report.probes
        await pilot.press("escape")
        await settle(pilot)
        app.screen.query_one("#use-stored").value = False
        await settle(pilot)
        assert "ignored" in text_of(app.screen.query_one("#probe-message"))
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert "b200-sxm" not in app.report.probes


async def test_import_a_record_file_from_another_box(make_app, ready_state, tmp_path):
    record = DemoProbeRunner(device="NVIDIA B200").run("quick", lambda _: None, lambda: False)
    data = json.loads(record.model_dump_json(by_alias=True))
    data["stamp"]["device"]["catalog_id"] = "b200-sxm"
    path = tmp_path / "b200.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    app = make_app(state=ready_state(targets=["b200-sxm"]), start=STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        await choose(pilot, "import")
        field = app.screen.query_one("#record-path", Input)
        field.focus()
        field.value = str(tmp_path / "missing.json")
        await pilot.press("enter")
        assert "✘" in text_of(app.screen.query_one("#probe-message"))
        field.value = str(path)
        await pilot.press("enter")
        await settle(pilot)
        assert app.state.probe_choice == "import"
        assert set(app.state.probe_records) == {"b200-sxm"}
        assert app.screen.query_one("#probe-results", DataTable).row_count == 5
