"""The measuring probes on the CPU at toy sizes, and their failure paths.

Nothing here depends on wall time or CPU load: searches run under a fixed shape
budget (or a fake clock), stages under fixed iteration counts, and assertions are
about what ran and what the record says, never about how fast it was.
"""

from __future__ import annotations

import dataclasses
import statistics

import pytest

from probes import matmul as matmul_mod
from probes.attention import AttentionCase, AttentionPlan, Backend, run_attention, sdpa_backends
from probes.bandwidth import buffer_bytes_for, run_bandwidth
from probes.device import Device
from probes.health import measure_all, run_health, summarize, throttle_warnings
from probes.matmul import (
    BurstPlan,
    MatmulBench,
    MatmulProfile,
    SustainPlan,
    burst_figure,
    dtype_support,
    fp8_format,
    run_matmul,
    trimmed_median,
)
from probes.search import SearchSpace
from probes.timing import Effort, Timer, flush_bytes_for, host_buffer_bytes, last_level_cache_bytes

TINY = MatmulProfile(
    space=SearchSpace(32, 128, 32),
    screen=Effort(0, 2),
    exhaustive=Effort(0, 2),
    burst=BurstPlan(reps=2, iters=3, idle_s=0.0, top=5),
    sustain=SustainPlan(soak_s=0.0, warm_passes=0, reps=3, warmup=0, iters=2),
    warmup_s=0.0,
    exhaustive_warmup_s=0.0,
    finalists=2,
    coarse_per_dim=2,
)


def never() -> bool:
    return False


def matmul(device: Device, dtype: str = "bf16", **kw):
    args = dict(
        exhaustive=False,
        budget_s=1e6,  # never the limit: the shape budget below is
        capability=None,
        gcn_arch=None,
        gpu=None,
        catalog_note="no catalog figure for CPU",
        should_stop=never,
        profile=TINY,
        max_shapes=8,
        sleep=lambda s: None,
    )
    args.update(kw)
    return run_matmul(device, dtype, **args)


def test_cpu_matmul_really_runs(cpu):
    entry = matmul(cpu)
    assert entry["status"] == "ok"
    # A noisy CPU may vary more than 3% between sustained runs; the entry then says so.
    assert entry["reason"] is None or "varied more than 3%" in entry["reason"]
    # 8 shapes exactly: the fixed shape budget, whatever the machine's load.
    assert entry["shapes_tried"] == 8 and entry["search"]["stopped_by"] == "shape budget"
    assert entry["mode"] == "quick" and entry["search"]["space"]["shapes"] == 64
    for key in ("mamf_shape", "msmf_shape", "best_shape"):
        assert all(32 <= d <= 128 and d % 32 == 0 for d in entry[key])
    assert 0 < entry["mamf_tflops"] <= entry["mamf_peak_tflops"]
    assert entry["msmf_tflops"] > 0 and entry["median_tflops"] > 0
    assert len(entry["mamf_top_tflops"]) == 5 and len(entry["msmf_runs_tflops"]) == 3
    assert entry["efficiency"] is None and entry["verdict"] == "no catalog figure for CPU"
    # Every screened shape was confirmed: the budget is never the limit here.
    assert len(entry["candidates"]) == 2 * 8


def test_exhaustive_mode_runs_the_whole_space(cpu):
    entry = matmul(cpu, "fp32", exhaustive=True)
    assert entry["status"] == "ok" and entry["mode"] == "exhaustive"
    assert entry["shapes_tried"] == len(TINY.space) == 64
    assert entry["search"]["stopped_by"] == "grid done"
    assert len(entry["candidates"]) == 2 * TINY.finalists


def test_burst_mamf_is_the_median_of_the_5_fastest_iterations():
    assert burst_figure([1, 9, 3, 8, 7, 2, 10, 6], 5) == 8  # of 10, 9, 8, 7, 6
    assert burst_figure([4.0], 5) == 4.0
    assert trimmed_median([1, 100, 5, 6, 7]) == 6  # min and max dropped from 5 or more
    assert trimmed_median([1, 100, 5]) == 5


