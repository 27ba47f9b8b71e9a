"""Getting around safely (issue 22): ctrl+q asks once when answers would be lost and offers
to save them; the header's steps are links; keys typed ahead land where they were meant."""

from __future__ import annotations

import asyncio
import tomllib

import pytest
from textual.widgets import Input

from advisor.core import parse_answers
from advisor.tui.demo import DemoProbeRunner, settle
from advisor.tui.screens.export import AnswersScreen
from advisor.tui.screens.quit import QuitScreen
from advisor.tui.screens.targets import TargetsScreen
from advisor.tui.screens.verdict import VerdictScreen
from advisor.tui.screens.welcome import WelcomeScreen
from advisor.tui.screens.workload import WorkloadScreen

from .conftest import NARROW, WIDE, retype, type_ahead


async def test_ctrl_q_asks_once_then_quits(make_app, ready_state):
    app = make_app(state=ready_state(targets=["b200-sxm"]), start=TargetsScreen.STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+q")
        assert isinstance(app.screen, QuitScreen), "unsaved answers: it asks"
        await pilot.press("escape")
        assert isinstance(app.screen, TargetsScreen), "esc stays"
        await pilot.press("ctrl+q", "ctrl+q")
        await pilot.pause()
    assert app.return_code == 0


async def test_quit_offers_to_save_the_answers(make_app, ready_state, tmp_path):
    app = make_app(state=ready_state(targets=["b200-sxm"], counts={"b200-sxm": 4}),
                   start=TargetsScreen.STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        answers = app.answers()
        await pilot.press("ctrl+q")
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, AnswersScreen)
        await pilot.press("enter")
        await settle(pilot)
    saved = tmp_path / "advisor-answers.toml"
    assert parse_answers(tomllib.loads(saved.read_text(encoding="utf-8"))) == answers
    assert app.return_code == 0, "saved, then quit"


async def test_nothing_to_lose_quits_at_once(make_app, ready_state, tmp_path):
    app = make_app(state=ready_state(targets=["b200-sxm"], reached=VerdictScreen.STEP),
                   start=VerdictScreen.STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+e", "enter")
        await settle(pilot)
        assert app.exported is not None and not app.unsaved, "the report holds the answers"
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not isinstance(app.screen, QuitScreen)
    assert app.return_code == 0


async def test_the_header_steps_are_links_to_steps_reached(make_app, ready_state):
    app = make_app(state=ready_state(targets=["b200-sxm"], reached=4), start=TargetsScreen.STEP)
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        header = app.screen.query_one("#step-header")
        text = str(header.render())
        await pilot.click(header, offset=(text.index(" 2 ") + 1, 0))
        await settle(pilot)
        assert isinstance(app.screen, WorkloadScreen)
        text = str(app.screen.query_one("#step-header").render())
        await pilot.click(app.screen.query_one("#step-header"),
                          offset=(text.index(" 9 ") + 1, 0))
        await settle(pilot)
        assert isinstance(app.screen, WorkloadScreen), "a step not reached is no link"


async def test_keys_typed_ahead_of_a_new_step_land_in_it(make_app, ready_state):
    """ctrl+n and then "b200 enter" typed at once from a Workload field: the keys go to the
    Targets step's search (adding B200), not into the field left behind."""
    app = make_app(state=ready_state(targets=[], reached=WorkloadScreen.STEP),
                   start=WorkloadScreen.STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        budget = app.screen.query_one("#token_budget", Input)
        await retype(pilot, budget, "")
        await type_ahead(pilot, "ctrl+n", "b", "2", "0", "0", "enter")
        assert isinstance(app.screen, TargetsScreen)
        assert budget.value == "" and "token_budget" not in app.state.given
        assert app.state.targets == ("b200-sxm",)


async def test_keys_typed_before_the_first_step_is_up_wait_for_it(make_app, cpu_box):
    app = make_app(hardware=cpu_box)
    async with app.run_test(size=WIDE) as pilot:
        await type_ahead(pilot, "h", "1", "0", "0", "enter")
        assert isinstance(app.screen, WelcomeScreen)
        assert app.state.current == "h100-sxm"


async def test_a_tab_typed_ahead_moves_the_next_keys_with_it(make_app, ready_state):
    """"16", tab, "4": the 4 goes to the field after GPUs, never into GPUs."""
    app = make_app(state=ready_state(), start=WorkloadScreen.STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        gpus = app.screen.query_one("#gpus", Input)
        await retype(pilot, gpus, "")
        await type_ahead(pilot, "1", "6", "tab", "tab", "4", "0", "0", "B")
        assert gpus.value == "16" and app.state.given["gpus"] == 16
        assert app.state.given["token_budget"] == 400e9


async def test_focus_is_visible_on_a_dropdown(make_app, ready_state):
    app = make_app(state=ready_state(), start=WorkloadScreen.STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        select = app.screen.query_one("#preset")
        assert select.has_focus
        current = select.query_one("SelectCurrent")
        blurred = app.screen.query_one("#mode").query_one("SelectCurrent")
        assert current.styles.background != blurred.styles.background


async def test_the_first_step_paints_before_the_catalog_and_keys_wait_for_it(
        catalog, cpu_box, tmp_path):
    """`advisor` loads the catalog after the first paint: Welcome is up at once, the table
    fills in, and keys typed before it did go to it."""
    import threading

    from advisor.tui.app import AdvisorApp

    gate = threading.Event()

    def load():
        gate.wait(5)
        return catalog

    app = AdvisorApp(load, cpu_box, DemoProbeRunner(), export_dir=tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WelcomeScreen)
        assert "loading the catalog" in str(app.screen.query_one("#catalog-loading").render())
        await pilot.press(*"h200")  # typed while the catalog loads: held, not lost
        gate.set()
        await type_ahead(pilot, "enter")
        assert app.screen.query_one("#search", Input).value == "h200"
        assert app.state.current == "h200-sxm"


async def test_a_broken_catalog_ends_the_wizard_with_one_line(cpu_box, tmp_path):
    from advisor.core import InputError
    from advisor.tui.app import AdvisorApp

    def load():
        raise InputError("not a catalog", file="overlay.toml", field="gpus", value="x")

    app = AdvisorApp(load, cpu_box, DemoProbeRunner(), export_dir=tmp_path)
    async with app.run_test(size=WIDE) as pilot:
        # the load starts after the first paint and ends the app when it fails; waiting on
        # every worker raised WorkerCancelled when that exit cancelled another one
        for _ in range(10_000):  # a bound on turns of the loop, not on time
            if app.return_code is not None:
                break
            await pilot.pause()
    assert app.return_code == 2


async def test_quitting_while_the_next_step_is_built_ahead_ends_cleanly(make_app):
    """A step still being built ahead, off screen, when the user quits: the app ends with
    code 0 and nothing raised (run_test re-raises what the app caught)."""
    app = make_app()
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        while not app.is_screen_installed("step-1"):
            await asyncio.sleep(0.001)
        await pilot.press("ctrl+q")
    assert app.return_code == 0


async def test_a_pick_and_next_typed_at_once_go_on_with_the_pick(make_app, cpu_box):
    """"h100 enter ^n b200 enter ^n" in one breath: each ^n sees the pick before it (it was
    ignored while the pick was still on its way, and "b200" went into the Workload form)."""
    from advisor.tui.screens.gates import DtypeScreen

    app = make_app(hardware=cpu_box)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        await type_ahead(pilot, "h", "1", "0", "0", "enter", "ctrl+n", "ctrl+n",
                         "b", "2", "0", "0", "enter", "ctrl+n")
        assert app.state.current == "h100-sxm" and app.state.targets == ("b200-sxm",)
        assert isinstance(app.screen, DtypeScreen)


@pytest.mark.parametrize("step", range(3, 9))
async def test_a_step_built_ahead_as_the_wizard_closes_does_not_crash_it(
        make_app, ready_state, step, monkeypatch):
    """The next step is built off screen a moment after one is shown; quitting in that
    moment left it half mounted, and its setup raised NoMatches on the way out (two Pilot
    tests failed so on a loaded box: #gate on Dtype, #counts on Configurations). Built
    ahead here at once (and not by the timer), then the wizard closes before it has
    mounted."""
    monkeypatch.setattr("advisor.tui.app.BUILD_AHEAD_AFTER_S", 3600.0)
    app = make_app(state=ready_state(targets=["b200-sxm"], reached=step - 1), start=step - 1)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        assert not app.is_screen_installed(f"step-{step}"), "not yet built ahead"
        app._build_ahead(step)
