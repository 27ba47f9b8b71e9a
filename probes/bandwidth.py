"""Bandwidth probe: device-to-device copy and pinned host<->device copies.

A d2d copy counts bytes read plus bytes written, which is what the HBM spec
sheet's figure measures; a host link moves each byte once. The d2d result is
set against the catalog's memory bandwidth; the catalog has no host-link figure.
On a CPU the copy runs through main memory with buffers several times the
machine's last-level cache, found from the machine, so no figure is a cache's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .device import Device
from .errors import describe
from .figures import CatalogGpu
from .timing import Effort, Timer, host_buffer_bytes, last_level_cache_bytes, rate, sig

KINDS = ("d2d", "h2d", "d2h")
GPU_BUFFER_BYTES = 2**30
# CPU: each buffer 4 × the last-level cache (a copy touches two), at most 1 GiB.
CPU_BUFFER_LLC_MULTIPLE = 4.0
CPU_BUFFER_CAP = 2**30


def buffer_bytes_for(device: Device, requested: int | None = None) -> int:
    if requested is not None:
        return requested
    if device.is_gpu:
        return GPU_BUFFER_BYTES
    return host_buffer_bytes(CPU_BUFFER_LLC_MULTIPLE, CPU_BUFFER_CAP)


def counted_bytes(kind: str, buffer_bytes: int) -> int:
    return 2 * buffer_bytes if kind == "d2d" else buffer_bytes


def _entry(kind: str, nbytes: int) -> dict[str, Any]:
    return {
        "kind": kind,
        "bytes": nbytes,
        "buffer_bytes": None,
        "gbps_median": None,
        "gbps_max": None,
        "iterations": 0,
        "catalog_gbps": None,
        "fraction": None,
        "note": None,
        "status": "skipped",
        "reason": None,
    }


def _copy_op(kind: str, device: Device, nbytes: int) -> Callable[[], Any]:
    import torch

    n = nbytes // 4
    dev = device.torch_device
    if kind == "d2d":
        src = torch.empty(n, device=dev).fill_(1.0)  # every page touched before timing
        dst = torch.empty_like(src).fill_(0.0)
        return lambda: dst.copy_(src)
    host = torch.empty(n).pin_memory().fill_(1.0)
    gpu = torch.empty(n, device=dev).fill_(1.0)
    if kind == "h2d":
        return lambda: gpu.copy_(host, non_blocking=True)
    return lambda: host.copy_(gpu, non_blocking=True)


def measure_copy(
    kind: str,
    device: Device,
    nbytes: int,
    effort: Effort,
    timer: Timer,
    gpu: CatalogGpu | None,
    catalog_note: str | None,
    slice_s: float | None = None,
) -> dict[str, Any]:
    entry = _entry(kind, counted_bytes(kind, nbytes))
    entry["buffer_bytes"] = nbytes
    if kind != "d2d" and not device.is_gpu:
        entry["reason"] = f"{device.kind.upper()} has no separate device memory: no host link"
        return entry
    try:
        op = _copy_op(kind, device, nbytes)
        seconds = timer.run(op, effort, slice_s=slice_s)
    except RuntimeError as exc:
        entry.update(status="failed", reason=describe(exc))
        return entry
    r = rate(entry["bytes"] / 1e9, seconds)
    entry.update(
        status="ok", gbps_median=sig(r.median), gbps_max=sig(r.max), iterations=len(seconds)
    )
    if kind != "d2d":
        entry["note"] = "the catalog gives no host-link figure"
    elif gpu is not None and gpu.memory_gbps:
        entry.update(catalog_gbps=gpu.memory_gbps, fraction=sig(r.median / gpu.memory_gbps, 4))
    elif not device.is_gpu:
        llc = last_level_cache_bytes()[0]
        entry["note"] = (
            f"main memory: buffers of {nbytes / 2**20:.0f} MiB, {nbytes / llc:.1f}x the "
            f"{llc / 2**20:.0f} MiB last-level cache; {catalog_note or 'no catalog figure'}"
        )
    else:
        entry["note"] = catalog_note or "no catalog figure"
    return entry


def run_bandwidth(
    device: Device,
    nbytes: int,
    effort: Effort,
    *,
    gpu: CatalogGpu | None,
    catalog_note: str | None,
    should_stop: Callable[[], bool],
    report: Callable[[float, str], None] | None = None,
    budget_s: float | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> list[dict[str, Any]]:
    timer = Timer(device, clock=clock)
    entries = []
    kinds = KINDS if device.is_gpu else ("d2d", "h2d", "d2h")
    runnable = len(kinds) if device.is_gpu else 1
    t0 = clock()
    for i, kind in enumerate(kinds):
        if should_stop():
            break
        slice_s = None
        if budget_s is not None:
            left = max(budget_s - (clock() - t0), 0.0)
            slice_s = left / max(runnable - min(i, runnable - 1), 1)
        entry = measure_copy(kind, device, nbytes, effort, timer, gpu, catalog_note, slice_s)
        entries.append(entry)
        if report is not None:
            ok = entry["status"] == "ok"
            shown = f"{entry['gbps_median']:.4g} GB/s" if ok else entry["reason"]
            report((i + 1) / len(kinds), f"{kind} {nbytes / 2**20:.0f} MiB: {shown}")
    return entries
