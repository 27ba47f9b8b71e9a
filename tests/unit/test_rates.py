"""Rates from a probe record: the sustained figure, and only the chosen kernel's attention."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.core.model.probe_record import ProbeRecord, parse_probe_record
from advisor.core.model.workload import Workload
from advisor.core.projection.rates import resolve_rates


def attention(kernel: str, seq: int, tflops: float) -> dict[str, Any]:
    return {"status": "ok", "backend": "flash-attn", "kernel": kernel, "seq_len": seq,
            "head_dim": 128, "heads": 32, "kv_heads": 8, "batch": 1, "causal": True,
            "direction": "fwd_bwd", "tflops_median": tflops}


def probe(matmul: dict[str, Any], *entries: dict[str, Any]) -> ProbeRecord:
    data = {
        "schema": "advisor.probe-record", "version": 2, "complete": True, "interrupted": False,
        "stamp": {"hostname": "box", "date": "2026-11-30T10:00:00Z",
                  "device": {"kind": "cuda", "name": "NVIDIA H100 80GB HBM3", "count": 8,
                             "catalog_id": "h100-sxm"},
                  "versions": {"python": "3.11.9", "torch": "2.9.0+cu128"}},
        "matmul": [{"status": "ok", "dtype": "bf16", "mode": "quick", **matmul}],
        "attention": list(entries),
    }
    return parse_probe_record(data, "probe.json")


def workload() -> Workload:
    return Workload(model="llama-3.1-8b", seq_lens=[8192], attention_kernel="fa3")


def gemm_rate(catalog, matmul: dict[str, Any]) -> float:
    r = resolve_rates(catalog.gpu("h100-sxm"), workload(), probe(matmul),
                      catalog_gpus=catalog.gpus)
    [measured] = [e for e in r.evidence if e.source == "probe" and e.quantity != "attention"]
    return measured.value


def test_the_sustained_msmf_is_the_gemm_rate_not_the_burst(catalog) -> None:
    base = gemm_rate(catalog, {"mamf_tflops": 760.0, "median_tflops": 700.0,
                               "msmf_tflops": 650.0})
    # the burst and the median at the MSMF shape move nothing; MSMF moves it in proportion
    assert gemm_rate(catalog, {"mamf_tflops": 990.0, "median_tflops": 710.0,
                               "msmf_tflops": 650.0}) == pytest.approx(base)
    assert gemm_rate(catalog, {"mamf_tflops": 760.0, "median_tflops": 700.0,
                               "msmf_tflops": 520.0}) == pytest.approx(base * 0.8)


def test_a_version_1_record_uses_its_median(catalog) -> None:
    v2 = gemm_rate(catalog, {"msmf_tflops": 650.0})
    assert gemm_rate(catalog, {"mamf_tflops": 900.0, "median_tflops": 650.0}) == (
        pytest.approx(v2))


def test_attention_comes_from_the_chosen_kernel_only(catalog) -> None:
    # fa2 ran faster at a longer length; the decision runs fa3, so fa3's own figure counts
    record = probe({"msmf_tflops": 650.0}, attention("flash-attn-2", 16384, 480.0),
                   attention("flash-attn-3", 4096, 420.0), attention("flash-attn-3", 8192, 450.0))
    r = resolve_rates(catalog.gpu("h100-sxm"), workload(), record, catalog_gpus=catalog.gpus)
    attn = next(e for e in r.evidence if e.quantity == "attention")
    assert attn.source == "probe"
    assert "flash-attn-3 450 TFLOPS fwd+bwd at 8192 tokens" in attn.detail
    assert r.attn_fb_tflops == pytest.approx(450.0 * (1 + r.attn_s_half / 8192))


def test_no_figure_from_the_chosen_kernel_falls_back_to_its_curve(catalog) -> None:
    record = probe({"msmf_tflops": 650.0}, attention("flash-attn-2", 16384, 480.0))
    r = resolve_rates(catalog.gpu("h100-sxm"), workload(), record, catalog_gpus=catalog.gpus)
    attn = next(e for e in r.evidence if e.quantity == "attention")
    assert attn.source == "published-kernel-curve"
