"""Published cases: what the model predicts against what was measured, with the error stated.

Each case file (advisor/published_cases/*.toml with [[case]] entries) cites its source.
A case is *in-sample* when a calibration constant was fitted to it (its `group` is in a
constant's `fitted_to`), *input* when it only checks that a catalog figure or a formula
is passed through, and *held-out* otherwise. Only held-out cases back the accuracy
claim: end-to-end system benchmarks (MLPerf, vendor and framework performance tables)
are always held out, never fitted. Speedup cases run through `decide()`, the same path
`advisor compare` takes, and the naive predictor beside ours is the geometric mean of
the peak-FLOPS and HBM-bandwidth ratios. `refit()` solves the fitted constants again from
the cases, so the shipped values can be checked, not trusted.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from advisor.core.decide import decide
from advisor.core.economics.cost import value_per_dollar
from advisor.core.errors import InputError
from advisor.core.model.answers import Answers, split_count
from advisor.core.model.catalog import Catalog
from advisor.core.model.workload import Workload
from advisor.core.projection.calibration import CAL, AttentionCurve, Calibration
from advisor.core.projection.engine import (
    RESOURCES,
    all_reduce_busbw,
    attention_flops_per_token,
    memory_serving,
    memory_training,
)
from advisor.core.projection.layout import as_run
from advisor.core.projection.rates import PEAK_KEYS
from advisor.core.projection.retune import SideProjection, usable_gib
from advisor.core.sides import resolve_gpu, resolve_sides

Kind = Literal[
    "matmul-ratio", "speedup", "tflops", "attention-ratio", "memory", "max-seq", "usable-gib",
    "busbw", "value-per-dollar", "cheaper-by", "binding", "verdict", "kv-bytes", "kv-cache",
    "weights-gb", "fits", "report",
]
Basis = Literal["in-sample", "held-out", "input"]
Category = Literal["training", "inference", "kernel", "memory", "cost", "other"]
RATIO_KINDS = ("matmul-ratio", "speedup", "attention-ratio")
GIB = float(2**30)


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
    category: Category = "other"
    tier: int = 2
    figure: Literal["retuned", "as_run"] = "retuned"
    workload: Workload | None = None
    gpu: str | None = None
    current: str | None = None
    target: str | None = None
    measure: Literal["blended", "attention", "non-attention"] = "blended"
    seq_len: int | None = None
    dtype: str = "bf16"
    prices: dict[str, float] = {}
    power_limits_w: dict[str, float] = {}
    ranks: int | None = None
    nodes: int = 1
    payload_gib: float | None = None
    nic_gbit: float = 400.0
    speedup: float | None = None
    price_ratio: float | None = None
    overhead: float | None = None  # a KV-cache sizing's own overhead factor
    measured: float | None = None
    expected: str | bool | None = None
    tolerance: float = 0.05
    answers: Answers | None = None  # "report" cases: a whole answers file through run()
    figure_path: str | None = None  # dotted path into the report, e.g. pipeline.current.eta_days
    note: str = ""


class CaseResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    kind: str
    basis: Basis
    category: str
    group: str | None
    source: str
    predicted: float | str | bool
    measured: float | str | bool
    error: float | None  # (predicted - measured) / measured
    low: float | None  # the 90% band, speedup cases
    high: float | None
    naive: float | None  # sqrt(peak ratio x HBM ratio), for ratio cases
    naive_error: float | None
    tolerance: float
    passed: bool


class Accuracy(BaseModel):
    """Median |error| of one set of cases, ours and the naive predictor's."""

    model_config = ConfigDict(frozen=True)

    cases: int
    median: float
    group_weighted: float
    naive_median: float
    naive_group_weighted: float
    coverage: float | None  # share of cases whose measurement falls inside our 90% band


class Summary(BaseModel):
    model_config = ConfigDict(frozen=True)

    results: list[CaseResult]
    held_out: Accuracy
    held_out_training: Accuracy
    held_out_inference: Accuracy
    in_sample: Accuracy
    median_abs_error_held_out: float  # every numeric held-out case, not just speedups
    suggested_model_sigma: float  # the model sigma that makes the band hold 90% held out


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


