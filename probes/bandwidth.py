"""Bandwidth probe: device-to-device copy and pinned host<->device copies.

A d2d copy counts bytes read plus bytes written, which is what the HBM spec
sheet's figure measures; a host link moves each byte once. The d2d result is
set against the catalog's memory bandwidth; the catalog has no host-link figure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from probes.device import Device
from probes.errors import describe
from probes.figures import CatalogGpu
from probes.timing import Effort, Timer, rate, sig

KINDS = ("d2d", "h2d", "d2h")


def counted_bytes(kind: str, buffer_bytes: int) -> int:
    return 2 * buffer_bytes if kind == "d2d" else buffer_bytes


def _entry(kind: str, nbytes: int) -> dict[str, Any]:
    return {
        "kind": kind,
        "bytes": nbytes,
        "gbps_median": None,
        "gbps_max": None,
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
        src = torch.randn(n, device=dev)
        dst = torch.empty_like(src)
        return lambda: dst.copy_(src)
    host = torch.randn(n).pin_memory()
    gpu = torch.randn(n, device=dev)
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
) -> dict[str, Any]:
    entry = _entry(kind, counted_bytes(kind, nbytes))
    if kind != "d2d" and not device.is_gpu:
        entry["reason"] = f"{device.kind.upper()} has no separate device memory: no host link"
        return entry
    try:
        seconds = timer.run(_copy_op(kind, device, nbytes), effort)
    except RuntimeError as exc:
        entry.update(status="failed", reason=describe(exc))
        return entry
    r = rate(entry["bytes"] / 1e9, seconds)
    entry.update(status="ok", gbps_median=sig(r.median), gbps_max=sig(r.max))
    if kind != "d2d":
        entry["note"] = "the catalog gives no host-link figure"
    elif gpu is not None and gpu.memory_gbps:
        entry.update(catalog_gbps=gpu.memory_gbps, fraction=sig(r.median / gpu.memory_gbps, 4))
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
) -> list[dict[str, Any]]:
    timer = Timer(device)
    entries = []
    for i, kind in enumerate(KINDS):
        if should_stop():
            break
        entry = measure_copy(kind, device, nbytes, effort, timer, gpu, catalog_note)
        entries.append(entry)
        if report is not None:
            ok = entry["status"] == "ok"
            shown = f"{entry['gbps_median']:.4g} GB/s" if ok else entry["reason"]
            report((i + 1) / len(KINDS), f"{kind} {nbytes / 2**20:.0f} MiB: {shown}")
    return entries
