"""Published cases: what the model predicts against what was measured, with the error stated.

Each case file (advisor/published_cases/*.toml with [[case]] entries) cites its source. A
case is *in-sample* when a calibration constant was fitted to it (its `group`
is in a constant's `fitted_to`), *input* when it only checks a catalog figure
is passed through, and *held-out* otherwise; only held-out cases back the
accuracy claim. A naive predictor, the ratio of spec-sheet peaks, is scored
beside ours on every speedup case. `refit()` solves the fitted constants again
from the case files, so the shipped values can be checked, not trusted.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from advisor.core.decide import decide
from advisor.core.economics.cost import value_per_dollar
from advisor.core.errors import InputError
from advisor.core.model.answers import Answers
from advisor.core.model.catalog import Catalog, Gpu
from advisor.core.model.workload import Workload
from advisor.core.projection.calibration import CAL, AttentionCurve, Calibration
from advisor.core.projection.memory import GIB, fit, memory_model, usable_gib
from advisor.core.projection.rates import resolve_rates
from advisor.core.projection.roofline import (
    RESOURCES,
    Hardware,
    all_reduce_time,
    attention_flops_per_token,
    simulate,
)

Kind = Literal[
    "matmul-ratio", "speedup", "tflops", "attention-ratio", "memory", "max-seq", "usable-gib",
    "busbw", "value-per-dollar", "cheaper-by", "binding", "verdict", "kv-bytes", "kv-cache",
    "weights-gb", "fits",
]
Basis = Literal["in-sample", "held-out", "input"]
RATIO_KINDS = ("matmul-ratio", "speedup", "attention-ratio")


class CaseSpec(BaseModel):
    """One published figure and how to reproduce it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    kind: Kind
    title: str
    source: str
    file: str = ""
    group: str | None = None
    basis: Literal["input"] | None = None
    workload: Workload | None = None
    gpu: str | None = None
    current: str | None = None
    target: str | None = None
    measure: Literal["blended", "attention", "non-attention"] = "blended"
    seq_len: int | None = None
    dtype: str = "bf16"
    prices: dict[str, float] = {}
    ranks: int | None = None
    nodes: int = 1
    payload_gib: float | None = None
    nic_gbit: float = 400.0
    speedup: float | None = None
    price_ratio: float | None = None
    measured: float | None = None
    expected: str | bool | None = None
    tolerance: float = 0.05


class CaseResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    kind: str
    basis: Basis
    source: str
    predicted: float | str | bool
    measured: float | str | bool
    error: float | None  # (predicted - measured) / measured
    naive: float | None  # spec-sheet peak ratio, for speedup cases
    naive_error: float | None
    tolerance: float
    passed: bool


class Summary(BaseModel):
    model_config = ConfigDict(frozen=True)

    results: list[CaseResult]
    median_abs_error: float  # every numeric case
    median_abs_error_held_out: float
    median_abs_error_speedups: float  # held-out and in-sample speedup-type cases
    median_abs_naive_error_speedups: float
    median_abs_error_speedups_held_out: float
    median_abs_naive_error_speedups_held_out: float


def fitted_groups(cal: Calibration = CAL) -> set[str]:
    groups = {g for note in cal.notes().values() for g in note.fitted_to}
    return groups | {g for curve in cal.attention.values() for g in curve.fitted_to}


def _basis(case: CaseSpec, groups: set[str]) -> Basis:
    if case.basis == "input":
        return "input"
    return "in-sample" if case.group in groups else "held-out"


def _need(value: Any, case: CaseSpec, field: str) -> Any:
    if value is None:
        raise InputError(f"a {case.kind} case needs {field}", entry=case.id, field=field)
    return value


def _at(case: CaseSpec) -> Workload:
    w: Workload = _need(case.workload, case, "workload")
    seq = case.seq_len or w.seq_lens[0]
    return w.model_copy(update={"seq_lens": [seq]})


