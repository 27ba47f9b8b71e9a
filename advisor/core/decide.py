"""decide(): answers + catalog (+ probe records) -> a Decision both front ends render.

The steps follow the upgrade guide: gate each GPU on number formats and
software, resolve achievable rates from the best evidence, run the per-bucket
roofline over the sequence-length sweep, fit memory, price every point, and
judge each target against the current GPU. Every projection carries the
rates it used and where they came from, so nothing in a report is a bare
number.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from advisor.core.economics.cost import (
    BuyBack,
    CurrentScaling,
    JobCost,
    PriceQuote,
    break_even_price,
    buy_back,
    gpu_power_w,
    job_cost,
    quote,
    usd_per_mtok,
)
from advisor.core.economics.verdict import Case, Verdict, judge
from advisor.core.errors import InputError
from advisor.core.gates.dtype import DtypeGate, check_dtype
from advisor.core.gates.software import SoftwareGate, check_software
from advisor.core.model.answers import Answers
from advisor.core.model.catalog import Catalog, Gpu
from advisor.core.model.probe_record import ProbeRecord
from advisor.core.model.stack import ATTENTION_KERNELS
from advisor.core.projection.calibration import BETA_KERNEL_SIGMA, CAL, Calibration
from advisor.core.projection.memory import MemoryFit, MemoryModel, fit, memory_model
from advisor.core.projection.rates import (
    PEAK_KEYS,
    Evidence,
    GpuRates,
    resolve_rates,
    transfer_efficiency,
)
from advisor.core.projection.roofline import (
    BUCKETS,
    COMPUTE,
    MEMORY,
    RESOURCES,
    Projection,
    simulate,
)
from advisor.core.projection.uncertainty import band, log_sigma

Binding = Literal["compute", "memory", "network", "host", "capacity"]
WEAK_SOURCES = ("transferred-efficiency", "generic-kernel-ratio")
EFFICIENCY_GRID = np.geomspace(0.05, 20.0, 400)


class SweepPoint(BaseModel):
    model_config = ConfigDict(frozen=True)

    seq_len: int
    fits: bool
    memory_gib: float
    runnable: bool  # passes the gates, can be projected and fits in memory
    step_s: float | None
    tokens_per_s_per_gpu: float | None
    tokens_per_s_cluster: float | None
    mfu: float | None
    binding: Binding | None
    # per bucket (dense, attention, elementwise, optimizer, communication, overhead), per step:
    bucket_seconds: dict[str, float]
    bucket_binding: dict[str, str]
    bucket_speedup: dict[str, float]  # current time per token over this GPU's, where both > 0
    bucket_flops_per_token: dict[str, float]  # hardware FLOPs (recompute included)
    bucket_bytes_per_token: dict[str, float]  # HBM bytes, or host/network bytes for those buckets
    usd_per_mtok: float | None
    speedup: float | None
    speedup_low: float | None
    speedup_high: float | None


class Assumptions(BaseModel):
    """What a projection rests on, for the reader to check."""

    model_config = ConfigDict(frozen=True)

    rate_sources: dict[str, str]  # quantity -> probe | catalog-mamf | transferred-efficiency | ...
    evidence: list[Evidence]
    attention_kernel: str
    gemm_efficiency: float
    achieved_mfu: float | None  # at the primary sequence length
    overlap: float
    host_s_per_param: float
    pipeline_bubble: float
    probe: str | None  # the record's date and host when one was used
    probe_torch: str | None  # the torch the record was measured with
    price: PriceQuote | None


class GpuResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    gpu: str
    name: str
    role: Literal["current", "target"]
    dtype_gate: DtypeGate
    software_gate: SoftwareGate | None
    projectable: bool
    problem: str | None
    assumptions: Assumptions | None
    memory: MemoryFit
    sweep: list[SweepPoint]
    job: JobCost | None
    power_w: float | None
    break_even_usd_per_hour: float | None = None
    break_even_efficiency: float | None = None
    buy_back: BuyBack | None = None
    verdict: Verdict | None = None

    def point(self, seq_len: int) -> SweepPoint:
        return next(p for p in self.sweep if p.seq_len == seq_len)


class Decision(BaseModel):
    model_config = ConfigDict(frozen=True)

    answers: Answers
    primary_seq_len: int
    memory_model: MemoryModel
    electricity_source: Literal["user", "default"]
    band_level: float
    current: GpuResult
    targets: list[GpuResult]
    notes: list[str]


class _Table:
    """A projection flattened to Python lists once, so building points costs no numpy calls."""

    def __init__(self, p: Projection, ref: int | None) -> None:
        shape = p.step_s.shape
        self.step = p.step_s.tolist()
        self.tokens_per_s = p.tokens_per_s.tolist()
        self.mfu = (p.model_flops / p.step_s / p.peak).tolist()
        spent = p.resource_time()
        self.binding = np.argmax(spent, axis=0).tolist()
        self.busy = ((spent[COMPUTE] + spent[MEMORY]) / spent.sum(axis=0)).tolist()
        self.seconds = {b: np.broadcast_to(p.times[b], shape).tolist() for b in BUCKETS}
        self.codes = {b: np.broadcast_to(p.binding[b], shape).astype(int).tolist() for b in BUCKETS}
        self.flops = {b: (v / p.tokens).tolist() for b, v in p.flops.items()}
        self.bytes = {b: (v / p.tokens).tolist() for b, v in p.bytes.items()}
        self.speedup: dict[str, list[list[float]]] = {}
        if ref is not None:
            per_token = {b: np.broadcast_to(p.times[b], shape) / p.tokens for b in BUCKETS}
            with np.errstate(divide="ignore", invalid="ignore"):
                for b, t in per_token.items():
                    self.speedup[b] = np.where((t > 0) & (t[ref] > 0), t[ref] / t, 0.0).tolist()


def _break_even_efficiency(p: Projection, row: int, ref: int, cols: list[int],
                           price_ratio: float) -> float | None:
    """The multiple of the assumed matmul/attention rates at which $/token ties.

    Judged like the verdict: the geometric-mean speedup over the sweep points where
    both GPUs run, so the flip and the verdict never disagree about the basis.
    """
    log_speed = np.zeros_like(EFFICIENCY_GRID)
    for col in cols:
        cur_s_per_tok = p.step_s[ref, col] / p.tokens[ref, col]
        tgt_s_per_tok = p.step_at_compute_scale(row, col, EFFICIENCY_GRID) / p.tokens[row, col]
        log_speed += np.log(cur_s_per_tok / tgt_s_per_tok)
    speed = np.exp(log_speed / len(cols))
    ok = np.nonzero(speed >= price_ratio)[0]
    return float(EFFICIENCY_GRID[ok[0]]) if len(ok) and ok[0] > 0 else None


def _widen_for_beta(rates: GpuRates | None, gate: SoftwareGate | None) -> GpuRates | None:
    """A beta attention kernel's speed is less certain: add its spread to the attention sigma."""
    if rates is None or gate is None or not any(
            f.status == "beta" and f.package in ATTENTION_KERNELS for f in gate.findings):
        return rates
    sigmas = dict(rates.sigmas)
    sigmas["attention"] = math.hypot(sigmas["attention"], BETA_KERNEL_SIGMA)
    return rates.model_copy(update={"sigmas": sigmas})


