"""The measuring probes on the CPU at toy sizes, and their failure paths."""

from __future__ import annotations

import pytest

from probes import matmul as matmul_mod
from probes.attention import AttentionCase, AttentionPlan, run_attention
from probes.bandwidth import run_bandwidth
from probes.device import Device
from probes.health import measure_all, run_health, summarize, throttle_warnings
from probes.matmul import MatmulProfile, dtype_support, fp8_format, run_matmul
from probes.search import SearchSpace, mamf_grid
from probes.timing import Effort, Timer

TINY = MatmulProfile(
    space=SearchSpace(lo=32, hi=128, step=32, coarse=(64, 128), refine_delta=32),
    grid=(0, 160, 64),
    screen=Effort(0, 2),
    confirm=Effort(1, 3),
    exhaustive=Effort(0, 2),
    warmup_s=0.01,
    exhaustive_warmup_s=0.01,
)


def never() -> bool:
    return False


def matmul(device: Device, dtype: str = "bf16", **kw):
    args = dict(
        exhaustive=False,
        budget_s=0.3,
        capability=None,
        gcn_arch=None,
        gpu=None,
        catalog_note="no catalog figure for CPU",
        should_stop=never,
        profile=TINY,
    )
    args.update(kw)
    return run_matmul(device, dtype, **args)


def test_cpu_matmul_really_runs(cpu):
    entry = matmul(cpu)
    assert entry["status"] == "ok" and entry["reason"] is None
    assert 0 < entry["median_tflops"] <= entry["mamf_tflops"]
    assert all(32 <= d <= 128 and d % 32 == 0 for d in entry["best_shape"])
    assert entry["shapes_tried"] >= 2 and entry["mode"] == "quick"
    assert entry["efficiency"] is None and entry["verdict"] == "no catalog figure for CPU"


def test_exhaustive_mode_runs_the_whole_grid(cpu):
    entry = matmul(cpu, "fp32", exhaustive=True)
    assert entry["status"] == "ok" and entry["mode"] == "exhaustive"
    assert entry["shapes_tried"] == len(mamf_grid(*TINY.grid)) ** 3


def test_unsupported_dtypes_are_skipped_with_a_reason(cpu):
    fp8 = matmul(cpu, "fp8")
    assert fp8["status"] == "skipped" and "no fp8 matrix units on CPU" in fp8["reason"]
    assert fp8["mamf_tflops"] is None and fp8["shapes_tried"] == 0
    tf32 = matmul(cpu, "tf32")
    assert tf32["status"] == "skipped" and "tf32" in tf32["reason"]
    assert "unknown dtype" in (dtype_support(cpu, "int3", None, None) or "")


def test_fp8_formats_per_vendor():
    cuda, rocm = Device("cuda", "x", 1), Device("rocm", "x", 1)
    assert fp8_format(cuda, "9.0", None)[0] == "float8_e4m3fn"
    assert fp8_format(cuda, "8.9", None)[0] == "float8_e4m3fn"
    name, why = fp8_format(cuda, "8.0", None)
    assert name is None and "8.9" in why
    assert fp8_format(rocm, None, "gfx942")[0] == "float8_e4m3fnuz"
    assert fp8_format(rocm, None, "gfx950")[0] == "float8_e4m3fn"
    assert fp8_format(rocm, None, "gfx90a")[0] is None


def test_a_failing_matmul_is_recorded_not_raised(cpu, monkeypatch):
    def broken(self, shape, effort):
        raise RuntimeError("CUBLAS_STATUS_NOT_SUPPORTED\nmore detail")

    monkeypatch.setattr(matmul_mod.MatmulBench, "measure", broken)
    entry = matmul(cpu)
    assert entry["status"] == "failed"
    assert entry["reason"] == "RuntimeError: CUBLAS_STATUS_NOT_SUPPORTED"


def test_out_of_memory_shapes_are_skipped(cpu, monkeypatch):
    def oom(self, shape):
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(matmul_mod.MatmulBench, "_operands", oom)
    entry = matmul(cpu)
    assert entry["status"] == "failed" and entry["reason"] == "no shape fit in memory"


def test_stop_before_the_first_shape(cpu):
    entry = matmul(cpu, should_stop=lambda: True)
    assert entry["status"] == "skipped" and "stopped" in entry["reason"]