def _answers(case: CaseSpec, w: Workload) -> Answers:
    return Answers(current=_need(case.current, case, "current"),
                   targets=[_need(case.target, case, "target")], workload=w,
                   prices=case.prices, basis=case.figure, power_limits_w=case.power_limits_w)


def _sides(case: CaseSpec, catalog: Catalog, cal: Calibration,
           gpu: str | None = None) -> list[SideProjection]:
    """Each GPU of the case (or just `gpu`) resolved like a decision's, projected as run and
    re-tuned."""
    w = _at(case)
    if gpu is not None:
        compared = [resolve_gpu(gpu, w, catalog, cal)]
    else:
        compared = resolve_sides(_answers(case, w), catalog, {}, cal)[:2]
    out = []
    for s in compared:
        projected = s.project(cal).projection
        if projected is None:
            raise InputError(f"cannot project {s.gpu.id}: {s.problem}", entry=case.id)
        out.append(projected)
    return out


def _per_token(side: SideProjection, case: CaseSpec, w: Workload) -> tuple[float, float]:
    """(seconds per token for `measure`, model FLOPs per second for it) on one side."""
    f = side.retuned if case.figure == "retuned" else side.as_run
    p = f.proj
    step, attn = float(p.step_s[0, 0]), float(p.times["attention"][0, 0])
    tokens, flops = float(p.tokens[0, 0]), float(p.model_flops[0, 0])
    keys = np.asarray([[float(w.seq_lens[0]) / 2 if w.packed_doc_len is None
                        else w.packed_doc_len / 2]])
    a_flops = float(3.0 * attention_flops_per_token(w, keys)[0, 0] * tokens)
    seconds, work = {
        "blended": (step, flops),
        "attention": (attn, a_flops),
        "non-attention": (step - attn, flops - a_flops),
    }[case.measure]
    return seconds / tokens, work / seconds


def naive_ratio(current: str, target: str, precision: str, catalog: Catalog) -> float | None:
    """The spec-sheet predictor: sqrt(peak-FLOPS ratio x HBM-bandwidth ratio)."""
    c, t = catalog.gpu(split_count(current)[0]), catalog.gpu(split_count(target)[0])

    def peak(g: Any) -> float | None:
        for k in (*PEAK_KEYS.get(precision, (precision,)), "bf16"):
            if (v := g.peak_tflops.get(k)) is not None:
                return float(v)
        twin = catalog.gpu(g.same_die_as) if g.same_die_as else None
        return peak(twin) if twin is not None else None

    pc, pt = peak(c), peak(t)
    if not (pc and pt and c.memory and t.memory):
        return None
    return math.sqrt(pt / pc * t.memory.bandwidth_tbps / c.memory.bandwidth_tbps)


def _naive(case: CaseSpec, catalog: Catalog) -> float | None:
    if case.kind == "matmul-ratio":
        c, t = catalog.gpu(_need(case.current, case, "current")), catalog.gpu(
            _need(case.target, case, "target"))
        pc, pt = c.peak_tflops.get(case.dtype), t.peak_tflops.get(case.dtype)
        return pt / pc if pc and pt else None
    precision = case.workload.precision if case.workload else case.dtype
    return naive_ratio(_need(case.current, case, "current"),
                       _need(case.target, case, "target"), precision, catalog)


def _speedup(case: CaseSpec, catalog: Catalog, cal: Calibration
             ) -> tuple[float, float | None, float | None]:
    """(speedup, band low, band high) the way `advisor compare` reports them."""
    w = _at(case)
    if case.measure != "blended":
        a, b = _sides(case, catalog, cal)
        return _per_token(a, case, w)[0] / _per_token(b, case, w)[0], None, None
    d = decide(_answers(case, w), catalog, cal=cal)
    p = d.targets[0].sweep[0]
    if p.speedup is None:
        raise InputError("the model cannot project this case (a gate or no fit)",
                         entry=case.id)
    return p.speedup, p.speedup_low, p.speedup_high


