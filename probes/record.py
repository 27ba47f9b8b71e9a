"""The versioned JSON probe record, built and written with the stdlib only.

advisor/core/probe_record.py mirrors this shape with validating models; keep
the two in step and bump VERSION when a field changes meaning.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from probes import SCHEMA, VERSION

CONVENTIONS = {
    "matmul_flops": "2·M·N·K for C[M×N] = A[M×K]·B[K×N]",
    "matmul_mamf": (
        "best_shape has the highest per-shape median; mamf_tflops is its fastest iteration "
        "(mamf-finder's 'max'), median_tflops its median; efficiency = mamf_tflops / catalog "
        "peak; the verdict compares median_tflops with the published MAMF (a mean)"
    ),
    "attention_flops": (
        "4·B·s²·H·d forward with H query heads, halved when causal; forward+backward is "
        "3.5 × forward (the flash-attention benchmark convention)"
    ),
    "bandwidth_bytes": (
        "read+write: a d2d copy counts bytes read plus bytes written (2 × buffer); "
        "h2d and d2h count the bytes moved once"
    ),
    "busbw": "busbw = algbw · 2(n−1)/n with algbw = bytes / time (nccl-tests all-reduce)",
    "timing": (
        "device events on CUDA/ROCm, the host clock around a synchronize on CPU/MPS; "
        "warm-up iterations dropped; a cache-flush buffer is zeroed before every timed "
        "iteration; inputs are random; median and max (fastest iteration) reported"
    ),
    "units": "TFLOPS = 1e12 FLOP/s; GB/s = 1e9 bytes/s",
}


def new_record(stamp: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "complete": False,
        "interrupted": False,
        "stamp": stamp,
        "conventions": dict(CONVENTIONS),
        "settings": settings,
        "notes": [],
        "matmul": [],
        "attention": [],
        "bandwidth": [],
        "collectives": [],
        "node_health": None,
        "seconds_total": 0.0,
    }


def to_json(record: dict[str, Any]) -> str:
    return json.dumps(record, indent=2, ensure_ascii=False) + "\n"


def write_record(record: dict[str, Any], path: str | os.PathLike[str]) -> Path:
    """Write atomically, so an interrupted run never leaves half a file behind."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(to_json(record))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def read_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A record written by this package; raises ValueError if it is not one."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise ValueError(f"{path}: not a probe record")
    if data.get("version") != VERSION:
        raise ValueError(f"{path}: probe record version {data.get('version')!r}, not {VERSION}")
    return data
