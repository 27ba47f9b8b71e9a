"""Attention probe: TFLOPS through torch SDPA and flash-attn 2/3/4 when installed.

FLOPs follow the public flash-attention benchmarks (4·B·s²·H·d forward, halved
when causal, ×3.5 for forward+backward), so results compare with published
figures. SDPA is pinned to one kernel at a time (flash, cuDNN, efficient,
math, in that order) so the record names the kernel that actually ran instead
of whatever the dispatcher picked.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from probes.device import Device
from probes.errors import describe
from probes.timing import Effort, Timer, rate, sig

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

    def cases(self) -> list[AttentionCase]:
        out = []
        for seq in self.seq_lens:
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
    name: str
    layout: str  # "bhsd" (SDPA) or "bshd" (flash-attn)
    kernel: Kernel
    context: Callable[[], AbstractContextManager[Any]] = nullcontext


def _torch_at_least(major: int, minor: int) -> bool:
    import torch

    parts = torch.__version__.split("+")[0].split(".")
    return (int(parts[0]), int(parts[1])) >= (major, minor)


def sdpa_backends() -> list[Backend]:
    """SDPA pinned to each kernel, in the order tried."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    gqa = _torch_at_least(2, 5)  # enable_gqa arrived in torch 2.5

    def kernel(q: Any, k: Any, v: Any, causal: bool) -> Any:
        if q.shape[1] != k.shape[1] and not gqa:
            ratio = q.shape[1] // k.shape[1]
            k, v = k.repeat_interleave(ratio, 1), v.repeat_interleave(ratio, 1)
        if gqa and q.shape[1] != k.shape[1]:
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    order = [
        ("FLASH_ATTENTION", "flash"),
        ("CUDNN_ATTENTION", "cudnn"),
        ("EFFICIENT_ATTENTION", "efficient"),
        ("MATH", "math"),
    ]

    def pinned(member: Any) -> Callable[[], AbstractContextManager[Any]]:
        return lambda: sdpa_kernel([member])

    return [
        Backend(f"sdpa-{label}", "bhsd", kernel, pinned(getattr(SDPBackend, enum_name)))
        for enum_name, label in order
        if hasattr(SDPBackend, enum_name)
    ]


def flash_attn_backends(device: Device) -> tuple[list[Backend], list[str]]:
    """flash-attn 2 (CUDA/ROCm), 3 (Hopper) and 4 (CuTe) where they import."""
    found: list[Backend] = []
    notes: list[str] = []
    if not device.is_gpu:
        return found, notes

    def fa2() -> Kernel:
        import flash_attn

        if not str(flash_attn.__version__).startswith("2."):
            raise ImportError(f"flash_attn {flash_attn.__version__} is not 2.x")
        return lambda q, k, v, causal: flash_attn.flash_attn_func(q, k, v, causal=causal)

    def fa3() -> Kernel:
        import flash_attn_interface

        return lambda q, k, v, causal: flash_attn_interface.flash_attn_func(q, k, v, causal=causal)

    def fa4() -> Kernel:
        from flash_attn.cute import flash_attn_func

        return lambda q, k, v, causal: flash_attn_func(q, k, v, causal=causal)

    for name, load in (("flash-attn-2", fa2), ("flash-attn-3", fa3), ("flash-attn-4", fa4)):
        try:
            found.append(Backend(name, "bshd", load()))
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


def _entry(backend: str, case: AttentionCase, dtype: str) -> dict[str, Any]:
    return {
        "backend": backend,
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
        "status": "failed",
        "reason": None,
    }


def measure_case(
    family: str,
    candidates: list[Backend],
    case: AttentionCase,
    device: Device,
    timer: Timer,
    effort: Effort,
    dtype: str,
) -> dict[str, Any]:
    """Time the case with the first candidate that runs it; the entry names that backend."""
    import torch

    tdtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    errors = []
    for backend in candidates:
        entry = _entry(backend.name, case, dtype)
        try:
            with backend.context():
                op = _op(backend, case, device, tdtype)
                op()  # a kernel that cannot take this case fails here, untimed
                seconds = timer.run(op, effort)
        except RuntimeError as exc:
            errors.append(f"{backend.name}: {describe(exc)}")
            if device.is_gpu:
                torch.cuda.empty_cache()
            continue
        r = rate(case.flops / 1e12, seconds)
        entry.update(
            status="ok",
            tflops_median=sig(r.median),
            tflops_max=sig(r.max),
            ms_median=sig(statistics.median(seconds) * 1e3),
        )
        return entry
    failed = _entry(family, case, dtype)
    failed["reason"] = "; ".join(errors)[:600] or "no backend"
    return failed


def run_attention(
    device: Device,
    plan: AttentionPlan,
    *,
    should_stop: Callable[[], bool],
    report: Callable[[float, str], None] | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Entries for every case and backend family, and notes on backends that did not load."""
    extra, notes = flash_attn_backends(device)
    families = [("sdpa", sdpa_backends())] + [(b.name, [b]) for b in extra]
    cases = plan.cases()
    timer = Timer(device)
    entries: list[dict[str, Any]] = []
    total = len(cases) * len(families)
    for done, ((family, candidates), case) in enumerate(itertools.product(families, cases)):
        if should_stop():
            break
        entry = measure_case(family, candidates, case, device, timer, plan.effort, plan.dtype)
        entries.append(entry)
        if report is not None:
            ok = entry["status"] == "ok"
            shown = f"{entry['tflops_median']:.3g} TFLOPS" if ok else entry["reason"]
            mask = "causal" if case.causal else "full"
            label = f"{entry['backend']} s={case.seq_len} d={case.head_dim} {mask} {case.direction}"
            report((done + 1) / total, f"{label}: {shown}")
    return entries, notes
