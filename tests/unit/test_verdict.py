"""The verdict: gate first, then capability, then money; reasons ranked and flips stated."""

from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.core.economics.verdict import Case, Verdict, judge
from advisor.present.verdict import flip_text, reason_text, verdict_headline

BASE = Case(
    target="b200-sxm", current="h200-sxm", target_gate=None, gate_fix=None,
    current_incapable=None, software_warnings=(), evidence_warnings=(),
    seq_lens=(8192, 32768), fits_current=(True, True), fits_target=(True, True),
    max_seq_current=250_000, max_seq_target=350_000,
    speedups=(1.7, 2.0), lows=(1.5, 1.8), highs=(1.9, 2.2),
    price_current=4.0, price_target=6.0, price_sources=("user", "default"),
    break_even_price=7.4, break_even_efficiency=0.8, break_even_mfu=0.3,
    time_premium=0.10, power_warning=None,
)


def said(v: Verdict) -> str:
    """The headline as every output words it."""
    return verdict_headline(v, BASE.target)


def flips(v: Verdict) -> list[str]:
    return [flip_text(f, BASE.target) for f in v.flips]


def test_cheaper_per_token_is_an_upgrade() -> None:
    v = judge(BASE)  # 1.84x faster at 1.5x the price
    assert v.kind == "upgrade"
    assert v.speedup == pytest.approx((1.7 * 2.0) ** 0.5)
    assert v.cost_ratio == pytest.approx(1.5 / v.speedup)
    assert v.cost_ratio_low < v.cost_ratio < v.cost_ratio_high
    assert any("above $7.40/h" in t for t in flips(v))
    assert any("0.80x the assumed" in t and "MFU 30%" in t for t in flips(v))


def test_a_small_premium_for_speed_is_upgrade_for_time() -> None:
    v = judge(replace(BASE, price_target=7.6))  # ~3% more per token, 1.84x faster
    assert v.kind == "upgrade-for-time"
    assert any("below $7.40/h" in t for t in flips(v))


def test_a_large_premium_is_hold() -> None:
    v = judge(replace(BASE, price_target=9.0))
    assert v.kind == "hold" and "more per token" in said(v)


def test_the_premium_tolerance_is_the_users() -> None:
    assert judge(replace(BASE, price_target=9.0, time_premium=0.5)).kind == "upgrade-for-time"


def test_a_failed_gate_blocks_whatever_the_speed() -> None:
    v = judge(replace(BASE, target_gate="no hardware fp8", gate_fix="use bf16"))
    assert v.kind == "blocked-by-gate"
    assert v.reasons[0].kind == "gate"
    assert v.flips[0].code == "fix" and v.flips[0].fix == "use bf16"
    assert v.flips[0].then is not None and v.flips[0].then[0] == "upgrade"
    assert flip_text(v.flips[0], BASE.target).startswith("unblocked by: use bf16; then: upgrade")


def test_running_what_the_current_gpu_cannot_is_capability() -> None:
    v = judge(replace(BASE, fits_current=(False, False), speedups=(None, None),
                      lows=(None, None), highs=(None, None), max_seq_current=4096))
    assert v.kind == "capability" and "cannot run this at any" in said(v)
    assert v.flips and v.flips[0].threshold == 4096
    incapable = judge(replace(BASE, current_incapable="H100 has no nvfp4"))
    assert incapable.kind == "capability" and "nvfp4" in said(incapable)


def test_partial_fit_is_a_ranked_reason_not_the_verdict() -> None:
    v = judge(replace(BASE, fits_current=(True, False), speedups=(1.7, None)))
    assert v.kind == "upgrade"
    assert v.reasons[0].kind == "capacity" and "32,768" in reason_text(v.reasons[0])


def test_no_price_decides_on_time_alone() -> None:
    v = judge(replace(BASE, price_target=None))
    assert v.kind == "upgrade-for-time" and v.cost_ratio is None
    assert [(reason_text(r), r.ask) for r in v.reasons if r.kind == "price"] == [
        ("no price for b200-sxm", "price")]
    neither = judge(replace(BASE, price_target=None, price_current=None))
    assert any(reason_text(r) == "no price for h200-sxm or b200-sxm" for r in neither.reasons)
    slow = judge(replace(BASE, price_target=None, speedups=(0.8, 0.9), lows=(0.7, 0.8),
                         highs=(0.9, 1.0)))
    assert slow.kind == "hold" and "slower" in said(slow)


def test_reasons_are_ranked_by_weight() -> None:
    v = judge(replace(BASE, software_warnings=("FA4 is beta on sm_100",),
                      power_warning="over the 40 kW cap"))
    weights = [r.weight for r in v.reasons]
    assert weights == sorted(weights, reverse=True)
    assert {r.kind for r in v.reasons} >= {"software", "power", "cost", "speed"}


def test_a_band_across_the_tie_is_said() -> None:
    v = judge(replace(BASE, price_target=7.2, lows=(1.4, 1.6), highs=(2.1, 2.5)))
    assert any("straddles a tie" in reason_text(r) for r in v.reasons)


def test_a_tie_inside_the_band_is_break_even() -> None:
    # 1.84x faster at 1.80x the price: 2% cheaper per token, and the band straddles 1.
    speed = (1.7 * 2.0) ** 0.5
    v = judge(replace(BASE, price_target=4.0 * speed * 0.98))
    assert v.kind == "break-even"
    assert v.cost_ratio_low < 1.0 < v.cost_ratio_high  # type: ignore[operator]
    assert "decide on wall-clock" in said(v)
    assert any("ties at" in t and "less than the model can tell apart" in t
               for t in flips(v))


def test_a_dearer_tie_inside_the_band_is_break_even_too() -> None:
    """Half the GPUs, each twice as fast, at twice the price: the same pace and $/token to
    within 0.3%. It read "hold: 0% more per token, 1.00x slower"."""
    v = judge(replace(BASE, speedups=(1.994, 1.994), lows=(1.57, 1.57), highs=(2.52, 2.52),
                      price_current=2.5, price_target=5.0, count_ratio=0.5))
    assert v.kind == "break-even"
    assert "the same as the current" in said(v) and "as fast (wall clock" in said(v)


def test_a_clear_saving_is_not_break_even_even_with_a_wide_band() -> None:
    v = judge(replace(BASE, lows=(1.0, 1.1), highs=(3.0, 3.2)))  # cost 0.82, band 0.47-1.43
    assert v.kind == "upgrade"
    assert any("straddles a tie" in reason_text(r) for r in v.reasons)


def test_cost_reason_names_whose_price_is_whose() -> None:
    v = judge(BASE)
    cost = next(reason_text(r) for r in v.reasons if r.kind == "cost")
    assert "$6.00/h (default) for b200-sxm vs $4.00/h (your quote) for h200-sxm" in cost
