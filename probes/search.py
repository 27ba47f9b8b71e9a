"""Shape search for the Maximum Achievable Matmul FLOPS (MAMF).

Pure logic: a `measure(shape, effort)` callable does the timing, so the search
can be tested against a deterministic synthetic cost model and driven by a
fake clock. Two modes:

- adaptive (default): time-budgeted. A coarse log-spaced grid, largest shapes
  first, then pattern-search refinement around the best shapes down to the
  space's step, then the finalists re-measured with more iterations. Only the
  confirmed numbers are reported, so a lucky screening sample cannot win.
- exhaustive: the full Cartesian grid, as the public mamf-finder sweep runs it.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from probes.timing import Effort

Shape = tuple[int, int, int]


@dataclass(frozen=True)
class Sample:
    median_tflops: float
    max_tflops: float


# Returns None when the shape cannot run (out of memory); the search skips it.
Measure = Callable[[Shape, Effort], Sample | None]
Report = Callable[[float, str], None]


def matmul_flops(shape: Shape) -> int:
    m, n, k = shape
    return 2 * m * n * k


def fmt_shape(shape: Shape) -> str:
    return "x".join(str(d) for d in shape)


def mamf_grid(start: int, stop: int, step: int) -> list[int]:
    """One dimension of a mamf-finder range: arange(start, stop, step), with 0 replaced by step."""
    return list(range(start or step, stop, step))


def grid_shapes(values: Iterable[int]) -> list[Shape]:
    vals = list(values)
    return [(m, n, k) for m, n, k in itertools.product(vals, vals, vals)]


@dataclass(frozen=True)
class SearchSpace:
    """Every dimension is a multiple of `step` in [lo, hi]; `coarse` seeds the first pass."""

    lo: int
    hi: int
    step: int
    coarse: tuple[int, ...]
    refine_delta: int


@dataclass(frozen=True)
class AdaptivePlan:
    space: SearchSpace
    budget_s: float
    screen: Effort
    confirm: Effort
    seeds: int = 4
    finalists: int = 3
    coarse_share: float = 0.4


@dataclass
class SearchResult:
    mode: str
    best_shape: Shape | None = None
    best: Sample | None = None
    shapes_tried: int = 0
    seconds: float = 0.0
    stopped: bool = False
    unrunnable: list[Shape] = field(default_factory=list)


def _never() -> bool:
    return False


class _Book:
    """Measures each shape at most once per effort, and keeps time, samples and costs."""

    def __init__(
        self,
        measure: Measure,
        clock: Callable[[], float],
        should_stop: Callable[[], bool],
        report: Report | None,
    ) -> None:
        self.measure = measure
        self.clock = clock
        self.should_stop = should_stop
        self.report = report
        self.t0 = clock()
        self.samples: dict[Shape, Sample] = {}
        self.cost: dict[Shape, float] = {}
        self.unrunnable: list[Shape] = []
        self.stopped = False

    def elapsed(self) -> float:
        return self.clock() - self.t0

    def stop_requested(self) -> bool:
        self.stopped = self.stopped or self.should_stop()
        return self.stopped

    def timed(self, shape: Shape, effort: Effort) -> Sample | None:
        t = self.clock()
        sample = self.measure(shape, effort)
        self.cost[shape] = self.clock() - t
        if sample is None:
            self.unrunnable.append(shape)
        return sample

    def screen(self, shape: Shape, effort: Effort, fraction: float) -> Sample | None:
        if shape in self.samples or shape in self.unrunnable:
            return self.samples.get(shape)
        sample = self.timed(shape, effort)
        if sample is not None:
            self.samples[shape] = sample
        if self.report is not None:
            best = self.ranked()[:1]
            shown = f"{sample.median_tflops:.3g} TFLOPS" if sample else "could not run"
            tail = (
                f"; best {self.samples[best[0]].median_tflops:.3g} @ {fmt_shape(best[0])}"
                if best
                else ""
            )
            self.report(min(fraction, 1.0), f"{fmt_shape(shape)}: {shown}{tail}")
        return sample

    def ranked(self) -> list[Shape]:
        return sorted(self.samples, key=lambda s: self.samples[s].median_tflops, reverse=True)

    def result(self, mode: str, finals: dict[Shape, Sample] | None = None) -> SearchResult:
        pool = finals or self.samples
        best = max(pool, key=lambda s: pool[s].median_tflops) if pool else None
        return SearchResult(
            mode=mode,
            best_shape=best,
            best=pool[best] if best else None,
            shapes_tried=len(self.samples) + len(self.unrunnable),
            seconds=self.elapsed(),
            stopped=self.stopped,
            unrunnable=list(self.unrunnable),
        )


def _neighbors(shape: Shape, delta: int, space: SearchSpace) -> list[Shape]:
    out = []
    for dim in range(3):
        for sign in (1, -1):
            moved = list(shape)
            moved[dim] += sign * delta
            if space.lo <= moved[dim] <= space.hi:
                out.append((moved[0], moved[1], moved[2]))
    return out


def adaptive_search(
    measure: Measure,
    plan: AdaptivePlan,
    *,
    clock: Callable[[], float] = time.perf_counter,
    should_stop: Callable[[], bool] = _never,
    report: Report | None = None,
) -> SearchResult:
    """Best shape found within `plan.budget_s` seconds (finalists confirmed at `plan.confirm`)."""
    book = _Book(measure, clock, should_stop, report)
    space, budget = plan.space, plan.budget_s
    scale = plan.confirm.total / plan.screen.total

    def confirm_reserve() -> float:
        return sum(book.cost[s] for s in book.ranked()[: plan.finalists]) * scale

    def can_spend(limit: float) -> bool:
        return not book.stop_requested() and book.elapsed() + confirm_reserve() < limit

    def screen(shape: Shape) -> Sample | None:
        return book.screen(shape, plan.screen, book.elapsed() / budget if budget > 0 else 1.0)

    coarse = sorted(grid_shapes(space.coarse), key=matmul_flops, reverse=True)
    for shape in coarse:
        # However small the budget, keep going until one shape has run: a result beats none.
        if book.stop_requested() or (book.samples and not can_spend(plan.coarse_share * budget)):
            break
        screen(shape)

    # Pattern search: try ±delta on each dimension, move to the best neighbour while it
    # improves, otherwise halve delta, until delta drops below the step.
    climbers = {s: space.refine_delta for s in book.ranked()[: plan.seeds]}
    while climbers and can_spend(budget):
        for shape, delta in list(climbers.items()):
            del climbers[shape]
            best, best_value = shape, book.samples[shape].median_tflops
            for nb in _neighbors(shape, delta, space):
                if not can_spend(budget):
                    break
                sample = screen(nb)
                if sample is not None and sample.median_tflops > best_value:
                    best, best_value = nb, sample.median_tflops
            next_delta = delta if best != shape else delta // 2
            if next_delta >= space.step and best not in climbers:
                climbers[best] = next_delta

    finals: dict[Shape, Sample] = {}
    for shape in book.ranked()[: plan.finalists]:
        if book.stop_requested():
            break
        sample = book.timed(shape, plan.confirm)
        if sample is not None:
            finals[shape] = sample
    return book.result("quick", finals)


def exhaustive_search(
    measure: Measure,
    shapes: list[Shape],
    effort: Effort,
    *,
    clock: Callable[[], float] = time.perf_counter,
    should_stop: Callable[[], bool] = _never,
    report: Report | None = None,
) -> SearchResult:
    """Measure every shape of the grid at full effort, as mamf-finder does."""
    book = _Book(measure, clock, should_stop, report)
    for i, shape in enumerate(shapes):
        if book.stop_requested():
            break
        book.screen(shape, effort, (i + 1) / len(shapes))
    return book.result("exhaustive")
