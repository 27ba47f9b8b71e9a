"""decide(): answers + catalog (+ probe records) -> the Decision both front ends render.

The steps follow the upgrade guide: gate each GPU on number formats and software,
resolve achievable rates from the best evidence, project the workload with the one
engine as the user runs it and re-tuned to each GPU, fit memory, price every point,
and judge each target against the current GPU. A target that fails a gate stays in
the decision, blocked, with the reason and the remedy. Every projection carries the
rates it used and where they came from, so nothing in a report is a bare number.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from advisor.core.decision import (
    Assumptions,
    Basis,
    Decision,
    DefaultUsed,
    GpuResult,
    MemoryFit,
    SweepPoint,
)
from advisor.core.economics.buyback import BuyBack, buy_back
from advisor.core.economics.cost import (
    PriceQuote,
    break_even_price,
    gpu_power_w,
    job_cost,
    quote,
    usd_per_mtok,
)
from advisor.core.economics.sensitivity import tornado
from advisor.core.economics.verdict import Case, judge
from advisor.core.gates.software import SoftwareGate
from advisor.core.model.answers import Answers, split_count
from advisor.core.model.catalog import Catalog
from advisor.core.model.probe_record import ProbeRecord
from advisor.core.projection.calibration import CAL, Calibration
from advisor.core.projection.engine import BUCKETS, RESOURCES, Projection
from advisor.core.projection.rates import GpuRates
from advisor.core.projection.retune import Fitted, project_side
from advisor.core.projection.uncertainty import band, log_sigma
from advisor.core.sides import Compared, gated_rates

WEAK_SOURCES = ("transferred-efficiency", "generic-kernel-ratio")
EFFICIENCY_GRID = np.geomspace(0.05, 20.0, 400)


def _prepare(answers: Answers, catalog: Catalog, probes: Mapping[str, ProbeRecord],
             cal: Calibration) -> list[Compared]:
    """Every side projected as run and re-tuned."""
    out = []
    for g in gated_rates(answers, catalog, probes, cal):
        side = project_side(g.workload, g.rates, g.workload.seq_lens, cal) \
            if g.rates is not None else None
        out.append(replace(g, side=side))
    return out


def _points(fitted: Fitted | None, g: Compared, seqs: list[int], quote_: PriceQuote | None,
            runnable_base: bool) -> list[SweepPoint]:
    if fitted is None:
        return [SweepPoint(seq_len=s, fits=False, memory_gib=0.0, runnable=False, step_s=None,
                           tokens_per_s_per_gpu=None, tokens_per_s_cluster=None, mfu=None,
                           binding=None, bucket_seconds={}, bucket_binding={},
                           bucket_speedup={}, bucket_flops_per_token={},
                           bucket_bytes_per_token={}, usd_per_mtok=None, speedup=None,
                           speedup_low=None, speedup_high=None) for s in seqs]
    p = fitted.proj
    tokens = p.tokens[0]
    spent = p.resource_time()[:, 0, :]
    out = []
    for c, s in enumerate(seqs):
        fits = fitted.fits[c]
        run = runnable_base and fits
        tok = float(p.tokens_per_s[0, c])
        binding = RESOURCES[int(np.argmax(spent[:, c]))] if fits else "capacity"
        out.append(SweepPoint(
            seq_len=s, fits=fits, memory_gib=float(fitted.memory_gib[c]), runnable=run,
            layout=fitted.layouts[c], step_s=float(p.step_s[0, c]),
            tokens_per_s_per_gpu=tok if run else None,
            tokens_per_s_cluster=tok * fitted.layouts[c].gpus if run else None,
            mfu=float(p.mfu[0, c]) if run else None, binding=binding,
            bucket_seconds={b: float(p.times[b][0, c]) for b in BUCKETS},
            bucket_binding={b: RESOURCES[int(p.binding[b][0, c])] for b in BUCKETS},
            bucket_speedup={},
            bucket_flops_per_token={b: float(v[0, c] / tokens[c]) for b, v in p.flops.items()},
            bucket_bytes_per_token={b: float(v[0, c] / tokens[c]) for b, v in p.bytes.items()},
            ttft_ms=float(p.ttft_s[0, c] * 1000) if p.ttft_s is not None else None,
            tpot_ms=float(p.tpot_s[0, c] * 1000) if p.tpot_s is not None else None,
            usd_per_mtok=usd_per_mtok(quote_.usd_per_hour, tok) if (quote_ and run) else None,
            speedup=None, speedup_low=None, speedup_high=None))
    return out


def _compare(cur: list[SweepPoint], tgt: list[SweepPoint], p_cur: Projection | None,
             p_tgt: Projection | None, r_cur: GpuRates | None, r_tgt: GpuRates | None,
             cal: Calibration) -> list[SweepPoint]:
    """The target's points with speedups and their band against the current GPU's."""
    if p_cur is None or p_tgt is None or r_cur is None or r_tgt is None:
        return tgt
    sigma = log_sigma(p_cur, r_cur, p_tgt, r_tgt, cal)
    out = []
    for c, (a, b) in enumerate(zip(cur, tgt, strict=True)):
        if not (a.runnable and b.runnable and a.tokens_per_s_per_gpu and b.tokens_per_s_per_gpu):
            out.append(b)
            continue
        s = b.tokens_per_s_per_gpu / a.tokens_per_s_per_gpu
        lo, hi = band(np.asarray([s]), np.asarray([sigma[c]]))
        per_bucket = {}
        for k, t_b in b.bucket_seconds.items():
            t_a = a.bucket_seconds.get(k, 0.0)
            ta_tok = t_a / a.step_s / a.tokens_per_s_per_gpu if a.step_s else 0.0
            tb_tok = t_b / b.step_s / b.tokens_per_s_per_gpu if b.step_s else 0.0
            if ta_tok > 0 and tb_tok > 0:
                per_bucket[k] = ta_tok / tb_tok
        out.append(b.model_copy(update={"speedup": s, "speedup_low": float(lo[0]),
                                        "speedup_high": float(hi[0]),
                                        "bucket_speedup": per_bucket}))
    return out


def _unit(p: SweepPoint) -> SweepPoint:
    """The current GPU against itself: speedup 1 wherever it runs."""
    return p.model_copy(update={"speedup": 1.0, "speedup_low": 1.0, "speedup_high": 1.0}) \
        if p.runnable else p


def _gate_text(gate: SoftwareGate) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(blocking summary, fix, warnings) from a software gate."""
    actions = "; ".join(f.action for f in gate.findings if f.action)
    if gate.status == "blocked":
        return gate.summary, actions or None, ()
    warns = tuple(f.message for f in gate.findings if f.status not in ("ok",))
    return None, None, warns


