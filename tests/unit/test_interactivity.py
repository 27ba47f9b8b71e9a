"""Serving at an interactivity target: the curve of tokens/s per GPU against tokens/s per
user, read at the user's target, and who leads where."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from advisor.core.comparison import decide
from advisor.core.errors import InputError
from advisor.core.model.answers import parse_answers
from advisor.core.projection.interactivity import at_interactivity, leaders


@dataclass(frozen=True)
class Pt:
    tokens_per_s_per_user: float
    tokens_per_s_per_gpu: float


def serve(**workload: object) -> object:
    w = {"model": "llama-3.1-70b", "mode": "serve", "seq_lens": [1000], "osl": 1000,
         "precision": "fp8"} | workload
    return parse_answers({"current": "h200-sxm@8", "targets": ["b200-sxm@8"], "workload": w})


def test_a_curve_trades_per_user_for_per_gpu(catalog) -> None:
    d = decide(serve(), catalog)
    for r in (d.current, d.targets[0]):
        assert len(r.curve) > 5
        users = [c.tokens_per_s_per_user for c in r.curve]
        gpus = [c.tokens_per_s_per_gpu for c in r.curve]
        assert users == sorted(users, reverse=True) and gpus == sorted(gpus)
        for c in r.curve:  # each point is its own layout's figures
            assert c.tokens_per_s_per_user == pytest.approx(1000 / c.tpot_ms)
        # its fastest-per-GPU end is the verdict's point when no limit is given
        assert r.curve[-1].tokens_per_s_per_gpu == pytest.approx(
            r.sweep[0].tokens_per_s_per_gpu)


def test_the_target_is_a_tpot_limit_and_the_verdict_meets_it(catalog) -> None:
    d = decide(serve(min_tokens_per_user=50), catalog)
    free = decide(serve(), catalog)
    for r, f in ((d.current, free.current), (d.targets[0], free.targets[0])):
        p = r.sweep[0]
        assert p.tpot_ms is not None and 1000 / p.tpot_ms >= 50
        assert p.batch_cap == "tpot"
        best = at_interactivity(f.curve, 50)
        assert best is not None and p.tokens_per_s_per_gpu == pytest.approx(
            best.tokens_per_s_per_gpu, rel=1e-6)
    tighter = decide(serve(min_tokens_per_user=50, tpot_ms=10), catalog)
    assert tighter.current.sweep[0].tpot_ms is not None
    assert tighter.current.sweep[0].tpot_ms <= 10


def test_a_training_workload_has_no_interactivity_target() -> None:
    with pytest.raises(InputError, match="serving target"):
        parse_answers({"current": "h100-sxm", "targets": ["b200-sxm"],
                       "workload": {"model": "llama-3.1-8b", "seq_lens": [4096],
                                    "min_tokens_per_user": 50}})


def test_leaders_by_throughput_and_by_cost() -> None:
    fast = [Pt(100, 10), Pt(50, 100), Pt(10, 200)]
    cheap = [Pt(60, 60), Pt(10, 180)]
    bands = leaders({"fast": fast, "cheap": cheap})
    assert bands[0][2] == "fast" and bands[-1] == (60, 100, "fast")
    # at twice the price per hour, `fast` loses where `cheap` keeps up
    priced = leaders({"fast": fast, "cheap": cheap}, {"fast": 2.0, "cheap": 1.0})
    assert priced[0][2] == "cheap" and priced[-1][2] == "fast"
    assert at_interactivity(fast, 60) == Pt(100, 10)
    assert at_interactivity(cheap, 61) is None


def test_a_blocked_target_has_no_curve(catalog) -> None:
    a = parse_answers({"current": "h200-sxm@8", "targets": ["mi355x@8"],
                       "workload": {"model": "llama-3.1-70b", "mode": "serve",
                                    "seq_lens": [1000], "osl": 1000, "precision": "nvfp4"}})
    d = decide(a, catalog)
    assert d.targets[0].curve == [] and d.interactivity == []
