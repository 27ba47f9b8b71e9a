"""The wizard on a made-up box, for what shows or times it: a fixed 8×H100 node and a CPU
laptop, a probe runner with canned figures, and `settle`, which lets a Pilot-driven app
finish what a key press started.

Shipped with the wizard so that scripts/screenshots.py and benchmarks/bench_tui.py (and
the tests) drive the real app without nvidia-smi or torch; `advisor` itself never
imports it. Its figures are canned (host "fake-box", MAMF 720 TFLOPS), never a
measurement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from advisor.core import Stack
from advisor.tui.hardware import DetectedGpu, Hardware, stack_lines
from advisor.tui.runner import (
    ProbeMode,
    ProbeProgress,
    ProbeRow,
    ProgressCallback,
    StopFlag,
    plan_estimate_s,
)

if TYPE_CHECKING:
    from textual.pilot import Pilot

    from advisor.core import ProbeRecord


def gpu_box() -> Hardware:
    stack = Stack(source="detected", packages={"torch": "2.7.1+cu128", "flash-attn": "2.8.3"},
                  driver="575.57.08")
    return Hardware(gpus=(DetectedGpu("NVIDIA H100 80GB HBM3", "h100-sxm", 79.6, 8),),
                    driver="575.57.08", packages=stack_lines(stack), stack=stack)


def cpu_box() -> Hardware:
    stack = Stack(source="detected", packages={"torch": "2.13.0+cpu"})
    return Hardware(packages=stack_lines(stack), stack=stack)


SETTLE_ROUNDS = 200
"""Enough rounds for any chain of workers and keys typed ahead; a wizard still busy after
them is stuck, and what the caller checks next says so."""


async def settle(pilot: Pilot[Any]) -> None:
    """Pending messages, keys typed ahead (until each has landed), every worker (decide,
    sweep, probes) and any they start in turn (the app runs the newest answers once a run
    ends), then the repaint. Pilot's pause alone waits until the process looks idle,
    which a busy box fakes: the keys and workers are waited for by what they are."""
    from advisor.tui.app import AdvisorApp

    app = pilot.app
    await pilot.pause()
    for _ in range(SETTLE_ROUNDS):
        typing = isinstance(app, AdvisorApp) and app.typing_ahead
        if not typing and all(w.is_finished for w in app.workers):
            break
        await app.workers.wait_for_complete()
        await pilot.pause()
    await pilot.pause()


class DemoProbeRunner:
    """Canned, deterministic figures, reported step by step as the real suite does."""

    def __init__(self, device: str = "NVIDIA H100 80GB HBM3", kind: str = "cuda") -> None:
        self.device = device
        self.kind = kind

    def estimate_s(self, mode: ProbeMode, gpu: bool) -> float | None:
        """The real plan's estimate: only the figures are canned, not the labels."""
        return plan_estimate_s(mode, gpu)

    def _steps(self, mode: ProbeMode) -> list[tuple[str, ProbeRow, dict[str, Any]]]:
        gpu = self.kind == "cuda"
        dtypes = ("bf16", "fp8") if mode == "full" else ("bf16",)
        steps = []
        for i, dtype in enumerate(dtypes):
            tf = (720.0 * (1 + i)) if gpu else 1.2
            steps.append((f"matmul {dtype}", ProbeRow("matmul", f"MAMF {dtype}", tf, "TFLOPS"),
                          {"matmul": {"status": "ok", "dtype": dtype, "mode": "quick",
                                      "mamf_tflops": tf, "median_tflops": tf * 0.97}}))
        for s in (1024, 4096, 16384):
            tf = (380.0 + s / 256) if gpu else 0.4
            steps.append(("attention", ProbeRow("attention", f"sdpa s={s} d=128 fwd_bwd", tf,
                                                "TFLOPS"),
                          {"attention": {"status": "ok", "backend": "sdpa", "seq_len": s,
                                         "head_dim": 128, "heads": 16, "kv_heads": 16,
                                         "batch": 1, "causal": True, "direction": "fwd_bwd",
                                         "tflops_median": tf}}))
        gbps = 2900.0 if gpu else 18.0
        steps.append(("bandwidth", ProbeRow("bandwidth", "copy d2d", gbps, "GB/s"),
                      {"bandwidth": {"status": "ok", "kind": "d2d", "bytes": 1 << 30,
                                     "gbps_median": gbps}}))
        return steps

    def run(self, mode: ProbeMode, on_progress: ProgressCallback,
            should_stop: StopFlag) -> ProbeRecord:
        from advisor.core import parse_probe_record

        steps = self._steps(mode)
        record: dict[str, Any] = {
            "schema": "advisor.probe-record", "version": 1, "complete": False,
            "interrupted": False, "matmul": [], "attention": [], "bandwidth": [],
            "stamp": {"hostname": "fake-box", "date": "2026-01-01T00:00:00Z",
                      "device": {"kind": self.kind, "name": self.device, "count": 1},
                      "versions": {"python": "3.11", "torch": "2.13.0"}},
        }
        done = 0
        for stage, row, result in steps:
            if should_stop():
                break
            for kind, entry in result.items():
                record[kind].append(entry)
            done += 1
            on_progress(ProbeProgress(stage, done / len(steps), row.what, (row,)))
        record["complete"] = done == len(steps)
        record["interrupted"] = not record["complete"]
        return parse_probe_record(record, "demo probe run")
