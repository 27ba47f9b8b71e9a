"""Checks that need a real CUDA/ROCm GPU; skipped elsewhere. probes/gpu_check.sh runs them.

Written without a GPU to run them on: they assert what the code promises (names,
protocols, plausible ranges), not figures.
"""

from __future__ import annotations

import pytest
import torch

from advisor.core.model.probe_record import parse_probe_record
from probes.attention import AttentionPlan, run_attention
from probes.device import detect
from probes.health import run_health
from probes.matmul import GPU_PROFILE, MatmulBench, run_matmul
from probes.plan import SuiteConfig
from probes.runner import run_suite
from probes.stamp import gpu_identity
from probes.timing import Effort, Timer

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA/ROCm GPU"),
]


def test_quick_suite_on_the_gpu():
    config = SuiteConfig(preset="quick", budget_s=8.0, seq_lens=(4096,), head_dims=(128,))
    record = parse_probe_record(run_suite(config), "gpu run")
    assert record.version == 2 and record.complete
    dev = record.stamp.device
    assert dev.kind in ("cuda", "rocm") and dev.count == torch.cuda.device_count()
    assert len(dev.uuids) == dev.count and (dev.capability or dev.gcn_arch)
    v = record.stamp.versions
    assert v.cuda or v.hip
    assert v.driver, "no driver version: neither NVML nor /proc/driver/nvidia/version answered"
    if dev.kind == "cuda":
        assert v.cublas, "cuBLAS version not read"
    assert record.stamp.pcie or record.stamp.pcie_note
    bf16 = record.matmul[0]
    assert bf16.status == "ok" and bf16.mamf_tflops and bf16.mamf_tflops > 5
    assert bf16.msmf_tflops and bf16.msmf_tflops > 5
    assert bf16.mamf_peak_tflops is not None and bf16.mamf_peak_tflops >= bf16.mamf_tflops
    assert bf16.mamf_shape and bf16.msmf_shape
    if bf16.efficiency is not None:  # a catalog match: the measurement must be plausible
        assert 0.2 < bf16.efficiency <= 1.0
    assert record.attention and all(a.kernel for a in record.attention)
    fused = ("sdpa-flash", "sdpa-efficient", "sdpa-cudnn")
    fast = [a for a in record.attention if a.kernel in fused]
    assert any(a.status == "ok" for a in fast), "no fused SDPA kernel ran"
    kinds = {b.kind: b for b in record.bandwidth}
    assert kinds["d2d"].status == kinds["h2d"].status == kinds["d2h"].status == "ok"
    assert [s.status for s in record.stages] == ["done"] * len(record.stages)


def test_fp8_runs_where_supported_or_says_why():
    device = detect()
    ident = gpu_identity(device)
    entry = run_matmul(
        device,
        "fp8",
        exhaustive=False,
        budget_s=8.0,
        capability=ident["capability"],
        gcn_arch=ident["gcn_arch"],
        gpu=None,
        catalog_note=None,
        should_stop=lambda: False,
        max_shapes=12,
    )
    if entry["status"] == "ok":
        assert entry["torch_dtype"] in ("float8_e4m3fn", "float8_e4m3fnuz")
        assert entry["mamf_tflops"] > 10 and entry["msmf_tflops"] > 10
    else:
        assert entry["status"] == "skipped" and entry["reason"]


def test_the_fp8_op_writes_through_out():
    device = detect()
    ident = gpu_identity(device)
    from probes.matmul import fp8_format

    name, why = fp8_format(device, ident["capability"], ident["gcn_arch"])
    if name is None:
        pytest.skip(why)
    bench = MatmulBench(device, "fp8", name)
    op, prepare = bench._operands((256, 256, 256))
    prepare()
    out = op()
    torch.cuda.synchronize()
    assert out.dtype == torch.bfloat16 and out.shape == (256, 256)


