"""What the user measured today anchors the decision (issue 24's wizard side): typed on the
Workload step, carried as [measured], shown beside the modelled figure with what moved."""

from __future__ import annotations

from advisor.tui.demo import settle
from advisor.tui.screens.performance import PerformanceScreen
from advisor.tui.screens.verdict import VerdictScreen
from advisor.tui.screens.workload import WorkloadScreen

from .conftest import WIDE, retype, text_of


async def test_a_measured_run_anchors_the_decision(make_app, ready_state):
    app = make_app(state=ready_state(targets=["b200-sxm"], reached=WorkloadScreen.STEP),
                   start=WorkloadScreen.STEP)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.query_one("#measured").collapsed = False
        await settle(pilot)
        await retype(pilot, screen.query_one("#m-attention_share"), "20")
        hint = text_of(screen.query_one("#hint"))
        assert "what you measured" in hint, "a share alone is no throughput: refused, said why"
        await pilot.press("ctrl+n")
        assert isinstance(app.screen, WorkloadScreen)
        await retype(pilot, screen.query_one("#m-tokens_per_s_per_gpu"), "8k")
        assert app.state.measured == {"attention_share": 0.2, "tokens_per_s_per_gpu": 8000.0}
        answers = app.answers()
        assert answers.measured is not None and answers.measured.tokens_per_s_per_gpu == 8000
        app.goto(PerformanceScreen.STEP)
        await settle(pilot)
        report = app.report
        anchor = report.decision.anchor
        assert anchor is not None and anchor.moved
        assert "anchored on your measured 8,000 tokens/s per GPU" in text_of(
            app.screen.query_one("#perf-summary"))
        line = text_of(app.screen.query_one("#sweep-row"))
        modelled = report.decision.current.modelled_tokens_per_s_per_gpu
        assert "anchored on your measured" in line and f"modelled {modelled:,.0f}" in line
        app.goto(VerdictScreen.STEP)
        await settle(pilot)
        card = next(text_of(c) for c in app.screen.query(".verdict-card")
                    if "anchored" in text_of(c))
        assert "the model alone" in card
        for moved in anchor.moved:
            assert moved.split(" (")[0] in card
        assert "carries to b200-sxm" in card
