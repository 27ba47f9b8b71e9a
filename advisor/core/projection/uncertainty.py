"""The speedup's low-high band, built from each assumption's spread.

Each assumption moves the step time in proportion to the share of the step it
governs (its elasticity), so to first order

    var(ln speedup) = sum over per-GPU rates of (share_t s_t)^2 + (share_c s_c)^2
                    + sum over shared constants of ((share_t - share_c) s)^2
                    + model_sigma^2.

Shared constants (one GEMM efficiency, one host overhead, one HBM efficiency for
both GPUs) cancel when both GPUs spend the same share on them: that is why an
assumption can be uncertain and still leave the ratio firm. `model_sigma` is the
engine's own structural error, sized from the spread of its held-out errors. The
band is a 90% interval, speedup x exp(+-1.645 sigma).
"""

from __future__ import annotations

import numpy as np

from advisor.core.projection.calibration import CAL, Z90, Calibration
from advisor.core.projection.engine import COMPUTE, HOST, MEMORY, Projection
from advisor.core.projection.rates import GpuRates


def _shares(p: Projection) -> dict[str, np.ndarray]:
    """Fraction of the step governed by each assumption, (1, S)."""
    t = p.step_s

    def bound(bucket: str, code: int) -> np.ndarray:
        return np.where(p.binding[bucket] == code, p.times[bucket], 0.0)

    memory = bound("dense", MEMORY) + bound("attention", MEMORY) + p.times["elementwise"]
    memory = memory + bound("optimizer", MEMORY)
    return {
        "gemm": bound("dense", COMPUTE) / t,
        "attention": bound("attention", COMPUTE) / t,
        "hbm": memory / t,
        "link": p.times["communication"] / t,
        "host": (bound("optimizer", HOST) + p.times["overhead"]) / t,
    }


def log_sigma(cur: Projection, r_cur: GpuRates, tgt: Projection, r_tgt: GpuRates,
              cal: Calibration = CAL) -> np.ndarray:
    """sigma of ln(speedup) of `tgt` over `cur` at each sequence length, (S,)."""
    sc, st = _shares(cur), _shares(tgt)
    notes = cal.notes()
    var = np.zeros_like(cur.step_s)
    for key in ("gemm", "attention", "hbm", "link"):
        var += (st[key] * r_tgt.sigmas[key]) ** 2 + (sc[key] * r_cur.sigmas[key]) ** 2
    shared = {
        "gemm": notes["gemm_efficiency"].sigma,
        "hbm": notes["hbm_efficiency"].sigma,
        "host": notes["step_fixed_s"].sigma,
    }
    for key, sigma in shared.items():
        var += ((st[key] - sc[key]) * sigma) ** 2
    var += cal.model_sigma**2
    return np.sqrt(var).ravel()


def band(speedup: np.ndarray, sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) 90% band around `speedup`."""
    return speedup * np.exp(-Z90 * sigma), speedup * np.exp(Z90 * sigma)
