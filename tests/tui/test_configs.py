"""The configurations step: options typed in, the sweep table, chart and pick, the report's
[configs] section, a missing token budget, and a resumed report's saved sweep."""

from __future__ import annotations

from textual.content import Content
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Select

from advisor.core.decide import decide
from advisor.core.economics.configs import sweep_configs
from advisor.core.model.answers import Answers
from advisor.core.model.options import ConfigOptions
from advisor.core.report.document import build_report, report_to_toml
from advisor.tui.demo import settle
from advisor.tui.export import load_report, provenance, state_from_report
from advisor.tui.forms import build_workload
from advisor.tui.screens.configs import ConfigsScreen
from advisor.tui.screens.verdict import VerdictScreen
from advisor.tui.widgets.charts import config_chart
from advisor.tui.widgets.field import FormField

SIZE = (120, 40)
STEP = ConfigsScreen.STEP



async def retype(pilot: Pilot[None], field: Input, text: str) -> None:
    field.focus()
    field.value = ""
    await pilot.press(*text)
    await settle(pilot)


def text_of(screen: ConfigsScreen, selector: str) -> str:
    return str(screen.query_one(selector).render())


async def test_options_typed_sweep_again_and_go_into_the_report(make_app, ready_state, tmp_path,
                                                                 export_from_next_step):
    state = ready_state(probe_source="catalog", targets=["b200-sxm", "h200-sxm"],
                        quotes={"b200-sxm": 4.5}, reached=STEP)
    app = make_app(state=state, start=STEP)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ConfigsScreen)
        first = app.state.sweep
        assert first is not None and first.counts == [1, 2, 4, 8, 16]
        await retype(pilot, screen.query_one("#counts", Input), "16, 8")
        await retype(pilot, screen.query_one("#deadline", Input), "20")
        missed = app.state.sweep
        assert missed is not None and missed.choice.best is None
        assert missed.choice.closest_miss is not None
        assert "None meets the limits" in text_of(screen, "#cfg-best")
        assert missed.choice.closest_miss.label in text_of(screen, "#cfg-best")
        await retype(pilot, screen.query_one("#deadline", Input), "40")
        screen.query_one("#objective", Select).focus()
        await pilot.press("enter", "down", "enter")
        await settle(pilot)
        assert app.state.configs == ConfigOptions(counts=[8, 16], deadline_days=40,
                                                  objective="time")
        sweep = app.state.sweep
        assert sweep is not None and sweep is not first
        assert sweep.counts == [8, 16] and sweep.choice.objective == "time"
        table = screen.query_one("#cfg-table", DataTable)
        assert table.row_count == len(sweep.points) == 6
        assert "limits" in [str(c.label) for c in table.columns.values()]
        best = sweep.choice.best
        assert best is not None and best.meets_deadline
        assert best.label in text_of(screen, "#cfg-best")
        assert "Best (fastest)" in text_of(screen, "#cfg-best")
        assert "Time vs cost" in text_of(screen, "#cfg-chart")
        assert "Assumptions" in text_of(screen, "#cfg-notes")
        data = await export_from_next_step(app, pilot)
    assert data["answers"]["configs"]["counts"] == [8, 16]
    assert data["answers"]["configs"]["objective"] == "time"
    assert len(data["configs"]["points"]) == 6
    report = load_report(tmp_path / "advisor-report.toml")
    assert report.configs is not None and report.configs.choice.best is not None
    assert report.configs.choice.best.label == best.label


async def test_a_bad_entry_is_shown_inline_and_blocks_next(make_app, ready_state):
    app = make_app(state=ready_state(probe_source="catalog", reached=STEP), start=STEP)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.query_one("#counts").has_focus, "the counts first: typing replaces them"
        await retype(pilot, screen.query_one("#counts", Input), "8, 0")
        field = screen.query_one("#counts").parent
        assert isinstance(field, FormField) and field.has_class("-invalid")
        assert "GPU counts run from 1" in str(field.query_one(".field-note").render())
        assert app.state.configs is not None
        assert app.state.configs.counts == [8], "the last valid entry (8) stands"
        assert screen.ready() == (False, "fix GPU counts first")
        await pilot.press("ctrl+n")
        assert app.screen is screen


async def test_without_a_token_budget_the_step_asks_for_one(make_app, ready_state):
    state = ready_state(probe_source="catalog", workload={"token_budget": None}, reached=STEP)
    app = make_app(state=state, start=STEP)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ConfigsScreen)
        assert "No token budget yet" in text_of(screen, "#compute-error")
        assert app.state.sweep is None
        budget = screen.query_one("#cfg-budget", Input)
        assert budget.has_focus
        assert screen.ready()[0], "the sweep is optional: Next goes on without it"
        await pilot.press(*"1.5T")
        await settle(pilot)
        assert app.state.workload["token_budget"] == 1.5e12
        sweep = app.state.sweep
        assert sweep is not None and sweep.token_budget == 1.5e12
        assert screen.query_one("#cfg-table", DataTable).row_count == len(sweep.points)
        assert not screen.query_one("#compute-error").display


async def test_resume_shows_the_report_sweep_without_recomputing(make_app, catalog, tmp_path):
    answers = Answers(current="h100-sxm", targets=["b200-sxm"],
                      workload=build_workload({"token_budget": 5e11}),
                      configs=ConfigOptions(counts=[8, 16, 32], deadline_days=30))
    sweep = sweep_configs(answers, catalog)
    report = build_report(decide(answers, catalog, {}), catalog, {}, provenance(),
                          configs=sweep)
    path = tmp_path / "r.toml"
    path.write_text(report_to_toml(report), encoding="utf-8")
    state = state_from_report(load_report(path))
    saved = state.sweep
    assert saved is not None and state.configs == answers.configs
    app = make_app(state=state, start=VerdictScreen.STEP)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ConfigsScreen)
        assert app.state.sweep is saved, "the report's sweep, not a new one"
        assert screen.query_one("#counts", Input).value == "8, 16, 32"
        assert screen.query_one("#deadline", Input).value == "30"
        assert screen.query_one("#cfg-table", DataTable).row_count == len(saved.points)


def test_chart_marks_the_pick_and_the_highlighted_row(catalog):
    answers = Answers(current="h100-sxm", targets=["b200-sxm"],
                      workload=build_workload({"token_budget": 1e11}),
                      configs=ConfigOptions(counts=[4, 8, 16]))
    sweep = sweep_configs(answers, catalog)
    best = sweep.choice.best
    assert best is not None
    chart = config_chart(sweep)
    assert chart.count("★") == 2, "once on the plot, once in the legend"
    other = next(p for p in sweep.points if p != best)
    highlighted = config_chart(sweep, highlight=f"{other.gpu}:{other.gpus}")
    assert "reverse" in highlighted and "reverse" not in chart
    lines = Content.from_markup(chart).plain.splitlines()
    assert lines[1].strip().startswith("$") and "ETA" in lines[-3]
