"""Money, time and power: turning tokens/s into $/token, job cost, energy and break-even prices.

The comparison is $/token at each sweep point, not TFLOPS: a GPU 2x faster at
2x the price is a tie, and the tie-breakers are wall-clock time and memory.
The other way to buy speed, more of the current GPU, is priced too, with the
communication penalty that the larger data-parallel group pays.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Literal

from pydantic import BaseModel, ConfigDict

from advisor.core.model.catalog import Catalog
from advisor.core.model.workload import Workload
from advisor.core.projection.calibration import CAL, Calibration
from advisor.core.projection.rates import GpuRates
from advisor.core.projection.roofline import simulate

PriceSource = Literal["user", "default"]
BUY_BACK_MAX_FACTOR = 64  # search at most this many times the current GPU count
BUY_BACK_MAX_LAYOUTS = 256  # and simulate at most this many layouts, whatever the GPU count


class PriceQuote(BaseModel):
    model_config = ConfigDict(frozen=True)

    usd_per_hour: float
    source: PriceSource
    label: str


class JobCost(BaseModel):
    """What running the token budget costs on this GPU at the workload's GPU count."""

    model_config = ConfigDict(frozen=True)

    wall_clock_h: float
    usd: float | None
    gpu_days: float
    power_kw: float | None
    energy_kwh: float | None
    energy_usd: float | None
    within_power_cap: bool | None
    max_gpus_under_cap: int | None


class BuyBack(BaseModel):
    """Matching a target's cluster throughput with more of the current GPU."""

    model_config = ConfigDict(frozen=True)

    gpus: int | None  # None: cannot be matched within the search or the batch
    nodes: int | None
    tokens_per_s_per_gpu: float | None
    comm_penalty: float | None  # per-GPU throughput lost against the current count
    usd_per_mtok: float | None
    power_kw: float | None
    note: str


def quote(gpu_id: str, user: dict[str, float], catalog: Catalog) -> PriceQuote | None:
    """The user's quote, else the catalog default; None when neither exists."""
    if gpu_id in user:
        return PriceQuote(usd_per_hour=user[gpu_id], source="user", label="your quote")
    price = catalog.default_price(gpu_id)
    if price is None:
        return None
    return PriceQuote(usd_per_hour=price.usd_per_hour, source="default", label=price.label)


def usd_per_mtok(usd_per_hour: float, tokens_per_s_per_gpu: float) -> float:
    return usd_per_hour / (tokens_per_s_per_gpu * 3600.0) * 1e6


def value_per_dollar(speedup: float, price_ratio: float) -> float:
    """Work per dollar on the target over the current: 4.5x faster at 3.4x the price is 1.32x."""
    return speedup / price_ratio


def break_even_price(current_usd_per_hour: float, speedup: float) -> float:
    """The target price at which both GPUs cost the same per token."""
    return current_usd_per_hour * speedup


def gpu_power_w(rates: GpuRates, busy: float, cal: Calibration = CAL) -> float | None:
    """Board power: idle plus the busy fraction of the idle-to-TDP range."""
    if rates.tdp_w is None:
        return None
    idle = rates.idle_w if rates.idle_w is not None else rates.tdp_w * cal.idle_power_fraction
    return idle + (rates.tdp_w - idle) * busy


