"""Test doubles for the wizard: a fixed 8×H100 node and a CPU laptop, a probe runner with
canned figures, and `settle`, which lets a Pilot-driven app finish what a key press started.

Not shipped: the tests import this as `tests.tui.doubles` (through conftest), and
scripts/screenshots.py and benchmarks/bench_tui.py put tests/tui on sys.path and import
`doubles`.
"""

from __future__ import annotations

import threading
import time
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


def amd_box() -> Hardware:
    stack = Stack(source="detected", packages={"torch": "2.7.1+rocm6.4"})
    return Hardware(gpus=(DetectedGpu("AMD Instinct MI300X", "mi300x", 192.0, 8),),
                    packages=stack_lines(stack), stack=stack)


def cpu_box() -> Hardware:
    stack = Stack(source="detected", packages={"torch": "2.13.0+cpu"})
    return Hardware(packages=stack_lines(stack), stack=stack)


async def settle(pilot: Pilot[Any]) -> None:
    """Pending messages, then every worker (decide, sweep, probes) and any they start in
    turn (the app runs the newest answers once a run ends), then the repaint."""
    await pilot.pause()
    for _ in range(20):
        if all(w.is_finished for w in pilot.app.workers):
            break
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
    await pilot.pause()


class FakeProbeRunner:
    """Canned, deterministic figures for tests and screenshots.

    `hold_at`, when set, makes the run wait before that step until it is told
    to stop, so a test can cancel in the middle with results already shown;
    `holding` is set once it waits there.
    """

    def __init__(self, device: str = "NVIDIA H100 80GB HBM3", kind: str = "cuda",
                 hold_at: int | None = None) -> None:
        self.device = device
        self.kind = kind
        self.hold_at = hold_at
        self.holding = threading.Event()

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
        for i, (stage, row, result) in enumerate(steps):
            if i == self.hold_at:
                self.holding.set()
                while not should_stop():
                    time.sleep(0.01)
            if should_stop():
                break
            for kind, entry in result.items():
                record[kind].append(entry)
            done += 1
            on_progress(ProbeProgress(stage, done / len(steps), row.what, (row,)))
        record["complete"] = done == len(steps)
        record["interrupted"] = not record["complete"]
        return parse_probe_record(record, "fake probe run")
