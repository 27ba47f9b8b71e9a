"""Timing one operation the same way in every probe.

Device events on CUDA/ROCm (only the op sits between them); the host clock
around a synchronize on CPU and MPS, which have no usable events. A flush
buffer is zeroed before every iteration so no iteration is served from a warm
L2/LLC, warm-up iterations are dropped, and results keep the median (typical)
and the fastest iteration (what the hardware can do) apart.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from probes.device import Device, synchronize

# 256 MiB covers the largest GPU last-level cache (AMD's Infinity Cache), as mamf-finder does.
GPU_FLUSH_BYTES = 256 * 2**20
# On CPU, zeroing the whole LLC (often >100 MiB) per iteration would dwarf the small CPU
# shapes; 32 MiB evicts L2 and most of a desktop LLC. CPU figures are a smoke test.
CPU_FLUSH_BYTES = 32 * 2**20


@dataclass(frozen=True)
class Effort:
    """Iterations per measurement: `warmup` are run and dropped, `iters` are kept."""

    warmup: int
    iters: int

    @property
    def total(self) -> int:
        return self.warmup + self.iters


@dataclass(frozen=True)
class Rate:
    """Work per second at the median iteration time and at the fastest iteration."""

    median: float
    max: float


def rate(work: float, seconds: Sequence[float]) -> Rate:
    if not seconds:
        raise ValueError("no timed iterations")
    floor = 1e-9  # a host clock can read 0 for a tiny op; never divide by it
    return Rate(
        median=work / max(statistics.median(seconds), floor),
        max=work / max(min(seconds), floor),
    )


def sig(value: float, digits: int = 5) -> float:
    """Round to significant digits: CPU figures are tiny, GPU figures large."""
    return float(f"{value:.{digits}g}")


def flush_bytes_for(device: Device) -> int:
    return GPU_FLUSH_BYTES if device.is_gpu else CPU_FLUSH_BYTES


class Timer:
    """Runs an op for warm-up plus measured iterations and returns the measured seconds."""

    def __init__(self, device: Device, flush_bytes: int | None = None) -> None:
        import torch

        self.device = device
        size = flush_bytes if flush_bytes is not None else flush_bytes_for(device)
        self._flush = torch.empty(size // 4, dtype=torch.int32, device=device.torch_device)

    def run(
        self,
        op: Callable[[], object],
        effort: Effort,
        prepare: Callable[[], object] | None = None,
    ) -> list[float]:
        """Seconds per measured iteration; `prepare` runs untimed before each one."""
        if self.device.is_gpu:
            return self._run_events(op, effort, prepare)
        return self._run_host(op, effort, prepare)

    def _run_events(
        self, op: Callable[[], object], effort: Effort, prepare: Callable[[], object] | None
    ) -> list[float]:
        import torch

        with torch.cuda.device(self.device.index):
            pairs = [
                (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                for _ in range(effort.total)
            ]
            for start, end in pairs:
                self._flush.zero_()
                if prepare is not None:
                    prepare()
                start.record()
                op()
                end.record()
            torch.cuda.synchronize(self.device.index)
            return [s.elapsed_time(e) / 1e3 for s, e in pairs[effort.warmup :]]

    def _run_host(
        self, op: Callable[[], object], effort: Effort, prepare: Callable[[], object] | None
    ) -> list[float]:
        times = []
        for _ in range(effort.total):
            self._flush.zero_()
            if prepare is not None:
                prepare()
            synchronize(self.device)
            t0 = time.perf_counter()
            op()
            synchronize(self.device)
            times.append(time.perf_counter() - t0)
        return times[effort.warmup :]
