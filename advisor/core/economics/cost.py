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
    power_kw: float | None
    energy_kwh: float | None
    energy_usd: float | None
    within_power_cap: bool | None
    max_gpus_under_cap: int | None


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
) -> JobCost:
    """Wall clock, dollars, GPU-days and energy for the token budget (one hour if none given)."""
    budget = token_budget or tokens_per_s_per_gpu * gpus * 3600.0
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
