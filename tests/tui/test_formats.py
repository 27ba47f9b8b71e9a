"""Per-side number formats, serving figures and the FP8 encoding caveat (issue 19's wizard
side): set on Targets, checked on the dtype step, said in the verdict and the summary."""

from __future__ import annotations

from textual.widgets import Button, DataTable, Select

from advisor.present.markdown import document
from advisor.present.report import summary_blocks
from advisor.tui.demo import settle
from advisor.tui.screens.gates import DtypeScreen
from advisor.tui.screens.layout import LayoutScreen
from advisor.tui.screens.performance import PerformanceScreen
from advisor.tui.screens.targets import TargetsScreen
from advisor.tui.screens.verdict import VerdictScreen

from .conftest import NARROW, WIDE, retype, table_text, text_of


def serving(ready_state, step, **kw):
    return ready_state(targets=["b200-sxm"], reached=step, **kw,
                       given={"model": "llama-3.1-70b", "mode": "serve", "seq_lens": (2048,),
                              "osl": 512, "precision": "fp8"})


async def test_a_target_runs_its_own_format_set_on_targets(make_app, ready_state):
    """fp8 on the H100 against nvfp4 on the B200: the layout dialog sets it, the answers
    carry it as layouts.b200-sxm, the dtype gate checks each side against its own format,
    and the verdict names both and what the switch costs."""
    app = make_app(state=serving(ready_state, TargetsScreen.STEP), start=TargetsScreen.STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        button = next(b for b in app.screen.query(".price-layout").results(Button)
                      if b.name == "b200-sxm")
        button.press()
        await settle(pilot)
        assert isinstance(app.screen, LayoutScreen)
        app.screen.query_one("#l-precision", Select).value = "nvfp4"
        app.screen.query_one("#l-kv_dtype", Select).value = "fp8"
        await retype(pilot, app.screen.query_one("#l-tp"), "2")
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert isinstance(app.screen, TargetsScreen)
        assert app.state.layouts == {"b200-sxm": {"precision": "nvfp4", "kv_dtype": "fp8",
                                                   "tp": 2}}
        answers = app.answers()
        assert answers.layouts["b200-sxm"].precision == "nvfp4"
        note = [text_of(n) for n in app.screen.query(".price-note")][-1]
        assert "nvfp4, KV fp8, TP 2" in note
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert isinstance(app.screen, DtypeScreen)
        assert "nvfp4" in text_of(app.screen.query_one("#gate-question"))
        rows = table_text(app.screen.query_one("#gate", DataTable))
        assert "fp8: " in rows.splitlines()[0] and "nvfp4: " in rows.splitlines()[1]
        await pilot.press("down")
        detail = text_of(app.screen.query_one("#detail-text"))
        assert "runs nvfp4" in detail and "format switch" in detail
        app.goto(VerdictScreen.STEP)
        await settle(pilot)
        card = text_of(app.screen.query(".verdict-card").first())
        fmt = next(line for line in card.splitlines() if line.startswith("format"))
        assert "fp8" in fmt and "nvfp4" in fmt
        assert "quantized checkpoint" in card, "the switch's cost, from the verdict's reasons"


async def test_serving_figures_and_the_engine_are_on_performance_and_the_verdict(
        make_app, ready_state):
    app = make_app(state=serving(ready_state, PerformanceScreen.STEP),
                   start=PerformanceScreen.STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        report = app.report
        p = report.decision.current.point(2048)
        assert p.batch is not None and p.ttft_ms is not None
        columns = [str(c.label).replace("\n", " ")
                   for c in app.screen.query_one("#sweep").columns.values()]
        assert {"TTFT ms", "TPOT ms", "requests in flight"} <= set(columns)
        line = text_of(app.screen.query_one("#sweep-row"))
        assert "set by " in line and "vLLM" in line
        app.goto(VerdictScreen.STEP)
        await settle(pilot)
        card = text_of(app.screen.query(".verdict-card").first())
        for label in ("engine", "TTFT ms", "TPOT ms", "requests in flight", "set by",
                      "bound by"):
            assert any(row.startswith(label) for row in card.splitlines()), label
        assert "vLLM" in card


async def test_a_narrow_performance_table_keeps_its_figures_under_it(make_app, ready_state):
    app = make_app(state=serving(ready_state, PerformanceScreen.STEP),
                   start=PerformanceScreen.STEP)
    async with app.run_test(size=NARROW) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#sweep", DataTable)
        columns = [str(c.label).replace("\n", " ") for c in table.columns.values()]
        assert "memory GiB of usable" not in columns and "TTFT ms" in columns
        line = text_of(app.screen.query_one("#sweep-row"))
        assert "memory GiB of usable" in line, "what the width leaves out, under the table"
        await pilot.press("down")
        assert "b200-sxm" in text_of(app.screen.query_one("#sweep-row"))


async def test_the_fp8_encoding_caveat_follows_the_target_into_the_verdict(
        make_app, ready_state, shipped):
    """MI300X runs fp8 as FNUZ; MI355X runs OCP: checkpoints move with a conversion, which
    the target's card and the copied summary say, not only the dtype step."""
    state = ready_state(current="mi300x", targets=["mi355x"], reached=VerdictScreen.STEP,
                        given={"precision": "fp8"})
    app = make_app(state=state, start=VerdictScreen.STEP, with_catalog=shipped)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        card = text_of(app.screen.query(".verdict-card").first())
        assert "moving from mi300x" in card and "FNUZ" in card
        summary = document(summary_blocks(app.report), "summary")
        assert "moving from mi300x" in summary
        app.goto(DtypeScreen.STEP)
        await settle(pilot)
        await pilot.press("down")
        assert "moving from mi300x" in text_of(app.screen.query_one("#detail-text"))
