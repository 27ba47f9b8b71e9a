"""Checks that need a real CUDA/ROCm GPU; skipped elsewhere. probes/gpu_check.sh runs them."""

from __future__ import annotations

import pytest
import torch

from advisor.core.model.probe_record import parse_probe_record
from probes.device import detect
from probes.health import run_health
from probes.matmul import run_matmul
from probes.plan import SuiteConfig
from probes.runner import run_suite
from probes.stamp import gpu_identity
from probes.timing import Effort, Timer

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA/ROCm GPU"),
]


def test_quick_suite_on_the_gpu():
    config = SuiteConfig(preset="quick", budget_s=4.0, seq_lens=(4096,), head_dims=(128,))
    record = parse_probe_record(run_suite(config), "gpu run")
    dev = record.stamp.device
    assert dev.kind in ("cuda", "rocm") and dev.count == torch.cuda.device_count()
    assert len(dev.uuids) == dev.count and (dev.capability or dev.gcn_arch)
    assert record.stamp.versions.cuda or record.stamp.versions.hip
    bf16 = record.matmul[0]
    assert bf16.status == "ok" and bf16.mamf_tflops and bf16.mamf_tflops > 5
    if bf16.efficiency is not None:  # a catalog match: the measurement must be plausible
        assert 0.2 < bf16.efficiency <= 1.0
    assert all(
        a.status == "ok" and a.backend != "sdpa-math"
        for a in record.attention
        if a.backend.startswith("sdpa")
    )
    kinds = {b.kind: b for b in record.bandwidth}
    assert kinds["d2d"].status == kinds["h2d"].status == kinds["d2h"].status == "ok"


def test_fp8_runs_where_supported_or_says_why():
    device = detect()
    ident = gpu_identity(device)
    entry = run_matmul(
        device,
        "fp8",
        exhaustive=False,
        budget_s=3.0,
        capability=ident["capability"],
        gcn_arch=ident["gcn_arch"],
        gpu=None,
        catalog_note=None,
        should_stop=lambda: False,
    )
    if entry["status"] == "ok":
        assert entry["torch_dtype"] in ("float8_e4m3fn", "float8_e4m3fnuz")
        assert entry["mamf_tflops"] > 10
    else:
        assert entry["status"] == "skipped" and entry["reason"]


def test_device_events_time_a_matmul():
    device = detect()
    a = torch.randn(4096, 4096, device=device.torch_device, dtype=torch.bfloat16)
    times = Timer(device).run(lambda: a @ a, Effort(2, 5))
    assert len(times) == 5 and all(0 < t < 1 for t in times)


def test_node_health_runs_every_gpu_at_once():
    device = detect()
    ident = gpu_identity(device)
    devices = [device.at(i) for i in range(device.count)]
    result = run_health(devices, "bf16", (4096, 4096, 4096), Effort(2, 10), ident["uuids"])
    assert result["status"] == "ok" and len(result["gpus"]) == device.count
    assert all(g["status"] == "ok" for g in result["gpus"]) and result["spread"] is not None