def test_attention_runs_and_names_the_backend(cpu):
    plan = AttentionPlan(
        seq_lens=(64,), head_dims=(32,), effort=Effort(0, 1), gqa_ratio=2, tokens=128, hidden=128
    )
    entries, notes = run_attention(cpu, plan, should_stop=never)
    assert len(entries) == 4 and not notes  # flash-attn is never tried on CPU
    for e in entries:
        assert e["status"] == "ok" and e["backend"].startswith("sdpa-")
        assert (e["heads"], e["kv_heads"], e["batch"]) == (4, 2, 2)
        case = AttentionCase(2, 64, 4, 2, 32, e["causal"], e["direction"])
        assert e["ms_median"] == pytest.approx(case.flops / 1e9 / e["tflops_median"], rel=1e-3)


def test_attention_failure_is_recorded(cpu, monkeypatch):
    import probes.attention as att

    def boom(*args, **kwargs):
        raise RuntimeError("No available kernel. Aborting execution.")

    monkeypatch.setattr(att, "_op", boom)
    plan = AttentionPlan(seq_lens=(64,), head_dims=(32,), effort=Effort(0, 1), tokens=64, hidden=64)
    entries, _ = run_attention(cpu, plan, should_stop=never)
    assert {e["status"] for e in entries} == {"failed"}
    assert entries[0]["backend"] == "sdpa" and "sdpa-flash: RuntimeError" in entries[0]["reason"]


def test_bandwidth_on_cpu(cpu):
    entries = run_bandwidth(
        cpu,
        2**20,
        Effort(0, 2),
        gpu=None,
        catalog_note="no catalog figure for CPU",
        should_stop=never,
    )
    d2d, h2d, d2h = entries
    assert d2d["status"] == "ok" and d2d["bytes"] == 2 * 2**20 and d2d["gbps_median"] > 0
    assert d2d["fraction"] is None and d2d["note"] == "no catalog figure for CPU"
    assert h2d["status"] == d2h["status"] == "skipped" and "host link" in h2d["reason"]


def test_timer_drops_warmup_iterations(cpu):
    calls = []
    times = Timer(cpu, flush_bytes=4096).run(lambda: calls.append(1), Effort(2, 3))
    assert len(calls) == 5 and len(times) == 3


def test_node_health_spread_math():
    gpus = [
        {"index": 0, "status": "ok", "tflops_median": 800.0},
        {"index": 1, "status": "ok", "tflops_median": 720.0},
        {"index": 2, "status": "failed", "tflops_median": None},
    ]
    out = summarize(gpus)
    assert out["spread"] == pytest.approx(0.1) and out["slowest_index"] == 1
    assert out["node_tflops"] == 720.0
    assert any("GPU 2" in w for w in out["warnings"]) and any(
        "10% slower" in w for w in out["warnings"]
    )
    assert summarize([])["spread"] is None


def test_node_health_runs_devices_concurrently(cpu):
    devices = [Device("cpu", "test CPU", 2).at(i) for i in range(2)]
    result = run_health(devices, "fp32", (64, 64, 64), Effort(0, 2), ["a", "b"])
    assert result["status"] == "ok" and [g["uuid"] for g in result["gpus"]] == ["a", "b"]
    assert all(g["tflops_median"] > 0 for g in result["gpus"])
    assert 0 <= result["spread"] < 1


def test_node_health_survives_a_broken_gpu(monkeypatch):
    def flaky(self, shape, effort):
        if self.device.index == 1:
            raise RuntimeError("Xid 79: GPU has fallen off the bus")
        return original(self, shape, effort)

    original = matmul_mod.MatmulBench.measure
    monkeypatch.setattr(matmul_mod.MatmulBench, "measure", flaky)
    devices = [Device("cpu", "test CPU", 2).at(i) for i in range(2)]
    gpus = measure_all(devices, "fp32", (32, 32, 32), Effort(0, 1))
    assert gpus[1]["status"] == "failed" and "fallen off the bus" in gpus[1]["reason"]
    assert gpus[0]["reason"] == "another GPU failed to start"


def test_throttle_warnings():
    assert throttle_warnings([]) == (None, [])
    flag, notes = throttle_warnings(
        [
            {"index": 0, "throttle_reasons": []},
            {"index": 3, "throttle_reasons": ["sw_power_cap"]},
        ]
    )
    assert flag is True and notes == ["GPU 3 throttled: sw_power_cap"]