def test_burst_and_sustained_protocols_on_the_cpu(cpu):
    sleeps: list[float] = []
    bench = MatmulBench(cpu, "fp32", sleep=sleeps.append)

    class Clock:
        def __init__(self) -> None:
            self.reads = 0

        def sm_clock_mhz(self) -> float:
            self.reads += 1
            return 1980.0 - self.reads  # a clock that sags, read on both sides

        def read(self) -> tuple[float, float]:
            return self.sm_clock_mhz(), 300.0

        def window(self, t0: float, t1: float) -> dict:
            return {"sm_clock_mhz_median": 1500.0, "power_w_median": 690.0}

    tel = Clock()
    burst = bench.burst((64, 64, 64), BurstPlan(reps=3, iters=4, idle_s=0.25, top=5), tel)
    assert burst is not None and burst.iterations == 12 and sleeps == [0.25] * 3
    assert tel.reads == 24  # before and after each isolated iteration
    assert burst.tflops == statistics.median(burst.top) and burst.peak_tflops == burst.top[0]
    assert burst.clock_mhz is not None and burst.clock_mhz < 1980 and burst.power_w == 300.0
    sustained = bench.sustain((64, 64, 64), SustainPlan(warm_passes=1, reps=5, warmup=1, iters=2),
                              tel)
    assert sustained is not None and len(sustained.runs) == 5
    assert sustained.tflops == trimmed_median(sustained.runs)
    assert sustained.state == {"sm_clock_mhz_median": 1500.0, "power_w_median": 690.0}


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


def test_the_fp8_path_writes_through_out_and_resets_it(cpu, monkeypatch):
    """On a GPU the fp8 matmul goes through torch._scaled_mm(..., out=C), and C is reset from
    a random copy before every iteration, as on the bf16 path. The CPU has no fp8 units, so
    the call is captured here instead of run."""
    import torch

    calls = []

    def fake_scaled_mm(a, b, *, scale_a, scale_b, out_dtype, out):
        calls.append((a.dtype, b.dtype, out_dtype, out.data_ptr(), out.clone()))
        out.fill_(7.0)
        return out

    monkeypatch.setattr(torch, "_scaled_mm", fake_scaled_mm)
    bench = MatmulBench(cpu, "fp8", "float8_e4m3fn")
    op, prepare = bench._operands((32, 16, 64))
    prepare()
    op()
    prepare()  # the reset: C holds the random copy again, not the 7s the op wrote
    op()
    (a0, b0, dt0, ptr0, before0), (_, _, _, ptr1, before1) = calls
    assert a0 == b0 == torch.float8_e4m3fn and dt0 == torch.bfloat16
    assert ptr0 == ptr1  # the same preallocated C, written through out=
    assert not torch.all(before1 == 7.0) and torch.equal(before0, before1)


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


def test_the_quick_stage_keeps_to_its_budget_with_a_fake_clock(cpu, step_clock):
    """With a clock that moves 10 ms per read, the search stops to leave the confirmation
    its reserve, and the stage ends within its budget (plus one finalist's confirmation)."""
    clock = step_clock(0.01)
    entry = matmul(cpu, budget_s=3.0, max_shapes=None, clock=clock)
    assert entry["status"] == "ok" and entry["search"]["stopped_by"] == "budget"
    assert entry["seconds"] <= 3.0 * 1.25


def test_attention_names_one_kernel_per_entry(cpu):
    plan = AttentionPlan(
        seq_lens=(64,), head_dims=(32,), effort=Effort(0, 1), gqa_ratio=2, tokens=128, hidden=128
    )
    entries, notes = run_attention(cpu, plan, should_stop=never)
    kernels = {e["kernel"] for e in entries}
    assert kernels == {"sdpa-flash", "sdpa-math"}  # each pinned on its own
    assert len(entries) == 2 * 4  # every case (causal x direction) for each kernel
    assert "sdpa-efficient: not available on CPU" in notes
    assert "sdpa-cudnn: not available on CPU" in notes
    for e in entries:
        assert e["status"] == "ok" and e["backend"] == e["kernel"] and e["family"] == "sdpa"
        assert (e["heads"], e["kv_heads"], e["batch"]) == (4, 2, 2)
        case = AttentionCase(2, 64, 4, 2, 32, e["causal"], e["direction"])
        assert e["ms_median"] == pytest.approx(case.flops / 1e9 / e["tflops_median"], rel=1e-3)


def test_every_sdpa_kernel_is_known_on_a_gpu_device():
    found, _notes = sdpa_backends(Device("cuda", "x", 1))
    assert [b.name for b in found] == ["sdpa-flash", "sdpa-efficient", "sdpa-cudnn", "sdpa-math"]
    rocm, _ = sdpa_backends(Device("rocm", "x", 1))
    assert "sdpa-cudnn" not in [b.name for b in rocm]


def test_attention_failure_is_recorded(cpu, monkeypatch):
    import probes.attention as att

    def boom(*args, **kwargs):
        raise RuntimeError("No available kernel. Aborting execution.")

    monkeypatch.setattr(att, "_op", boom)
    plan = AttentionPlan(seq_lens=(64,), head_dims=(32,), effort=Effort(0, 1), tokens=64, hidden=64)
    entries, _ = run_attention(cpu, plan, should_stop=never)
    assert {e["status"] for e in entries} == {"failed"}
    assert entries[0]["kernel"] == "sdpa-flash" and "No available kernel" in entries[0]["reason"]