def predict(case: CaseSpec, catalog: Catalog, cal: Calibration = CAL
            ) -> tuple[float | str | bool, float | None, float | None]:
    """The model's number (or category) for one case, with its band where it has one."""
    k = case.kind
    if k == "speedup":
        return _speedup(case, catalog, cal)
    if k == "report":
        from advisor.core.entry import run

        report = run(_need(case.answers, case, "answers"), catalog, cal=cal)
        value: Any = report.model_dump()
        for part in _need(case.figure_path, case, "figure_path").split("."):
            value = value[int(part)] if isinstance(value, list) else value[part]
        return float(value), None, None
    if k == "matmul-ratio":  # the catalog's published best-shape figures, passed through
        c, t = (catalog.gpu(_need(x, case, f)) for x, f in ((case.current, "current"),
                                                             (case.target, "target")))
        mc, mt = c.mamf.get(case.dtype), t.mamf.get(case.dtype)  # type: ignore[call-overload]
        return (mt.tflops / mc.tflops if mc and mt else float("nan")), None, None
    if k == "attention-ratio":
        s = float(_need(case.seq_len, case, "seq_len"))
        w = _at(case)
        a = Answers(current=_need(case.current, case, "current"),
                    targets=[_need(case.target, case, "target")], workload=w)
        pair = [x.rates for x in resolve_sides(a, catalog, {}, cal)]
        speed = [r.attn_fb_tflops * s / (s + r.attn_s_half) for r in pair if r is not None]
        return speed[1] / speed[0], None, None
    if k == "tflops":
        side = _sides(case, catalog, cal, gpu=_need(case.gpu, case, "gpu"))[0]
        return _per_token(side, case, _at(case))[1] / 1e12, None, None
    if k in ("memory", "max-seq", "fits"):
        w = _need(case.workload, case, "workload")
        gpu = catalog.gpu(_need(case.gpu, case, "gpu"))
        grid = as_run(w)
        if k == "memory":
            at = np.asarray([[float(_need(case.seq_len, case, "seq_len"))]])
            mem = memory_training(w, grid, at, cal) if w.training else memory_serving(w, grid, at,
                                                                                      cal)
            return float(mem[0, 0]), None, None
        sd = _sides(case.model_copy(update={"figure": "as_run"}), catalog, cal, gpu=gpu.id)[0]
        if k == "max-seq":
            return float(sd.max_seq_as_run or 0), None, None
        return sd.as_run.fits[0], None, None
    if k == "usable-gib":
        g = catalog.gpu(_need(case.gpu, case, "gpu"))
        return usable_gib(g.memory.gib if g.memory else 0.0, cal), None, None
    if k == "busbw":
        n = _need(case.ranks, case, "ranks")
        gpu = catalog.gpu(_need(case.gpu, case, "gpu"))
        w = Workload(model="llama-3.1-8b", seq_lens=[1], gpus=n, nodes=case.nodes,
                     nic_gbit=case.nic_gbit)
        rates = resolve_gpu(gpu.id, w, catalog, cal).rates
        size = _need(case.payload_gib, case, "payload_gib") * GIB
        assert rates is not None
        return all_reduce_busbw(rates, n, n // case.nodes, size, cal) / 1e9, None, None
    if k in ("value-per-dollar", "cheaper-by"):
        v = value_per_dollar(_need(case.speedup, case, "speedup"),
                             _need(case.price_ratio, case, "price_ratio"))
        return (v if k == "value-per-dollar" else 1.0 - 1.0 / v), None, None
    if k == "binding":
        side = _sides(case, catalog, cal, gpu=_need(case.gpu, case, "gpu"))[0]
        f = side.retuned if case.figure == "retuned" else side.as_run
        return RESOURCES[int(f.proj.resource_time()[:, 0, 0].argmax())], None, None
    if k == "verdict":
        verdict = decide(_answers(case, _need(case.workload, case, "workload")), catalog,
                         cal=cal).targets[0].verdict
        return (verdict.kind if verdict else "none"), None, None
    w = _need(case.workload, case, "workload")
    if k == "kv-bytes":
        return float(w.model.kv_elems_per_token * 2), None, None
    grid = as_run(w)
    if k == "kv-cache":  # raw KV bytes of the batch, times the sizing's own overhead factor
        raw = w.model.kv_elems_per_token * w.kv_bytes * w.seq_lens[0] * w.micro_batch
        return float(raw * (case.overhead or 1.0) / 1e9), None, None
    from advisor.core.model.workload import WEIGHT_BYTES
    from advisor.core.projection.engine import local_params
    return float(local_params(w, grid)[0, 0] * WEIGHT_BYTES[w.precision] / 1e9), None, None


def evaluate(case: CaseSpec, catalog: Catalog, groups: set[str], cal: Calibration = CAL
             ) -> CaseResult:
    predicted, low, high = predict(case, catalog, cal)
    basis = _basis(case, groups)
    common = dict(id=case.id, title=case.title, kind=case.kind, basis=basis,
                  category=case.category, group=case.group, source=case.source)
    if case.measured is None:
        expected = _need(case.expected, case, "expected")
        return CaseResult(**common, predicted=predicted, measured=expected, error=None,
                          low=None, high=None, naive=None, naive_error=None, tolerance=0.0,
                          passed=predicted == expected)
    value = float(predicted)
    error = (value - case.measured) / case.measured
    naive = _naive(case, catalog) if case.kind in RATIO_KINDS else None
    naive_error = (naive - case.measured) / case.measured if naive is not None else None
    return CaseResult(**common, predicted=value, measured=case.measured, error=error, low=low,
                      high=high, naive=naive, naive_error=naive_error, tolerance=case.tolerance,
                      passed=abs(error) <= case.tolerance)


def _median_abs(values: list[float | None]) -> float:
    present = [abs(v) for v in values if v is not None and math.isfinite(v)]
    return statistics.median(present) if present else float("nan")


def _group_weighted(results: list[CaseResult], key: Callable[[CaseResult], float | None]
                    ) -> float:
    """The median over groups of each group's median |error|: one source counts once."""
    groups: dict[str, list[float | None]] = {}
    for r in results:
        groups.setdefault(r.group or r.id, []).append(key(r))
    per = [_median_abs(v) for v in groups.values()]
    per = [p for p in per if math.isfinite(p)]
    return statistics.median(per) if per else float("nan")


def _accuracy(results: list[CaseResult]) -> Accuracy:
    banded = [r for r in results if r.low is not None and r.high is not None]
    inside = [r for r in banded if r.low <= float(r.measured) <= r.high]  # type: ignore[operator]
    return Accuracy(
        cases=len(results), median=_median_abs([r.error for r in results]),
        group_weighted=_group_weighted(results, lambda r: r.error),
        naive_median=_median_abs([r.naive_error for r in results]),
        naive_group_weighted=_group_weighted(results, lambda r: r.naive_error),
        coverage=len(inside) / len(banded) if banded else None)


def _suggested_sigma(results: list[CaseResult], cal: Calibration) -> float:
    """The model sigma whose band, added to each case's rate spread, holds 90% of them."""
    need = []
    for r in results:
        if r.low is None or r.high is None or r.error is None:
            continue
        total = math.log(r.high / float(r.predicted)) / 1.645
        rates = math.sqrt(max(total**2 - cal.model_sigma**2, 0.0))
        miss = abs(math.log(float(r.predicted) / float(r.measured))) / 1.645
        need.append(math.sqrt(max(miss**2 - rates**2, 0.0)))
    if not need:
        return cal.model_sigma
    return float(np.quantile(need, 0.9))


def validate(catalog: Catalog, cases: list[CaseSpec], cal: Calibration = CAL) -> Summary:
    groups = fitted_groups(cal)
    results = [evaluate(c, catalog, groups, cal) for c in cases]
    numeric = [r for r in results if r.error is not None]
    speedups = [r for r in numeric if r.kind == "speedup"]
    held = [r for r in speedups if r.basis == "held-out"]
    return Summary(
        results=results, held_out=_accuracy(held),
        held_out_training=_accuracy([r for r in held if r.category == "training"]),
        held_out_inference=_accuracy([r for r in held if r.category == "inference"]),
        in_sample=_accuracy([r for r in speedups if r.basis == "in-sample"]),
        median_abs_error_held_out=_median_abs([r.error for r in numeric
                                               if r.basis == "held-out"]),
        suggested_model_sigma=_suggested_sigma(held, cal),
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
    """Solve every fitted constant again from its kernel-level cases, in dependency order.

    Only the seed guide's step decomposition, its attention kernel ratios and its memory
    table are fitted; the held-out model sigma is reported from the validation spread.
    """
    by_id = {c.id: c for c in cases}
    rows: list[RefitRow] = []

    def measured(case_id: str) -> float:
        return float(_need(by_id[case_id].measured, by_id[case_id], "measured"))

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
