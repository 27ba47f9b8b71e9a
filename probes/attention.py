"""Attention probe: TFLOPS per kernel, every kernel measured on its own.

Each available kernel runs every case (each length, causal and not, forward and
forward+backward), and every entry names the one kernel that ran it:

- torch SDPA pinned in turn to each of its kernels: sdpa-flash, sdpa-efficient,
  sdpa-cudnn and sdpa-math (so a figure never silently comes from whichever
  kernel the dispatcher liked best);
- flash-attn 2 (`flash-attn-2`, or `flash-attn-2-ck` on ROCm, where it is built
  on Composable Kernel), flash-attn 3 (`flash_attn_interface`), flash-attn 4
  (`flash_attn.cute`), and AMD's aiter on ROCm, where they import.

FLOPs follow the public flash-attention benchmarks (4·B·s²·H·d forward, halved
when causal, ×3.5 for forward+backward), so results compare with published
figures. The stage has a time budget: each case gets an equal share of what is
left, a case whose single iteration would not fit is skipped with that reason,
so the stage ends close to the time the plan announced.
"""

from __future__ import annotations

import contextlib
import statistics
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from .device import Device
from .errors import describe, is_oom
from .timing import Effort, Timer, rate, sig

DIRECTIONS = ("fwd", "fwd_bwd")


def attention_flops(
    batch: int, seq_len: int, heads: int, head_dim: int, causal: bool, direction: str
) -> float:
    fwd = 4 * batch * seq_len**2 * heads * head_dim / (2 if causal else 1)
    return fwd * 3.5 if direction == "fwd_bwd" else fwd


@dataclass(frozen=True)
class AttentionCase:
    batch: int
    seq_len: int
    heads: int
    kv_heads: int
    head_dim: int
    causal: bool
    direction: str

    @property
    def flops(self) -> float:
        return attention_flops(
            self.batch, self.seq_len, self.heads, self.head_dim, self.causal, self.direction
        )

    def score_bytes(self) -> int:
        """What the math kernel materialises: the s×s scores per head, fp32, about 3 copies
        with the backward."""
        copies = 3 if self.direction == "fwd_bwd" else 1
        return self.batch * self.heads * self.seq_len**2 * 4 * copies


