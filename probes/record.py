"""The versioned JSON probe record, built, written and read back with the stdlib only.

advisor/core/probe_record.py mirrors this shape with validating models; keep
the two in step and bump VERSION (in __init__) when a field changes meaning.
"""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path
from typing import Any

from . import SCHEMA, VERSION
from .output import Target, check_target, write_text

CONVENTIONS = {
    "matmul_flops": "2·M·N·K for C[M×N] = A[M×K]·B[K×N]",
    "matmul_mamf": (
        "mamf_tflops is the burst MAMF as current mamf-finder defines it: after an idle gap "
        "(so the clock is back at boost), short bursts of individually timed iterations; the "
        "median of the 5 fastest iterations at the best shape (mamf_peak_tflops is the single "
        "fastest). msmf_tflops is the sustained figure (MSMF): after a thermal soak, the "
        "trimmed median of repeated saturated runs at the best shape. efficiency = "
        "mamf_tflops / catalog peak; the verdict compares mamf_tflops with the published MAMF"
    ),
    "matmul_space": (
        "the quick search and the exhaustive sweep cover one declared space (search.space): "
        "M, N and K each on the same lattice, K included up to the space's top"
    ),
    "attention_flops": (
        "4·B·s²·H·d forward with H query heads, halved when causal; forward+backward is "
        "3.5 × forward (the flash-attention benchmark convention)"
    ),
    "attention_kernels": (
        "every entry names the one kernel that ran it (kernel): SDPA is pinned to each of its "
        "kernels in turn, and flash-attn 2/3/4 and ROCm kernels are measured separately"
    ),
    "bandwidth_bytes": (
        "read+write: a d2d copy counts bytes read plus bytes written (2 × buffer); "
        "h2d and d2h count the bytes moved once; CPU buffers are larger than the last-level cache"
    ),
    "busbw": (
        "busbw = algbw · 2(n−1)/n with algbw = bytes / time (nccl-tests all-reduce); a barrier "
        "before every iteration, each rank times its own call, the time is the mean over ranks"
    ),
    "timing": (
        "device events on CUDA/ROCm, the host clock around a synchronize on CPU/MPS; "
        "warm-up iterations dropped; a cache-flush buffer larger than the last-level cache is "
        "zeroed before every timed iteration; inputs are random"
    ),
    "throttling": (
        "flagged only for hw_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown and "
        "sw_thermal_slowdown; sw_power_cap is normal under a full GEMM load and only noted"
    ),
    "units": "TFLOPS = 1e12 FLOP/s; GB/s = 1e9 bytes/s",
    "workload": (
        "the workload probe (`workload`, absent or null in a suite record): the user's model "
        "built at 1 and up to 4 layers; each run's steps timed on the host clock around a "
        "synchronize, its split into attention, GEMM and other from a profiled window (rules "
        "in workload.classification), carved out of the median step; per layer = (deep - "
        "shallow) / layers apart, outside the layers = shallow - its layers, the whole model "
        "on one device = outside + all layers (extrapolated: true), unsharded"
    ),
}

# A record is a few hundred KiB at most; anything far larger is not one of ours.
MAX_RECORD_BYTES = 32 * 2**20


class RecordError(ValueError):
    """One line naming the file and what is wrong with it."""


def new_record(stamp: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "complete": False,
        "interrupted": False,
        "stamp": stamp,
        "conventions": dict(CONVENTIONS),
        "settings": settings,
        "stages": [],
        "notes": [],
        "matmul": [],
        "attention": [],
        "bandwidth": [],
        "collectives": [],
        "node_health": None,
        "workload": None,
        "seconds_total": 0.0,
    }