def job_cost(
    workload: Workload,
    tokens_per_s_per_gpu: float,
    price: PriceQuote | None,
    power_w: float | None,
    electricity_usd_per_kwh: float,
    power_cap_kw: float | None,
) -> JobCost:
    """Wall clock, dollars, GPU-days and energy for the token budget (one hour if none given)."""
    gpus = workload.gpus
    budget = workload.token_budget or tokens_per_s_per_gpu * gpus * 3600.0
    hours = budget / (tokens_per_s_per_gpu * gpus) / 3600.0
    kw = power_w * gpus / 1000.0 if power_w is not None else None
    kwh = kw * hours if kw is not None else None
    cap_ok = cap_gpus = None
    if power_cap_kw is not None and power_w is not None:
        cap_gpus = int(power_cap_kw * 1000.0 // power_w)
        cap_ok = gpus <= cap_gpus
    return JobCost(
        wall_clock_h=hours,
        usd=price.usd_per_hour * gpus * hours if price else None,
        gpu_days=gpus * hours / 24.0,
        power_kw=kw,
        energy_kwh=kwh,
        energy_usd=kwh * electricity_usd_per_kwh if kwh is not None else None,
        within_power_cap=cap_ok,
        max_gpus_under_cap=cap_gpus,
    )


class CurrentScaling:
    """Per-GPU throughput of the current GPU at other GPU counts, memoised per decision.

    Several targets ask about overlapping counts, so each layout is simulated once.
    A global batch the user set is held fixed (more GPUs, less accumulation); without
    one, each added data-parallel rank brings its own micro-batch.
    """

    def __init__(self, workload: Workload, rates: GpuRates, seq_len: int,
                 cal: Calibration = CAL) -> None:
        self.workload = workload
        self.fixed_batch = workload.training and workload.global_batch is not None
        self.rates, self.seq_len, self.cal = rates, seq_len, cal
        self._memo: dict[tuple[int, int], float] = {}

    def per_gpu(self, gpus: int, nodes: int) -> float:
        key = (gpus, nodes)
        if key not in self._memo:
            trial = self.workload.model_copy(update={"gpus": gpus, "nodes": nodes})
            projection = simulate(trial, [self.rates], [self.seq_len], self.cal)
            self._memo[key] = float(projection.tokens_per_s[0, 0])
        return self._memo[key]

    def layouts(self, start: int) -> Iterator[tuple[int, int]]:
        """(gpus, nodes) at or above `start` GPUs that keep the batch and the node size,
        fewest first. Generated, not scanned for: a data-parallel size qualifies when ep
        divides it, it divides the fixed batch, and its GPUs fill whole nodes (or fit one),
        so a GPU count of 10^5 costs no more than one of 8."""
        w = self.workload
        group, per_node = w.tp * w.pp * w.cp, w.gpus_per_node
        lo, hi = max(w.dp, -(-start // group)), w.dp * BUY_BACK_MAX_FACTOR
        for dp in self._dp_sizes(lo, hi, group, per_node):
            n = dp * group
            yield (n, 1) if n <= per_node else (n, n // per_node)

    def _dp_sizes(self, lo: int, hi: int, group: int, per_node: int) -> Iterator[int]:
        w = self.workload
        if self.fixed_batch:  # the divisors of batch / micro-batch in [lo, hi]
            q = w.sequences_per_step // w.micro_batch
            small = [d for d in range(1, math.isqrt(q) + 1) if q % d == 0]
            divisors = sorted({*small, *(q // d for d in small)})
            yield from (d for d in divisors if lo <= d <= hi and d % w.ep == 0
                        and (d * group <= per_node or d * group % per_node == 0))
            return
        one_node = per_node // group  # the largest dp whose GPUs fit in one node
        first = -(-lo // w.ep) * w.ep
        yield from range(first, min(hi, one_node) + 1, w.ep)
        step = math.lcm(w.ep, per_node // math.gcd(group, per_node))  # dp filling whole nodes
        low = max(lo, one_node + 1)
        yield from range(-(-low // step) * step, hi + 1, step)


def buy_back(
    scaling: CurrentScaling,
    target_cluster_tokens_per_s: float,
    price: PriceQuote | None,
    power_w: float | None,
) -> BuyBack:
    """The fewest current GPUs matching the target's cluster throughput.

    A larger data-parallel group spends longer in gradient all-reduce and may
    cross nodes, so per-GPU throughput drops: that drop is the penalty.
    """
    w = scaling.workload
    base_rate = scaling.per_gpu(w.gpus, w.nodes)
    start = int(target_cluster_tokens_per_s / base_rate) if base_rate > 0 else w.gpus
    layouts = scaling.layouts(min(start, w.gpus * BUY_BACK_MAX_FACTOR + 1))
    for gpus, nodes in itertools.islice(layouts, BUY_BACK_MAX_LAYOUTS):
        rate = scaling.per_gpu(gpus, nodes)
        if rate * gpus >= target_cluster_tokens_per_s:
            return BuyBack(
                gpus=gpus, nodes=nodes, tokens_per_s_per_gpu=rate,
                comm_penalty=max(0.0, 1.0 - rate / base_rate),
                usd_per_mtok=usd_per_mtok(price.usd_per_hour, rate) if price else None,
                power_kw=power_w * gpus / 1000.0 if power_w is not None else None,
                note=f"{gpus} GPUs on {nodes} node(s)"
                     + (f", global batch kept at {w.sequences_per_step} sequences"
                        if scaling.fixed_batch else ""),
            )
    return BuyBack(
        gpus=None, nodes=None, tokens_per_s_per_gpu=None, comm_penalty=None, usd_per_mtok=None,
        power_kw=None,
        note="more of the current GPU cannot match it"
             + (f": a global batch of {w.sequences_per_step} sequences caps data parallelism"
                if scaling.fixed_batch else "")
             + f" (searched up to {BUY_BACK_MAX_FACTOR}x the GPU count, at most "
               f"{BUY_BACK_MAX_LAYOUTS} layouts)",
    )