def _gate_text(gate: SoftwareGate) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(blocking summary, fix, warnings) from a software gate."""
    actions = "; ".join(f.action for f in gate.findings if f.action)
    if gate.status == "blocked":
        return gate.summary, actions or None, ()
    warns = tuple(f.message for f in gate.findings if f.status not in ("ok",))
    return None, None, warns


def decide(
    answers: Answers,
    catalog: Catalog,
    probes: Mapping[str, ProbeRecord] | None = None,
    cal: Calibration = CAL,
) -> Decision:
    """Project the workload on the current GPU and every target, and judge each target."""
    w = answers.workload
    current = catalog.gpu(answers.current)
    targets: list[Gpu] = []
    for t in answers.targets:
        g = catalog.gpu(t)
        if g.id != current.id and g not in targets:
            targets.append(g)
    if not targets:
        raise InputError("no target differs from the current GPU", field="targets",
                         value=answers.targets)
    gpus = [current, *targets]
    by_id = {catalog.gpu(k).id: v for k, v in (probes or {}).items()}
    dtype_gates = [check_dtype(g, catalog.arch_of(g), w.precision) for g in gpus]
    soft = [check_software(answers.stack, g, catalog, precision=w.precision) if answers.stack
            else None for g in gpus]

    key = next((k for k in PEAK_KEYS[w.precision] if current.peak_tflops.get(k)), "bf16")
    donor = transfer_efficiency(current, by_id.get(current.id), key)
    rates: list[GpuRates | None] = []
    problems: list[str | None] = []
    for g in gpus:
        try:
            rates.append(resolve_rates(g, w, by_id.get(g.id), None if g is current else donor, cal))
            problems.append(None)
        except InputError as exc:
            rates.append(None)
            problems.append(exc.message)
    if rates[0] is None and dtype_gates[0].passed:
        raise InputError(f"cannot project the current GPU: {problems[0]}", entry=current.id)
    rates = [_widen_for_beta(r, gate) for r, gate in zip(rates, soft, strict=True)]

    rows = [i for i, r in enumerate(rates) if r is not None]
    live = [r for r in rates if r is not None]
    proj = simulate(w, live, w.seq_lens, cal) if live else None
    row_of = {i: n for n, i in enumerate(rows)}
    ref = row_of.get(0)
    sigma = log_sigma(proj, live, ref, cal) if proj is not None and ref is not None else None
    speed = lows = highs = None
    if proj is not None and ref is not None and sigma is not None:
        speed = proj.tokens_per_s / proj.tokens_per_s[ref]
        lows, highs = band(speed, sigma)

    mem = memory_model(w, cal)
    fits = [fit(mem, g, w.seq_lens, cal) for g in gpus]
    runnable = [[dtype_gates[i].passed and rates[i] is not None and f for f in fits[i].fits]
                for i in range(len(gpus))]
    quotes = [quote(g.id, answers.prices, catalog) for g in gpus]
    table = _Table(proj, ref) if proj is not None else None
    bands = None
    if speed is not None and lows is not None and highs is not None:
        bands = (speed.tolist(), lows.tolist(), highs.tolist())
    results: list[GpuResult] = []
    for i, g in enumerate(gpus):
        row = row_of.get(i)
        sweep = [
            _point(table, row, col, s, fits[i], runnable[i][col], runnable[0][col],
                   quotes[i], w.gpus, bands)
            for col, s in enumerate(w.seq_lens)
        ]
        results.append(_result(i, g, rates[i], row, proj, table, fits[i], sweep, dtype_gates[i],
                               soft[i], problems[i], quotes[i], by_id.get(g.id), answers, cal))

    cur = results[0]
    scaling = None
    if rates[0] is not None and any(runnable[0]):
        scaling = CurrentScaling(w, rates[0], w.seq_lens[runnable[0].index(True)], cal)
    judged = [_judge_target(res, cur, proj, row_of.get(k + 1), ref, scaling, answers)
              for k, res in enumerate(results[1:])]
    notes = [
        "speedup_low/high: a 90% band (+-1.645 sigma) from each assumption's spread plus the "
        f"model's own error ({cal.model_sigma:.0%})",
        "speedups compare tokens/s per GPU at the same GPU count; buy_back prices more of the "
        "current GPU instead",
    ]
    if answers.electricity_is_default:
        notes.append(f"electricity at the default ${answers.electricity_usd_per_kwh}/kWh")
    return Decision(
        answers=answers, primary_seq_len=w.seq_lens[0], memory_model=mem,
        electricity_source="default" if answers.electricity_is_default else "user",
        band_level=0.9, current=cur, targets=judged, notes=notes,
    )


def _point(
    t: _Table | None, row: int | None, col: int, seq_len: int, memfit: MemoryFit, runnable: bool,
    compare: bool, q: PriceQuote | None, gpus: int,
    band: tuple[list[list[float]], list[list[float]], list[list[float]]] | None,
) -> SweepPoint:
    """One GPU at one sequence length; numbers are None where it cannot run."""
    fits = memfit.fits[col]
    if t is None or row is None:
        return SweepPoint.model_construct(
            seq_len=seq_len, fits=fits, memory_gib=memfit.total_gib[col], runnable=False,
            step_s=None, tokens_per_s_per_gpu=None, tokens_per_s_cluster=None, mfu=None,
            binding=None, bucket_seconds={}, bucket_binding={}, bucket_speedup={},
            bucket_flops_per_token={}, bucket_bytes_per_token={}, usd_per_mtok=None,
            speedup=None,
            speedup_low=None, speedup_high=None)
    tok = t.tokens_per_s[row][col]
    compare = compare and band is not None and runnable
    speed, low, high = (a[row][col] for a in band) if compare else (None, None, None)  # type: ignore[union-attr]
    return SweepPoint.model_construct(
        seq_len=seq_len, fits=fits, memory_gib=memfit.total_gib[col], runnable=runnable,
        step_s=t.step[row][col],
        tokens_per_s_per_gpu=tok if runnable else None,
        tokens_per_s_cluster=tok * gpus if runnable else None,
        mfu=t.mfu[row][col] if runnable else None,
        binding=RESOURCES[t.binding[row][col]] if fits else "capacity",
        bucket_seconds={b: v[row][col] for b, v in t.seconds.items()},
        bucket_binding={b: RESOURCES[v[row][col]] for b, v in t.codes.items()},
        bucket_speedup={b: v[row][col] for b, v in t.speedup.items() if v[row][col] > 0},
        bucket_flops_per_token={b: v[row][col] for b, v in t.flops.items()},
        bucket_bytes_per_token={b: v[row][col] for b, v in t.bytes.items()},
        usd_per_mtok=usd_per_mtok(q.usd_per_hour, tok) if (q and runnable) else None,
        speedup=speed, speedup_low=low, speedup_high=high)


def _result(
    i: int, g: Gpu, r: GpuRates | None, row: int | None, proj: Projection | None,
    table: _Table | None, memfit: MemoryFit, sweep: list[SweepPoint], dgate: DtypeGate,
    sgate: SoftwareGate | None,
    problem: str | None, q: PriceQuote | None, probe: ProbeRecord | None, answers: Answers,
    cal: Calibration,
) -> GpuResult:
    w = answers.workload
    assumptions = job = power = None
    if r is not None and proj is not None and table is not None and row is not None:
        first = sweep[0]
        power = gpu_power_w(r, table.busy[row][0], cal)
        if first.tokens_per_s_per_gpu:
            job = job_cost(w, first.tokens_per_s_per_gpu, q, power, answers.electricity_usd_per_kwh,
                           answers.power_cap_kw)
        assumptions = Assumptions(
            rate_sources={e.quantity: e.source for e in r.evidence}, evidence=r.evidence,
            attention_kernel=r.attention_kernel, gemm_efficiency=cal.gemm_efficiency,
            achieved_mfu=first.mfu, overlap=cal.comm_overlap,
            host_s_per_param=cal.host_s_per_param, pipeline_bubble=proj.pipeline_bubble,
            probe=f"{probe.stamp.hostname} {probe.stamp.date}" if probe else None,
            probe_torch=probe.stamp.versions.torch if probe else None, price=q)
    return GpuResult(
        gpu=g.id, name=g.name, role="current" if i == 0 else "target", dtype_gate=dgate,
        software_gate=sgate, projectable=r is not None, problem=problem, assumptions=assumptions,
        memory=memfit, sweep=sweep, job=job, power_w=power)


def _assumed(r: GpuResult) -> tuple[str, ...]:
    """The rates of `r` that are assumptions rather than measurements or published figures."""
    evidence = r.assumptions.evidence if r.assumptions else []
    return tuple(f"{e.quantity} on {r.gpu} is {e.source}: {e.detail}"
                 for e in evidence if e.source in WEAK_SOURCES)


def _judge_target(
    res: GpuResult, cur: GpuResult, proj: Projection | None, row: int | None, ref: int | None,
    scaling: CurrentScaling | None, answers: Answers,
) -> GpuResult:
    w = answers.workload
    seqs = tuple(w.seq_lens)
    gate = None if res.dtype_gate.passed else res.dtype_gate.reason
    fix = None
    soft_warn: tuple[str, ...] = tuple(res.dtype_gate.caveats)
    if gate is None and res.problem:
        gate = f"catalog gap: {res.problem}; import a probe record to project it"
    if gate is None and res.software_gate is not None:
        blocked, fix, warns = _gate_text(res.software_gate)
        gate, soft_warn = blocked, soft_warn + warns
    weak = _assumed(res) + _assumed(cur)
    torches = [x.assumptions.probe_torch for x in (cur, res) if x.assumptions]
    if len(torches) == 2 and None not in torches and torches[0] != torches[1]:
        weak += (f"probe records from different stacks: torch {torches[0]} on {cur.gpu} vs "
                 f"{torches[1]} on {res.gpu}; the upgrade guide saw +16% from a torch bump "
                 "alone, so part of this speedup may be software",)
    pc = cur.assumptions.price if cur.assumptions else None
    pt = res.assumptions.price if res.assumptions else None
    common = [k for k, (a, b) in enumerate(zip(cur.sweep, res.sweep, strict=True))
              if a.runnable and b.runnable and b.speedup is not None]
    be_price = be_eff = mfu_be = None
    buy: BuyBack | None = None
    speeds = [res.sweep[k].speedup for k in common]
    if common and pc and pt and proj is not None and row is not None and ref is not None:
        geo = float(np.exp(np.mean(np.log([s for s in speeds if s]))))
        be_price = break_even_price(pc.usd_per_hour, geo)
        be_eff = _break_even_efficiency(proj, row, ref, common, pt.usd_per_hour / pc.usd_per_hour)
        col = common[0]
        mfu = res.sweep[col].mfu
        if be_eff is not None and mfu is not None:
            step_be = float(proj.step_at_compute_scale(row, col, np.asarray([be_eff]))[0])
            mfu_be = mfu * float(proj.step_s[row, col]) / step_be
    if scaling is not None and scaling.seq_len in [w.seq_lens[k] for k in common]:
        col = w.seq_lens.index(scaling.seq_len)
        if (res.sweep[col].speedup or 0.0) > 1.0:
            buy = buy_back(scaling, res.sweep[col].tokens_per_s_cluster or 0.0, pc, cur.power_w)
    power_warning = None
    if res.job and res.job.within_power_cap is False:
        power_warning = (f"{w.gpus} x {res.gpu} draw {res.job.power_kw:.1f} kW, over the "
                         f"{answers.power_cap_kw:g} kW cap: at most "
                         f"{res.job.max_gpus_under_cap} fit")
    case = Case(
        target=res.gpu, current=cur.gpu, target_gate=gate, gate_fix=fix,
        current_incapable=None if cur.dtype_gate.passed else cur.dtype_gate.reason,
        software_warnings=soft_warn, evidence_warnings=weak, seq_lens=seqs,
        fits_current=tuple(p.fits for p in cur.sweep), fits_target=tuple(p.fits for p in res.sweep),
        max_seq_current=cur.memory.max_seq_len, max_seq_target=res.memory.max_seq_len,
        speedups=tuple(p.speedup for p in res.sweep), lows=tuple(p.speedup_low for p in res.sweep),
        highs=tuple(p.speedup_high for p in res.sweep),
        price_current=pc.usd_per_hour if pc else None,
        price_target=pt.usd_per_hour if pt else None,
        price_sources=(pc.source if pc else "none", pt.source if pt else "none"),
        break_even_price=be_price, break_even_efficiency=be_eff, break_even_mfu=mfu_be,
        time_premium=answers.time_premium, power_warning=power_warning,
    )
    return res.model_copy(update={
        "verdict": judge(case), "break_even_usd_per_hour": be_price,
        "break_even_efficiency": be_eff, "buy_back": buy})
