"""Node health: the same matmul on every local GPU at once, for seconds, and the spread.

GPUs in one node differ by 5% or more (silicon lottery, uneven cooling), and a
synchronous training step waits for the slowest, so the slowest GPU sets the
node's pace. All GPUs run together, as in real training, for long enough (seconds,
not a few iterations) that shared power and cooling limits show up: each GPU's
figure is the median over the second half of its run, when the clocks have
settled, next to its first second. NVML telemetry sampled during the run flags
throttling, on the reasons that mean trouble only.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from .device import Device
from .errors import describe
from .matmul import MatmulBench, float32_precision
from .nvml import TROUBLE_REASONS
from .search import Shape, matmul_flops
from .timing import Effort, sig

# Spread above which a node is worth a closer look: published 8-GPU nodes vary by ~5%.
SPREAD_WARNING = 0.05
CHUNK = 10  # iterations between looks at the clock


def _run_for(
    bench: MatmulBench, shape: Shape, duration_s: float, clock: Callable[[], float]
) -> list[tuple[float, float]]:
    """(seconds since start, seconds of the iteration) for every iteration, for duration_s."""
    op, prepare = bench._operands(shape)
    out: list[tuple[float, float]] = []
    t0 = clock()
    while True:
        seconds = bench.timer.run(op, Effort(0, CHUNK), prepare)
        now = clock() - t0
        out += [(now, s) for s in seconds]
        if now >= duration_s:
            return out


def _summary(times: list[tuple[float, float]], flops: float) -> dict[str, Any]:
    total = times[-1][0] if times else 0.0
    settled = [s for t, s in times if t >= total / 2] or [s for _, s in times]
    first = [s for t, s in times if t <= 1.0] or [s for _, s in times[:CHUNK]]
    return {
        "tflops_median": sig(flops / statistics.median(settled)),
        "tflops_first_s": sig(flops / statistics.median(first)),
        "tflops_max": sig(flops / min(s for _, s in times)),
        "iterations": len(times),
        "seconds": round(total, 3),
    }


def measure_all(
    devices: Sequence[Device],
    dtype: str,
    shape: Shape,
    duration_s: float,
    fp8_name: str | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> list[dict[str, Any]]:
    """Run the matmul on every device concurrently (one thread each, started together)."""
    start = threading.Barrier(len(devices))
    flops = matmul_flops(shape) / 1e12
    results: list[dict[str, Any]] = [
        {
            "index": d.index,
            "status": "failed",
            "reason": None,
            "tflops_median": None,
            "tflops_first_s": None,
            "tflops_max": None,
            "iterations": 0,
            "seconds": 0.0,
        }
        for d in devices
    ]

    def work(slot: int, device: Device) -> None:
        try:
            bench = MatmulBench(device, dtype, fp8_name, clock=clock)
            if bench.measure(shape, Effort(0, 1)) is None:  # allocate before the common start
                raise RuntimeError("out of memory")
        except Exception as exc:
            results[slot]["reason"] = describe(exc)
            start.abort()
            return
        try:
            start.wait()
            times = _run_for(bench, shape, duration_s, clock)
        except threading.BrokenBarrierError:
            results[slot]["reason"] = "another GPU failed to start"
            return
        except Exception as exc:
            results[slot]["reason"] = describe(exc)
            return
        results[slot].update(status="ok", **_summary(times, flops))

    with float32_precision(dtype):
        threads = [threading.Thread(target=work, args=(i, d)) for i, d in enumerate(devices)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return results


def summarize(gpus: list[dict[str, Any]]) -> dict[str, Any]:
    """Spread = (fastest − slowest) / fastest over the GPUs that ran; the slowest sets the pace."""
    ok = [g for g in gpus if g["status"] == "ok"]
    out: dict[str, Any] = {
        "spread": None,
        "slowest_index": None,
        "node_tflops": None,
        "warnings": [],
    }
    failed = [g["index"] for g in gpus if g["status"] != "ok"]
    if failed:
        out["warnings"].append(f"GPU {', '.join(map(str, failed))} did not complete the matmul")
    if not ok:
        return out
    slowest = min(ok, key=lambda g: g["tflops_median"])
    fastest = max(g["tflops_median"] for g in ok)
    spread = (fastest - slowest["tflops_median"]) / fastest
    out.update(
        spread=round(spread, 4),
        slowest_index=slowest["index"],
        node_tflops=slowest["tflops_median"],
    )
    if spread > SPREAD_WARNING:
        out["warnings"].append(
            f"GPU {slowest['index']} is {spread:.0%} slower than the fastest and sets the pace"
        )
    for g in ok:
        first = g.get("tflops_first_s")
        if first and g["tflops_median"] < 0.93 * first:
            drop = 1 - g["tflops_median"] / first
            out["warnings"].append(
                f"GPU {g['index']} fell {drop:.0%} from its first second: a power or "
                "thermal limit under sustained load"
            )
    return out


def throttle_warnings(telemetry: list[dict[str, Any]]) -> tuple[bool | None, list[str]]:
    """Whether any GPU reported a reason that means trouble while the probes ran.

    Only hardware slowdown, thermal slowdown (hardware or software) and the power brake
    count; sw_power_cap is the normal state of a GPU at its power limit under a full GEMM
    load and is never flagged."""
    if not telemetry:
        return None, []
    notes = []
    for t in telemetry:
        trouble = sorted(TROUBLE_REASONS.intersection(t.get("throttle_reasons", [])))
        if trouble:
            notes.append(f"GPU {t['index']} throttled: {', '.join(trouble)}")
    return bool(notes), notes


def run_health(
    devices: Sequence[Device],
    dtype: str,
    shape: Shape,
    duration_s: float,
    uuids: Sequence[str | None],
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, Any]:
    gpus = measure_all(devices, dtype, shape, duration_s, clock=clock)
    for g in gpus:
        g["uuid"] = uuids[g["index"]] if g["index"] < len(uuids) else None
    ok = any(g["status"] == "ok" for g in gpus)
    return {
        "status": "ok" if ok else "failed",
        "reason": None if ok else "no GPU completed the matmul",
        "dtype": dtype,
        "shape": list(shape),
        "duration_s": duration_s,
        "gpus": gpus,
        **summarize(gpus),
    }
