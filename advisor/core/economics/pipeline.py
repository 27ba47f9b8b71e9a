"""Producer/consumer pipeline balance: which stage sets the pace, and what a different split buys.

Some jobs are stages on their own GPUs: N GPUs run a frozen target model and feed
M GPUs that train a drafter; RL rollouts feed a trainer. The job runs at the rate
of its slowest stage; the others wait, and their GPUs draw less power while they
do. How much less is uncertain (a GPU polling an empty queue may stay near full
draw), so power is reported as a band: low when a waiting GPU's draw falls with its
utilisation, high when it stays at full draw.
"""

from __future__ import annotations

import heapq
import math

from pydantic import BaseModel, ConfigDict, Field, model_validator

from advisor.core.errors import InputError
from advisor.core.model.bounds import MAX_GPUS

BALANCE_TOLERANCE = 0.05  # stages within 5% of each other count as balanced


class Stage(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    gpus: int = Field(ge=0)
    rate_per_gpu: float = Field(gt=0, description="work units/s one GPU of this stage sustains")
    active_w: float = Field(gt=0, le=3000, description="draw of a busy GPU")
    idle_w: float = Field(ge=0, le=500, description="draw of a GPU with nothing to do")
    rate_source: str = Field(default="measured", description="measured, projected or assumed")

    @model_validator(mode="after")
    def _idle_below_active(self) -> Stage:
        if self.idle_w >= self.active_w:
            raise ValueError(f"idle_w {self.idle_w} is not below active_w {self.active_w}")
        return self


class Pipeline(BaseModel):
    """Stages in flow order. Work units are whatever the user measures (batches, rollouts)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stages: list[Stage] = Field(min_length=2)
    tokens_per_unit: float = Field(gt=0, description="tokens one work unit carries")
    token_budget: float | None = Field(default=None, gt=0)
    spare_gpus: int = Field(default=0, ge=0, description="GPUs in the box left idle")

    @property
    def total_gpus(self) -> int:
        return sum(s.gpus for s in self.stages) + self.spare_gpus

    def with_split(self, counts: tuple[int, ...], box: int | None = None) -> Pipeline:
        """The same stages with other GPU counts in a box of `box` GPUs; the rest sit idle."""
        box = self.total_gpus if box is None else box
        if len(counts) != len(self.stages):
            raise InputError(f"a split needs {len(self.stages)} counts", field="split",
                             value=counts)
        if sum(counts) > box:
            raise InputError(f"split uses more than the {box} GPUs in the box",
                             field="split", value=counts)
        stages = [s.model_copy(update={"gpus": n})
                  for s, n in zip(self.stages, counts, strict=True)]
        return self.model_copy(update={"stages": stages, "spare_gpus": box - sum(counts)})


class StageLoad(BaseModel):
    name: str
    gpus: int
    capacity: float = Field(description="work units/s the stage could sustain")
    utilisation: float
    state: str = Field(description="bottleneck, waits on upstream, blocked by downstream, balanced")
    power_w_low: float
    power_w_high: float


class PipelineBalance(BaseModel):
    split: tuple[int, ...]
    units_per_s: float
    tokens_per_s: float
    bottleneck: str
    balanced: bool
    queue: str
    stages: list[StageLoad]
    idle_gpus: int
    power_kw_low: float
    power_kw_high: float
    eta_days: float | None
    kw_saved: tuple[float, float] | None = Field(
        default=None, description="power saved against the split as given, (low, high)")


def _state(i: int, util: float, slowest: int) -> str:
    if util >= 1 - BALANCE_TOLERANCE:
        return "balanced" if i != slowest else "bottleneck"
    return "waits on upstream (starved)" if i > slowest else "blocked by downstream"


def balance(p: Pipeline) -> PipelineBalance:
    """The pipeline's steady state: throughput, bottleneck, queues and power draw."""
    if any(s.gpus == 0 for s in p.stages):
        empty = next(s.name for s in p.stages if s.gpus == 0)
        raise InputError("every stage needs at least one GPU", field=f"stages.{empty}.gpus",
                         value=0)
    capacities = [s.gpus * s.rate_per_gpu for s in p.stages]
    rate = min(capacities)
    slowest = capacities.index(rate)
    loads = []
    for i, (s, cap) in enumerate(zip(p.stages, capacities, strict=True)):
        util = rate / cap
        low = s.gpus * (s.idle_w + util * (s.active_w - s.idle_w))
        loads.append(StageLoad(
            name=s.name, gpus=s.gpus, capacity=cap, utilisation=util,
            state=_state(i, util, slowest),
            power_w_low=low, power_w_high=s.gpus * s.active_w,
        ))
    balanced = all(ld.utilisation >= 1 - BALANCE_TOLERANCE for ld in loads)
    idle_w = p.spare_gpus * min(s.idle_w for s in p.stages)
    bottleneck = p.stages[slowest].name
    tokens = rate * p.tokens_per_unit
    return PipelineBalance(
        split=tuple(s.gpus for s in p.stages),
        units_per_s=rate,
        tokens_per_s=tokens,
        bottleneck="none: balanced" if balanced else bottleneck,
        balanced=balanced,
        queue=_queue_story(loads, slowest, balanced),
        stages=loads,
        idle_gpus=p.spare_gpus,
        power_kw_low=(sum(ld.power_w_low for ld in loads) + idle_w) / 1000,
        power_kw_high=(sum(ld.power_w_high for ld in loads) + idle_w) / 1000,
        eta_days=p.token_budget / tokens / 86400 if p.token_budget else None,
    )


def _queue_story(loads: list[StageLoad], slowest: int, balanced: bool) -> str:
    if balanced:
        return "balanced: queues stay near empty and no stage waits"
    parts = []
    if slowest > 0:
        parts.append(f"queues before {loads[slowest].name} fill and "
                     f"{', '.join(ld.name for ld in loads[:slowest])} block on back-pressure")
    if slowest < len(loads) - 1:
        parts.append(f"queues after {loads[slowest].name} run empty and "
                     f"{', '.join(ld.name for ld in loads[slowest + 1:])} starve")
    return "; ".join(parts)


BEST_SPLITS_TOP = 20  # how many of the best splits `best_splits` ranks


def _min_gpus(rate: float, per_gpu: float, cap: int) -> int:
    """The fewest GPUs whose capacity (n x per_gpu, as `balance` computes it) reaches `rate`;
    `cap + 1` when that is more than `cap` (so the float steps below stay exact integers)."""
    if rate / per_gpu > cap:
        return cap + 1
    n = max(1, math.ceil(rate / per_gpu))
    while n > 1 and (n - 1) * per_gpu >= rate:
        n -= 1
    while n * per_gpu < rate:
        n += 1
    return n


def _ranked_splits(p: Pipeline, total: int, top: int) -> list[tuple[int, ...]]:
    """The `top` best splits of `total` GPUs, without enumerating the others.

    A split's rate is min(n_i x r_i), so every achievable rate is n x r_j for some stage j;
    a rate R needs at least m_i(R) = ceil(R / r_i) GPUs on each stage, and R is reachable iff
    those fit. So the rates are walked from the highest reachable one down (a binary search
    per stage, then a merge), and at each rate the splits are the minimal one plus extra GPUs
    on stages, cheapest first: an extra GPU adds idle_i - min(idle) W to the low end of the
    power band and nothing to the rate (unless it lifts every binding stage, which is another
    rate). Every rate level holds at least one split, so `top` levels hold the `top` best.
    Work: O(stages x log total + top^2 x stages), whatever the box size.

    Ranked by rate (to 1e-9 units/s), then the low end of the power band (to 1 uW), then
    fewer GPUs in use, then the counts themselves, so the order is total and reproducible.
    """
    rates = [s.rate_per_gpu for s in p.stages]
    idle = [s.idle_w for s in p.stages]
    floor_w = min(idle)
    per_unit = sum((s.active_w - s.idle_w) / s.rate_per_gpu for s in p.stages)
    k = len(rates)

    def need(rate: float) -> list[int]:
        return [_min_gpus(rate, r, total) for r in rates]

    def watts(counts: tuple[int, ...], rate: float) -> float:
        used = sum(counts)
        return (sum(n * w for n, w in zip(counts, idle, strict=True)) + rate * per_unit
                + (total - used) * floor_w)

    # The highest reachable multiple of each stage's per-GPU rate, then all rates descending.
    heap: list[tuple[float, int, int]] = []
    for j, r in enumerate(rates):
        lo, hi = 0, total
        while lo < hi:  # the largest n with n x r reachable; 0 if not even 1 x r is
            mid = (lo + hi + 1) // 2
            if sum(need(mid * r)) <= total:
                lo = mid
            else:
                hi = mid - 1
        if lo:
            heapq.heappush(heap, (-(lo * r), j, lo))

    found: list[tuple[tuple[float, float, int, tuple[int, ...]], tuple[int, ...]]] = []
    levels: list[float] = []
    last = None
    while heap:
        neg, j, n = heapq.heappop(heap)
        if n > 1:
            heapq.heappush(heap, (-((n - 1) * rates[j]), j, n - 1))
        rate = -neg
        if rate == last:
            continue
        last = rate
        level = round(rate, 9)
        if not levels or levels[-1] != level:
            if len(levels) >= top:
                break
            levels.append(level)
        base = tuple(need(rate))
        binding = [i for i in range(k) if base[i] * rates[i] == rate]
        spare = total - sum(base)

        # Best-first over extra GPUs: the cheapest `top` splits at exactly this rate.
        def prio(c: tuple[int, ...], rate: float = rate) -> tuple[float, int, tuple[int, ...]]:
            return (round(watts(c, rate), 6), sum(c), c)

        queue = [(prio(base), base)]
        seen = {base}
        taken = 0
        while queue and taken < top:
            pr, counts = heapq.heappop(queue)
            found.append(((-level, *pr), counts))
            taken += 1
            if sum(counts) - sum(base) >= spare:
                continue
            for i in range(k):
                more = (*counts[:i], counts[i] + 1, *counts[i + 1:])
                if more in seen or all(more[b] > base[b] for b in binding):
                    continue  # seen, or every binding stage lifted: a higher rate, not this one
                seen.add(more)
                heapq.heappush(queue, (prio(more), more))
    found.sort()
    return [counts for _, counts in found[:top]]


def best_splits(p: Pipeline, total_gpus: int | None = None,
                top: int = BEST_SPLITS_TOP) -> list[PipelineBalance]:
    """The `top` best splits of the box, fastest first; ties go to the one that draws less."""
    total = total_gpus if total_gpus is not None else p.total_gpus
    if total < len(p.stages):
        raise InputError(f"{len(p.stages)} stages need at least {len(p.stages)} GPUs",
                         field="gpus", value=total)
    if total > MAX_GPUS:
        raise InputError(f"more GPUs than the {MAX_GPUS:,} advisor models", field="gpus",
                         value=total)
    return [balance(p.with_split(c, total)) for c in _ranked_splits(p, total, top)]


def neighbours(p: Pipeline, stage: str, span: int = 2) -> list[PipelineBalance]:
    """The current split and those moving up to `span` GPUs on or off one stage (7-1, 6-1, 5-1)."""
    names = [s.name for s in p.stages]
    if stage not in names:
        raise InputError(f"no such stage; stages are {', '.join(names)}", field="stage",
                         value=stage)
    idx = names.index(stage)
    out = []
    base = [s.gpus for s in p.stages]
    for delta in range(span, -span - 1, -1):
        counts = list(base)
        counts[idx] += delta
        if counts[idx] < 1 or sum(counts) > p.total_gpus:
            continue
        out.append(balance(p.with_split(tuple(counts))))
    return out


def kw_saved(ref: PipelineBalance, other: PipelineBalance) -> tuple[float, float]:
    """Power saved moving from `ref` to `other`, as a (low, high) band.

    Each end assumes the same draw model on both sides: starved GPUs at full draw, or at
    a draw that falls with utilisation.
    """
    a = ref.power_kw_high - other.power_kw_high
    b = ref.power_kw_low - other.power_kw_low
    return (min(a, b), max(a, b))
