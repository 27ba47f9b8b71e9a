"""Timing one operation the same way in every probe.

Device events on CUDA/ROCm (only the op sits between them); the host clock
around a synchronize on CPU and MPS, which have no usable events. A flush
buffer larger than the last-level cache is zeroed before every iteration so no
iteration is served from a warm cache, warm-up iterations are dropped, and
results keep the median (typical) and the fastest iteration apart.

A measurement can also be given a time slice: timing stops once the slice has
passed (never before the warm-up and `Effort.min_iters` timed iterations, never
after `Effort.iters`). That is what keeps each stage within the time the plan
announced, on a fast GPU and on a slow CPU alike.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .device import Device, synchronize

# 256 MiB covers the largest GPU last-level cache (AMD's Infinity Cache), as mamf-finder does.
GPU_FLUSH_BYTES = 256 * 2**20
# When the machine does not say how big its caches are.
DEFAULT_LLC_BYTES = 32 * 2**20

Clock = Callable[[], float]


@dataclass(frozen=True)
class Effort:
    """Iterations per measurement: `warmup` are run and dropped, up to `iters` are kept;
    a time slice may cut `iters`, never below `min_iters`."""

    warmup: int
    iters: int
    min_iters: int = 1

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
    if not math.isfinite(value):
        return value
    return float(f"{value:.{digits}g}")


def _parse_size(text: str) -> int | None:
    text = text.strip().upper()
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    try:
        if text and text[-1] in units:
            return int(float(text[:-1]) * units[text[-1]])
        return int(text)
    except ValueError:
        return None


def last_level_cache_bytes(sysfs: str | Path = "/sys/devices/system/cpu") -> tuple[int, str]:
    """The machine's total last-level cache, summed over its distinct instances, and where
    the figure came from. An EPYC with 8 L3 slices of 32 MiB has 256 MiB to defeat."""
    root = Path(sysfs)
    best_level, seen, total = 0, set(), 0
    try:
        cpus = sorted(p for p in root.glob("cpu[0-9]*") if p.name[3:].isdigit())
    except OSError:
        cpus = []
    entries = []
    for cpu in cpus:
        for index in sorted((cpu / "cache").glob("index[0-9]*")):
            try:
                level = int((index / "level").read_text())
                kind = (index / "type").read_text().strip()
                size = _parse_size((index / "size").read_text())
                shared = (index / "shared_cpu_list").read_text().strip()
            except (OSError, ValueError):
                continue
            if kind in ("Data", "Unified") and size:
                entries.append((level, shared, size))
    if entries:
        best_level = max(e[0] for e in entries)
        for level, shared, size in entries:
            if level == best_level and shared not in seen:
                seen.add(shared)
                total += size
        if total:
            return total, f"{root}/cpu*/cache (L{best_level}, {len(seen)} instance(s))"
    try:
        size = os.sysconf("SC_LEVEL3_CACHE_SIZE")
        if size > 0:
            return int(size), "sysconf SC_LEVEL3_CACHE_SIZE (one instance)"
    except (ValueError, OSError, AttributeError):
        pass
    return DEFAULT_LLC_BYTES, "not reported by this machine; assumed 32 MiB"


def available_memory_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def host_buffer_bytes(multiple: float, cap: int, llc: int | None = None) -> int:
    """A host buffer `multiple` × the last-level cache, within `cap` and 1/8 of free memory."""
    llc = llc if llc is not None else last_level_cache_bytes()[0]
    want = int(multiple * llc)
    free = available_memory_bytes()
    limit = min(cap, free // 8) if free else cap
    return max(4 * 2**20, min(want, limit)) // 4096 * 4096


def flush_bytes_for(device: Device) -> int:
    """GPUs: 256 MiB, as mamf-finder. CPU/MPS: twice the machine's last-level cache."""
    if device.is_gpu:
        return GPU_FLUSH_BYTES
    return host_buffer_bytes(2.0, 2**30)


