"""Every line the walk-through found not true or not clear (issue 22), one Pilot test each:
what the screen says now, read back from the widgets."""

from __future__ import annotations

from textual.widgets import DataTable, Input, Select

from advisor.tui.demo import settle
from advisor.tui.screens.configs import ConfigsScreen
from advisor.tui.screens.gates import SoftwareScreen
from advisor.tui.screens.ranking import RankingScreen
from advisor.tui.screens.verdict import VerdictScreen
from advisor.tui.screens.workload import WorkloadScreen

from .conftest import WIDE, open_ranking, text_of


async def test_the_software_step_says_the_gate_was_skipped(make_app, ready_state, cpu_box):
    """`[stack]` reads as written (it was eaten as markup), and with no stack the hint says
    the gate was skipped, not that every target passes."""
    app = make_app(hardware=cpu_box, state=ready_state(targets=["b200-sxm"]),
                   start=SoftwareScreen.STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        detail = text_of(app.screen.query_one("#detail-text"))
        assert "answers without [stack])" in detail
        hint = text_of(app.screen.query_one("#hint"))
        assert "skipped" in hint and "passes" not in hint


async def test_the_example_stack_is_the_current_gpu_vendor_s(make_app, ready_state, cpu_box,
                                                            shipped):
    state = ready_state(current="mi300x", targets=["mi355x"], reached=SoftwareScreen.STEP)
    app = make_app(hardware=cpu_box, state=state, start=SoftwareScreen.STEP,
                   with_catalog=shipped)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        placeholder = app.screen.query_one("#stack", Input).placeholder
        assert "rocm" in placeholder and "cu1" not in placeholder


async def test_amd_configurations_in_their_own_words_and_never_cheapest_unpriced(
        make_app, ready_state, shipped):
    """MI250X against MI250, neither with a public quote: GPUs per node speak of Infinity
    Fabric, not NVLink, and no pick is called the cheapest, here or on the verdict."""
    state = ready_state(current="mi250x", targets=["mi250"], reached=ConfigsScreen.STEP,
                        given={"token_budget": 1e10}, box_stack=False)  # not this CUDA box's
    app = make_app(state=state, start=ConfigsScreen.STEP, with_catalog=shipped)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        note = text_of(app.screen.query_one("#per-node-field").query_one(".field-note"))
        assert "Infinity Fabric" in note and "NVLink" not in note
        assert app.report is not None and app.report.configs is not None
        points = app.report.configs.points
        assert points and all(p.usd is None for p in points)  # configurations, none priced
        best = text_of(app.screen.query_one("#cfg-best"))
        assert "none is cheapest" in best and "is the cheapest" not in best
        app.goto(VerdictScreen.STEP)
        await settle(pilot)
        summary = text_of(app.screen.query_one("#verdict-summary"))
        assert "none is cheapest" in summary and "is the cheapest" not in summary


async def test_picking_the_example_model_again_makes_it_yours(make_app, ready_state):
    state = ready_state(reached=WorkloadScreen.STEP)
    assert "model" in state.examples
    app = make_app(state=state, start=WorkloadScreen.STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        assert "example model" in text_of(app.screen.query_one("#model-info"))
        app.screen.query_one("#preset", Select).focus()
        await pilot.press("enter")  # open the list; the example is highlighted
        await pilot.press("enter")  # and picked again
        await settle(pilot)
        assert "example model" not in text_of(app.screen.query_one("#model-info"))
        assert "model" not in app.state.examples


async def test_without_a_token_budget_nothing_is_priced_as_a_job(make_app, ready_state):
    """No budget: the card compares $ per Mtok and $ per hour of all GPUs, never a job $,
    wall-clock or energy that is really one hour on each side."""
    state = ready_state(targets=["b200-sxm"], reached=VerdictScreen.STEP,
                        quotes={"b200-sxm": ("usd", 4.5)})
    app = make_app(state=state, start=VerdictScreen.STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        card = next(text for text in (text_of(c) for c in app.screen.query(".verdict-card"))
                    if "at 4,096 tokens" in text)
        assert "job $" not in card and "wall-clock" not in card and "kWh" not in card
        assert "cluster $/hour" in card and "no token budget" in card
        assert "$-/Mtok" not in card and "1 GPUs" not in card
        defaults = [text_of(c) for c in app.screen.query(".verdict-card")][-1]
        assert "False" not in defaults and "True" not in defaults


async def test_a_small_energy_is_not_rounded_to_nothing(make_app, ready_state):
    state = ready_state(targets=["b200-sxm"], reached=VerdictScreen.STEP,
                        given={"token_budget": 1e7})
    app = make_app(state=state, start=VerdictScreen.STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        card = text_of(app.screen.query(".verdict-card").first())
        energy = next(line for line in card.splitlines() if line.startswith("energy"))
        assert " 0 kWh" not in energy and "kWh" in energy


async def test_the_ranking_detail_says_price_once(make_app, ready_state):
    state = ready_state(targets=["b200-sxm"], reached=VerdictScreen.STEP)
    app = make_app(state=state, start=VerdictScreen.STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        await open_ranking(pilot)
        assert isinstance(app.screen, RankingScreen)
        table = app.screen.query_one("#rank-table", DataTable)
        for _ in range(table.row_count):
            line = text_of(app.screen.query_one("#rank-row"))
            assert "price price" not in line and "1 GPUs" not in line
            await pilot.press("down")
        await settle(pilot)


async def test_the_catalog_table_tells_not_supported_from_not_published(make_app, shipped):
    """A GPU without bf16 matrix units shows "—"; one that has them but no published peak
    shows "?" (a dash for both read as "no bf16" on a card that has it)."""
    from advisor.present.humanize import NA, UNKNOWN

    lacking = [g for g in shipped.gpus if g.peak_tflops.bf16 is None]
    absent = next(g for g in lacking if "bf16" not in shipped.arch_of(g).formats)
    unpublished = next(g for g in lacking if "bf16" in shipped.arch_of(g).formats)
    app = make_app(with_catalog=shipped)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#gpus", DataTable)
        assert str(table.get_cell(absent.id, "bf16")) == NA
        assert str(table.get_cell(unpublished.id, "bf16")) == UNKNOWN
        h100 = table.get_cell("h100-sxm", "bf16")
        assert str(h100) == "989" and h100.justify == "right"
        assert str(table.columns["mem"].label) == "GiB"