def _assumed(r: GpuResult) -> tuple[str, ...]:
    evidence = r.assumptions.evidence if r.assumptions else []
    return tuple(f"{e.quantity} on {r.gpu} is {e.source}: {e.detail}"
                 for e in evidence if e.source in WEAK_SOURCES)


def _break_even_efficiency(p_cur: Projection, p_tgt: Projection, cols: list[int],
                           price_ratio: float) -> float | None:
    """The multiple of the target's assumed compute rates at which $/token ties (geomean basis,
    like the verdict), or None when no multiple in 0.05..20 gets there."""
    cur = p_cur.step_s[0, cols] / p_cur.tokens[0, cols]

    def gap(scale: float) -> float:
        tgt = p_tgt.step_at_scale(scale, "compute")[0, cols] / p_tgt.tokens[0, cols]
        return float(np.mean(np.log(cur / tgt))) - math.log(price_ratio)

    lo, hi = float(EFFICIENCY_GRID[0]), float(EFFICIENCY_GRID[-1])
    if gap(hi) < 0 or gap(lo) >= 0:
        return None
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if gap(mid) >= 0 else (mid, hi)
    return hi


def _result(g: Compared, role: str, basis: Basis, q: PriceQuote | None,
            answers: Answers, cal: Calibration) -> tuple[GpuResult, Fitted | None]:
    w = g.workload
    seqs = list(w.seq_lens)
    side = g.side
    fitted = (side.retuned if basis == "retuned" else side.as_run) if side else None
    runnable = g.dtype.passed and g.rates is not None
    sweep = _points(fitted, g, seqs, q, runnable)
    as_run = _points(side.as_run if side else None, g, seqs, q, runnable)
    assumptions = job = power = None
    if g.rates is not None and fitted is not None:
        busy = float(fitted.proj.busy()[0, 0])
        power = gpu_power_w(g.rates, busy, cal)
        first = sweep[0]
        if first.tokens_per_s_per_gpu:
            job = job_cost(w.gpus, w.token_budget, first.tokens_per_s_per_gpu, q, power,
                           answers.electricity_usd_per_kwh, answers.power_cap_kw)
        r = g.rates
        assumptions = Assumptions(
            rate_sources={e.quantity: e.source for e in r.evidence}, evidence=r.evidence,
            attention_kernel=r.attention_kernel, attention_why=r.attention_why,
            framework=w.framework,
            gemm_efficiency=cal.gemm_efficiency.get(w.framework, 1.0) if w.training
            else cal.serve_gemm_efficiency,
            achieved_mfu=first.mfu, overlap=cal.comm_overlap,
            probe=f"{g.probe.stamp.hostname} {g.probe.stamp.date}" if g.probe else None,
            probe_torch=g.probe.stamp.versions.torch if g.probe else None, price=q)
    capacity = g.gpu.memory.gib if g.gpu.memory else 0.0
    memfit = MemoryFit(
        gpu=g.gpu.id, capacity_gib=capacity, usable_gib=side.usable_gib if side else 0.0,
        max_seq_len=side.max_seq_retuned if side else None,
        max_seq_len_as_run=side.max_seq_as_run if side else None,
        total_gib=[p.memory_gib for p in sweep], fits=[p.fits for p in sweep])
    res = GpuResult(
        gpu=g.gpu.id, name=g.gpu.name, role=role,
        gpus=w.gpus, nodes=w.nodes, dtype_gate=g.dtype, software_gate=g.software,
        projectable=g.rates is not None, problem=g.problem, assumptions=assumptions,
        memory=memfit, sweep=sweep, as_run=as_run,
        fit_change={str(s): c for s, c in zip(seqs, side.fit_change, strict=True) if c}
        if side else {}, job=job, power_w=power)
    return res, fitted