def _per_token_times(
    case: CaseSpec, gpus: list[Gpu], cal: Calibration
) -> list[tuple[float, float]]:
    """(seconds per token for `measure`, model FLOPs per second for it) on each GPU."""
    w = _at(case)
    rates = [resolve_rates(g, w, cal=cal) for g in gpus]
    p = simulate(w, rates, w.seq_lens, cal)
    attn_flops = 3.0 * attention_flops_per_token(w, p.seq.reshape(1, -1)) * p.tokens
    out = []
    for row in range(len(gpus)):
        step, attn = float(p.step_s[row, 0]), float(p.times["attention"][row, 0])
        tokens, flops = float(p.tokens[row, 0]), float(p.model_flops[row, 0])
        a_flops = float(attn_flops[row, 0])
        seconds, work = {
            "blended": (step, flops),
            "attention": (attn, a_flops),
            "non-attention": (step - attn, flops - a_flops),
        }[case.measure]
        out.append((seconds / tokens, work / seconds))
    return out


def _naive(case: CaseSpec, catalog: Catalog) -> float | None:
    c, t = catalog.gpu(_need(case.current, case, "current")), catalog.gpu(
        _need(case.target, case, "target"))
    key = case.workload.precision if case.workload else case.dtype
    key = case.dtype if case.kind == "matmul-ratio" else key
    pc, pt = c.peak_tflops.get(key), t.peak_tflops.get(key)
    return pt / pc if pc and pt else None


