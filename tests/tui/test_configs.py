"""The configurations step: options typed sweep again through the one engine, the sweep is
the Report's, energy says where idle slots are counted, and the Pipeline view's spec goes
into the answers and comes back as the Report's [pipeline]."""

from __future__ import annotations

from textual.widgets import DataTable, Input, TabbedContent

from advisor.present.charts import cost_chart
from advisor.tui.demo import settle
from advisor.tui.screens.configs import ConfigsScreen
from advisor.tui.widgets.blocks import BlockTable
from advisor.tui.widgets.charts import chart as draw

from .conftest import WIDE, retype, text_of

STEP = ConfigsScreen.STEP


def configs_state(ready_state, **kw):
    kw.setdefault("given", {"token_budget": 1e11})
    return ready_state(targets=["b200-sxm", "h200-sxm"], reached=STEP, **kw)


async def test_options_typed_sweep_again_and_are_the_report_s(make_app, ready_state):
    app = make_app(state=configs_state(ready_state, quotes={"b200-sxm": ("usd", 4.5)}),
                   start=STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        screen = app.screen
        first = app.report
        assert first is not None and first.configs is not None
        assert first.configs.counts == [1, 2, 4, 8, 16], "core's default counts"
        assert "default" in text_of(screen.query_one("#counts-field").query_one(".field-note"))
        await retype(pilot, screen.query_one("#counts", Input), "16, 8")
        await retype(pilot, screen.query_one("#deadline", Input), "2")
        report = app.report
        assert report is not first and report.configs.counts == [8, 16]
        assert report.decision.answers.configs.deadline_days == 2
        assert screen.query_one("#cfg-table", DataTable).row_count == len(report.configs.points)
        await retype(pilot, screen.query_one("#deadline", Input), "1,5")
        assert screen.query_one("#deadline").parent.has_class("-invalid")
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, ConfigsScreen), "Next waits for a valid entry"


async def test_energy_says_where_idle_slots_are_counted(make_app, ready_state):
    app = make_app(state=configs_state(ready_state), start=STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        sweep = app.report.configs
        table = app.screen.query_one("#cfg-table", BlockTable)
        assert table.shown is not None
        slots = [c.title() for c in table.shown.cols].index("idle slots")
        for p, row in zip(sweep.points, table.shown.rows, strict=True):
            assert row[slots] == str(p.idle_gpus)
        # One energy figure per configuration: today's count here equals the verdict's.
        d = app.report.decision
        today = next(p for p in sweep.points if p.gpu == d.current.gpu and p.gpus == 8)
        assert today.idle_gpus == 0 and d.current.job is not None
        assert abs(today.energy_kwh - d.current.job.energy_kwh) < 1e-6


async def test_without_a_token_budget_the_step_asks_for_one(make_app, ready_state):
    app = make_app(state=configs_state(ready_state, given={}), start=STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        assert "No token budget yet" in text_of(app.screen.query_one("#compute-error"))
        await retype(pilot, app.screen.query_one("#cfg-budget", Input), "100B")
        assert app.state.given["token_budget"] == 1e11
        assert app.report.configs is not None
        await pilot.press("escape")
        await settle(pilot)
        for _ in range(5):
            await pilot.press("escape")
        await settle(pilot)
        assert app.screen.query_one("#token_budget", Input).value == "100B"


async def test_pipeline_spec_goes_into_the_answers_and_comes_back_in_the_report(
        make_app, ready_state, tmp_path):
    app = make_app(state=configs_state(ready_state), start=STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("ctrl+t")
        await settle(pilot)
        assert screen.query_one("#cfg-tabs", TabbedContent).active == "tab-pipeline"
        assert "No pipeline" in text_of(screen.query_one("#pl-status"))
        await pilot.click("#pl-example")
        await settle(pilot)
        spec = app.state.pipeline
        assert spec is not None and [s.gpus for s in spec.stages] == [7, 1]
        report = app.report
        assert report.decision.answers.pipeline == spec and report.pipeline is not None
        head = text_of(screen.query_one("#pl-head"))
        assert "Now 7+1" in head
        assert screen.query_one("#pl-neighbours", DataTable).row_count >= 3


def test_chart_marks_the_pick_and_the_highlighted_row(catalog):
    from advisor.core import Answers, run

    answers = Answers.model_validate({
        "current": "h100-sxm", "targets": ["b200-sxm"], "configs": {"counts": [4, 8, 16]},
        "workload": {"model": "llama-3.1-8b", "seq_lens": [4096], "token_budget": 1e11}})
    sweep = run(answers, catalog, {}).configs
    assert sweep is not None
    best = sweep.choice.best
    assert best is not None
    chart = draw(cost_chart(sweep, "wizard"), 40, 8)
    assert chart.count("★") == 2, "once on the plot, once in the legend"
    other = next(p for p in sweep.points if p != best)
    highlighted = draw(cost_chart(sweep, "wizard"), 40, 8, top=f"{other.gpu}:{other.gpus}")
    assert "reverse" in highlighted and "reverse" not in chart
