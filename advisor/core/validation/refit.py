"""Refitting: solve every fitted constant again from its kernel-level cases, so the shipped
values can be checked, not trusted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
from pydantic import BaseModel, ConfigDict

from advisor.core.model.catalog import Catalog
from advisor.core.projection.calibration import CAL, AttentionCurve, Calibration
from advisor.core.validation.cases import CaseSpec
from advisor.core.validation.predict import need, predict


class RefitRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    shipped: float
    refit: float
    fitted_to: str

    @property
    def drift(self) -> float:
        return (self.shipped - self.refit) / self.refit


def _bisect(f: Callable[[float], float], lo: float, hi: float, steps: int = 80) -> float:
    """Root of a monotone f on [lo, hi] (geometric bisection: the constants span decades)."""
    f_lo = f(lo)
    for _ in range(steps):
        mid = (lo * hi) ** 0.5
        if (f(mid) > 0) == (f_lo > 0):
            lo, f_lo = mid, f(mid)
        else:
            hi = mid
    return (lo * hi) ** 0.5


def refit(catalog: Catalog, cases: list[CaseSpec], cal: Calibration = CAL) -> list[RefitRow]:
    """Solve every fitted constant again from its kernel-level cases, in dependency order.

    Only the seed guide's step decomposition, its attention kernel ratios and its memory
    table are fitted; the held-out model sigma is reported from the validation spread.
    """
    by_id = {c.id: c for c in cases}
    rows: list[RefitRow] = []

    def measured(case_id: str) -> float:
        return float(need(by_id[case_id].measured, by_id[case_id], "measured"))

    def tflops(case_id: str, c: Calibration) -> float:
        return float(predict(by_id[case_id], catalog, c)[0])

    # 1. attention: FA3 and FA4 heights from the in-step 8k rates (bisection on e_fb), the FA4
    #    half point from the isolated ratio's growth 8k -> 32k.
    fa3, fa4 = cal.attention[("fa3", "hopper")], cal.attention[("fa4", "blackwell")]
    growth = measured("upg-fa-isolated-32k") / measured("upg-fa-isolated-8k")
    s8, s32 = 8192.0, 32768.0

    def ratio_growth(s_half: float) -> float:
        return ((s32 / (s32 + s_half)) / (s8 / (s8 + s_half))
                / ((s32 / (s32 + fa3.s_half)) / (s8 / (s8 + fa3.s_half))))

    s4 = _bisect(lambda x: ratio_growth(x) - growth, fa3.s_half, 1e5)

    def with_curve(c: Calibration, key: tuple[str, str], e: float, s_half: float
                   ) -> Calibration:
        old = c.attention[key]
        att = dict(c.attention)
        att[key] = AttentionCurve(e, old.e_f * e / old.e_fb, s_half, old.sigma, old.source,
                                  old.fitted_to)
        if key[0] in ("fa3", "fa4"):
            att[("cudnn", key[1])] = att[key]
        return replace(c, attention=att)

    e3 = _bisect(lambda e: tflops("upg-8k-h200-attn-tflops", with_curve(cal, ("fa3", "hopper"),
                                                                         e, fa3.s_half))
                 - measured("upg-8k-h200-attn-tflops"), 0.05, 5.0)
    trial = with_curve(cal, ("fa3", "hopper"), e3, fa3.s_half)
    e4 = _bisect(lambda e: tflops("upg-8k-b200-attn-tflops", with_curve(trial,
                                                                        ("fa4", "blackwell"),
                                                                        e, s4))
                 - measured("upg-8k-b200-attn-tflops"), 0.05, 5.0)
    trial = with_curve(trial, ("fa4", "blackwell"), e4, s4)
    rows += [RefitRow(name="attention fa3/hopper e_fb", shipped=fa3.e_fb, refit=e3,
                      fitted_to="upg-8k-h200-attn-tflops"),
             RefitRow(name="attention fa4/blackwell e_fb", shipped=fa4.e_fb, refit=e4,
                      fitted_to="upg-8k-b200-attn-tflops"),
             RefitRow(name="attention fa4/blackwell s_half", shipped=fa4.s_half, refit=s4,
                      fitted_to="upg-fa-isolated-8k, upg-fa-isolated-32k")]

    # 2. GEMM efficiency and DeepSpeed's per-parameter step time from the two GPUs' non-attention
    #    rates: two equations, two unknowns, solved by Newton steps on finite differences.
    names = ("upg-8k-h200-rest-tflops", "upg-8k-b200-rest-tflops")

    def resid(c: Calibration) -> np.ndarray:
        return np.asarray([tflops(n, c) / measured(n) - 1 for n in names])

    def with_x(c: Calibration, eff: float, host: float) -> Calibration:
        return replace(c, gemm_efficiency={**c.gemm_efficiency, "deepspeed": eff},
                       host_s_per_param={**c.host_s_per_param, "deepspeed": host})

    eff, host = trial.gemm_efficiency["deepspeed"], trial.host_s_per_param["deepspeed"]
    for _ in range(8):
        base = resid(with_x(trial, eff, host))
        d_e = (resid(with_x(trial, eff * 1.01, host)) - base) / (eff * 0.01)
        d_h = (resid(with_x(trial, eff, host * 1.01 + 1e-13)) - base) / (host * 0.01 + 1e-13)
        jac = np.column_stack([d_e, d_h])
        step = np.linalg.lstsq(jac, -base, rcond=None)[0]
        eff, host = max(0.2, eff + step[0]), max(0.0, host + step[1])
    rows += [RefitRow(name="gemm_efficiency[deepspeed]", shipped=cal.gemm_efficiency["deepspeed"],
                      refit=eff,
                      fitted_to=", ".join(names)),
             RefitRow(name="host_s_per_param[deepspeed]",
                      shipped=cal.host_s_per_param["deepspeed"], refit=host,
                      fitted_to=", ".join(names))]
    trial = with_x(trial, eff, host)

    # 3. CPU AdamW throughput: the H200 rate at 8k in the offloaded sweep.
    sweep8 = "upg-sweep-8k-h200-tflops"
    cpu = _bisect(lambda x: tflops(sweep8, replace(trial, cpu_adam_params_per_s=x))
                  - measured(sweep8), 1e8, 1e12)
    rows.append(RefitRow(name="cpu_adam_params_per_s", shipped=cal.cpu_adam_params_per_s,
                         refit=cpu, fitted_to=sweep8))

    # 4. memory: the framework floor by relative least squares over the peak-memory table,
    #    and the usable fraction from the stated H200 budget.
    points = [c for c in cases if c.kind == "memory" and c.group == "upg-peak-memory"]
    unfloored = [float(predict(c, catalog, trial)[0]) - trial.framework_floor_gib
                 for c in points]
    weights = [1 / float(c.measured or 1) ** 2 for c in points]
    floor = sum(w * (float(c.measured or 0) - u) for w, c, u in zip(weights, points, unfloored,
                                                                     strict=True)) / sum(weights)
    usable = by_id["upg-h200-usable"]
    g = catalog.gpu(usable.gpu or "")
    fraction = measured(usable.id) / (g.memory.gib if g.memory else 1.0)
    rows += [RefitRow(name="framework_floor_gib", shipped=cal.framework_floor_gib, refit=floor,
                      fitted_to="upg-mem-8k .. upg-mem-256k"),
             RefitRow(name="usable_memory_fraction", shipped=cal.usable_memory_fraction,
                      refit=fraction, fitted_to=usable.id)]
    return rows
