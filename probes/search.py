"""Shape search for the Maximum Achievable Matmul FLOPS (MAMF), over one declared space.

Pure logic: a `measure(shape, effort)` callable does the timing, so the search
can be tested against a deterministic synthetic cost model and driven by a
fake clock. Both modes stay inside one `SearchSpace` (M, N and K each on a
lattice), so a quick result and an exhaustive result are comparable:

- exhaustive: every shape of the space, as mamf-finder's grid sweep runs it.
- adaptive (quick): a coarse sub-lattice spread over the whole space, largest
  shapes first, then pattern search from the best seeds: try one lattice jump
  up and down on each dimension, move while it improves, halve the jump when it
  does not, and stop when every climber is down to single steps and done. It
  stops when it has converged, not when its time is spent; the time budget (or
  a fixed shape budget) is only a cap.

Neither mode reports a MAMF itself: both rank the shapes they screened, and the
matmul probe re-measures the finalists with the burst (MAMF) and sustained
(MSMF) protocols.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .timing import Effort

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


def fmt_shape(shape: Shape | list[int] | tuple[int, ...]) -> str:
    return "x".join(str(d) for d in shape)


def mamf_grid(start: int, stop: int, step: int) -> list[int]:
    """One dimension of a mamf-finder range: arange(start, stop, step), with 0 replaced by step."""
    return list(range(start or step, stop, step))


def grid_shapes(values: Iterable[int]) -> list[Shape]:
    vals = list(values)
    return [(m, n, k) for m, n, k in itertools.product(vals, vals, vals)]


@dataclass(frozen=True)
class SearchSpace:
    """M and N run over lo..hi (inclusive) in steps of `step`; K over k_lo..k_hi in k_step
    (the same lattice unless given). Both searches measure only shapes in this space."""

    lo: int
    hi: int
    step: int
    k_lo: int | None = None
    k_hi: int | None = None
    k_step: int | None = None

    def __post_init__(self) -> None:
        for lo, hi, step in ((self.lo, self.hi, self.step), self.k_range):
            if step <= 0 or lo <= 0 or hi < lo:
                raise ValueError(f"not a search range: {lo}..{hi} step {step}")

    @classmethod
    def from_range(cls, start: int, stop: int, step: int) -> SearchSpace:
        """mamf-finder's `--m_range start stop step` for every dimension."""
        values = mamf_grid(start, stop, step)
        if not values:
            raise ValueError(f"empty range: {start} {stop} {step}")
        return cls(values[0], values[-1], step)

    @property
    def k_range(self) -> tuple[int, int, int]:
        return (self.k_lo or self.lo, self.k_hi or self.hi, self.k_step or self.step)

    def values(self, dim: int) -> list[int]:
        lo, hi, step = (self.lo, self.hi, self.step) if dim < 2 else self.k_range
        return list(range(lo, hi + 1, step))

    def shapes(self) -> list[Shape]:
        """Every shape, in mamf-finder's loop order (M outermost, K innermost)."""
        return list(itertools.product(self.values(0), self.values(1), self.values(2)))

    def __len__(self) -> int:
        return len(self.values(0)) * len(self.values(1)) * len(self.values(2))

    def __contains__(self, shape: object) -> bool:
        if not isinstance(shape, tuple) or len(shape) != 3:
            return False
        return all(d in set(self.values(i)) for i, d in enumerate(shape))

    def describe(self) -> str:
        mn = f"{self.lo}..{self.hi} step {self.step}"
        k_lo, k_hi, k_step = self.k_range
        k = f"{k_lo}..{k_hi} step {k_step}"
        dims = f"M, N, K each {mn}" if mn == k else f"M, N {mn}; K {k}"
        return f"{dims} ({len(self)} shapes)"

    def as_dict(self) -> dict[str, Any]:
        k_lo, k_hi, k_step = self.k_range
        return {
            "m": [self.lo, self.hi, self.step],
            "n": [self.lo, self.hi, self.step],
            "k": [k_lo, k_hi, k_step],
            "shapes": len(self),
            "text": self.describe(),
        }


# Pattern-search moves in lattice steps: one axis at a time, then M and N together (wave
# quantisation couples them: the output tile count is what fills the SMs).
MOVES: tuple[tuple[int, int, int], ...] = (
    (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1),
    (1, 1, 0), (-1, -1, 0), (1, -1, 0), (-1, 1, 0),
)


