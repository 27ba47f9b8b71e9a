"""The tornado: which single assumption, moved across its range, flips the verdict.

Every rate the projection divides by has a stated spread (its source's sigma), and a
price the user did not quote is a default that can be 30% off. Each is moved to the
ends of its 90% range with everything else held, the speedup and $/token are
recomputed from the same projections, and the verdict is judged again. Where $/token
ties inside the range, the tie value is reported: the assumption that would flip it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from advisor.core.economics.verdict import Case, Verdict, judge
from advisor.core.projection.calibration import Z90, Calibration
from advisor.core.projection.rates import GpuRates
from advisor.core.projection.retune import Fitted
from advisor.core.result import SensitivityRow

DEFAULT_PRICE_SPREAD = 0.30
RESOURCE_SIGMA = {"compute": "gemm", "memory": "hbm", "network": "link"}
RESOURCE_LABEL = {"compute": "matmul and attention rates", "memory": "HBM bandwidth",
                  "network": "scale-up link"}


def _speedups(case: Case, f_cur: Fitted, f_tgt: Fitted, side: str, resource: str,
              factor: float) -> tuple[float | None, ...]:
    """The case's speedups with one side's resource `factor` x its assumed rate."""
    cur_t = f_cur.proj.step_s[0] / f_cur.proj.tokens[0]
    tgt_t = f_tgt.proj.step_s[0] / f_tgt.proj.tokens[0]
    if side == "target":
        tgt_t = f_tgt.proj.step_at_scale(factor, resource)[0] / f_tgt.proj.tokens[0]
    else:
        cur_t = f_cur.proj.step_at_scale(factor, resource)[0] / f_cur.proj.tokens[0]
    return tuple(None if s is None else float(cur_t[i] / tgt_t[i])
                 for i, s in enumerate(case.speedups))


def _geomean(values: tuple[float | None, ...], case: Case) -> float | None:
    both = [v for v, a, b in zip(values, case.fits_current, case.fits_target, strict=True)
            if v and a and b]
    return math.exp(sum(math.log(v) for v in both) / len(both)) if both else None


def _bisect(f: Callable[[float], float], lo: float, hi: float) -> float | None:
    """The root of an increasing-or-decreasing f on [lo, hi] in log space, if it crosses."""
    a, b = f(lo), f(hi)
    if a == 0:
        return lo
    if a * b > 0:
        return None
    for _ in range(30):  # 2^-30 of the log range: far finer than any stated spread
        mid = math.sqrt(lo * hi)
        if (f(mid) > 0) == (a > 0):
            lo = mid
        else:
            hi = mid
    return math.sqrt(lo * hi)


def tornado(case: Case, verdict: Verdict, f_cur: Fitted, f_tgt: Fitted, r_cur: GpuRates,
            r_tgt: GpuRates, cal: Calibration) -> list[SensitivityRow]:
    """One row per assumption, the widest swing in $/token first."""
    base_kind = verdict.kind
    rows: list[SensitivityRow] = []
    priced = case.price_current is not None and case.price_target is not None
    ratio = (case.price_target / case.price_current) if priced else None  # type: ignore[operator]

    def judged(c: Case) -> tuple[str, float | None]:
        v = judge(c)
        return v.kind, v.cost_ratio

    comm_share = float(np.max(f_tgt.proj.times["communication"] / f_tgt.proj.step_s))
    for side, rates, gpu in (("target", r_tgt, case.target), ("current", r_cur, case.current)):
        for resource in ("compute", "memory", "network"):
            if resource == "network" and comm_share < 0.02:
                continue
            sigma = rates.sigmas[RESOURCE_SIGMA[resource]]
            lo_f, hi_f = math.exp(-Z90 * sigma), math.exp(Z90 * sigma)
            ends = []
            for factor in (lo_f, hi_f):
                s = _speedups(case, f_cur, f_tgt, side, resource, factor)
                ends.append(judged(replace(case, speedups=s, lows=s, highs=s)))
            tie = None
            if ratio is not None:
                def cost(factor: float, side: str = side, resource: str = resource) -> float:
                    g = _geomean(_speedups(case, f_cur, f_tgt, side, resource, factor), case)
                    return (ratio / g - 1.0) if g else 1.0
                tie = _bisect(cost, 0.05, 20.0)
            value = {"compute": rates.gemm_tflops, "memory": rates.hbm_gbps,
                     "network": rates.link_gbps}[resource]
            unit = {"compute": "TFLOPS", "memory": "GB/s", "network": "GB/s"}[resource]
            rows.append(SensitivityRow(
                assumption=f"{gpu} {RESOURCE_LABEL[resource]}", baseline=value,
                low=value * lo_f, high=value * hi_f, unit=unit,
                verdict_low=ends[0][0], verdict_high=ends[1][0],
                cost_ratio_low=ends[0][1], cost_ratio_high=ends[1][1],
                break_even=value * tie if tie is not None else None,
                flips=base_kind not in (ends[0][0], ends[1][0]) or ends[0][0] != ends[1][0],
                source=f"sigma {sigma:.0%} from {gpu}'s evidence"))
    for price, which in ((case.price_target, 1), (case.price_current, 0)):
        if price is None or case.price_sources[which] != "default":
            continue
        lo_p, hi_p = price * (1 - DEFAULT_PRICE_SPREAD), price * (1 + DEFAULT_PRICE_SPREAD)
        ends = [judged(replace(case, price_target=p) if which else replace(case, price_current=p))
                for p in (lo_p, hi_p)]
        tie = case.break_even_price if which and case.break_even_price else None
        gpu = case.target if which else case.current
        rows.append(SensitivityRow(
            assumption=f"{gpu} price (a default)", baseline=price, low=lo_p, high=hi_p,
            unit="$/h", verdict_low=ends[0][0], verdict_high=ends[1][0],
            cost_ratio_low=ends[0][1], cost_ratio_high=ends[1][1],
            break_even=tie if tie is not None and lo_p <= tie <= hi_p else None,
            flips=base_kind not in (ends[0][0], ends[1][0]) or ends[0][0] != ends[1][0],
            source=f"not quoted by you: ±{DEFAULT_PRICE_SPREAD:.0%} assumed"))
    spread = math.exp(Z90 * cal.model_sigma)
    ends = []
    for f in (1 / spread, spread):
        s = tuple(None if v is None else v * f for v in case.speedups)
        ends.append(judged(replace(case, speedups=s, lows=s, highs=s)))
    rows.append(SensitivityRow(
        assumption="the engine's own error", baseline=1.0, low=1 / spread, high=spread,
        unit="x speedup", verdict_low=ends[0][0], verdict_high=ends[1][0],
        cost_ratio_low=ends[0][1], cost_ratio_high=ends[1][1], break_even=None,
        flips=base_kind not in (ends[0][0], ends[1][0]) or ends[0][0] != ends[1][0],
        source=f"sigma {cal.model_sigma:.0%}, sized on the held-out cases"))

    def swing(r: SensitivityRow) -> float:
        a, b = r.cost_ratio_low, r.cost_ratio_high
        return abs(math.log(a / b)) if a and b else 0.0

    return sorted(rows, key=lambda r: (-int(r.flips), -swing(r)))