def test_attention_keeps_to_its_budget_and_says_what_it_skipped(cpu, monkeypatch, step_clock):
    """A kernel whose next case would take far longer than its share of the stage's budget
    is skipped with that reason, judged from its rate on the previous case."""
    import probes.attention as att

    slow = Backend("slow-kernel", "test", "bhsd", lambda q, k, v, causal: q)

    def fake_backends(device):
        return [slow], []

    def fake_measure(backend, case, device, timer, effort, dtype, slice_s=None):
        entry = att._entry(backend, case, dtype)
        entry.update(status="ok", tflops_median=1e-6, tflops_max=1e-6, iterations=1,
                     ms_median=case.flops / 1e12 / 1e-6 * 1e3)  # 1 MFLOP/s: hopeless
        return entry

    monkeypatch.setattr(att, "sdpa_backends", fake_backends)
    monkeypatch.setattr(att, "measure_case", fake_measure)
    plan = AttentionPlan(seq_lens=(64, 128), head_dims=(32,), effort=Effort(0, 1), tokens=128,
                         hidden=64, budget_s=1.0)
    entries, _ = run_attention(cpu, plan, should_stop=never, clock=step_clock(1e-3))
    short = [e for e in entries if e["seq_len"] == 64]
    long = [e for e in entries if e["seq_len"] == 128]
    assert all(e["status"] == "ok" for e in short)
    assert all(e["status"] == "skipped" and "budget" in e["reason"] for e in long)


def test_last_level_cache_is_read_from_the_machine(tmp_path):
    for cpu_id, shared in ((0, "0-3"), (4, "4-7")):
        for index, (level, kind, size, who) in enumerate(
            [(1, "Data", "32K", str(cpu_id)), (2, "Unified", "1024K", str(cpu_id)),
             (3, "Unified", "32768K", shared)]
        ):
            d = tmp_path / f"cpu{cpu_id}" / "cache" / f"index{index}"
            d.mkdir(parents=True)
            for name, value in (("level", level), ("type", kind), ("size", size),
                                ("shared_cpu_list", who)):
                (d / name).write_text(f"{value}\n")
    size, source = last_level_cache_bytes(tmp_path)
    assert size == 64 * 2**20 and "L3, 2 instance(s)" in source  # two distinct L3 slices
    assert last_level_cache_bytes(tmp_path / "none")[0] > 0


def test_cpu_buffers_are_larger_than_the_last_level_cache(cpu):
    llc = last_level_cache_bytes()[0]
    assert flush_bytes_for(cpu) >= min(2 * llc, 2**30) - 4096
    assert buffer_bytes_for(cpu) >= min(4 * llc, 2**30) - 4096
    assert host_buffer_bytes(4.0, 2**40, llc=256 * 2**20) >= 4 * 2**20
    assert host_buffer_bytes(4.0, 64 * 2**20, llc=256 * 2**20) == 64 * 2**20  # the cap


def test_bandwidth_on_cpu(cpu):
    entries = run_bandwidth(
        cpu,
        8 * 2**20,
        Effort(0, 2),
        gpu=None,
        catalog_note="no catalog figure for CPU",
        should_stop=never,
    )
    d2d, h2d, d2h = entries
    assert d2d["status"] == "ok" and d2d["bytes"] == 2 * 8 * 2**20 and d2d["gbps_median"] > 0
    assert d2d["buffer_bytes"] == 8 * 2**20 and d2d["iterations"] == 2
    assert d2d["fraction"] is None and "last-level cache" in d2d["note"]
    assert h2d["status"] == d2h["status"] == "skipped" and "host link" in h2d["reason"]


def test_timer_drops_warmup_and_keeps_to_a_slice(cpu, step_clock):
    calls = []
    times = Timer(cpu, flush_bytes=4096).run(lambda: calls.append(1), Effort(2, 3))
    assert len(calls) == 5 and len(times) == 3
    clock = step_clock(0.1)  # every read moves 0.1 s
    calls.clear()
    times = Timer(cpu, flush_bytes=4096, clock=clock).run(
        lambda: calls.append(1), Effort(1, 1000, 2), slice_s=1.0
    )
    assert 2 <= len(times) < 10 and len(calls) == len(times) + 1


