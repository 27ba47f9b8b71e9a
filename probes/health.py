"""Node health: the same matmul on every local GPU at once, and the spread.

GPUs in one node differ by 5% or more (silicon lottery, uneven cooling), and a
synchronous training step waits for the slowest, so the slowest GPU sets the
node's pace. All GPUs run together, as in real training, so shared power and
cooling limits show up. NVML telemetry sampled during the run flags throttling.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from probes.device import Device
from probes.errors import describe
from probes.matmul import MatmulBench, float32_precision
from probes.search import Shape
from probes.timing import Effort, sig

# Spread above which a node is worth a closer look: published 8-GPU nodes vary by ~5%.
SPREAD_WARNING = 0.05


def measure_all(
    devices: Sequence[Device], dtype: str, shape: Shape, effort: Effort, fp8_name: str | None = None
) -> list[dict[str, Any]]:
    """Run the matmul on every device concurrently (one thread each, started together)."""
    start = threading.Barrier(len(devices))
    results: list[dict[str, Any]] = [
        {
            "index": d.index,
            "status": "failed",
            "reason": None,
            "tflops_median": None,
            "tflops_max": None,
        }
        for d in devices
    ]

    def work(slot: int, device: Device) -> None:
        try:
            bench = MatmulBench(device, dtype, fp8_name)
            bench.measure(shape, Effort(0, 1))  # allocate and compile before the common start
        except Exception as exc:
            results[slot]["reason"] = describe(exc)
            start.abort()
            return
        try:
            start.wait()
            sample = bench.measure(shape, effort)
        except threading.BrokenBarrierError:
            results[slot]["reason"] = "another GPU failed to start"
            return
        except Exception as exc:
            results[slot]["reason"] = describe(exc)
            return
        if sample is None:
            results[slot]["reason"] = "out of memory"
            return
        results[slot].update(
            status="ok",
            tflops_median=sig(sample.median_tflops),
            tflops_max=sig(sample.max_tflops),
        )

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
    return out


def throttle_warnings(telemetry: list[dict[str, Any]]) -> tuple[bool | None, list[str]]:
    """Whether any GPU reported a slowdown reason while the probes ran."""
    if not telemetry:
        return None, []
    notes = [
        f"GPU {t['index']} throttled: {', '.join(t['throttle_reasons'])}"
        for t in telemetry
        if t["throttle_reasons"]
    ]
    return bool(notes), notes


def run_health(
    devices: Sequence[Device], dtype: str, shape: Shape, effort: Effort, uuids: Sequence[str | None]
) -> dict[str, Any]:
    gpus = measure_all(devices, dtype, shape, effort)
    for g in gpus:
        g["uuid"] = uuids[g["index"]] if g["index"] < len(uuids) else None
    ok = any(g["status"] == "ok" for g in gpus)
    return {
        "status": "ok" if ok else "failed",
        "reason": None if ok else "no GPU completed the matmul",
        "dtype": dtype,
        "shape": list(shape),
        "gpus": gpus,
        **summarize(gpus),
    }