def test_device_events_time_a_matmul():
    device = detect()
    a = torch.randn(4096, 4096, device=device.torch_device, dtype=torch.bfloat16)
    times = Timer(device).run(lambda: a @ a, Effort(2, 5))
    assert len(times) == 5 and all(0 < t < 1 for t in times)
    sliced = Timer(device).run(lambda: a @ a, Effort(1, 10000, 3), slice_s=0.3, probe_s=1e-3)
    assert 3 <= len(sliced) < 10000


def test_burst_and_sustained_on_the_gpu():
    device = detect()
    bench = MatmulBench(device, "bf16")
    burst = bench.burst((4096, 4096, 4096), GPU_PROFILE.burst, None)
    plan = GPU_PROFILE.burst
    assert burst is not None and burst.iterations == plan.reps * plan.iters
    assert 0 < burst.tflops <= burst.peak_tflops
    sustained = bench.sustain((4096, 4096, 4096), GPU_PROFILE.sustain, None)
    assert sustained is not None and len(sustained.runs) == GPU_PROFILE.sustain.reps
    assert sustained.tflops > 0.5 * burst.tflops  # same kernel: the same order of magnitude


def test_attention_names_each_kernel_on_the_gpu():
    device = detect()
    plan = AttentionPlan(seq_lens=(1024,), head_dims=(128,), effort=Effort(1, 5, 2), budget_s=20.0)
    entries, _notes = run_attention(device, plan, should_stop=lambda: False)
    kernels = {e["kernel"] for e in entries}
    assert {"sdpa-flash", "sdpa-efficient", "sdpa-math"} <= kernels
    assert all(e["status"] in ("ok", "failed", "skipped") for e in entries)
    assert all(e["reason"] for e in entries if e["status"] != "ok")
    math = [e for e in entries if e["kernel"] == "sdpa-math" and e["status"] == "ok"]
    fused = [e for e in entries if e["kernel"] == "sdpa-flash" and e["status"] == "ok"]
    if math and fused:  # the pinned kernels really differ
        assert max(e["tflops_median"] for e in fused) > max(e["tflops_median"] for e in math)


def test_node_health_runs_every_gpu_at_once_for_seconds():
    device = detect()
    ident = gpu_identity(device)
    devices = [device.at(i) for i in range(device.count)]
    result = run_health(devices, "bf16", (4096, 4096, 4096), 2.0, ident["uuids"])
    assert result["status"] == "ok" and len(result["gpus"]) == device.count
    assert all(g["status"] == "ok" and g["seconds"] >= 2.0 for g in result["gpus"])
    assert result["spread"] is not None


def test_the_workload_probe_in_fp8_on_the_gpu():
    """gpu_check.sh runs the workload probe at full size in bf16; this reaches what a CPU
    cannot: fp8 through torch._scaled_mm (or the reason it is skipped), the CUDA profiler's
    kernels and the allocator's peak memory."""
    from probes.workload import run_workload
    from probes.workload_shape import ModelShape, WorkloadConfig

    shape = ModelShape(hidden=2048, layers=16, heads=16, kv_heads=4, head_dim=128, ffn=5632,
                       vocab=32000, name="small")
    record = run_workload(WorkloadConfig(shape=shape, seq_len=2048, precision="fp8",
                                         budget_s=6.0))
    w = parse_probe_record(record, "gpu workload").measured_workload()
    assert w is not None and w.status == "ok" and not w.toy_sizes and w.device == "cuda"
    if w.precision != "fp8":
        assert any(n.startswith("fp8 skipped") for n in w.notes)
    assert w.attention_ops, "the profile saw no attention op"
    for run in w.phases[0].runs:
        assert run.split is not None and run.split.kernel_ms_per_step
        assert run.split.gemm_share > 0.2 and run.split.attention_share > 0
        assert 0.2 < (run.split.busy_share or 0) < 2  # kernels cover most of the step
        assert run.peak_memory_gib and run.peak_reserved_gib
        assert run.gpu_state is None or "sm_clock_mhz_median" in run.gpu_state
