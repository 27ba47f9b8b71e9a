"""The speedup's low-high band, built from each assumption's spread.

Each assumption moves the step time in proportion to the share of the step it
governs (its elasticity), so to first order

    var(ln speedup) = sum over per-GPU assumptions of (share_t s_t)^2 + (share_c s_c)^2
                    + sum over shared assumptions of ((share_t - share_c) s)^2
                    + model_sigma^2.

Shared assumptions (the same GEMM efficiency, host overhead or HBM efficiency
on both GPUs) cancel when both GPUs spend the same share on them: that is why
an assumption can be uncertain and still leave the ratio firm. The band is a
90% interval, speedup x exp(+-1.645 sigma).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from advisor.core.projection.calibration import CAL, Calibration
from advisor.core.projection.rates import GpuRates
from advisor.core.projection.roofline import COMPUTE, HOST, MEMORY, Projection

Z90 = 1.645


def _shares(p: Projection) -> dict[str, np.ndarray]:
    """Fraction of each GPU's step governed by each assumption, (GPU, seq)."""
    t = p.step_s

    def bound(bucket: str, code: int) -> np.ndarray:
        return np.where(p.binding[bucket] == code, p.times[bucket], 0.0)

    memory = bound("dense", MEMORY) + bound("attention", MEMORY) + p.times["elementwise"]
    memory = memory + bound("optimizer", MEMORY)
    return {
        "gemm": bound("dense", COMPUTE) / t,
        "attention": bound("attention", COMPUTE) / t,
        "hbm": memory / t,
        "comm": p.times["communication"] / t,
        "host": (bound("optimizer", HOST) + p.times["overhead"]) / t,
    }


def log_sigma(
    p: Projection, rates: Sequence[GpuRates], current: int = 0, cal: Calibration = CAL
) -> np.ndarray:
    """sigma of ln(speedup) of every row against row `current`, (GPU, seq)."""
    sh = _shares(p)
    notes = cal.notes()

    def per_gpu(key: str, resource: str) -> np.ndarray:
        return np.asarray([r.sigmas[resource] for r in rates]).reshape(-1, 1) * sh[key]

    var = np.zeros_like(p.step_s)
    for key, resource in (("gemm", "gemm"), ("attention", "attention"), ("comm", "link")):
        own = per_gpu(key, resource)
        var += own**2 + own[current] ** 2
    shared = {
        "gemm": notes["gemm_efficiency"].sigma,
        "hbm": notes["hbm_efficiency"].sigma,
        "host": notes["host_s_per_param"].sigma,
    }
    for key, sigma in shared.items():
        var += ((sh[key] - sh[key][current]) * sigma) ** 2
    var += cal.model_sigma**2
    var[current] = 0.0
    return np.sqrt(var)


def band(speedup: np.ndarray, sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) 90% band around `speedup`."""
    return speedup * np.exp(-Z90 * sigma), speedup * np.exp(Z90 * sigma)
