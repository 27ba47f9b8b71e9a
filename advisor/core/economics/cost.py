"""Money, time and power: turning tokens/s into $/token, job cost, energy and break-even prices.

The comparison is $/token at each sweep point, not TFLOPS: a GPU 2x faster at
2x the price is a tie, and the tie-breakers are wall-clock time and memory.
The other way to buy speed, more of the current GPU, is priced in `buyback`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from advisor.core.model.catalog import Catalog
from advisor.core.projection.calibration import CAL, Calibration
from advisor.core.projection.rates import GpuRates

PriceSource = Literal["user", "default"]
SOURCE_WORDS = {"user": "your quote", "default": "default"}  # how a reason names a source


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
    power_kw: float | None  # the GPUs' own draw (energy is counted on it)
    energy_kwh: float | None
    energy_usd: float | None
    within_power_cap: bool | None
    max_gpus_under_cap: int | None
    host_kw: float | None = None  # the nodes' draw besides their GPUs, at the GPUs' TDP
    nodes: int = 1

    @property
    def rack_kw(self) -> float | None:
        """What a rack's power budget counts: the GPUs and their nodes' hosts."""
        if self.power_kw is None:
            return None
        return self.power_kw + (self.host_kw or 0.0)


def rack_kw(gpus: int, per_node: int, gpu_w: float, host_w_per_node: float) -> float:
    """kW of `gpus` GPUs on nodes of `per_node` slots, each node's hosts included."""
    nodes = -(-gpus // per_node)
    return (gpus * gpu_w + nodes * host_w_per_node) / 1000.0


def max_gpus_under(cap_kw: float, per_node: int, gpu_w: float, host_w_per_node: float) -> int:
    """The most GPUs a cap powers, filling nodes of `per_node` slots one at a time."""
    node_w = per_node * gpu_w + host_w_per_node
    full = int(cap_kw * 1000.0 // node_w)
    left = cap_kw * 1000.0 - full * node_w - host_w_per_node
    extra = int(left // gpu_w) if left > 0 and gpu_w > 0 else 0
    return full * per_node + min(per_node - 1, max(0, extra))


def cap_words(gpus: int, gpu: str, job: JobCost) -> str:
    """What a rack's power budget counts for these GPUs: '48 x b200-sxm draw 82.9 kW with
    their hosts (45.1 kW of GPU boards, 37.8 kW for the hosts of 6 nodes: CPUs, NICs,
    switches and fans)'."""
    rack = job.rack_kw or 0.0
    if not job.host_kw:
        return f"{gpus} x {gpu} draw {rack:,.1f} kW (GPU boards; no host figure)"
    return (f"{gpus} x {gpu} draw {rack:,.1f} kW with their hosts ({job.power_kw or 0:,.1f} "
            f"kW of GPU boards, {job.host_kw:,.1f} kW for the hosts of {job.nodes} node"
            f"{'s' if job.nodes != 1 else ''}: CPUs, NICs, switches and fans)")


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
    gpus: int,
    token_budget: float | None,
    tokens_per_s_per_gpu: float,
    price: PriceQuote | None,
    power_w: float | None,
    electricity_usd_per_kwh: float,
    power_cap_kw: float | None,
    nodes: int = 1,
    host_w_per_node: float | None = None,
    slots: int | None = None,
) -> JobCost:
    """Wall clock, dollars, GPU-days and energy for the token budget (one hour if none given).
    The power cap is checked against the GPUs and their nodes' hosts, as a rack counts."""
    budget = token_budget or tokens_per_s_per_gpu * gpus * 3600.0
    hours = budget / (tokens_per_s_per_gpu * gpus) / 3600.0
    kw = power_w * gpus / 1000.0 if power_w is not None else None
    kwh = kw * hours if kw is not None else None
    host = host_w_per_node or 0.0
    host_kw = nodes * host / 1000.0
    cap_ok = cap_gpus = None
    if power_cap_kw is not None and kw is not None and power_w is not None:
        per_node = slots or max(1, gpus // nodes)  # a node's GPU slots, each node's hosts
        cap_gpus = max_gpus_under(power_cap_kw, per_node, power_w, host)
        cap_ok = kw + host_kw <= power_cap_kw
    return JobCost(
        wall_clock_h=hours,
        usd=price.usd_per_hour * gpus * hours if price else None,
        gpu_days=gpus * hours / 24.0,
        power_kw=kw,
        energy_kwh=kwh,
        energy_usd=kwh * electricity_usd_per_kwh if kwh is not None else None,
        within_power_cap=cap_ok,
        max_gpus_under_cap=cap_gpus,
        host_kw=host_kw if host_w_per_node is not None else None,
        nodes=nodes,
    )