@dataclass(frozen=True)
class AdaptivePlan:
    space: SearchSpace
    budget_s: float  # a cap: the search stops earlier when it has converged
    screen: Effort
    seeds: int = 4  # climbers started from the best coarse shapes
    coarse_per_dim: int = 3  # coarse values per dimension, spread over the whole range
    moves: int = len(MOVES)  # 6: one axis at a time only
    polish_radius: int = 1  # 0: no polish
    max_shapes: int | None = None  # a fixed shape budget (deterministic tests, tiny budgets)


@dataclass
class SearchResult:
    mode: str
    ranked: list[tuple[Shape, Sample]] = field(default_factory=list)  # best first
    shapes_tried: int = 0
    seconds: float = 0.0
    stopped: bool = False  # by the caller's stop flag
    stopped_by: str = "converged"  # converged | budget | shape budget | stop | grid done
    unrunnable: list[Shape] = field(default_factory=list)
    iteration_s: dict[Shape, float] = field(default_factory=dict)  # host seconds per iteration

    @property
    def best_shape(self) -> Shape | None:
        return self.ranked[0][0] if self.ranked else None

    @property
    def best(self) -> Sample | None:
        return self.ranked[0][1] if self.ranked else None

    def finalists(self, n: int) -> list[Shape]:
        return [s for s, _ in self.ranked[:n]]


def _never() -> bool:
    return False


class _Book:
    """Measures each shape at most once, and keeps time, samples and costs."""

    def __init__(
        self,
        measure: Measure,
        effort: Effort,
        clock: Callable[[], float],
        should_stop: Callable[[], bool],
        report: Report | None,
    ) -> None:
        self.measure = measure
        self.effort = effort
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

    @property
    def tried(self) -> int:
        return len(self.samples) + len(self.unrunnable)

    def stop_requested(self) -> bool:
        self.stopped = self.stopped or self.should_stop()
        return self.stopped

    def screen(self, shape: Shape, fraction: float) -> Sample | None:
        if shape in self.samples or shape in self.unrunnable:
            return self.samples.get(shape)
        t = self.clock()
        sample = self.measure(shape, self.effort)
        self.cost[shape] = self.clock() - t
        if sample is None:
            self.unrunnable.append(shape)
        else:
            self.samples[shape] = sample
        if self.report is not None:
            best = self.ranked()[:1]
            shown = f"{sample.median_tflops:.3g} TFLOPS" if sample else "could not run"
            tail = (
                f"; best {self.samples[best[0]].median_tflops:.3g} @ {fmt_shape(best[0])}"
                if best
                else ""
            )
            self.report(min(max(fraction, 0.0), 1.0), f"{fmt_shape(shape)}: {shown}{tail}")
        return sample

    def ranked(self) -> list[Shape]:
        return sorted(self.samples, key=lambda s: self.samples[s].median_tflops, reverse=True)

    def result(self, mode: str, stopped_by: str) -> SearchResult:
        return SearchResult(
            mode=mode,
            ranked=[(s, self.samples[s]) for s in self.ranked()],
            shapes_tried=self.tried,
            seconds=self.elapsed(),
            stopped=self.stopped,
            stopped_by="stop" if self.stopped else stopped_by,
            unrunnable=list(self.unrunnable),
        )


def coarse_indices(n: int, per_dim: int) -> list[int]:
    """`per_dim` indices into a lattice of n values, from the top down to near the bottom."""
    if n <= per_dim:
        return list(range(n - 1, -1, -1))
    if per_dim <= 1:
        return [n - 1]
    span = n - 2  # from the top value down to the second-smallest
    picks = [n - 1 - round(i * span / (per_dim - 1)) for i in range(per_dim)]
    return list(dict.fromkeys(picks))