class Timer:
    """Runs an op for warm-up plus measured iterations and returns the measured seconds."""

    def __init__(
        self,
        device: Device,
        flush_bytes: int | None = None,
        clock: Clock = time.perf_counter,
    ) -> None:
        import torch

        self.device = device
        self.clock = clock
        self.flush_bytes = flush_bytes if flush_bytes is not None else flush_bytes_for(device)
        self._flush = torch.empty(
            max(1, self.flush_bytes // 4), dtype=torch.int32, device=device.torch_device
        )

    def probe(self, op: Callable[[], object], prepare: Callable[[], object] | None = None) -> float:
        """One untimed-for-the-record iteration, timed on the host: what an iteration costs,
        flush and preparation included (a kernel that cannot run fails here)."""
        synchronize(self.device)
        t0 = self.clock()
        self._flush.zero_()
        if prepare is not None:
            prepare()
        op()
        synchronize(self.device)
        return self.clock() - t0

    def run(
        self,
        op: Callable[[], object],
        effort: Effort,
        prepare: Callable[[], object] | None = None,
        slice_s: float | None = None,
        probe_s: float | None = None,
    ) -> list[float]:
        """Seconds per measured iteration; `prepare` runs untimed before each one.

        With `slice_s`, timing stops once that much wall time has passed (after the
        warm-up and at least `effort.min_iters` timed iterations); `probe_s`, what one
        iteration was seen to cost, sizes the chunks a GPU runs between looks at the clock."""
        if self.device.is_gpu:
            chunk = effort.total
            if slice_s is not None:
                per = probe_s if probe_s and probe_s > 0 else 1e-3
                chunk = max(1, min(effort.total, int(slice_s / 8 / per)))
            return self._run_events(op, effort, prepare, slice_s, chunk)
        return self._run_host(op, effort, prepare, slice_s)

    def _enough(self, timed: int, effort: Effort, t_start: float, slice_s: float | None) -> bool:
        if timed >= effort.iters:
            return True
        if slice_s is None or timed < effort.min_iters:
            return False
        return self.clock() - t_start >= slice_s

    def _run_events(
        self,
        op: Callable[[], object],
        effort: Effort,
        prepare: Callable[[], object] | None,
        slice_s: float | None,
        chunk: int,
    ) -> list[float]:
        import torch

        out: list[float] = []
        t_start = self.clock()
        with torch.cuda.device(self.device.index):
            while True:
                n = min(chunk, effort.total - len(out))
                pairs = [
                    (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                    for _ in range(n)
                ]
                for start, end in pairs:
                    self._flush.zero_()
                    if prepare is not None:
                        prepare()
                    start.record()
                    op()
                    end.record()
                torch.cuda.synchronize(self.device.index)
                out += [s.elapsed_time(e) / 1e3 for s, e in pairs]
                if self._enough(len(out) - effort.warmup, effort, t_start, slice_s):
                    return out[effort.warmup :]

    def _run_host(
        self,
        op: Callable[[], object],
        effort: Effort,
        prepare: Callable[[], object] | None,
        slice_s: float | None = None,
    ) -> list[float]:
        times: list[float] = []
        t_start = self.clock()
        while True:
            self._flush.zero_()
            if prepare is not None:
                prepare()
            synchronize(self.device)
            t0 = self.clock()
            op()
            synchronize(self.device)
            times.append(self.clock() - t0)
            if self._enough(len(times) - effort.warmup, effort, t_start, slice_s):
                return times[effort.warmup :]

    def run_each(
        self,
        op: Callable[[], object],
        iters: int,
        prepare: Callable[[], object] | None = None,
        around: Callable[[], object] | None = None,
        slice_s: float | None = None,
        min_iters: int = 1,
    ) -> list[tuple[float, object, object]]:
        """Each iteration timed in isolation (synchronized before and after), with `around`
        read on both sides: the burst protocol, where every iteration carries its own clock.
        With `slice_s`, stops once that long has passed (after at least `min_iters`)."""
        import torch

        out: list[tuple[float, object, object]] = []
        t_start = self.clock()
        for _ in range(iters):
            if slice_s is not None and len(out) >= min_iters and self.clock() - t_start >= slice_s:
                break
            self._flush.zero_()
            if prepare is not None:
                prepare()
            synchronize(self.device)
            before = around() if around is not None else None
            if self.device.is_gpu:
                with torch.cuda.device(self.device.index):
                    start = torch.cuda.Event(enable_timing=True)
                    end = torch.cuda.Event(enable_timing=True)
                    start.record()
                    op()
                    end.record()
                    torch.cuda.synchronize(self.device.index)
                    seconds = start.elapsed_time(end) / 1e3
            else:
                t0 = self.clock()
                op()
                synchronize(self.device)
                seconds = self.clock() - t0
            after = around() if around is not None else None
            out.append((seconds, before, after))
        return out
