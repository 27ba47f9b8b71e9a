"""Fine-tuning on the card you own, in the wizard (issue 28): a 14B LoRA at 4k on one 24 GB
card. Picked as a user picks them on the Workload step: LoRA, then the base's format. With a
4-bit base it fits, the verdict names QLoRA and its dequantisation cost and every target is
projected; with the 16-bit base it does not fit, and the verdict names what would."""

from __future__ import annotations

from textual.widgets import Select

from advisor.tui.demo import settle
from advisor.tui.screens.verdict import VerdictScreen
from advisor.tui.screens.workload import WorkloadScreen

from .conftest import WIDE, press, set_attr


async def _to_verdict(pilot) -> str:
    for _ in range(12):
        if isinstance(pilot.app.screen, VerdictScreen):
            break
        await press(pilot, "ctrl+n")
    assert isinstance(pilot.app.screen, VerdictScreen)
    return " ".join(str(c.render()) for c in pilot.app.screen.query(".verdict-card"))


async def test_a_14b_lora_on_a_24_gb_card(make_app, ready_state):
    state = ready_state(current="l4", targets=["h100-sxm", "b200-sxm"],
                        given={"model": "qwen2.5-14b", "seq_lens": (4096,), "gpus": 1})
    app = make_app(state=state, start=1)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, WorkloadScreen)
        assert not app.screen.query_one("#f-base_format").display, "LoRA's own fields"
        await set_attr(pilot, "#mode", value="lora")
        for key in ("base_format", "lora_rank", "lora_targets", "allow_quantized_base"):
            assert app.screen.query_one(f"#f-{key}").display, key
        # the 16-bit base, as the checkpoint: nothing fits, and the verdict says what would
        report = app.report
        assert report is not None and not report.decision.current.sweep[0].fits
        text = " ".join((await _to_verdict(pilot)).split())
        assert "l4 does not fit 4,096 tokens with a 16-bit base in any layout" in text
        assert "a 4-bit NF4 (QLoRA) base (base format nf4, on step 2 (Workload))" in text
        assert "may quantize base, on step 2 (Workload)" in text
        for _ in range(12):  # back to Workload, a step at a time
            if isinstance(app.screen, WorkloadScreen):
                break
            await press(pilot, "escape")
        assert isinstance(app.screen, WorkloadScreen)
        await set_attr(pilot, "#base_format", value="nf4")
        assert app.state.given["base_format"] == "nf4"
        assert app.screen.query_one("#base_format", Select).value == "nf4"
        text = " ".join((await _to_verdict(pilot)).split())
        assert "l4 holds a 4-bit NF4 (QLoRA) base, as given: dequantising it takes" in text
        assert "accuracy risk low" in text and "does not fit" not in text
        d = app.report.decision
        assert d.current.sweep[0].fits
        assert all(t.sweep[0].speedup for t in d.targets), "every target projected"
