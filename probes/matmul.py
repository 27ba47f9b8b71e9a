"""Matmul probe: the Maximum Achievable Matmul FLOPS (MAMF) of this device.

Follows mamf-finder: A is row-major M×K, B is an N×K tensor passed transposed,
C is preallocated and overwritten from a random copy before each iteration so
the output really is rewritten; fp8 goes through torch._scaled_mm with unit
scales. The shape search lives in probes.search; this module builds the
operands, times them and compares the result with the catalog.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from probes.device import Device, synchronize
from probes.errors import describe, is_oom
from probes.figures import CatalogGpu
from probes.search import (
    AdaptivePlan,
    Report,
    Sample,
    SearchResult,
    SearchSpace,
    Shape,
    adaptive_search,
    exhaustive_search,
    grid_shapes,
    mamf_grid,
    matmul_flops,
)
from probes.timing import Effort, Timer, rate, sig

MATMUL_DTYPES = ("bf16", "fp16", "tf32", "fp32", "fp8")


@dataclass(frozen=True)
class MatmulProfile:
    """Search space and effort for one class of device."""

    space: SearchSpace
    grid: tuple[int, int, int]  # exhaustive mamf-finder range: start, stop, step (all dims)
    screen: Effort
    confirm: Effort
    exhaustive: Effort
    warmup_s: float
    exhaustive_warmup_s: float


# Datacenter GPUs: the exhaustive grid is mamf-finder's "exhaustive" sweep (m, n, k each
# `0 16384 1024`, 3,375 shapes, 50 warm-up + 100 timed iterations, 30 s warm-up).
GPU_PROFILE = MatmulProfile(
    space=SearchSpace(
        lo=256,
        hi=16384,
        step=256,
        coarse=(1024, 2048, 4096, 6144, 8192, 12288, 16384),
        refine_delta=1024,
    ),
    grid=(0, 16384, 1024),
    screen=Effort(2, 6),
    confirm=Effort(10, 40),
    exhaustive=Effort(50, 100),
    warmup_s=3.0,
    exhaustive_warmup_s=30.0,
)

# CPU and MPS: the same algorithm scaled down (dims up to 1024) so it runs in seconds.
SMALL_PROFILE = MatmulProfile(
    space=SearchSpace(lo=64, hi=1024, step=64, coarse=(256, 512, 768, 1024), refine_delta=128),
    grid=(0, 1152, 128),
    screen=Effort(1, 3),
    confirm=Effort(2, 8),
    exhaustive=Effort(5, 20),  # mamf-finder's 50+100 scaled down, still well above screening
    warmup_s=0.2,
    exhaustive_warmup_s=0.5,
)


def profile_for(device: Device) -> MatmulProfile:
    return GPU_PROFILE if device.is_gpu else SMALL_PROFILE


def fp8_format(
    device: Device, capability: str | None, gcn_arch: str | None
) -> tuple[str | None, str]:
    """The torch fp8 dtype name for this device, or None; and why."""
    if device.kind == "cuda":
        if capability is None:
            return None, "compute capability unknown"
        major, minor = (int(p) for p in capability.split("."))
        if (major, minor) >= (8, 9):
            return "float8_e4m3fn", f"compute capability {capability}"
        return None, f"fp8 needs compute capability 8.9 or newer; this GPU is {capability}"
    if device.kind == "rocm":
        arch = gcn_arch or ""
        if arch.startswith("gfx94"):
            return "float8_e4m3fnuz", f"{arch} uses the fnuz fp8 formats"
        if arch.startswith(("gfx95", "gfx12")):
            return "float8_e4m3fn", f"{arch} uses the OCP fp8 formats"
        return None, f"no fp8 matrix units known for {arch or 'this GPU'}"
    return None, (
        f"no fp8 matrix units on {device.kind.upper()}; torch._scaled_mm there would be "
        "emulated and say nothing about fp8 hardware"
    )


def dtype_support(
    device: Device, dtype: str, capability: str | None, gcn_arch: str | None
) -> str | None:
    """Why `dtype` cannot be probed on this device, or None when it can."""
    import torch

    if dtype not in MATMUL_DTYPES:
        return f"unknown dtype {dtype!r}; choose from {', '.join(MATMUL_DTYPES)}"
    if dtype == "tf32" and not device.is_gpu:
        return f"tf32 is a GPU tensor-core mode; {device.kind.upper()} computes fp32"
    if dtype == "fp8":
        name, why = fp8_format(device, capability, gcn_arch)
        if name is None:
            return why
        if not hasattr(torch, "_scaled_mm") or not hasattr(torch, name):
            return f"torch {torch.__version__} has no torch._scaled_mm or torch.{name}"
    return None


@contextmanager
def float32_precision(dtype: str) -> Iterator[None]:
    """tf32 and fp32 are the same tensors; the matmul precision setting picks the units."""
    import torch

    before = torch.get_float32_matmul_precision()
    if dtype in ("tf32", "fp32"):
        torch.set_float32_matmul_precision("high" if dtype == "tf32" else "highest")
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(before)


class MatmulBench:
    """Builds random operands for a shape and times the matmul with flushed caches."""

    def __init__(self, device: Device, dtype: str, fp8_name: str | None = None) -> None:
        self.device = device
        self.dtype = dtype
        self.fp8_name = fp8_name
        self.timer = Timer(device)

    def _operands(self, shape: Shape) -> tuple[Callable[[], Any], Callable[[], Any] | None]:
        import torch

        m, n, k = shape
        dev = self.device.torch_device
        if self.dtype == "fp8":
            fp8 = getattr(torch, str(self.fp8_name))
            a = torch.randn(m, k, device=dev).to(fp8)
            b = torch.randn(n, k, device=dev).to(fp8).t()
            one = torch.ones((), device=dev, dtype=torch.float32)
            return (
                lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
                None,
            )
        dt = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(self.dtype, torch.float32)
        a = torch.randn(m, k, device=dev, dtype=dt)
        b = torch.randn(n, k, device=dev, dtype=dt).t()
        c = torch.empty(m, n, device=dev, dtype=dt)
        c_rand = torch.randn(m, n, device=dev, dtype=dt)
        return (lambda: torch.matmul(a, b, out=c)), (lambda: c.copy_(c_rand))

    def measure(self, shape: Shape, effort: Effort) -> Sample | None:
        """TFLOPS at the median and fastest iteration; None if the shape does not fit in memory."""
        try:
            op, prepare = self._operands(shape)
            seconds = self.timer.run(op, effort, prepare)
        except RuntimeError as exc:
            if not is_oom(exc):
                raise
            self._release()
            return None
        r = rate(matmul_flops(shape) / 1e12, seconds)
        return Sample(median_tflops=r.median, max_tflops=r.max)

    def warm(self, shape: Shape, seconds: float) -> None:
        """Keep the device busy so clocks and temperature settle before measuring."""
        if seconds <= 0:
            return
        try:
            op, _ = self._operands(shape)
        except RuntimeError as exc:
            if not is_oom(exc):
                raise
            self._release()
            return  # the search skips shapes that do not fit; warm-up is best effort
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            op()
            synchronize(self.device)

    def _release(self) -> None:
        import torch

        if self.device.is_gpu:
            torch.cuda.empty_cache()


def verdict(
    median_tflops: float,
    dtype: str,
    gpu: CatalogGpu | None,
    device: Device,
    catalog_note: str | None,
) -> str:
    """Is the measured MAMF plausible for this GPU? Compared with the published MAMF (a mean)."""
    if gpu is None:
        return catalog_note or "no catalog figure"
    peak = gpu.peak_tflops.get(dtype)
    if peak is not None and median_tflops > peak:
        return (
            f"above the catalog peak of {peak:g} TFLOPS for {gpu.name}: wrong catalog entry "
            "(see --catalog-id) or a timing problem"
        )
    published = gpu.mamf_tflops.get(dtype)
    if published is None:
        return f"no published {dtype} MAMF for {gpu.name} to compare with"
    ratio = median_tflops / published
    pct = abs(ratio - 1) * 100
    if ratio < 0.95:
        hint = "check clocks, thermals and power cap"
        if device.kind == "rocm":
            hint += "; try PYTORCH_TUNABLEOP_ENABLED=1"
        return f"{pct:.0f}% below the published {gpu.name} MAMF ({published:g} TFLOPS): {hint}"
    if ratio > 1.10:
        return (
            f"{pct:.0f}% above the published {gpu.name} MAMF ({published:g} TFLOPS): newer "
            "software, or a different SKU than the catalog entry"
        )
    return f"consistent with the published {gpu.name} MAMF ({published:g} TFLOPS, {ratio - 1:+.0%})"


def search(
    bench: MatmulBench,
    profile: MatmulProfile,
    *,
    exhaustive: bool,
    budget_s: float,
    should_stop: Callable[[], bool],
    report: Report | None,
) -> SearchResult:
    """Warm up, then run the adaptive search within `budget_s` or the exhaustive grid."""
    space = profile.space
    big = (space.hi, space.hi, space.hi)
    if exhaustive:
        bench.warm(big, profile.exhaustive_warmup_s)
        shapes = grid_shapes(mamf_grid(*profile.grid))
        return exhaustive_search(
            bench.measure, shapes, profile.exhaustive, should_stop=should_stop, report=report
        )
    warm = min(profile.warmup_s, 0.15 * budget_s)
    t0 = time.perf_counter()
    bench.warm(big, warm)
    plan = AdaptivePlan(
        space=space,
        budget_s=max(budget_s - (time.perf_counter() - t0), 0.0),
        screen=profile.screen,
        confirm=profile.confirm,
    )
    return adaptive_search(bench.measure, plan, should_stop=should_stop, report=report)


def run_matmul(
    device: Device,
    dtype: str,
    *,
    exhaustive: bool,
    budget_s: float,
    capability: str | None,
    gcn_arch: str | None,
    gpu: CatalogGpu | None,
    catalog_note: str | None,
    should_stop: Callable[[], bool],
    report: Report | None = None,
    profile: MatmulProfile | None = None,
) -> dict[str, Any]:
    """One record entry: the MAMF for `dtype`, or why it could not be measured."""
    entry: dict[str, Any] = {
        "dtype": dtype,
        "status": "skipped",
        "reason": dtype_support(device, dtype, capability, gcn_arch),
        "mode": "exhaustive" if exhaustive else "quick",
        "mamf_tflops": None,
        "median_tflops": None,
        "best_shape": None,
        "shapes_tried": 0,
        "seconds": 0.0,
        "catalog_peak_tflops": gpu.peak_tflops.get(dtype) if gpu else None,
        "efficiency": None,
        "catalog_mamf_tflops": gpu.mamf_tflops.get(dtype) if gpu else None,
        "verdict": None,
    }
    if dtype == "fp8":
        entry["torch_dtype"] = fp8_format(device, capability, gcn_arch)[0]
    if entry["reason"] is not None:
        return entry
    t0 = time.perf_counter()
    try:
        with float32_precision(dtype):
            bench = MatmulBench(device, dtype, entry.get("torch_dtype"))
            result = search(
                bench,
                profile or profile_for(device),
                exhaustive=exhaustive,
                budget_s=budget_s,
                should_stop=should_stop,
                report=report,
            )
    except Exception as exc:
        entry.update(status="failed", reason=describe(exc))
        entry["seconds"] = round(time.perf_counter() - t0, 3)
        return entry
    entry["seconds"] = round(time.perf_counter() - t0, 3)
    entry["shapes_tried"] = result.shapes_tried
    if result.best is None or result.best_shape is None:
        if result.stopped:
            entry.update(status="skipped", reason="stopped before any shape was measured")
        else:
            entry.update(status="failed", reason="no shape fit in memory")
        return entry
    entry.update(
        status="ok",
        reason="stopped before the search finished" if result.stopped else None,
        mamf_tflops=sig(result.best.max_tflops),
        median_tflops=sig(result.best.median_tflops),
        best_shape=list(result.best_shape),
    )
    peak = entry["catalog_peak_tflops"]
    if peak:
        entry["efficiency"] = sig(result.best.max_tflops / peak, 4)
    entry["verdict"] = verdict(result.best.median_tflops, dtype, gpu, device, catalog_note)
    return entry
