"""Where a step's device time goes: attention, GEMM or the rest, from the torch profiler.

On a GPU every kernel (and copy or memset) the profiled steps ran is one sample, its
device time and the torch ops that launched it; on a CPU, where there are no kernels,
every op's self time (its time less its children's) is one sample. The rules, in order
(also written into the record):

1. attention: the kernel or any op that launched it matches ATTENTION_PATTERN
   (SDPA and its backward nodes, flash-attn's functions and kernels, cuDNN's sdpa
   kernels, fmha, and the probe's own `workload.attention` range around the call);
2. GEMM: the kernel was launched from within a matmul op (GEMM_OPS: mm, addmm, bmm,
   baddbmm, matmul, linear, _scaled_mm, grouped mm) or its name matches GEMM_PATTERN
   (cuBLAS/cuBLASLt/CUTLASS/hipBLASLt kernel names);
3. other: everything else (norms, activations, RoPE, softmax and loss, optimizer,
   casts and copies, MoE routing, memsets, memcpys).

The shares are of the summed sample time; a step's buckets are those shares of the
step's wall time measured without the profiler (as the H200->B200 guide's
bench_decompose.py carves its buckets out of the measured step), so they add up to it.
Kernels overlapping on several streams would be counted each in full.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

BUCKETS = ("attention", "gemm", "other")
ATTENTION_PATTERN = re.compile(r"scaled_dot_product|flash|fmha|attention|attn|sdpa", re.I)
GEMM_OPS = frozenset({
    "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::addbmm", "aten::matmul",
    "aten::linear", "aten::_scaled_mm", "aten::_grouped_mm", "aten::_scaled_grouped_mm",
    "aten::mv", "aten::addmv",
})
GEMM_PATTERN = re.compile(r"gemm|cublas|cutlass|xmma|nvjet|wgmma|Cijk_", re.I)
RULES = (
    "attention: the kernel or an op that launched it matches "
    f"/{ATTENTION_PATTERN.pattern}/i (SDPA and its backward, flash-attn, cuDNN sdpa, fmha, "
    "the probe's workload.attention range); GEMM: launched from within "
    f"{', '.join(sorted(GEMM_OPS))}, or a kernel name matching /{GEMM_PATTERN.pattern}/i; "
    "other: the rest. Shares are of summed kernel time (GPU) or op self time (CPU); each "
    "bucket's ms is its share of the step's wall time measured without the profiler"
)


@dataclass(frozen=True)
class Sample:
    name: str  # the kernel's (GPU) or the op's (CPU)
    us: float
    ancestors: tuple[str, ...] = ()  # the op that launched it, then that op's parents


def classify(name: str, ancestors: Sequence[str]) -> str:
    names = (name, *ancestors)
    if any(ATTENTION_PATTERN.search(n) for n in names):
        return "attention"
    if any(n in GEMM_OPS for n in names) or GEMM_PATTERN.search(name):
        return "gemm"
    return "other"


@dataclass
class Split:
    """Summed sample time per bucket, and which attention ops ran."""

    us: dict[str, float] = field(default_factory=lambda: dict.fromkeys(BUCKETS, 0.0))
    attention_ops: list[str] = field(default_factory=list)
    samples: int = 0

    @property
    def total_us(self) -> float:
        return sum(self.us.values())

    def shares(self) -> dict[str, float] | None:
        total = self.total_us
        if total <= 0:
            return None
        return {b: self.us[b] / total for b in BUCKETS}


def split(samples: Iterable[Sample]) -> Split:
    out = Split()
    seen: dict[str, None] = {}
    for s in samples:
        bucket = classify(s.name, s.ancestors)
        out.us[bucket] += s.us
        out.samples += 1
        if bucket == "attention":
            for n in (s.name, *s.ancestors):  # the kernels' ops, not the dispatcher
                if n.startswith("aten::_") and ATTENTION_PATTERN.search(n):
                    seen.setdefault(n)
    out.attention_ops = list(seen)
    return out


def _ancestors(event: Any) -> tuple[str, ...]:
    names: list[str] = []
    parent = event
    while parent is not None and len(names) < 64:
        names.append(str(parent.name))
        parent = parent.cpu_parent
    return tuple(names)


def samples_from_profile(events: Iterable[Any], gpu: bool) -> list[Sample]:
    """The samples of a finished `torch.profiler.profile`'s `events()`."""
    out = []
    for ev in events:
        if str(getattr(ev, "device_type", "")).endswith("CPU") is False:
            continue  # device events are reached through the ops that launched them
        if gpu:
            for k in getattr(ev, "kernels", ()):
                out.append(Sample(str(k.name), float(k.duration), _ancestors(ev)))
        elif ev.name != "[memory]":
            us = float(ev.self_cpu_time_total)
            if us > 0:
                out.append(Sample(str(ev.name), us, _ancestors(ev.cpu_parent)
                                  if ev.cpu_parent is not None else ()))
    return out


def device_time_us(events: Iterable[Any]) -> float:
    """Every GPU activity's time in the profile (kernels, copies, memsets)."""
    total = 0.0
    for ev in events:
        if not str(getattr(ev, "device_type", "")).endswith("CPU"):
            total += float(ev.time_range.elapsed_us())
    return total