def _judge(res: GpuResult, cur: GpuResult, g: Compared, c: Compared, f_tgt: Fitted | None,
           f_cur: Fitted | None, answers: Answers, cal: Calibration) -> GpuResult:
    seqs = tuple(answers.workload.seq_lens)
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
    counts = res.gpus / cur.gpus
    if common and pc and pt and f_tgt is not None and f_cur is not None:
        geo = float(np.exp(np.mean(np.log([s for s in speeds if s]))))
        be_price = break_even_price(pc.usd_per_hour, geo)
        be_eff = _break_even_efficiency(f_cur.proj, f_tgt.proj, common,
                                        pt.usd_per_hour / pc.usd_per_hour)
        col = common[0]
        mfu = res.sweep[col].mfu
        if be_eff is not None and mfu is not None:
            step_be = float(f_tgt.proj.step_at_scale(be_eff, "compute")[0, col])
            mfu_be = mfu * float(f_tgt.proj.step_s[0, col]) / step_be
    if common and c.rates is not None and f_cur is not None:
        col = common[0]
        target_cluster = res.sweep[col].tokens_per_s_cluster or 0.0
        cur_cluster = cur.sweep[col].tokens_per_s_cluster or 0.0
        if target_cluster > cur_cluster:
            buy = buy_back(c.workload, c.rates, f_cur.layouts[col], seqs[col], target_cluster,
                           pc, cur.power_w, cal)
    power_warning = None
    if res.job and res.job.within_power_cap is False:
        power_warning = (f"{res.gpus} x {res.gpu} draw {res.job.power_kw:.1f} kW, over the "
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
        time_premium=answers.time_premium, power_warning=power_warning, count_ratio=counts,
        basis=("re-tuned layouts on both GPUs" if answers.basis == "retuned"
               else "the layouts as you run them"),
    )
    verdict = judge(case)
    rows = tornado(case, verdict, f_cur, f_tgt, c.rates, g.rates, cal) \
        if f_cur is not None and f_tgt is not None and c.rates and g.rates and common else []
    return res.model_copy(update={
        "verdict": verdict, "break_even_usd_per_hour": be_price,
        "break_even_efficiency": be_eff, "buy_back": buy, "sensitivity": rows})


TRAINING_DEFAULTS = ("micro_batch", "global_batch", "precision", "optimizer", "zero_stage",
                     "recompute", "fused_kernels", "gpus", "attention_kernel", "token_budget")
SERVING_DEFAULTS = ("micro_batch", "precision", "gpus", "tp", "kv_dtype", "max_batch",
                    "attention_kernel", "token_budget")