@dataclass(frozen=True)
class AttentionPlan:
    """Which shapes to run. Batch and heads follow the flash-attention benchmarks:
    batch = tokens // seq_len (at least 1) and heads = hidden // head_dim."""

    seq_lens: tuple[int, ...]
    head_dims: tuple[int, ...]
    effort: Effort
    gqa_ratio: int = 1
    tokens: int = 16384
    hidden: int = 2048
    causal: tuple[bool, ...] = (False, True)
    directions: tuple[str, ...] = DIRECTIONS
    dtype: str = "bf16"
    budget_s: float | None = None  # the whole stage; None: no time limit

    def cases(self) -> list[AttentionCase]:
        """Shortest sequences first, so each kernel's rate is known before its long cases."""
        out = []
        for seq in sorted(self.seq_lens):
            for d in self.head_dims:
                heads = max(1, self.hidden // d)
                if heads % self.gqa_ratio:
                    raise ValueError(
                        f"{heads} query heads are not divisible by GQA ratio {self.gqa_ratio}"
                    )
                for causal in self.causal:
                    for direction in self.directions:
                        out.append(
                            AttentionCase(
                                batch=max(1, self.tokens // seq),
                                seq_len=seq,
                                heads=heads,
                                kv_heads=heads // self.gqa_ratio,
                                head_dim=d,
                                causal=causal,
                                direction=direction,
                            )
                        )
        return out


# A kernel takes q, k, v in its own layout and returns the output (or a tuple starting with it).
Kernel = Callable[[Any, Any, Any, bool], Any]


@dataclass(frozen=True)
class Backend:
    name: str  # the kernel, as every entry names it
    family: str  # sdpa, flash-attn, aiter
    layout: str  # "bhsd" (SDPA) or "bshd" (flash-attn)
    kernel: Kernel
    context: Callable[[], AbstractContextManager[Any]] = nullcontext
    version: str | None = None


def _torch_at_least(major: int, minor: int) -> bool:
    import torch

    parts = torch.__version__.split("+")[0].split(".")
    return (int(parts[0]), int(parts[1])) >= (major, minor)


SDPA_KERNELS = (
    ("FLASH_ATTENTION", "sdpa-flash"),
    ("EFFICIENT_ATTENTION", "sdpa-efficient"),
    ("CUDNN_ATTENTION", "sdpa-cudnn"),
    ("MATH", "sdpa-math"),
)
# What each SDPA kernel runs on; the others are not tried there.
_SDPA_DEVICES = {
    "sdpa-flash": ("cuda", "rocm", "cpu"),
    "sdpa-efficient": ("cuda", "rocm"),
    "sdpa-cudnn": ("cuda",),
    "sdpa-math": ("cuda", "rocm", "cpu", "mps"),
}


def sdpa_backends(device: Device | None = None) -> tuple[list[Backend], list[str]]:
    """SDPA pinned to each of its kernels that can run on this device; and notes on the rest."""
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    gqa = _torch_at_least(2, 5)  # enable_gqa arrived in torch 2.5
    kind = device.kind if device is not None else "cuda"

    def kernel(q: Any, k: Any, v: Any, causal: bool) -> Any:
        if q.shape[1] != k.shape[1] and not gqa:
            ratio = q.shape[1] // k.shape[1]
            k, v = k.repeat_interleave(ratio, 1), v.repeat_interleave(ratio, 1)
        if gqa and q.shape[1] != k.shape[1]:
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def pinned(member: Any) -> Callable[[], AbstractContextManager[Any]]:
        return lambda: sdpa_kernel([member])

    found, notes = [], []
    for enum_name, label in SDPA_KERNELS:
        if not hasattr(SDPBackend, enum_name):
            notes.append(f"{label}: not in torch {torch.__version__}")
        elif kind not in _SDPA_DEVICES[label]:
            notes.append(f"{label}: not available on {kind.upper()}")
        else:
            found.append(
                Backend(label, "sdpa", "bhsd", kernel, pinned(getattr(SDPBackend, enum_name)),
                        version=torch.__version__)
            )
    return found, notes


def flash_attn_backends(device: Device) -> tuple[list[Backend], list[str]]:
    """flash-attn 2 (CUDA, or CK on ROCm), 3 (Hopper), 4 (CuTe) and aiter, where they import."""
    found: list[Backend] = []
    notes: list[str] = []
    if not device.is_gpu:
        return found, notes

    def fa2() -> tuple[Kernel, str]:
        import flash_attn

        version = str(flash_attn.__version__)
        if not version.startswith("2."):
            raise ImportError(f"flash_attn {version} is not 2.x")
        return (lambda q, k, v, causal: flash_attn.flash_attn_func(q, k, v, causal=causal)), version

    def fa3() -> tuple[Kernel, str]:
        import flash_attn_interface

        version = str(getattr(flash_attn_interface, "__version__", "3"))
        return (
            lambda q, k, v, causal: flash_attn_interface.flash_attn_func(q, k, v, causal=causal)
        ), version

    def fa4() -> tuple[Kernel, str]:
        from flash_attn.cute import flash_attn_func

        return (lambda q, k, v, causal: flash_attn_func(q, k, v, causal=causal)), "4"

    def aiter_fa() -> tuple[Kernel, str]:
        import aiter

        return (lambda q, k, v, causal: aiter.flash_attn_func(q, k, v, causal=causal)), str(
            getattr(aiter, "__version__", "?")
        )

    fa2_name = "flash-attn-2-ck" if device.kind == "rocm" else "flash-attn-2"
    loaders: list[tuple[str, str, Callable[[], tuple[Kernel, str]]]] = [
        (fa2_name, "flash-attn", fa2)
    ]
    if device.kind == "cuda":
        loaders += [("flash-attn-3", "flash-attn", fa3), ("flash-attn-4", "flash-attn", fa4)]
    else:
        loaders += [("aiter", "aiter", aiter_fa)]
    for name, family, load in loaders:
        try:
            kernel, version = load()
            found.append(Backend(name, family, "bshd", kernel, version=version))
        except ModuleNotFoundError:
            notes.append(f"{name}: not installed")
        except Exception as exc:  # a broken build raises ImportError, OSError, ...
            notes.append(f"{name}: import failed ({type(exc).__name__}: {exc})"[:300])
    return found, notes


def _first(out: Any) -> Any:
    return out[0] if isinstance(out, tuple | list) else out


def _inputs(case: AttentionCase, layout: str, device: Device, dtype: Any) -> tuple[Any, Any, Any]:
    import torch

    def make(heads: int) -> Any:
        b, s, d = case.batch, case.seq_len, case.head_dim
        shape = (b, heads, s, d) if layout == "bhsd" else (b, s, heads, d)
        t = torch.randn(shape, device=device.torch_device, dtype=dtype)
        return t.requires_grad_(case.direction == "fwd_bwd")

    return make(case.heads), make(case.kv_heads), make(case.kv_heads)


def _op(backend: Backend, case: AttentionCase, device: Device, dtype: Any) -> Callable[[], Any]:
    import torch

    q, k, v = _inputs(case, backend.layout, device, dtype)
    if case.direction == "fwd":
        return lambda: backend.kernel(q, k, v, case.causal)
    grad = torch.randn_like(q)

    def fwd_bwd() -> Any:
        out = _first(backend.kernel(q, k, v, case.causal))
        return torch.autograd.grad(out, (q, k, v), grad)

    return fwd_bwd


def _entry(backend: Backend, case: AttentionCase, dtype: str) -> dict[str, Any]:
    return {
        "kernel": backend.name,
        "backend": backend.name,  # the same: records before version 2 only had this
        "family": backend.family,
        "kernel_version": backend.version,
        "dtype": dtype,
        "seq_len": case.seq_len,
        "head_dim": case.head_dim,
        "heads": case.heads,
        "kv_heads": case.kv_heads,
        "batch": case.batch,
        "causal": case.causal,
        "direction": case.direction,
        "tflops_median": None,
        "tflops_max": None,
        "ms_median": None,
        "iterations": 0,
        "first_call_ms": None,
        "status": "failed",
        "reason": None,
    }


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """SDPA warns on stderr each time a pinned kernel declines a case; the entry says why."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def free_memory_bytes(device: Device) -> int | None:
    if not device.is_gpu:
        return None
    try:
        import torch

        free, _total = torch.cuda.mem_get_info(device.index)
        return int(free)
    except Exception:
        return None


def measure_case(
    backend: Backend,
    case: AttentionCase,
    device: Device,
    timer: Timer,
    effort: Effort,
    dtype: str,
    slice_s: float | None = None,
) -> dict[str, Any]:
    """Time the case with this one kernel; the entry names it, or says why it did not run."""
    import torch

    tdtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    entry = _entry(backend, case, dtype)
    if backend.name == "sdpa-math" and device.is_gpu:
        free = free_memory_bytes(device)
        if free is not None and case.score_bytes() > 0.5 * free:
            entry.update(
                status="skipped",
                reason=f"the math kernel would hold ~{case.score_bytes() / 2**30:.0f} GiB of "
                f"s×s scores; {free / 2**30:.0f} GiB free",
            )
            return entry
    try:
        with _quiet(), backend.context():
            op = _op(backend, case, device, tdtype)
            first = timer.probe(op)  # a kernel that cannot take this case fails here; JITs too
            if slice_s is not None and first > max(2 * slice_s, 0.05):
                entry.update(
                    status="skipped",
                    first_call_ms=sig(first * 1e3),
                    reason=f"its first call took {first:.2g} s; the stage's budget leaves "
                    f"{slice_s:.2g} s for this case",
                )
                return entry
            probe = timer.probe(op)
            seconds = timer.run(op, effort, slice_s=slice_s, probe_s=probe)
    except Exception as exc:
        entry["reason"] = describe(exc)
        if is_oom(exc):
            entry["status"] = "failed"
        if device.is_gpu:
            torch.cuda.empty_cache()
        return entry
    r = rate(case.flops / 1e12, seconds)
    entry.update(
        status="ok",
        tflops_median=sig(r.median),
        tflops_max=sig(r.max),
        ms_median=sig(statistics.median(seconds) * 1e3),
        iterations=len(seconds),
        first_call_ms=sig(first * 1e3),  # a JIT-compiled kernel (CuTe) builds on its first call
    )
    return entry


def run_attention(
    device: Device,
    plan: AttentionPlan,
    *,
    should_stop: Callable[[], bool],
    report: Callable[[float, str], None] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Entries for every case and kernel, and notes on kernels that are not here."""
    sdpa, notes = sdpa_backends(device)
    extra, more = flash_attn_backends(device)
    backends = sdpa + extra
    notes += more
    cases = plan.cases()
    timer = Timer(device, clock=clock)
    entries: list[dict[str, Any]] = []
    work = [(case, b) for case in cases for b in backends]  # lengths ascending, kernels inside
    t0 = clock()
    # FLOP/s each kernel showed on its latest case of the same mask and direction
    last_rate: dict[tuple[str, bool, str], float] = {}
    for done, (case, backend) in enumerate(work):
        if should_stop():
            break
        slice_s = None
        if plan.budget_s is not None:
            left = plan.budget_s - (clock() - t0)
            slice_s = max(left, 0.0) / (len(work) - done)
        key = (backend.name, case.causal, case.direction)
        predicted = case.flops / last_rate[key] if key in last_rate else None
        if slice_s is not None and predicted is not None and predicted * 2 > max(3 * slice_s, 0.05):
            entry = _entry(backend, case, plan.dtype)
            entry.update(
                status="skipped",
                reason=f"one iteration would take ~{predicted:.2g} s; the stage's budget leaves "
                f"{slice_s:.2g} s for this case",
            )
        else:
            entry = measure_case(backend, case, device, timer, plan.effort, plan.dtype, slice_s)
        if entry["status"] == "ok" and entry["ms_median"]:
            last_rate[key] = case.flops / (entry["ms_median"] / 1e3)
        entries.append(entry)
        if report is not None:
            ok = entry["status"] == "ok"
            shown = f"{entry['tflops_median']:.3g} TFLOPS" if ok else entry["reason"]
            mask = "causal" if case.causal else "full"
            label = f"{backend.name} s={case.seq_len} d={case.head_dim} {mask} {case.direction}"
            report((done + 1) / len(work), f"{label}: {shown}")
    return entries, notes
