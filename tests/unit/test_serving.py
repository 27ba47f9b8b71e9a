"""Serving as a serving engineer runs it: TP re-tuned where the user did not state it, the KV
cache named where it binds, per-side formats, and capacity verdicts with a margin."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.core.comparison import decide
from advisor.core.model.answers import Answers, parse_answers
from advisor.present.decision import rates_table
from advisor.present.verdict import reason_text


def serve(current: str, target: str, **workload: Any) -> Answers:
    w: dict[str, Any] = {"model": "llama-3.1-70b", "mode": "serve", "seq_lens": [1000],
                         "osl": 1000, "precision": "fp8"}
    return parse_answers({"current": current, "targets": [target], "workload": w | workload})


def test_a_70b_on_8_gpus_is_not_served_at_tp1(catalog) -> None:
    """It was 9.77x with both sides kept at TP 1 (the H100 holding 70 GB of weights per GPU
    and batching 8 requests); a user serves it at TP 2-8 and so does the re-tune."""
    d = decide(serve("h100-sxm@8", "h200-sxm@8"), catalog)
    t, c = d.targets[0].sweep[0], d.current.sweep[0]
    assert c.layout is not None and c.layout.tp > 1
    assert t.speedup is not None and 1.0 < t.speedup < 2.0


def test_the_mi300x_holds_a_70b_alone_and_the_h100_does_not_need_to(catalog) -> None:
    d = decide(serve("mi300x@8", "h100-sxm@8"), catalog)
    s = d.targets[0].sweep[0].speedup
    assert s is not None and 0.6 < s < 1.4  # it was 0.30 with the H100 kept at TP 1


def test_a_stated_tp_is_kept_and_the_kv_cache_binds(catalog) -> None:
    """TP 1 stated: the H100 holds the weights with room for a few requests, and says so."""
    d = decide(serve("h100-sxm@1", "h200-sxm@1", tp=1), catalog)
    c, t = d.current.sweep[0], d.targets[0].sweep[0]
    assert c.layout is not None and c.layout.tp == 1
    assert c.binding == "capacity" and c.batch_cap == "kv-capacity"
    assert c.kv_batch is not None and t.kv_batch is not None and c.kv_batch * 5 < t.kv_batch
    assert t.speedup is not None and t.speedup > 4
    verdict = d.targets[0].verdict
    assert verdict is not None
    assert any(reason_text(r).startswith("KV capacity binds on h100-sxm") for r in verdict.reasons)
    assert c.ttft_ms and c.tpot_ms


def test_fp8_on_the_old_gpu_against_nvfp4_on_the_new(catalog) -> None:
    a = serve("h200-sxm@8", "b200-sxm@8").model_copy(
        update={"layouts": parse_answers({
            "current": "h200-sxm", "targets": ["b200-sxm"],
            "workload": {"model": "llama-3.1-8b", "seq_lens": [8]},
            "layouts": {"b200-sxm": {"precision": "nvfp4"}}}).layouts})
    d = decide(a, catalog)
    assert (d.current.precision, d.targets[0].precision) == ("fp8", "nvfp4")
    assert d.current.dtype_gate.passed and d.targets[0].dtype_gate.passed
    same = decide(serve("h200-sxm@8", "b200-sxm@8"), catalog).targets[0].sweep[0].speedup
    switched = d.targets[0].sweep[0].speedup
    assert same and switched and switched > same  # NVFP4 reads and multiplies faster
    rates = rates_table(d)  # each GPU's matmul rate is in its own format, and said so
    assert (rates.cols[1].header, rates.cols[1].unit) == ("matmul", "TFLOPS")
    assert "matmul in each GPU's own format: h200-sxm fp8, b200-sxm nvfp4" in rates.notes


def test_the_longest_input_stops_at_the_models_context(catalog) -> None:
    d = decide(serve("h100-sxm@8", "h200-sxm@8"), catalog)
    for r in (d.current, d.targets[0]):
        assert r.memory.max_seq_len is not None and r.memory.max_seq_len <= 131072 - 1000


def test_the_guides_long_context_sweep_fits_both_gpus_as_run(catalog) -> None:
    """The seed guide ran 8k-256k on H200 and B200 (ZeRO-3, full recompute, optimizer offload,
    Liger) at ~125 GiB of the H200's ~130 GiB: both fit at every length, and the speedups
    stay within 10% of the guide's."""
    guide = {8192: 1.19, 32768: 1.62, 65536: 1.84, 131072: 1.99, 196608: 2.02, 262144: 2.03}
    a = parse_answers({
        "current": "h200-sxm", "targets": ["b200-sxm"], "basis": "as_run",
        "workload": {"model": "llama-3.1-8b", "seq_lens": list(guide), "zero_stage": 3,
                     "checkpointing": True, "offload_optimizer": True, "fused_kernels": True,
                     "micro_batch": 1, "gpus": 8}})
    d = decide(a, catalog)
    assert d.targets[0].verdict is not None and d.targets[0].verdict.kind != "capability"
    for c, t in zip(d.current.sweep, d.targets[0].sweep, strict=True):
        assert c.fits and t.fits
        assert t.speedup == pytest.approx(guide[t.seq_len], rel=0.10)