def _finite(value: Any) -> Any:
    """NaN and infinities become null: JSON has no spelling for them, and no reader wants one."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def to_json(record: dict[str, Any]) -> str:
    return json.dumps(_finite(record), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_record(record: dict[str, Any], path: str | os.PathLike[str] | Target) -> Path:
    """Write a record (see probes.output for what happens at each kind of path)."""
    target = path if isinstance(path, Target) else check_target(path)
    return write_text(target, to_json(record))


def read_capped_text(name: str, limit: int, what: str,
                     error: type[ValueError] = RecordError) -> str:
    """A regular file's UTF-8 text of at most `limit` bytes; `error`, one line, otherwise."""
    try:
        with open(name, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise error(f"{name}: not a regular file")
            data = fh.read(limit + 1)
    except OSError as exc:
        raise error(f"{name}: cannot read ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise error(f"{name}: larger than {limit / 2**20:g} MiB; not {what}")
    if data.startswith(b"\xef\xbb\xbf"):
        raise error(f"{name}: starts with a byte-order mark; {what} is plain UTF-8")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{name}: not UTF-8 (byte {exc.start})") from None


def parse_json_text(text: str, name: str, what: str,
                    error: type[ValueError] = RecordError) -> Any:
    """Strict JSON (no NaN or Infinity, bounded nesting); `error`, one line, otherwise."""

    def no_constants(constant: str) -> Any:
        raise ValueError(f"{constant} is not a number {what} may hold")

    try:
        return json.loads(text, parse_constant=no_constants)
    except RecursionError:
        raise error(f"{name}: not valid JSON (nested too deeply)") from None
    except json.JSONDecodeError as exc:
        raise error(
            f"{name}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    except ValueError as exc:
        raise error(f"{name}: not valid JSON ({exc})") from None


def read_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A record written by this package, read with a size cap; RecordError if it is not one."""
    name = os.fspath(path)
    text = read_capped_text(name, MAX_RECORD_BYTES, "a probe record")
    data_obj = parse_json_text(text, name, "a probe record")
    if not isinstance(data_obj, dict) or data_obj.get("schema") != SCHEMA:
        raise RecordError(f"{name}: not a probe record")
    if data_obj.get("version") != VERSION:
        raise RecordError(
            f"{name}: probe record version {data_obj.get('version')!r}, not {VERSION}; "
            "re-run `python -m probes run` with this probe code"
        )
    for key in ("matmul", "attention", "bandwidth", "collectives", "notes"):
        if not isinstance(data_obj.get(key, []), list):
            raise RecordError(f"{name}: field {key!r} is not a list")
    if not isinstance(data_obj.get("workload", {}), dict | None):
        raise RecordError(f"{name}: field 'workload' is not an object")
    if not isinstance(data_obj.get("stamp"), dict):
        raise RecordError(f"{name}: field 'stamp' is missing or not an object")
    return data_obj


# Stamp fields that do not change speed, and so never block a merge.
_IGNORED_STAMP = {"hostname", "date", "clocks_note", "pcie_note", "host", "run"}
_IGNORED_LEAVES = {
    "device.catalog_note",
    "device.uuids",
    "clocks.sm_mhz",
    "clocks.mem_mhz",  # what the clock happened to read at idle
    "gpu_settings.clock_event_reasons",  # what NVML said at idle, a moment's state
}


# Where a missing value means "not there" (a package not installed, a variable not set);
# elsewhere (clocks, power, PCIe, ECC, MIG) it means "not read", which is not a difference.
_STRICT_SECTIONS = {"device", "versions", "env", "probe", "torch_settings"}


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out[prefix] = value


def stamp_differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The speed-relevant stamp fields on which two records disagree, as `field: a vs b`."""
    fa: dict[str, Any] = {}
    fb: dict[str, Any] = {}
    _flatten("", {k: v for k, v in a.items() if k not in _IGNORED_STAMP}, fa)
    _flatten("", {k: v for k, v in b.items() if k not in _IGNORED_STAMP}, fb)
    out = []
    for key in sorted(set(fa) | set(fb)):
        if key in _IGNORED_LEAVES or any(key.startswith(p + ".") for p in _IGNORED_LEAVES):
            continue
        va, vb = fa.get(key), fb.get(key)
        strict = key.split(".", 1)[0] in _STRICT_SECTIONS
        if not strict and (va is None or vb is None):
            continue  # read on one side only: unknown, not a difference
        if va != vb:
            out.append(f"{key}: {va!r} vs {vb!r}")
    return out
