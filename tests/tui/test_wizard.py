"""Pilot tests: drive the wizard with keys as a user would, assert on state and screens."""

from __future__ import annotations

import asyncio

from textual.widgets import DataTable, Input

from advisor.tui.runner import FakeProbeRunner
from advisor.tui.screens.configs import ConfigsScreen
from advisor.tui.screens.gates import DtypeScreen, SoftwareScreen
from advisor.tui.screens.performance import PerformanceScreen
from advisor.tui.screens.probes import ProbesScreen
from advisor.tui.screens.targets import TargetsScreen
from advisor.tui.screens.verdict import VerdictScreen
from advisor.tui.screens.welcome import WelcomeScreen
from advisor.tui.screens.workload import WorkloadScreen
from advisor.tui.widgets.field import FormField

SIZE = (120, 40)


async def test_cpu_only_box_picks_current_gpu_and_reaches_probes(make_app, cpu_box):
    app = make_app(hardware=cpu_box)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WelcomeScreen)
        assert "none detected" in str(app.screen.query_one("#box").render())
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, WelcomeScreen), "Next is blocked until a GPU is chosen"
        app.screen.query_one("#search", Input).focus()
        await pilot.press(*"h100", "enter", "enter")
        assert app.state.current == "h100-sxm"
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, WorkloadScreen)
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, TargetsScreen)
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, TargetsScreen), "Next is blocked until a target is added"
        app.screen.query_one("#search", Input).focus()
        await pilot.press(*"b200", "enter", "space")
        assert app.state.targets == ["b200-sxm"]
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, DtypeScreen)
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, SoftwareScreen)
        # torch 2.13.0+cpu has no CUDA kernels: the only target is blocked, so Next is too...
        assert app.state.active_targets == []
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, SoftwareScreen)
        # ...until the user types the stack the GPU job really runs on.
        stack = app.screen.query_one("#stack", Input)
        stack.value = "torch==2.7.1+cu128 flash-attn==2.8.3"
        await pilot.pause()
        assert app.state.stack is not None and app.state.active_targets == ["b200-sxm"]
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, ProbesScreen)
        assert app.state.probe_source == "catalog", "no GPU here: catalog figures by default"
        await pilot.press("ctrl+n")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, PerformanceScreen)
        decision = app.state.decision
        assert decision is not None and decision.answers.stack == app.state.stack
        await pilot.press("ctrl+n")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, ConfigsScreen)
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, VerdictScreen)
        assert app.state.decision is decision, "Verdict reuses the Performance decision"


async def test_gpu_box_preselects_detected_gpu(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.state.current == "h100-sxm"
        text = str(app.screen.query_one("#box").render())
        assert "8 × NVIDIA H100 80GB HBM3" in text and "575.57.08" in text
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, WorkloadScreen)


async def test_targets_prices_defaults_and_quotes(make_app, ready_state):
    app = make_app(state=ready_state(targets=[]), start=2)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.screen.query_one("#search", Input).focus()
        await pilot.press(*"b200", "enter", "enter")
        await pilot.pause()
        field = app.screen.query_one("#price-b200-sxm", Input)
        assert "default" in str(field.parent.query_one(".field-note").render())
        field.focus()
        await pilot.press(*"4.5")
        assert app.state.quotes == {"b200-sxm": 4.5}
        assert "your quote" in str(field.parent.query_one(".field-note").render())
        app.screen.query_one("#electricity", Input).focus()
        await pilot.press(*"0.2")
        assert app.state.electricity_usd_per_kwh == 0.2


async def test_invalid_workload_input_shows_inline_error_and_blocks_next(make_app, ready_state):
    app = make_app(state=ready_state(), start=1)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        seq = app.screen.query_one("#seq_lens", Input)
        seq.focus()
        await pilot.press("end", *", 9x")
        row = seq.parent
        assert isinstance(row, FormField) and row.has_class("-invalid")
        assert "9x" in str(row.query_one(".field-note").render())
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, WorkloadScreen)
        await pilot.press("backspace", "backspace", *"32k")
        assert app.state.workload["seq_lens"] == (4096, 8192, 32768)
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, TargetsScreen)


async def test_dtype_gate_failure_excludes_target_and_all_failing_blocks(make_app, ready_state):
    state = ready_state(targets=["b200-sxm", "v100-sxm2"], workload={"precision": "fp8"})
    app = make_app(state=state, start=3)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert list(app.state.excluded) == ["v100-sxm2"]
        assert app.state.active_targets == ["b200-sxm"]
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, SoftwareScreen)
        await pilot.press("escape", "escape")
        assert isinstance(app.screen, TargetsScreen)
    state = ready_state(targets=["v100-sxm2"], workload={"precision": "fp8"})
    app = make_app(state=state, start=3)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, DtypeScreen)
        assert "no target passes" in str(app.screen.query_one("#hint").render())


async def test_software_gate_shows_exact_upgrade(make_app, ready_state):
    app = make_app(state=ready_state(targets=["b200-sxm"]), start=4)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("down")
        detail = str(app.screen.query_one("#detail-text").render())
        assert "b200-sxm" in detail