def test_a_sliding_window_caps_the_kv_cache_and_decode_attention(catalog) -> None:
    """GPT-OSS slides 128 tokens on half its layers: at 32k of context those layers cache and
    read 128 tokens, so a request holds about half the KV the same shape without a window
    would, and more requests fit."""
    from advisor.core.model.presets import resolve_preset

    oss = resolve_preset("gpt-oss-120b")
    full = oss.model_copy(update={"sliding_window": None, "global_every": None})

    def batch(model: Any) -> int:
        d = decide(parse_answers({"current": "h200-sxm@8", "targets": ["b200-sxm@8"],
                                  "workload": {"model": model.model_dump(), "mode": "serve",
                                               "seq_lens": [32768], "osl": 1024,
                                               "precision": "fp8", "max_batch": 4096}}),
                   catalog)
        point = d.current.sweep[0]
        assert point.kv_batch is not None
        return point.kv_batch

    assert batch(oss) > 1.7 * batch(full)


def test_a_prefill_counts_the_lm_head_once_per_request(catalog) -> None:
    """A huge vocabulary on a small model: counted for every prompt token, the head made MFU
    17 (issue 32); it runs on each request's last token only."""
    d = decide(parse_answers({
        "current": "h100-sxm@1", "targets": ["h200-sxm@1"],
        "workload": {"model": {"layers": 2, "hidden": 512, "heads": 8, "kv_heads": 8,
                               "ffn": 1024, "vocab": 1_000_000}, "mode": "prefill",
                     "seq_lens": [8192], "micro_batch": 8}}), catalog)
    for side in (d.current, d.targets[0]):
        mfu = side.sweep[0].mfu
        assert mfu is not None and 0 < mfu < 1


def test_deepseek_is_served_with_data_parallel_attention(catalog) -> None:
    """MLA's latent is replicated on every TP rank, so TP 8 holds each request's KV eight times;
    serving engines run DeepSeek with each GPU an attention replica and the experts over EP 8,
    and so does the re-tune: the cache then holds several times the requests."""
    a = parse_answers({"current": "b200-sxm@8", "targets": ["b300-sxm@8"],
                       "workload": {"model": "deepseek-r1", "mode": "serve", "seq_lens": [800],
                                    "osl": 3756, "precision": "nvfp4", "max_batch": 8192}})
    d = decide(a, catalog)
    c = d.current.sweep[0]
    assert c.layout is not None and (c.layout.tp, c.layout.ep) == (1, 8)
    tp8 = decide(a.model_copy(update={"workload": a.workload.model_copy(
        update={"tp": 8, "ep": 8})}), catalog).current.sweep[0]
    assert c.kv_batch is not None and tp8.kv_batch is not None
    assert c.kv_batch > 4 * tp8.kv_batch / 8  # per GPU: a replica of 1 GPU against one of 8
    s = d.targets[0].sweep[0].speedup  # MLPerf v6.0 Offline, Nebius: 1.18x
    assert s is not None and 1.0 < s < 1.35


def test_expert_parallel_over_pcie_is_named(catalog) -> None:
    """Mixtral on four L40S at EP 4: the all-to-all crosses PCIe, and the verdict says what
    it costs the step (it was never named)."""
    a = parse_answers({"current": "l40s@4", "targets": ["rtx-pro-6000-bw-server@4"],
                       "workload": {"model": "mixtral-8x7b", "mode": "serve",
                                    "seq_lens": [1024], "osl": 1024, "ep": 4}})
    v = decide(a, catalog).targets[0].verdict
    assert v is not None
    line = next(reason_text(r) for r in v.reasons if "over PCIe" in reason_text(r))
    assert line.startswith("l40s: TP 4 and EP 4 run over PCIe") or line.startswith(
        "l40s: EP 4 run over PCIe")
    assert "of its step" in line
