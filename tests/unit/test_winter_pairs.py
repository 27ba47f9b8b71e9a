"""The decisions issue 29 found furthest off, posed as a user would: each gives a layout and a
ratio, and where kernel-level physics now covers the cause, the ratio lands near the
published one (the measured figures are in the comments; none was fitted)."""

from __future__ import annotations

from typing import Any

from advisor.core.comparison import decide
from advisor.core.model.answers import parse_answers
from advisor.present.verdict import reason_text


def serve(catalog: Any, current: str, target: str, model: str, isl: int, osl: int,
          **extra: Any) -> Any:
    layouts = extra.pop("layouts", {})
    w = {"model": model, "mode": "serve", "seq_lens": [isl], "osl": osl,
         "framework": "trtllm"} | extra
    return decide(parse_answers({"current": current, "targets": [target], "workload": w,
                                 "layouts": layouts}), catalog)




def test_deepseek_r1_fp8_on_h200_against_fp4_on_b200(catalog: Any) -> None:
    """Both sides serve it with data-parallel attention over EP 8 (MLA's KV was held once per
    TP rank: the H200 was capacity-bound at a few hundred requests); it projected ~1.6x."""
    d = serve(catalog, "h200-sxm@8", "b200-sxm@8", "deepseek-r1", 1000, 1000, precision="fp8",
              layouts={"b200-sxm": {"precision": "nvfp4"}})
    for side in (d.current, d.targets[0]):
        p = side.sweep[0]
        assert p.layout is not None and p.layout.ep == 8 and p.layout.tp == 1
    s = d.targets[0].sweep[0].speedup
    assert s is not None and s > 2.0


def test_b200_to_b300_on_deepseek_r1_is_not_its_fp4_peak(catalog: Any) -> None:
    """B300 adds FP4 and attention-exponent throughput, not FP8; with the KV no longer held once
    per TP rank, the B200 holds over a thousand requests per GPU and the B300's extra memory
    buys less: MLPerf v6.0 Offline measured 1.18x; it projected 1.53x (the B200 at ~750
    requests per 8-GPU replica)."""
    d = serve(catalog, "b200-sxm@8", "b300-sxm@8", "deepseek-r1", 800, 3756, precision="nvfp4")
    b = d.current.sweep[0].batch
    assert b is not None and b > 1000
    s = d.targets[0].sweep[0].speedup
    assert s is not None and 1.05 < s < 1.3


def test_405b_fp8_on_h100_against_mi300x_at_32k_says_what_capped_each_batch(catalog: Any) -> None:
    """The H100 holds ~20 requests of 32k after 405 GB of FP8 weights; the MI300X several
    times that. The projection names both batches and that the KV cache set them (the
    published 3.9x is not reproduced: see issue 29's note)."""
    d = serve(catalog, "h100-sxm@8", "mi300x@8", "llama-3.1-405b", 32768, 1000, precision="fp8")
    c, t = d.current.sweep[0], d.targets[0].sweep[0]
    assert c.batch_cap == t.batch_cap == "kv-capacity"
    assert c.batch is not None and t.batch is not None and c.layout and t.layout
    assert t.batch * c.layout.tp / t.layout.tp > 3 * c.batch  # per GPU, several times more
    verdict = d.targets[0].verdict
    assert verdict is not None
    line = next(reason_text(r) for r in verdict.reasons if reason_text(r).startswith("compared:"))
    assert f"{c.batch} requests in flight" in line and f"{t.batch} requests in flight" in line