def _defaults(answers: Answers, sides: list[Compared], quotes: list[PriceQuote | None]
              ) -> list[DefaultUsed]:
    """Every value that shapes the decision and was not given, with where it came from."""
    w = answers.workload
    out = []
    for name in TRAINING_DEFAULTS if w.training else SERVING_DEFAULTS:
        if name in w.model_fields_set or (name == "recompute"
                                          and "checkpointing" in w.model_fields_set):
            continue
        if name == "gpus" and all(split_count(g)[1] for g in (answers.current,
                                                              *answers.targets)):
            continue  # every side names its own count (`b200-sxm@64`)
        value: object = getattr(w, name)
        if name == "global_batch":
            value = f"one micro-batch per data-parallel rank ({w.sequences_per_step})"
        elif name == "token_budget":
            value = "none: jobs are priced for one hour"
        out.append(DefaultUsed(field=f"workload.{name}", value=str(value),
                               source="advisor's default"))
    if w.framework == "auto" and w.training:
        out.append(DefaultUsed(field="workload.framework", value=sides[0].workload.framework,
                               source="read off the stack and the layout"))
    if answers.electricity_is_default:
        out.append(DefaultUsed(field="electricity_usd_per_kwh",
                               value=f"{answers.electricity_usd_per_kwh}",
                               source="advisor's default"))
    for s, q in zip(sides, quotes, strict=True):
        if q is not None and q.source == "default":
            out.append(DefaultUsed(field=f"prices.{s.gpu.id}", value=f"{q.usd_per_hour:.2f}",
                                   source=q.label))
    return out


def decide(answers: Answers, catalog: Catalog,
           probes: Mapping[str, ProbeRecord] | None = None, cal: Calibration = CAL) -> Decision:
    """Project the workload on the current GPU and every target, and judge each target."""
    sides = _prepare(answers, catalog, probes or {}, cal)
    quotes = [quote(s.gpu.id, answers.prices, catalog) for s in sides]
    basis: Basis = answers.basis
    built = [_result(s, "current" if i == 0 else "target", basis, q, answers, cal)
             for i, (s, q) in enumerate(zip(sides, quotes, strict=True))]
    cur, f_cur = built[0]
    cur = cur.model_copy(update={
        "sweep": [_unit(p) for p in cur.sweep], "as_run": [_unit(p) for p in cur.as_run]})
    targets = []
    for (res, f_tgt), s in zip(built[1:], sides[1:], strict=True):
        rc, rt = sides[0].rates, s.rates
        res = res.model_copy(update={
            "sweep": _compare(cur.sweep, res.sweep, f_cur.proj if f_cur else None,
                              f_tgt.proj if f_tgt else None, rc, rt, cal),
            "as_run": _compare(cur.as_run, res.as_run,
                               sides[0].side.as_run.proj if sides[0].side else None,
                               s.side.as_run.proj if s.side else None, rc, rt, cal)})
        targets.append(_judge(res, cur, s, sides[0], f_tgt, f_cur, answers, cal))
    w = answers.workload
    notes = [
        "speedup band: 90% (+-1.645 sigma) from each rate's spread plus the model's "
        f"own error ({cal.model_sigma:.0%}, sized from its held-out cases)",
        ("speedups compare tokens/s per GPU, each GPU in the layout re-tuned for it (the "
         "as-run figures use your layout on both); cluster figures use each side's GPU count")
        if basis == "retuned" else
        "speedups compare tokens/s per GPU in the layouts as you run them",
    ]
    kernels = {s.gpu.id: s.rates.attention_why for s in sides if s.rates}
    notes += [f"attention on {gid}: {why}" for gid, why in kernels.items()]
    if w.training and not w.batch_splits:
        notes.append(f"your global batch of {w.global_batch} does not split into micro-batches "
                     f"of {w.micro_batch} over {w.dp} data-parallel ranks; the as-run figures "
                     "round the accumulation down, the re-tuned layouts keep the batch")
    shape_note = w.model.params_note()
    if shape_note:
        notes.append(shape_note)
    if answers.electricity_is_default:
        notes.append(f"electricity at the default ${answers.electricity_usd_per_kwh}/kWh")
    return Decision(
        answers=answers, primary_seq_len=w.seq_lens[0], basis=basis,
        electricity_source="default" if answers.electricity_is_default else "user",
        band_level=0.9, current=cur, targets=targets,
        defaults=_defaults(answers, sides, quotes), notes=notes)