def predict(case: CaseSpec, catalog: Catalog, cal: Calibration = CAL) -> float | str | bool:
    """The model's number (or category) for one case."""
    k = case.kind
    if k in ("speedup", "attention-ratio", "matmul-ratio"):
        pair = [catalog.gpu(_need(case.current, case, "current")),
                catalog.gpu(_need(case.target, case, "target"))]
        if k == "speedup":
            (cur, _), (tgt, _) = _per_token_times(case, pair, cal)
            return cur / tgt
        w = _at(case) if case.workload else None
        if k == "matmul-ratio":
            probe_w = Workload(model="llama-3.1-8b", seq_lens=[1], precision=case.dtype)
            r = [resolve_rates(g, probe_w, cal=cal) for g in pair]
            return r[1].gemm_tflops / r[0].gemm_tflops
        s = float(_need(case.seq_len, case, "seq_len"))
        r = [resolve_rates(g, _need(w, case, "workload"), cal=cal) for g in pair]
        speed = [x.attn_max_tflops * s / (s + x.attn_s_half) for x in r]
        return speed[1] / speed[0]
    if k == "tflops":
        ((_, rate),) = _per_token_times(case, [catalog.gpu(_need(case.gpu, case, "gpu"))], cal)
        return rate / 1e12
    if k in ("memory", "max-seq", "fits"):
        w = _need(case.workload, case, "workload")
        mem = memory_model(w, cal)
        gpu = catalog.gpu(_need(case.gpu, case, "gpu"))
        if k == "memory":
            return mem.total_gib(_need(case.seq_len, case, "seq_len"))
        result = fit(mem, gpu, w.seq_lens, cal)
        return float(result.max_seq_len or 0) if k == "max-seq" else result.fits[0]
    if k == "usable-gib":
        return usable_gib(catalog.gpu(_need(case.gpu, case, "gpu")), cal)
    if k == "busbw":
        n = _need(case.ranks, case, "ranks")
        gpu = catalog.gpu(_need(case.gpu, case, "gpu"))
        w = Workload(model="llama-3.1-8b", seq_lens=[1], gpus=n, nodes=case.nodes,
                     nic_gbit=case.nic_gbit)
        hw = Hardware.of([resolve_rates(gpu, w, cal=cal)])
        size = _need(case.payload_gib, case, "payload_gib") * GIB
        t = float(all_reduce_time(size, n, 1, n // case.nodes, hw)[0, 0])
        return size * 2 * (n - 1) / n / t / 1e9
    if k in ("value-per-dollar", "cheaper-by"):
        v = value_per_dollar(_need(case.speedup, case, "speedup"),
                             _need(case.price_ratio, case, "price_ratio"))
        return v if k == "value-per-dollar" else 1.0 - 1.0 / v
    if k == "binding":
        w = _at(case)
        p = simulate(w, [resolve_rates(catalog.gpu(_need(case.gpu, case, "gpu")), w, cal=cal)],
                     w.seq_lens, cal)
        return RESOURCES[int(p.resource_time()[:, 0, 0].argmax())]
    if k == "verdict":
        answers = Answers(current=_need(case.current, case, "current"),
                          targets=[_need(case.target, case, "target")],
                          workload=_need(case.workload, case, "workload"), prices=case.prices)
        verdict = decide(answers, catalog, cal=cal).targets[0].verdict
        return verdict.kind if verdict else "none"
    w = _need(case.workload, case, "workload")
    if k == "kv-bytes":
        return float(w.model.kv_elems_per_token * 2)
    if k == "kv-cache":
        return memory_model(w, cal).per_token_gib * w.seq_lens[0] * GIB / 1e9
    return memory_model(w, cal).weights_gib * GIB / 1e9  # weights-gb


def evaluate(
    case: CaseSpec, catalog: Catalog, groups: set[str], cal: Calibration = CAL
) -> CaseResult:
    predicted = predict(case, catalog, cal)
    basis = _basis(case, groups)
    if case.measured is None:
        expected = _need(case.expected, case, "expected")
        return CaseResult(id=case.id, title=case.title, kind=case.kind, basis=basis,
                          source=case.source, predicted=predicted, measured=expected, error=None,
                          naive=None, naive_error=None, tolerance=0.0,
                          passed=predicted == expected)
    value = float(predicted)
    error = (value - case.measured) / case.measured
    naive = _naive(case, catalog) if case.kind in RATIO_KINDS else None
    naive_error = (naive - case.measured) / case.measured if naive is not None else None
    return CaseResult(id=case.id, title=case.title, kind=case.kind, basis=basis,
                      source=case.source, predicted=value, measured=case.measured, error=error,
                      naive=naive, naive_error=naive_error, tolerance=case.tolerance,
                      passed=abs(error) <= case.tolerance)


def _median_abs(values: list[float | None]) -> float:
    present = [abs(v) for v in values if v is not None]
    return statistics.median(present) if present else float("nan")


def validate(catalog: Catalog, cases: list[CaseSpec], cal: Calibration = CAL) -> Summary:
    groups = fitted_groups(cal)
    results = [evaluate(c, catalog, groups, cal) for c in cases]
    numeric = [r for r in results if r.error is not None]
    held = [r for r in numeric if r.basis == "held-out"]
    ratios = [r for r in numeric if r.naive is not None and r.basis != "input"]
    held_ratios = [r for r in ratios if r.basis == "held-out"]
    return Summary(
        results=results,
        median_abs_error=_median_abs([r.error for r in numeric]),
        median_abs_error_held_out=_median_abs([r.error for r in held]),
        median_abs_error_speedups=_median_abs([r.error for r in ratios]),
        median_abs_naive_error_speedups=_median_abs([r.naive_error for r in ratios]),
        median_abs_error_speedups_held_out=_median_abs([r.error for r in held_ratios]),
        median_abs_naive_error_speedups_held_out=_median_abs([r.naive_error for r in held_ratios]),
    )


# --- refitting the fitted constants from the case files ------------------------------------------


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
    """Solve every fitted constant again from its cases, in dependency order."""
    by_id = {c.id: c for c in cases}
    rows: list[RefitRow] = []

    def measured(case_id: str) -> float:
        return float(_need(by_id[case_id].measured, by_id[case_id], "measured"))

    # 1. attention curves: FA3 from its in-step 8k rate; FA4's half point from the isolated
    #    ratio's growth 8k -> 32k, then its height from its in-step 8k rate.
    h200, b200 = catalog.gpu("h200-sxm"), catalog.gpu("b200-sxm")
    fa3, fa4 = cal.attention[("fa3", "hopper")], cal.attention[("fa4", "blackwell")]
    s8 = 8192.0
    e3 = measured("upg-8k-h200-attn-tflops") * (s8 + fa3.s_half) / s8 / (h200.peak_tflops.bf16 or 1)
    growth = measured("upg-fa-isolated-32k") / measured("upg-fa-isolated-8k")

    def ratio_growth(s_half: float, big: float = 32768.0) -> float:
        return ((big / (big + s_half)) / (s8 / (s8 + s_half))
                / ((big / (big + fa3.s_half)) / (s8 / (s8 + fa3.s_half))))

    s4 = _bisect(lambda x: ratio_growth(x) - growth, fa3.s_half, 1e5)
    e4 = measured("upg-8k-b200-attn-tflops") * (s8 + s4) / s8 / (b200.peak_tflops.bf16 or 1)
    attention = dict(cal.attention)
    attention[("fa3", "hopper")] = AttentionCurve(e3, fa3.s_half, fa3.sigma, fa3.source,
                                                  fa3.fitted_to)
    attention[("fa4", "blackwell")] = AttentionCurve(e4, s4, fa4.sigma, fa4.source, fa4.fitted_to)
    rows += [RefitRow(name="attention fa3/hopper e_max", shipped=fa3.e_max, refit=e3,
                      fitted_to="upg-8k-h200-attn-tflops"),
             RefitRow(name="attention fa4/blackwell e_max", shipped=fa4.e_max, refit=e4,
                      fitted_to="upg-8k-b200-attn-tflops"),
             RefitRow(name="attention fa4/blackwell s_half", shipped=fa4.s_half, refit=s4,
                      fitted_to="upg-fa-isolated-8k, upg-fa-isolated-32k")]
    trial = replace(cal, attention=attention)

    # 2. GEMM efficiency and host overhead: the non-attention bucket is linear in
    #    (1 / efficiency, seconds per layer), so three evaluations pin both.
    rest = [by_id["upg-8k-h200-rest-tflops"], by_id["upg-8k-b200-rest-tflops"]]
    gpus = [h200, b200]

    def rest_seconds(c: Calibration) -> list[float]:
        return [_per_token_times(case, [g], c)[0][0] for case, g in zip(rest, gpus, strict=True)]

    goal = [_per_token_times(case, [g], trial)[0][0] * _per_token_times(case, [g], trial)[0][1]
            / (measured(case.id) * 1e12) for case, g in zip(rest, gpus, strict=True)]
    x0, h0 = 1 / trial.gemm_efficiency, trial.host_s_per_param
    base = rest_seconds(trial)
    dx = rest_seconds(replace(trial, gemm_efficiency=1 / (x0 * 1.1)))
    dh = rest_seconds(replace(trial, host_s_per_param=h0 * 1.1))
    a = [(dx[i] - base[i]) / (0.1 * x0) for i in range(2)]
    b = [(dh[i] - base[i]) / (0.1 * h0) for i in range(2)]
    r = [goal[i] - base[i] for i in range(2)]
    det = a[0] * b[1] - a[1] * b[0]
    x = x0 + (r[0] * b[1] - r[1] * b[0]) / det
    host = h0 + (a[0] * r[1] - a[1] * r[0]) / det
    rows += [RefitRow(name="gemm_efficiency", shipped=cal.gemm_efficiency, refit=1 / x,
                      fitted_to="upg-8k-h200/b200-rest-tflops"),
             RefitRow(name="host_s_per_param", shipped=cal.host_s_per_param, refit=host,
                      fitted_to="upg-8k-h200/b200-rest-tflops")]
    trial = replace(trial, gemm_efficiency=1 / x, host_s_per_param=host)

    # 3. CPU AdamW throughput: the H200 rate at 8k in the offloaded sweep.
    sweep8 = by_id["upg-sweep-8k-h200-tflops"]
    target_tflops = measured(sweep8.id)

    def sweep_gap(rate: float) -> float:
        c = replace(trial, cpu_adam_params_per_s=rate)
        return _per_token_times(sweep8, [h200], c)[0][1] / 1e12 - target_tflops

    cpu = _bisect(sweep_gap, 1e8, 1e12)
    rows.append(RefitRow(name="cpu_adam_params_per_s", shipped=cal.cpu_adam_params_per_s,
                         refit=cpu, fitted_to=sweep8.id))

    # 4. memory: the framework floor by relative least squares over the peak-memory table,
    #    and the usable fraction from the stated H200 budget.
    points = [c for c in cases if c.kind == "memory" and c.group == "upg-peak-memory"]
    unfloored = [memory_model(_need(c.workload, c, "workload"), trial).total_gib(c.seq_len or 0)
                 - trial.framework_floor_gib for c in points]
    weights = [1 / float(c.measured or 1) ** 2 for c in points]
    floor = sum(w * (float(c.measured or 0) - u) for w, c, u in zip(weights, points, unfloored,
                                                                     strict=True)) / sum(weights)
    usable = by_id["upg-h200-usable"]
    fraction = measured(usable.id) / (catalog.gpu(usable.gpu or "").memory.gib  # type: ignore[union-attr]
                                      if usable.gpu else 1)
    rows += [RefitRow(name="framework_floor_gib", shipped=cal.framework_floor_gib, refit=floor,
                      fitted_to="upg-mem-8k .. upg-mem-256k"),
             RefitRow(name="usable_memory_fraction", shipped=cal.usable_memory_fraction,
                      refit=fraction, fitted_to=usable.id)]
    return rows