def test_node_health_spread_math():
    gpus = [
        {"index": 0, "status": "ok", "tflops_median": 800.0, "tflops_first_s": 810.0},
        {"index": 1, "status": "ok", "tflops_median": 720.0, "tflops_first_s": 800.0},
        {"index": 2, "status": "failed", "tflops_median": None},
    ]
    out = summarize(gpus)
    assert out["spread"] == pytest.approx(0.1) and out["slowest_index"] == 1
    assert out["node_tflops"] == 720.0
    assert any("GPU 2" in w for w in out["warnings"]) and any(
        "10% slower" in w for w in out["warnings"]
    )
    assert any("GPU 1 fell 10% from its first second" in w for w in out["warnings"])
    assert summarize([])["spread"] is None


def test_node_health_runs_devices_concurrently_for_seconds(cpu, step_clock):
    devices = [Device("cpu", "test CPU", 2).at(i) for i in range(2)]
    result = run_health(devices, "fp32", (64, 64, 64), 0.5, ["a", "b"], clock=step_clock(0.01))
    assert result["status"] == "ok" and [g["uuid"] for g in result["gpus"]] == ["a", "b"]
    assert result["duration_s"] == 0.5
    for g in result["gpus"]:
        assert g["tflops_median"] > 0 and g["iterations"] >= 10 and g["seconds"] >= 0.5
    assert 0 <= result["spread"] < 1


def test_node_health_survives_a_broken_gpu(monkeypatch):
    def flaky(self, shape, effort):
        if self.device.index == 1:
            raise RuntimeError("Xid 79: GPU has fallen off the bus")
        return original(self, shape, effort)

    original = matmul_mod.MatmulBench.measure
    monkeypatch.setattr(matmul_mod.MatmulBench, "measure", flaky)
    devices = [Device("cpu", "test CPU", 2).at(i) for i in range(2)]
    gpus = measure_all(devices, "fp32", (32, 32, 32), 0.01)
    assert gpus[1]["status"] == "failed" and "fallen off the bus" in gpus[1]["reason"]
    assert gpus[0]["reason"] == "another GPU failed to start"


def test_throttling_is_flagged_only_for_reasons_that_mean_trouble():
    assert throttle_warnings([]) == (None, [])
    flag, notes = throttle_warnings(
        [
            {"index": 0, "throttle_reasons": []},
            {"index": 3, "throttle_reasons": ["sw_power_cap"]},  # a GPU at its power limit
        ]
    )
    assert flag is False and notes == []
    flag, notes = throttle_warnings(
        [
            {"index": 1, "throttle_reasons": ["hw_slowdown", "sw_power_cap"]},
            {"index": 2, "throttle_reasons": ["hw_power_brake_slowdown"]},
            {"index": 4, "throttle_reasons": ["sw_thermal_slowdown", "hw_thermal_slowdown"]},
        ]
    )
    assert flag is True and notes == [
        "GPU 1 throttled: hw_slowdown",
        "GPU 2 throttled: hw_power_brake_slowdown",
        "GPU 4 throttled: hw_thermal_slowdown, sw_thermal_slowdown",
    ]


def test_nvml_reasons_keep_sw_power_cap_informational():
    from probes.nvml import TROUBLE_REASONS, _Track, reasons

    assert reasons(0x4 | 0x8) == ["sw_power_cap", "hw_slowdown"]
    assert "sw_power_cap" not in TROUBLE_REASONS
    track = _Track(0)
    track.add(1.0, 1980.0, 60.0, 690.0, 0x4)
    track.add(2.0, 1755.0, 70.0, 700.0, 0x4 | 0x40)
    track.add(3.0, 1700.0, 75.0, 700.0, 0x4)
    summary = track.summary()
    assert summary["throttle_reasons"] == ["hw_thermal_slowdown"]
    assert "sw_power_cap" in summary["clock_event_reasons"]
    window = track.state(2.5, 3.5)
    assert window["samples"] == 1 and window["sm_clock_mhz_median"] == 1700.0
    assert window["trouble"] == [] and window["clock_event_reasons"] == ["sw_power_cap"]


def test_profiles_confirm_the_same_protocol():
    from probes.matmul import GPU_PROFILE

    assert GPU_PROFILE.burst.top == 5 and GPU_PROFILE.burst.idle_s > 0
    assert GPU_PROFILE.sustain.reps >= 5 and GPU_PROFILE.exhaustive == Effort(50, 100)
    # TINY: 2 bursts of 3 iterations, 3 sustained runs of 2, one untimed iteration, 2 builds.
    assert dataclasses.replace(TINY, finalists=1).confirm_cost(0.5, 1.0) == 1 + 6 + 6 + 1
    # GPU: a 22 ms iteration (20480^3 bf16) is cut by the burst and run slices.
    big = GPU_PROFILE.confirm_cost(0.01, 0.022)
    assert 3.0 < big < 5.0, big