async def test_probe_run_fills_results_with_fake_runner(make_app, ready_state):
    app = make_app(state=ready_state(), start=5)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.state.probe_source == "run"
        assert app.state.probe_record is not None and app.state.probe_record.complete
        assert app.screen.query_one("#probe-results", DataTable).row_count == 5


async def test_cancel_mid_probe_keeps_results_so_far(make_app, ready_state):
    runner = FakeProbeRunner(hold_at=2)
    app = make_app(state=ready_state(), runner=runner, start=5)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+r")
        await asyncio.get_running_loop().run_in_executor(None, runner.holding.wait, 5)
        await pilot.pause()
        assert isinstance(app.screen, ProbesScreen) and app.screen.running
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, ProbesScreen), "no leaving while probes run"
        await pilot.press("ctrl+x")
        await app.workers.wait_for_complete()
        await pilot.pause()
        record = app.state.probe_record
        assert record is not None and record.interrupted and not record.complete
        assert len(record.matmul) == 1 and len(record.attention) == 1
        assert app.screen.query_one("#probe-results", DataTable).row_count == 2
        assert "cancelled" in app.state.probe_note


async def test_ctrl_q_quits_from_any_step(make_app, ready_state):
    for step in range(6):
        app = make_app(state=ready_state(reached=5), start=step)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("ctrl+q")
            await pilot.pause()
        assert app.return_code == 0


async def test_back_keeps_answers(make_app, ready_state):
    app = make_app(state=ready_state(), start=2)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("escape")
        assert isinstance(app.screen, WorkloadScreen)
        await pilot.press("ctrl+n")
        assert app.state.targets == ["b200-sxm", "mi300x"]
        assert app.screen.query_one("#price-mi300x", Input)


async def test_revisited_steps_redraw_from_the_state(make_app, ready_state):
    """Steps are built once and kept; coming back must still show the answers as they stand."""
    state = ready_state(targets=["b200-sxm", "v100-sxm2"], quotes={"v100-sxm2": 0.5})
    app = make_app(state=state, start=3)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert list(app.state.excluded) == ["v100-sxm2"], "V100 has no bf16 matrix units"
        dtype_screen = app.screen
        await pilot.press("escape", "escape")
        assert isinstance(app.screen, WorkloadScreen)
        app.state.workload["precision"] = "fp8"
        await pilot.press("escape")
        assert isinstance(app.screen, WelcomeScreen)
        await pilot.press(*"h200", "enter")
        assert app.state.current == "h200-sxm"
        await pilot.press("ctrl+n", "ctrl+n")
        assert isinstance(app.screen, TargetsScreen)
        assert app.screen.query_one("#price-h200-sxm", Input)
        assert not app.screen.query("#price-h100-sxm")
        await pilot.press("ctrl+n")
        assert app.screen is dtype_screen, "the same screen object, redrawn"
        assert "fp8" in str(app.screen.query_one(".prompt").render())
        assert list(app.state.excluded) == ["v100-sxm2"]
        assert app.screen.query_one("#gate", DataTable).get_row("h200-sxm")


def test_each_step_has_its_screen():
    from advisor.tui.app import SCREENS, screen_class
    from advisor.tui.state import STEPS

    assert len(SCREENS) == len(STEPS)
    assert [screen_class(i).STEP for i in range(len(STEPS))] == list(range(len(STEPS)))


async def test_steps_built_ahead_show_the_answers_as_they_stand(make_app, cpu_box):
    """Workload, Targets and Configurations are built while the user reads Welcome; the
    current GPU is chosen after that, and Targets must still price it."""
    from advisor.tui.app import AHEAD

    app = make_app(hardware=cpu_box)
    async with app.run_test(size=SIZE) as pilot:
        await app.built_ahead.wait()
        assert all(app.is_screen_installed(f"step-{step}") for step in AHEAD)
        built = app.get_screen(f"step-{TargetsScreen.STEP}")
        assert not built.query("#prices Input"), "no GPU chosen yet: nothing to price"
        await pilot.press(*"h200", "enter")
        await pilot.press("ctrl+n", "ctrl+n")
        assert app.screen is built
        assert app.screen.query_one("#price-h200-sxm", Input)
        assert app.screen.query_one("#gpus", DataTable).get_cell("h200-sxm", "mark") == "now"


async def test_catalog_table_fits_80_columns(gpu_box):
    """Without room for names, the longest ids (the shipped catalog's RTX PRO 6000s) are
    clipped so that the price column still shows."""
    from advisor.io.catalog_store import load_catalog
    from advisor.tui.app import AdvisorApp

    app = AdvisorApp(load_catalog(), gpu_box, FakeProbeRunner())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.screen.query_one("#gpus", DataTable)
        used = sum(c.get_render_width(table) for c in table.columns.values())
        assert "name" not in [c.key.value for c in table.columns.values()]
        assert used <= table.scrollable_content_region.width
