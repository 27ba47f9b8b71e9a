"""Matmul probe: burst MAMF and sustained MSMF, as current mamf-finder defines them.

The operands follow mamf-finder: A is row-major M×K, B an N×K tensor passed
transposed, C preallocated and written through `out=`, and C is reset from a
random copy (and a 256 MiB cache-flush buffer zeroed) before every iteration,
on the bf16/fp16/fp32 path and the fp8 `torch._scaled_mm` path alike.

A search (probes.search) ranks shapes of one declared space; the finalists are
then measured twice, after mamf-finder's `--search auto` (its fast-mamf branch,
benchmark version 4):

- MSMF, sustained: a thermal soak, a warm pass per shape, then `reps` saturated
  runs back to back; the trimmed median of the runs' mean TFLOPS (min and max
  dropped from 5 or more), with its spread, SM clock and power.
- MAMF, burst: per rep, an idle gap so the clock recovers to boost, then short
  bursts of individually synchronised iterations, each bracketed by an SM clock
  read; the median of the 5 fastest iterations (the single fastest is kept as
  mamf_peak_tflops), with the clock those iterations ran at.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from .device import Device, synchronize
from .errors import describe, is_oom
from .figures import CatalogGpu
from .search import (
    AdaptivePlan,
    Report,
    Sample,
    SearchResult,
    SearchSpace,
    Shape,
    adaptive_search,
    exhaustive_search,
    fmt_shape,
    matmul_flops,
)
from .timing import Effort, Timer, rate, sig

MATMUL_DTYPES = ("bf16", "fp16", "tf32", "fp32", "fp8")
Cost = tuple[float, float]  # (seconds to build a shape's operands, seconds per iteration)
MAX_FINALISTS = 12  # when the search converges early, its leftover time confirms more
EXTRA_BURSTS = 20  # and then at most this many more bursts of the best shape


@dataclass(frozen=True)
class BurstPlan:
    """MAMF: `reps` bursts of `iters` isolated iterations, each burst after `idle_s` idle.
    With `burst_s`, a burst also ends once it has run that long (never below `min_iters`):
    a burst of a big shape stays a burst."""

    reps: int = 5
    iters: int = 20
    idle_s: float = 0.25
    top: int = 5  # MAMF = median of this many fastest iterations
    burst_s: float | None = None
    min_iters: int = 4


@dataclass(frozen=True)
class SustainPlan:
    """MSMF: `reps` saturated runs of warmup+iters after `warm_passes` untimed ones."""

    soak_s: float = 20.0
    warm_passes: int = 1
    reps: int = 5
    warmup: int = 50
    iters: int = 100
    max_spread_pct: float = 3.0
    rep_s: float | None = None  # a run also ends once it has run this long
    min_iters: int = 5

    @property
    def effort(self) -> Effort:
        return Effort(self.warmup, self.iters, min(self.min_iters, self.iters))


@dataclass(frozen=True)
class MatmulProfile:
    """Search space, efforts and confirmation protocol for one class of device."""

    space: SearchSpace
    screen: Effort  # per shape in the quick search
    exhaustive: Effort  # per shape in the exhaustive sweep
    burst: BurstPlan
    sustain: SustainPlan
    warmup_s: float  # before the quick search
    exhaustive_warmup_s: float  # before the exhaustive sweep (mamf-finder: 30 s)
    finalists: int = 3
    coarse_per_dim: int = 3
    soak_share: float = 0.12  # of a quick budget, at most, for the thermal soak

    def confirm_cost(self, build_s: float, iteration_s: float) -> float:
        """Seconds one finalist's confirmation costs: two builds (burst and sustained), the
        bursts with their idle gaps, the sustained runs, and the untimed first iteration."""
        b, s = self.burst, self.sustain

        def run(n: int, n_min: int, limit: float | None) -> float:
            full = n * iteration_s
            return full if limit is None else max(n_min * iteration_s, min(full, limit))

        bursts = b.reps * (b.idle_s + run(b.iters, b.min_iters, b.burst_s))
        e = s.effort
        sustained = (s.warm_passes + s.reps) * run(e.total, e.warmup + e.min_iters, s.rep_s)
        return 2 * build_s + bursts + sustained + iteration_s


# Datacenter GPUs: M, N and K each 1024..20480 step 1024 (8,000 shapes). That is
# mamf-finder's documented exhaustive sweep (`0 16384 1024` for each dimension) carried
# on to 20480, where published bursts sit (K >= 20480). The exhaustive sweep measures
# every shape at mamf-finder's 50 + 100 iterations (about 1-2 hours per dtype).
GPU_PROFILE = MatmulProfile(
    space=SearchSpace(1024, 20480, 1024),
    screen=Effort(2, 5),
    exhaustive=Effort(50, 100),
    burst=BurstPlan(reps=5, iters=20, idle_s=0.25, top=5, burst_s=0.1, min_iters=4),
    sustain=SustainPlan(
        soak_s=20.0, warm_passes=1, reps=5, warmup=10, iters=40, rep_s=0.3, min_iters=5
    ),
    warmup_s=2.0,
    exhaustive_warmup_s=30.0,
    finalists=2,
    coarse_per_dim=3,
)

# CPU and MPS: the same algorithm at toy sizes (dims up to 1024) so it runs in seconds.
SMALL_PROFILE = MatmulProfile(
    space=SearchSpace(128, 1024, 128),
    screen=Effort(1, 2),
    exhaustive=Effort(1, 3),
    burst=BurstPlan(reps=3, iters=4, idle_s=0.02, top=5),
    sustain=SustainPlan(soak_s=0.0, warm_passes=0, reps=5, warmup=0, iters=2),
    warmup_s=0.2,
    exhaustive_warmup_s=0.5,
    finalists=2,
    coarse_per_dim=3,
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


class Telemetry(Protocol):
    """Clock and power readings for the device under test (NVML on NVIDIA)."""

    def sm_clock_mhz(self) -> float | None: ...

    def read(self) -> tuple[float | None, float | None]: ...  # (SM clock MHz, power W)

    def window(self, t0: float, t1: float) -> dict[str, Any]: ...


@dataclass
class Burst:
    shape: Shape
    tflops: float  # median of the `top` fastest iterations
    peak_tflops: float
    clock_mhz: float | None  # median bracketed clock of those iterations
    power_w: float | None  # median power read right after them
    iterations: int
    top: list[float] = field(default_factory=list)
    rows: list[tuple[float, float | None, float | None]] = field(default_factory=list)

    @classmethod
    def of(
        cls, shape: Shape, rows: list[tuple[float, float | None, float | None]], top_n: int
    ) -> Burst:
        """From (TFLOPS, clock, power) per iteration: the median of the `top_n` fastest."""
        rows = sorted(rows, key=lambda r: r[0], reverse=True)
        top = rows[:top_n]
        top_clocks = [c for _, c, _ in top if c is not None]
        top_power = [p for _, _, p in top if p is not None]
        return cls(
            shape=shape,
            tflops=burst_figure([t for t, _, _ in rows], top_n),
            peak_tflops=rows[0][0],
            clock_mhz=statistics.median(top_clocks) if top_clocks else None,
            power_w=round(statistics.median(top_power), 1) if top_power else None,
            iterations=len(rows),
            top=[t for t, _, _ in top],
            rows=rows,
        )


@dataclass
class Sustained:
    shape: Shape
    tflops: float  # trimmed median of the reps' mean TFLOPS
    median_tflops: float  # median iteration over all reps
    spread_pct: float
    runs: list[float]
    state: dict[str, Any]  # SM clock, power, throttle reasons while it ran


def trimmed_median(values: list[float]) -> float:
    """Median after dropping the lowest and highest when there are 5 or more (mamf-finder)."""
    xs = sorted(values)
    if len(xs) >= 5:
        xs = xs[1:-1]
    return float(statistics.median(xs))


def spread_pct(values: list[float]) -> float:
    return (max(values) - min(values)) / statistics.median(values) * 100 if values else 0.0


def burst_figure(tflops: list[float], top: int) -> float:
    """The burst MAMF: median of the `top` fastest iterations."""
    fastest = sorted(tflops, reverse=True)[: max(1, top)]
    return float(statistics.median(fastest))


class MatmulBench:
    """Builds random operands for a shape and times the matmul with flushed caches."""

    def __init__(
        self,
        device: Device,
        dtype: str,
        fp8_name: str | None = None,
        *,
        clock: Callable[[], float] = time.perf_counter,
        sleep: Callable[[float], None] = time.sleep,
        should_stop: Callable[[], bool] = lambda: False,
    ) -> None:
        self.device = device
        self.dtype = dtype
        self.fp8_name = fp8_name
        self.clock = clock
        self.sleep = sleep
        self.should_stop = should_stop
        self.timer = Timer(device, clock=clock)
        self.last_cost = (0.0, 0.0)  # (build seconds, seconds per flushed iteration)

    def _operands(self, shape: Shape) -> tuple[Callable[[], Any], Callable[[], Any]]:
        import torch

        m, n, k = shape
        dev = self.device.torch_device
        if self.dtype == "fp8":
            fp8 = getattr(torch, str(self.fp8_name))
            a = torch.randn(m, k, device=dev).to(fp8)
            b = torch.randn(n, k, device=dev).to(fp8).t()
            one = torch.ones(1, device=dev, dtype=torch.float32)  # as mamf-finder: [1.0]
            c = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
            c_rand = torch.randn(m, n, device=dev, dtype=torch.bfloat16)
            return (
                lambda: torch._scaled_mm(
                    a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16, out=c
                ),
                lambda: c.copy_(c_rand),
            )
        dt = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(self.dtype, torch.float32)
        a = torch.randn(m, k, device=dev, dtype=dt)
        b = torch.randn(n, k, device=dev, dtype=dt).t()
        c = torch.empty(m, n, device=dev, dtype=dt)
        c_rand = torch.randn(m, n, device=dev, dtype=dt)
        return (lambda: torch.matmul(a, b, out=c)), (lambda: c.copy_(c_rand))

    def _guard(self, build: Callable[[], Any]) -> Any:
        """Run `build`; None if it ran out of memory (the search skips such shapes)."""
        try:
            return build()
        except RuntimeError as exc:
            if not is_oom(exc):
                raise
            self._release()
            return None

    def measure(self, shape: Shape, effort: Effort) -> Sample | None:
        """TFLOPS at the median and fastest iteration; None if the shape does not fit in memory."""

        def run() -> list[float]:
            t0 = self.clock()
            op, prepare = self._operands(shape)
            t1 = self.clock()
            out = self.timer.run(op, effort, prepare)
            # What building this shape and one flushed iteration of it cost, for planning.
            self.last_cost = (t1 - t0, (self.clock() - t1) / max(effort.total, 1))
            return out

        self.last_cost = (0.0, 0.0)
        seconds = self._guard(run)
        if seconds is None:
            return None
        r = rate(matmul_flops(shape) / 1e12, seconds)
        return Sample(median_tflops=r.median, max_tflops=r.max)

    def warm(self, shape: Shape, seconds: float) -> None:
        """Keep the device busy so clocks and temperature settle before measuring."""
        if seconds <= 0:
            return
        built = self._guard(lambda: self._operands(shape))
        if built is None:
            return  # warm-up is best effort
        op, _ = built
        end = self.clock() + seconds
        while self.clock() < end and not self.should_stop():
            op()
            synchronize(self.device)

    def burst(self, shape: Shape, plan: BurstPlan, telemetry: Telemetry | None) -> Burst | None:
        flops = matmul_flops(shape) / 1e12
        read = telemetry.read if telemetry is not None else None

        def run() -> list[tuple[float, Any, Any]]:
            op, prepare = self._operands(shape)
            self.timer.probe(op, prepare)  # kernels chosen and loaded, untimed
            out: list[tuple[float, Any, Any]] = []
            for _ in range(plan.reps):
                if self.should_stop():
                    break
                synchronize(self.device)
                if plan.idle_s > 0:
                    self.sleep(plan.idle_s)
                out += self.timer.run_each(
                    op, plan.iters, prepare, around=read, slice_s=plan.burst_s,
                    min_iters=plan.min_iters,
                )
            return out

        timed = self._guard(run)
        if not timed:
            return None
        rows = []
        for seconds, before, after in timed:
            # The clock an iteration ran at is at least the lower of the reads on its two
            # sides (a sub-millisecond window, far shorter than a clock change).
            reads = [r for r in (before, after) if isinstance(r, tuple)]
            clocks = [c for c, _ in reads if c is not None]
            power = after[1] if isinstance(after, tuple) else None
            rows.append((flops / max(seconds, 1e-9), min(clocks) if clocks else None, power))
        return Burst.of(shape, rows, plan.top)

    def sustain(
        self, shape: Shape, plan: SustainPlan, telemetry: Telemetry | None
    ) -> Sustained | None:
        flops = matmul_flops(shape) / 1e12
        effort = plan.effort

        def run() -> tuple[list[list[float]], float, float]:
            op, prepare = self._operands(shape)
            probe = self.timer.probe(op, prepare) if plan.rep_s is not None else None
            for _ in range(plan.warm_passes):
                self.timer.run(op, effort, prepare, slice_s=plan.rep_s, probe_s=probe)
            reps: list[list[float]] = []
            t0 = self.clock()
            for _ in range(plan.reps):
                if self.should_stop() and reps:
                    break
                reps.append(self.timer.run(op, effort, prepare, slice_s=plan.rep_s, probe_s=probe))
            return reps, t0, self.clock()

        out = self._guard(run)
        if out is None:
            return None
        reps, t0, t1 = out
        means = [flops / max(statistics.fmean(r), 1e-9) for r in reps]
        every = [s for r in reps for s in r]
        state = telemetry.window(t0, t1) if telemetry is not None else {}
        return Sustained(
            shape=shape,
            tflops=trimmed_median(means),
            median_tflops=flops / max(statistics.median(every), 1e-9),
            spread_pct=spread_pct(means),
            runs=means,
            state=state,
        )

    def soak(self, seconds: float, side: int, telemetry: Telemetry | None) -> float:
        """Drive the device to thermal steady state on a big bf16 square; stops early once
        the SM clock stops dropping. Returns the seconds spent."""
        if seconds <= 0 or not self.device.is_gpu:
            return 0.0
        import torch

        t0 = self.clock()
        s = side
        dev = self.device.torch_device
        try:
            a = torch.randn(s, s, device=dev, dtype=torch.bfloat16)
            b = torch.randn(s, s, device=dev, dtype=torch.bfloat16)
            c = torch.empty(s, s, device=dev, dtype=torch.bfloat16)
        except RuntimeError as exc:
            if not is_oom(exc):
                raise
            self._release()
            return self.clock() - t0
        previous, stable = None, 0
        while self.clock() - t0 < seconds and not self.should_stop():
            for _ in range(20):
                torch.matmul(a, b, out=c)
            synchronize(self.device)
            clock = telemetry.sm_clock_mhz() if telemetry is not None else None
            if clock is not None and previous is not None and clock >= previous - 5:
                stable += 1
                if stable >= 3 and self.clock() - t0 >= 0.25 * seconds:
                    break
            else:
                stable = 0
            previous = clock
        del a, b, c
        return self.clock() - t0

    def _release(self) -> None:
        import torch

        if self.device.is_gpu:
            torch.cuda.empty_cache()


def verdict(
    mamf_tflops: float,
    dtype: str,
    gpu: CatalogGpu | None,
    device: Device,
    catalog_note: str | None,
) -> str:
    """Is the measured burst MAMF plausible for this GPU? Compared with the published MAMF."""
    if gpu is None:
        return catalog_note or "no catalog figure"
    peak = gpu.peak_tflops.get(dtype)
    if peak is not None and mamf_tflops > peak:
        return (
            f"above the catalog peak of {peak:g} TFLOPS for {gpu.name}: wrong catalog entry "
            "(see --catalog-id) or a timing problem"
        )
    published = gpu.mamf_tflops.get(dtype)
    if published is None:
        return f"no published {dtype} MAMF for {gpu.name} to compare with"
    ratio = mamf_tflops / published
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
    space: SearchSpace | None = None,
    reserve_s: Callable[[list[tuple[Shape, Cost]]], float] | None = None,
    max_shapes: int | None = None,
) -> SearchResult:
    """Warm up, then the exhaustive sweep of the space or the adaptive search within it.

    `reserve_s(top)` is time the caller still needs after the search (the finalists'
    confirmation), given the best shapes so far and their seconds per iteration."""
    space = space or profile.space
    big = (space.hi, space.hi, space.k_range[1])
    clock = bench.clock
    if exhaustive:
        bench.warm(big, profile.exhaustive_warmup_s)
        return exhaustive_search(
            bench.measure,
            space.shapes(),
            profile.exhaustive,
            clock=clock,
            should_stop=should_stop,
            report=report,
        )
    t0 = clock()
    bench.warm(big, min(profile.warmup_s, 0.1 * budget_s))
    costs: dict[Shape, Cost] = {}

    def measure(shape: Shape, effort: Effort) -> Sample | None:
        sample = bench.measure(shape, effort)
        costs[shape] = bench.last_cost
        return sample

    plan = AdaptivePlan(
        space=space,
        budget_s=max(budget_s - (clock() - t0), 0.0),
        screen=profile.screen,
        coarse_per_dim=profile.coarse_per_dim,
        max_shapes=max_shapes,
    )
    if reserve_s is None:
        result = adaptive_search(measure, plan, clock=clock, should_stop=should_stop, report=report)
    else:
        result = _adaptive_with_reserve(measure, plan, costs, reserve_s, clock, should_stop, report)
    result.iteration_s = {s: c[1] for s, c in costs.items()}
    return result


def _adaptive_with_reserve(
    measure: Callable[[Shape, Effort], Sample | None],
    plan: AdaptivePlan,
    costs: dict[Shape, Cost],
    reserve_s: Callable[[list[tuple[Shape, Cost]]], float],
    clock: Callable[[], float],
    should_stop: Callable[[], bool],
    report: Report | None,
) -> SearchResult:
    """The adaptive search, stopping early enough to leave the confirmation its time."""
    t0 = clock()
    ranked: list[tuple[Shape, Cost]] = []
    samples: dict[Shape, Sample] = {}

    def tracked(shape: Shape, effort: Effort) -> Sample | None:
        sample = measure(shape, effort)
        if sample is not None:
            samples[shape] = sample
            ranked[:] = sorted(
                ((s, costs[s]) for s in samples), key=lambda sc: samples[sc[0]].median_tflops,
                reverse=True,
            )
        return sample

    def stop() -> bool:
        if should_stop():
            return True
        return bool(ranked) and clock() - t0 + reserve_s(ranked) >= plan.budget_s

    result = adaptive_search(tracked, plan, clock=clock, should_stop=stop, report=report)
    if result.stopped and not should_stop():
        result.stopped = False
        result.stopped_by = "budget"
    return result


def _empty_entry(
    dtype: str, mode: str, reason: str | None, gpu: CatalogGpu | None
) -> dict[str, Any]:
    return {
        "dtype": dtype,
        "status": "skipped",
        "reason": reason,
        "mode": mode,
        "mamf_tflops": None,
        "mamf_peak_tflops": None,
        "mamf_shape": None,
        "mamf_clock_mhz": None,
        "mamf_power_w": None,
        "msmf_tflops": None,
        "msmf_shape": None,
        "msmf_spread_pct": None,
        "msmf_state": None,
        "median_tflops": None,
        "best_shape": None,
        "shapes_tried": 0,
        "seconds": 0.0,
        "search": None,
        "catalog_peak_tflops": gpu.peak_tflops.get(dtype) if gpu else None,
        "efficiency": None,
        "catalog_mamf_tflops": gpu.mamf_tflops.get(dtype) if gpu else None,
        "verdict": None,
    }


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
    telemetry: Telemetry | None = None,
    clock: Callable[[], float] = time.perf_counter,
    sleep: Callable[[float], None] = time.sleep,
    max_shapes: int | None = None,
) -> dict[str, Any]:
    """One record entry: burst MAMF and sustained MSMF for `dtype`, or why not measured."""
    mode = "exhaustive" if exhaustive else "quick"
    entry = _empty_entry(dtype, mode, dtype_support(device, dtype, capability, gcn_arch), gpu)
    if dtype == "fp8":
        entry["torch_dtype"] = fp8_format(device, capability, gcn_arch)[0]
    if entry["reason"] is not None:
        return entry
    profile = profile or profile_for(device)
    t0 = clock()

    def say(fraction: float, message: str) -> None:
        if report is not None:
            report(min(max(fraction, 0.0), 1.0), message)

    def reserve(top: list[tuple[Shape, Cost]], count: int | None = None) -> float:
        """The confirmation's cost for the best shapes so far: two builds (burst, sustained),
        the iterations and the idle gaps, per finalist, plus the soak."""
        shapes = top[: count or profile.finalists]
        soak = min(profile.sustain.soak_s, profile.soak_share * budget_s) if device.is_gpu else 0.0
        return soak + 1.25 * sum(profile.confirm_cost(build, per) for _, (build, per) in shapes)

    try:
        with float32_precision(dtype):
            bench = MatmulBench(
                device, dtype, entry.get("torch_dtype"), clock=clock, sleep=sleep,
                should_stop=should_stop,
            )
            search_share = 0.75
            result = search(
                bench,
                profile,
                exhaustive=exhaustive,
                budget_s=budget_s,
                should_stop=should_stop,
                report=(lambda f, m: say(search_share * f, m)),
                reserve_s=None if exhaustive else reserve,
                max_shapes=max_shapes,
            )
            entry["shapes_tried"] = result.shapes_tried
            effort = profile.exhaustive if exhaustive else profile.screen
            entry["search"] = {
                "space": profile.space.as_dict(),
                "stopped_by": result.stopped_by,
                "seconds": round(result.seconds, 3),
                "effort": [effort.warmup, effort.iters],
                "finalists": [
                    {"shape": list(s), "screen_tflops": sig(x.median_tflops)}
                    for s, x in result.ranked[: profile.finalists]
                ],
            }
            if result.best_shape is None:
                entry["seconds"] = round(clock() - t0, 3)
                if result.stopped:
                    entry.update(status="skipped", reason="stopped before any shape was measured")
                else:
                    entry.update(status="failed", reason="no shape fit in memory")
                return entry
            # The planned finalists always; more while the budget lasts (quick mode).
            deadline = None if exhaustive else t0 + budget_s
            finalists = result.finalists(profile.finalists if exhaustive else MAX_FINALISTS)
            confirmed = _confirm(
                bench, profile, finalists, budget_s, telemetry, should_stop, say, deadline
            )
    except Exception as exc:
        entry.update(status="failed", reason=describe(exc))
        entry["seconds"] = round(clock() - t0, 3)
        return entry
    entry["seconds"] = round(clock() - t0, 3)
    bursts, sustained = confirmed
    if not bursts and not sustained:
        entry.update(status="skipped", reason="stopped before the finalists were confirmed")
        return entry
    notes = []
    if result.stopped:
        notes.append("stopped before the search finished")
    if bursts:
        b = max(bursts, key=lambda x: x.tflops)
        entry.update(
            mamf_tflops=sig(b.tflops),
            mamf_peak_tflops=sig(b.peak_tflops),
            mamf_shape=list(b.shape),
            mamf_clock_mhz=b.clock_mhz,
            mamf_power_w=b.power_w,
            best_shape=list(b.shape),
            mamf_top_tflops=[sig(x) for x in b.top],
        )
    if sustained:
        steady = [s for s in sustained if s.spread_pct <= profile.sustain.max_spread_pct]
        s = max(steady or sustained, key=lambda x: x.tflops)
        if not steady:
            notes.append(
                f"every MSMF candidate varied more than {profile.sustain.max_spread_pct:g}% "
                "between runs; the best is shown"
            )
        entry.update(
            msmf_tflops=sig(s.tflops),
            msmf_shape=list(s.shape),
            msmf_spread_pct=round(s.spread_pct, 2),
            msmf_state=s.state or None,
            median_tflops=sig(s.median_tflops),
            msmf_runs_tflops=[sig(x) for x in s.runs],
        )
        if entry["best_shape"] is None:
            entry["best_shape"] = list(s.shape)
    entry["candidates"] = [
        {"shape": list(b.shape), "mamf_tflops": sig(b.tflops), "clock_mhz": b.clock_mhz}
        for b in bursts
    ] + [
        {"shape": list(s.shape), "msmf_tflops": sig(s.tflops), "spread_pct": round(s.spread_pct, 2)}
        for s in sustained
    ]
    entry.update(status="ok", reason="; ".join(notes) or None)
    headline = entry["mamf_tflops"] or entry["msmf_tflops"]
    peak = entry["catalog_peak_tflops"]
    if peak and headline:
        entry["efficiency"] = sig(headline / peak, 4)
    if headline:
        entry["verdict"] = verdict(headline, dtype, gpu, device, catalog_note)
    return entry


def _confirm(
    bench: MatmulBench,
    profile: MatmulProfile,
    finalists: list[Shape],
    budget_s: float,
    telemetry: Telemetry | None,
    should_stop: Callable[[], bool],
    say: Callable[[float, str], None],
    deadline: float | None = None,
) -> tuple[list[Burst], list[Sustained]]:
    """After a thermal soak, each finalist in turn: MSMF (sustained), then MAMF (bursts after
    idle gaps that let the clock recover). The planned number of finalists is always
    confirmed; with a deadline, further finalists are while the time they cost still fits."""
    clock = bench.clock
    sustained: list[Sustained] = []
    bursts: list[Burst] = []
    soak = profile.sustain.soak_s  # the full soak after an exhaustive sweep, a share of a budget
    if deadline is not None:
        soak = min(soak, profile.soak_share * budget_s)
    if finalists and not should_stop() and soak > 0 and bench.device.is_gpu:
        say(0.75, f"thermal soak up to {soak:.0f} s before the sustained runs")
        bench.soak(soak, min(8192, profile.space.hi), telemetry)
    planned = min(profile.finalists, len(finalists))
    costs: list[float] = []
    for i, shape in enumerate(finalists):
        if should_stop():
            break
        if i >= planned:
            if deadline is None or not costs:
                break
            if clock() + 1.5 * max(costs) > deadline:  # costs vary: leave a margin
                break
        started = clock()
        s = bench.sustain(shape, profile.sustain, telemetry)
        if s is not None:
            sustained.append(s)
        b = bench.burst(shape, profile.burst, telemetry) if not should_stop() else None
        if b is not None:
            bursts.append(b)
        costs.append(clock() - started)
        fraction = 0.75 + 0.25 * min(1.0, (i + 1) / max(planned, 1))
        if s is not None and b is not None:
            clock_text = f" at {b.clock_mhz:.0f} MHz" if b.clock_mhz else ""
            say(fraction, f"{fmt_shape(shape)}: MSMF {s.tflops:.4g} TFLOPS (spread "
                f"{s.spread_pct:.1f}%), MAMF {b.tflops:.4g}{clock_text} (peak {b.peak_tflops:.4g})")
    # Time still left (the search converged, or there were few shapes): more bursts of the
    # best burst shape, so its MAMF rests on more iterations and the stage keeps its time.
    if deadline is not None and bursts and not should_stop():
        best = max(range(len(bursts)), key=lambda i: bursts[i].tflops)
        one = dataclasses.replace(profile.burst, reps=1)
        last = 0.0
        for _ in range(EXTRA_BURSTS):
            if should_stop() or clock() + 1.5 * last >= deadline - 0.02 * budget_s:
                break
            started = clock()
            more = bench.burst(bursts[best].shape, one, telemetry)
            if more is None:
                break
            b = bursts[best]
            bursts[best] = Burst.of(b.shape, b.rows + more.rows, profile.burst.top)
            last = clock() - started
    return bursts, sustained
