"""The published RTX PRO 6000 -> B200 projection (cost-power-figures.md), reproduced figure by
figure, and the sensitivity table that says which assumption carries its verdict."""

from __future__ import annotations

import pytest

from advisor.core.economics.scenario import (
    catalog_caveats,
    classify,
    current_days,
    engine_speedup,
    project,
    published_check,
    published_inputs,
    sensitivity,
    with_overrides,
)
from advisor.core.errors import InputError
from advisor.io.catalog_store import effective_catalog

CATALOG = effective_catalog()
S = published_inputs(CATALOG)


def test_inputs_take_dense_peaks_and_power_from_the_catalog():
    assert (S.target_dense_tflops, S.current_dense_tflops) == (2250.0, 503.8)
    assert (S.target_peak_tflops, S.current_peak_tflops) == (4500.0, 1000.0)  # sparse-style
    assert S.target_tdp_w == 1000 and S.target_idle_w == pytest.approx(100)
    assert any("LOW CONFIDENCE" in c for c in catalog_caveats(CATALOG))


@pytest.mark.parametrize("check", published_check(S), ids=lambda c: c.figure)
def test_published_figures_within_tolerance(check):
    assert check.ok, f"{check.figure}: published {check.published}, predicted {check.predicted}"


def test_published_arithmetic_exactly():
    """4.5 PFLOP/s x 0.45 / 54 GFLOP = 37.5 Ktok/s per target; x3 = 112.5; 1.866B x 6 / 112.5K."""
    four = project(S, (3, 1))
    assert four.target_tokens_per_s_per_gpu == pytest.approx(37_500)
    assert four.tokens_per_s == pytest.approx(112_500) and four.bottleneck == "targets"
    assert four.days == pytest.approx(1.866e9 * 6 / 112_500 / 86400)
    # The write-up rounds days to 0.1 before multiplying: 4 x 8.8, 4 x 3.4 x 1.2, 8 x 3.4 x 0.5
    eight = project(S, (7, 1))
    assert 4 * round(current_days(S), 1) == pytest.approx(35.2)
    assert 4 * 3.4 * round(four.days, 1) == pytest.approx(16.3, abs=0.05)
    assert 8 * 3.4 * round(eight.days, 1) == pytest.approx(13.6)
    assert four.verdict == eight.verdict == "faster and cheaper"


def test_eight_b200_is_at_the_drafters_limit():
    """7 targets make 262.5 Ktok/s; one drafter sped up like a target takes 34.7K x 7.5."""
    eight = project(S, (7, 1))
    assert eight.drafter_tokens_per_s_per_gpu == pytest.approx(34_700 * 4.5 * 0.45 / 0.27)
    assert eight.tokens_per_s == pytest.approx(eight.drafter_tokens_per_s_per_gpu)
    no_rise = project(with_overrides(S, {"current_mfu": 0.45}), (7, 1))
    assert no_rise.bottleneck == "drafter" and "block on back-pressure" in no_rise.queue


def test_verdict_classes():
    assert classify(0.9, 0.5) == "slower"
    assert classify(2.0, 0.99) == "faster and cheaper"
    assert classify(2.0, 1.0) == "faster but dearer"
    assert project(with_overrides(S, {"price_ratio": 8.0})).verdict == "faster but dearer"
    assert project(with_overrides(S, {"target_mfu": 0.02})).verdict == "slower"


@pytest.fixture(scope="module")
def tornado():
    return sensitivity(S, (3, 1), engine_speedup(CATALOG))


def row(t, prefix):
    return next(r for r in t.rows if r.assumption.startswith(prefix))


def test_only_the_dense_reading_of_mfu_flips_four_b200(tornado):
    """Read against the dense 2,250 TFLOPS, 40% MFU (the stated low end) is just dearer."""
    assert tornado.baseline.verdict == "faster and cheaper"
    assert tornado.carries == ["B200 MFU (of 2250 dense)"]
    dense = row(tornado, "B200 MFU (of 2250 dense)")
    assert dense.low_verdict == "faster but dearer" and dense.high_verdict == "faster and cheaper"
    # cost parity: 3 x 2250e12 x m / 54e9 = 3.4 x 14.8e3
    assert dense.break_even == pytest.approx(3.4 * 14_800 * 54e9 / (3 * 2250e12), rel=1e-6)
    assert dense.break_even_label == "40.3%"
    assert "dense" in tornado.summary and "40.3%" in tornado.summary


def test_break_evens_sit_where_the_arithmetic_puts_them(tornado):
    assert row(tornado, "Price ratio").break_even == pytest.approx(112_500 / 14_800, rel=1e-6)
    assert row(tornado, "B200 MFU (of 4500").break_even == pytest.approx(
        3.4 * 14_800 * 54e9 / (3 * 4500e12), rel=1e-6)
    assert row(tornado, "FLOPs per token").break_even == pytest.approx(
        3 * 4500e12 * 0.45 / (3.4 * 14_800), rel=1e-6)


def test_hop_and_peak_basis_do_not_carry_it(tornado):
    hop = row(tornado, "GPU->CPU hop")
    assert not hop.flips
    assert hop.high_cost_ratio / hop.low_cost_ratio == pytest.approx(
        (46_891.9 / 37_500 + 0.06) / (46_891.9 / 37_500), rel=1e-3)
    peak = row(tornado, "Peak basis")
    assert not peak.flips and peak.low_cost_ratio == pytest.approx(0.895, abs=0.005)
    assert not row(tornado, "RTX MFU").flips  # at 3+1 the drafter has room either way


def test_engine_cross_check_and_worst_corner(tornado):
    engine = row(tornado, "Engine")
    assert 3.0 < float(engine.low.rstrip("x")) < 6.0  # roughly the dense peak ratio 4.47
    assert engine.low_verdict == "faster and cheaper"
    worst = tornado.rows[-1]
    assert worst.assumption == "All adverse ends together" and worst.flips
    assert worst.low_verdict == "faster but dearer"


def test_singles_are_sorted_by_swing(tornado):
    singles = [r for r in tornado.rows if r.assumption in tornado.carries
               or not r.assumption.startswith(("Engine", "All adverse"))]
    swings = [r.swing for r in singles]
    assert swings == sorted(swings, reverse=True)


def test_overrides_are_validated():
    assert with_overrides(S, {"target_mfu": 0.35}).target_mfu == 0.35
    with pytest.raises(InputError, match="--set"):
        with_overrides(S, {"mfu": 0.35})
    with pytest.raises(InputError):
        with_overrides(S, {"target_mfu": 2.0})
