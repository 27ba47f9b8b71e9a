"""The configurations step's Pipeline view: stages typed in, the balance of the split as
given, its neighbours and the best splits, the chart, and [pipeline] in the export."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, TabbedContent

from advisor.core.decide import decide
from advisor.core.model.answers import Answers
from advisor.core.model.options import PipelineSpec, StageSpec
from advisor.core.report.document import build_report, report_to_toml
from advisor.tui.demo import settle
from advisor.tui.export import load_report, provenance, state_from_report
from advisor.tui.forms import build_workload
from advisor.tui.screens.configs import ConfigsScreen
from advisor.tui.widgets.pipeline import PipelinePanel, spec_from_form

SIZE = (120, 40)
STEP = ConfigsScreen.STEP
GPU = "h100-sxm"  # the frozen test catalog has no RTX PRO 6000; measured rates ignore the GPU


def example_spec(gpu: str = GPU) -> PipelineSpec:
    stage = {"gpu": gpu, "measured_units_per_s": 0.74, "active_w": 587.5, "idle_w": 60}
    return PipelineSpec(stages=[StageSpec(name="targets", gpus=7, **stage),
                                StageSpec(name="drafter", gpus=1, **stage)],
                        tokens_per_unit=46891.9, token_budget=11.196e9, box_gpus=8,
                        vary="targets")


async def type_into(pilot: Pilot[None], field: Input, text: str) -> None:
    field.focus()
    field.value = ""
    await pilot.press(*text)


def cells(table: DataTable[object]) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_stages_typed_in_show_the_balance_and_go_into_the_report(make_app, ready_state,
                                                                         tmp_path,
                                                                         export_from_next_step):
    state = ready_state(probe_source="catalog", targets=["b200-sxm"], reached=STEP)
    app = make_app(state=state, start=STEP)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ConfigsScreen)
        await pilot.press("ctrl+t")
        await settle(pilot)
        assert screen.query_one("#cfg-tabs", TabbedContent).active == "tab-pipeline"
        assert "No pipeline" in str(screen.query_one("#pl-status").render())
        for i, (name, count) in enumerate((("targets", "7"), ("drafter", "1"))):
            for key, text in (("name", name), ("gpu", GPU), ("gpus", count), ("rate", "0.74"),
                              ("active", "587.5"), ("idle", "60")):
                await type_into(pilot, screen.query_one(f"#pl-{i}-{key}", Input), text)
        for key, text in (("tpu", "46891.9"), ("budget", "11.196B"), ("box", "8"),
                          ("vary", "targets")):
            await type_into(pilot, screen.query_one(f"#pl-{key}", Input), text)
        await settle(pilot)
        assert app.state.pipeline == example_spec()
        panel = screen.query_one(PipelinePanel)
        report = panel.report
        assert report is not None and report.current.balanced
        head = str(screen.query_one("#pl-head").render())
        assert "34.7 Ktok/s" in head and "none: balanced" in head
        stages = cells(screen.query_one("#pl-stages", DataTable))
        assert [row[0] for row in stages] == ["targets", "drafter"]
        assert all(row[5] == "measured" for row in stages)
        rows = {row[0]: row for row in cells(screen.query_one("#pl-neighbours", DataTable))}
        assert rows["7+1 (now)"][2] == "34.7" and rows["7+1 (now)"][4] == "none: balanced"
        assert rows["6+1"][2] == "29.7" and rows["5+1"][2] == "24.8"
        assert rows["5+1"][4] == "targets" and rows["5+1"][5] == "drafter starves"
        chart = str(screen.query_one("#pl-chart").render())
        assert "7+1" in chart and "◀ now" in chart and "24.8" in chart
        best = cells(screen.query_one("#pl-best", DataTable))
        assert best[0][0] == "7+1 (now)"
        assert "measured" in str(screen.query_one("#pl-notes").render())
        assert "drafter starve" not in head, "as given, no side waits"
        data = await export_from_next_step(app, pilot)
    assert data["answers"]["pipeline"]["stages"][0]["name"] == "targets"
    assert "pipeline" in data
    saved = load_report(tmp_path / "advisor-report.toml")
    assert saved.decision.answers.pipeline == example_spec()


async def test_a_resumed_pipeline_is_shown_as_loaded(make_app, catalog, tmp_path):
    answers = Answers(current=GPU, targets=["b200-sxm"],
                      workload=build_workload({"token_budget": 5e11}), pipeline=example_spec())
    report = build_report(decide(answers, catalog, {}), catalog, {}, provenance())
    path = tmp_path / "r.toml"
    path.write_text(report_to_toml(report), encoding="utf-8")
    state = state_from_report(load_report(path))
    assert state.pipeline == example_spec()
    app = make_app(state=state, start=STEP)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ConfigsScreen)
        assert screen.query_one("#pl-0-gpus", Input).value == "7"
        assert screen.query_one("#pl-tpu", Input).value == "46891.9"
        assert app.state.pipeline is state.pipeline, "untouched: the answers as loaded"
        panel = screen.query_one(PipelinePanel)
        assert panel.report is not None and panel.report.current.tokens_per_s == \
            pytest.approx(34_700, rel=1e-3)
        await type_into(pilot, screen.query_one("#pl-1-rate", Input), "0.5")
        await settle(pilot)
        assert app.state.pipeline is not None
        assert [s.measured_units_per_s for s in app.state.pipeline.stages] == [0.74, 0.5]
        assert panel.report is not None and panel.report.current.bottleneck == "drafter"
        assert "targets block" in str(screen.query_one("#pl-head").render())


def test_the_form_keeps_what_it_has_no_field_for():
    base = example_spec().model_copy(update={"source": "published", "span": 3})
    row = {"name": "targets", "gpu": GPU, "gpus": "6", "rate": "0.74", "active": "587.5",
           "idle": "60"}
    spec = spec_from_form([row, {**row, "name": "drafter", "gpus": "1"}], "46891.9", "", "",
                          "", base)
    assert spec is not None and spec.source == "published" and spec.span == 3
    assert spec.token_budget is None and spec.vary is None
    assert spec_from_form([{k: "" for k in row}] * 2, "", "", "", "") is None
    with pytest.raises(ValueError, match="drafter units/s"):
        spec_from_form([row, {**row, "name": "drafter", "rate": "fast"}], "1", "", "", "")