def adaptive_search(
    measure: Measure,
    plan: AdaptivePlan,
    *,
    clock: Callable[[], float] = time.perf_counter,
    should_stop: Callable[[], bool] = _never,
    report: Report | None = None,
) -> SearchResult:
    """The best shapes of `plan.space`, found by coarse screening and pattern search."""
    book = _Book(measure, plan.screen, clock, should_stop, report)
    space, budget = plan.space, plan.budget_s
    axes = [space.values(d) for d in range(3)]
    why = "converged"

    def out_of_budget() -> str | None:
        if book.stop_requested():
            return "stop"
        if book.tried and book.elapsed() >= budget:
            return "budget"
        if plan.max_shapes is not None and book.tried >= plan.max_shapes:
            return "shape budget"
        return None

    def fraction() -> float:
        by_time = book.elapsed() / budget if budget > 0 else 1.0
        by_count = book.tried / plan.max_shapes if plan.max_shapes else 0.0
        return max(by_time, by_count)

    def shape_of(idx: tuple[int, int, int]) -> Shape:
        return (axes[0][idx[0]], axes[1][idx[1]], axes[2][idx[2]])

    picks = [coarse_indices(len(a), plan.coarse_per_dim) for a in axes]
    coarse = sorted(
        ((i, j, k) for i, j, k in itertools.product(*picks)),
        key=lambda i: matmul_flops(shape_of(i)),
        reverse=True,
    )
    index_of: dict[Shape, tuple[int, int, int]] = {}
    for idx in coarse:
        if (stop := out_of_budget()) is not None:
            why = stop
            break
        shape = shape_of(idx)
        index_of[shape] = idx
        book.screen(shape, fraction())

    # Pattern search in lattice-index space, starting from the coarse spacing on each axis.
    start_delta = [
        max(1, (p[0] - p[1]) if len(p) > 1 else len(a) // 2)
        for p, a in zip(picks, axes, strict=True)
    ]
    climbers: dict[tuple[int, int, int], list[int]] = {}
    if why == "converged":
        for shape in book.ranked()[: plan.seeds]:
            climbers[index_of[shape]] = list(start_delta)
    while climbers and why == "converged":
        for idx, delta in list(climbers.items()):
            del climbers[idx]
            here = shape_of(idx)
            best, best_value = idx, book.samples[here].median_tflops
            for move in MOVES[: plan.moves]:
                nb = _step(idx, move, delta, axes)
                if nb == idx:
                    continue
                if (stop := out_of_budget()) is not None:
                    why = stop
                    break
                sample = book.screen(shape_of(nb), fraction())
                if sample is not None and sample.median_tflops > best_value:
                    best, best_value = nb, sample.median_tflops
            if why != "converged":
                break
            if best != idx:
                climbers.setdefault(best, delta)  # keep the jump while it pays
            elif max(delta) > 1:
                climbers.setdefault(idx, [max(1, d // 2) for d in delta])

    # Polish: every lattice neighbour (all 26 at radius 1) of the best shapes, again around
    # any new best, until the best holds. Wave quantisation makes the landscape jagged
    # along each axis, and a one-axis climb stops at the first dent.
    polished: set[tuple[int, int, int]] = set()
    index_of.update({shape_of(i): i for i in _all_indices(book.samples, axes)})
    while why == "converged" and plan.polish_radius > 0:
        todo = [index_of[s] for s in book.ranked()[: plan.seeds] if index_of[s] not in polished]
        if not todo:
            break
        for idx in todo:
            polished.add(idx)
            r = plan.polish_radius
            for di, dj, dk in itertools.product(range(-r, r + 1), repeat=3):
                nb = _step(idx, (di, dj, dk), [1, 1, 1], axes)
                if nb == idx or shape_of(nb) in book.samples:
                    continue
                if (stop := out_of_budget()) is not None:
                    why = stop
                    break
                shape = shape_of(nb)
                index_of[shape] = nb
                book.screen(shape, fraction())
            if why != "converged":
                break
    return book.result("quick", why)


def _step(
    idx: tuple[int, int, int],
    move: tuple[int, int, int],
    delta: list[int],
    axes: list[list[int]],
) -> tuple[int, int, int]:
    """`idx` moved by move × delta lattice steps, kept inside each axis."""
    i, j, k = (min(max(idx[d] + move[d] * delta[d], 0), len(axes[d]) - 1) for d in range(3))
    return i, j, k


def _all_indices(
    samples: dict[Shape, Sample], axes: list[list[int]]
) -> list[tuple[int, int, int]]:
    where = [{v: i for i, v in enumerate(a)} for a in axes]
    return [(where[0][s[0]], where[1][s[1]], where[2][s[2]]) for s in samples]


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
    book = _Book(measure, effort, clock, should_stop, report)
    for i, shape in enumerate(shapes):
        if book.stop_requested():
            break
        book.screen(shape, (i + 1) / len(shapes))
    return book.result("exhaustive", "grid done")
