"""The comparison step, decide(): answers + catalog (+ probe records) -> the Decision result
both front ends render (its models are in `result`).

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

import numpy as np

from advisor.core.anchored import Resolution, resolve_anchored
from advisor.core.economics.buyback import BuyBack, buy_back
from advisor.core.economics.cost import (
    PriceQuote,
    break_even_price,
    cap_words,
    job_cost,
    quote,
    usd_per_mtok,
)
from advisor.core.economics.sensitivity import tornado
from advisor.core.economics.verdict import Case, judge
from advisor.core.gates.dtype import format_switch
from advisor.core.gates.software import SoftwareGate
from advisor.core.model.answers import Answers, split_count
from advisor.core.model.catalog import Catalog
from advisor.core.model.frameworks import name_of
from advisor.core.model.lora import BaseOption
from advisor.core.model.probe_record import ProbeRecord
from advisor.core.model.workload import Workload
from advisor.core.projection.calibration import CAL, Z90, Calibration
from advisor.core.projection.engine import BUCKETS, RESOURCES, Projection
from advisor.core.projection.interactivity import leaders
from advisor.core.projection.rates import GpuRates
from advisor.core.projection.retune import Fitted, base_option, memory_margin
from advisor.core.projection.uncertainty import band, log_sigma
from advisor.core.result import (
    Assumptions,
    Basis,
    Decision,
    DefaultUsed,
    GpuResult,
    InteractivityLead,
    InteractivityPoint,
    MemoryFit,
    SweepPoint,
)
from advisor.core.sides import ResolvedSide

WEAK_SOURCES = ("transferred-efficiency", "generic-kernel-ratio")
EFFICIENCY_GRID = np.geomspace(0.05, 20.0, 400)


def _binding(p: Projection, c: int, fitted: Fitted, cal: Calibration) -> str:
    """The resource that limits the point: the one the step spends most on, or, in serving,
    capacity where a KV cache that held more requests would buy more than the stated gain."""
    limit = fitted.limits[c] if fitted.limits else None
    tok = float(p.tokens_per_s[0, c])
    if limit is not None and limit.cap == "kv-capacity" and tok > 0 \
            and limit.uncapped_tokens_per_s > tok * (1 + cal.capacity_binding_gain):
        return "capacity"
    return RESOURCES[int(np.argmax(p.resource_time()[:, 0, c]))]


def _points(fitted: Fitted | None, side: ResolvedSide, seqs: list[int],
            quote_: PriceQuote | None, runnable_base: bool, cal: Calibration
            ) -> list[SweepPoint]:
    if fitted is None:
        return [SweepPoint(seq_len=s, fits=False, memory_gib=0.0, runnable=False, step_s=None,
                           tokens_per_s_per_gpu=None, tokens_per_s_cluster=None, mfu=None,
                           binding=None, bucket_seconds={}, bucket_binding={},
                           bucket_speedup={}, bucket_flops_per_token={},
                           bucket_bytes_per_token={}, usd_per_mtok=None, speedup=None,
                           speedup_low=None, speedup_high=None) for s in seqs]
    p = fitted.proj
    tokens = p.tokens[0]
    usable = side.projection.usable_gib if side.projection else 0.0
    out = []
    for c, s in enumerate(seqs):
        fits = fitted.fits[c]
        mem = float(fitted.memory_gib[c])
        limit = fitted.limits[c] if fitted.limits else None
        margin, borderline = memory_margin(fitted, c, usable, cal)
        latency = bool(_latency_met(side.workload, p, c))
        run = runnable_base and (fits or (borderline and latency))
        tok = float(p.tokens_per_s[0, c])
        binding = _binding(p, c, fitted, cal) if (fits or borderline) else "capacity"
        out.append(SweepPoint(
            seq_len=s, fits=fits, memory_gib=mem, runnable=run, memory_margin_gib=margin,
            borderline=borderline,
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
            batch=limit.batch if limit else None, batch_cap=limit.cap if limit else None,
            kv_batch=limit.kv_batch if limit else None,
            uncapped_batch=limit.uncapped_batch if limit else None,
            uncapped_tokens_per_s_per_gpu=limit.uncapped_tokens_per_s if limit else None,
            usd_per_mtok=usd_per_mtok(quote_.usd_per_hour, tok) if (quote_ and run) else None,
            speedup=None, speedup_low=None, speedup_high=None,
            frozen_base=_frozen_base(side.workload, fitted, c)))
    return out




def _curve(fitted: Fitted | None, q: PriceQuote | None) -> list[InteractivityPoint]:
    if fitted is None or not fitted.curve:
        return []
    return [InteractivityPoint(
        tokens_per_s_per_user=c.tokens_per_s_per_user, tokens_per_s_per_gpu=c.tokens_per_s_per_gpu,
        usd_per_mtok=usd_per_mtok(q.usd_per_hour, c.tokens_per_s_per_gpu) if q else None,
        batch=c.batch, tp=c.tp, pp=c.pp, ep=c.ep, ttft_ms=c.ttft_s * 1000,
        tpot_ms=c.tpot_s * 1000) for c in fitted.curve]


def _leads(results: list[GpuResult], quotes: list[PriceQuote | None], cal: Calibration
           ) -> list[InteractivityLead]:
    """Which GPU leads at which interactivity: by $/token where every GPU is priced."""
    curves = {r.gpu: r.curve for r in results
              if r.curve and (r.verdict is None or r.verdict.kind != "blocked-by-gate")}
    if len(curves) < 2:
        return []
    priced = all(q is not None for q in quotes)
    score = {r.gpu: q.usd_per_hour for r, q in zip(results, quotes, strict=True)
             if q is not None} if priced else None
    return [InteractivityLead(from_tokens_per_user=lo, to_tokens_per_user=hi, gpu=gpu,
                              by="cost" if priced else "throughput")
            for lo, hi, gpu in leaders(curves, score, cal.lead_tie)]


def _frozen_base(w: Workload, fitted: Fitted, c: int) -> BaseOption | None:
    """A LoRA point's frozen base as the fitted layout holds it, and whether the re-tune chose
    that over the answers' base."""
    if w.mode != "lora":
        return None
    layout = fitted.layouts[c]
    moved = (layout.base_format, layout.offload_frozen_weights) != (
        w.base_format, w.offload_frozen_weights)
    return base_option(fitted.proj, layout, 0, c, chosen=moved, fits=fitted.fits[c])


def _latency_met(w: Workload, p: Projection, c: int) -> bool:
    ok = True
    if p.tpot_s is not None and w.tpot_limit_ms is not None:
        ok &= float(p.tpot_s[0, c]) * 1000 <= w.tpot_limit_ms
    if p.ttft_s is not None and w.ttft_ms is not None:
        ok &= float(p.ttft_s[0, c]) * 1000 <= w.ttft_ms
    return ok


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
    if gate.status == "blocked":
        return gate.summary, "; ".join(gate.actions) or None, ()
    if gate.status == "unverified":  # no support data is not a pass
        return gate.summary, gate.remedy, ()
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


def _result(g: ResolvedSide, basis: Basis, q: PriceQuote | None, answers: Answers,
            cal: Calibration) -> tuple[GpuResult, Fitted | None]:
    w = g.workload
    seqs = list(w.seq_lens)
    side = g.projection
    fitted = (side.retuned if basis == "retuned" else side.as_run) if side else None
    runnable = g.dtype.passed and g.rates is not None
    sweep = _points(fitted, g, seqs, q, runnable, cal)
    as_run = _points(side.as_run if side else None, g, seqs, q, runnable, cal)
    assumptions = job = power = None
    if g.rates is not None and fitted is not None:
        busy = float(fitted.proj.busy()[0, 0])
        power = g.power.draw_w(busy)
        first = sweep[0]
        if first.tokens_per_s_per_gpu:
            job = job_cost(w.gpus, w.token_budget, first.tokens_per_s_per_gpu, q, power,
                           answers.electricity_usd_per_kwh, answers.power_cap_kw,
                           nodes=w.nodes, host_w_per_node=g.host_w, slots=g.slots_per_node)
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
        gpu=g.gpu.id, name=g.gpu.name, role=g.role, gpus=w.gpus, nodes=w.nodes,
        precision=w.precision, kv_bytes=None if w.training else w.kv_bytes,
        framework=w.framework, framework_why=g.framework_why,
        dtype_gate=g.dtype, software_gate=g.software,
        projectable=g.rates is not None, problem=g.problem, assumptions=assumptions,
        memory=memfit, sweep=sweep, as_run=as_run,
        curve=_curve(fitted, q) if runnable else [],
        fit_change={str(s): c for s, c in zip(seqs, side.fit_change, strict=True) if c}
        if side else {},
        base_options={str(s): list(o) for s, o in zip(seqs, side.base_options or [], strict=False)
                      if o} if side else {},
        job=job, power_w=power)
    return res, fitted


def _borderline(r: GpuResult, cal: Calibration) -> list[str]:
    """Points whose fit is within the memory model's own uncertainty, said as such."""
    out = []
    for p in r.sweep:
        if not p.borderline or p.memory_margin_gib is None:
            continue
        how = (f"fits by {p.memory_margin_gib:.1f} GiB" if p.memory_margin_gib >= 0 else
               f"over by {-p.memory_margin_gib:.1f} GiB")
        need = r.memory.usable_gib - p.memory_margin_gib
        what = "one request needs" if p.batch is not None else "needs"
        out.append(f"borderline on {r.gpu} at {p.seq_len:,} tokens: {how} ({what} "
                   f"{need:.1f} of {r.memory.usable_gib:.1f} GiB usable, within the memory "
                   f"model's ±{Z90 * cal.memory_sigma:.0%}): measure it")
    return out


def _judge(res: GpuResult, cur: GpuResult, g: ResolvedSide, c: ResolvedSide,
           f_tgt: Fitted | None, f_cur: Fitted | None, answers: Answers,
           cal: Calibration) -> GpuResult:
    """The target with its verdict against the current GPU, the break-evens that would flip
    it, what matching it would take in current GPUs, and what the verdict is most
    sensitive to."""
    common = [k for k, (a, b) in enumerate(zip(cur.sweep, res.sweep, strict=True))
              if a.runnable and b.runnable and b.speedup is not None]
    case = _case(res, cur, g, c, f_tgt, f_cur, common, answers, cal)
    verdict = judge(case)
    rows = tornado(case, verdict, f_cur, f_tgt, c.rates, g.rates, cal) \
        if f_cur is not None and f_tgt is not None and c.rates and g.rates and common else []
    return res.model_copy(update={
        "verdict": verdict, "break_even_usd_per_hour": case.break_even_price,
        "break_even_efficiency": case.break_even_efficiency,
        "buy_back": _buy_back(res, cur, c, f_cur, common, answers, cal),
        "sensitivity": rows})


def _case(res: GpuResult, cur: GpuResult, g: ResolvedSide, c: ResolvedSide,
          f_tgt: Fitted | None, f_cur: Fitted | None, common: list[int], answers: Answers,
          cal: Calibration) -> Case:
    """Everything the verdict weighs for one target, gathered from both sides' results, so
    judge() (and the tornado that re-judges it) sees plain numbers and words."""
    seqs = tuple(answers.workload.seq_lens)
    gate, fix, soft_warn = _target_gate(res)
    pc, pt = _price(cur), _price(res)
    be_price, be_eff, mfu_be = _break_evens(res, common, pc, pt, f_tgt, f_cur)
    return Case(
        target=res.gpu, current=cur.gpu, target_gate=gate, gate_fix=fix,
        current_incapable=None if cur.dtype_gate.passed else cur.dtype_gate.reason,
        software_warnings=soft_warn, evidence_warnings=_weak_evidence(cur, res),
        seq_lens=seqs, fits_current=_fits(cur), fits_target=_fits(res),
        max_seq_current=cur.memory.max_seq_len, max_seq_target=res.memory.max_seq_len,
        speedups=tuple(p.speedup for p in res.sweep), lows=tuple(p.speedup_low for p in res.sweep),
        highs=tuple(p.speedup_high for p in res.sweep),
        price_current=pc.usd_per_hour if pc else None,
        price_target=pt.usd_per_hour if pt else None,
        price_sources=(pc.source if pc else "none", pt.source if pt else "none"),
        break_even_price=be_price, break_even_efficiency=be_eff, break_even_mfu=mfu_be,
        time_premium=answers.time_premium, power_warning=_power_warning(res, answers),
        count_ratio=res.gpus / cur.gpus,
        basis=answers.basis,
        borderline=_fit_warnings(cur, res, c, g, seqs[0], cal),
        format_switch=format_switch(c.workload.precision, g.workload.precision,
                                    c.workload.training, c.gpu.id, g.gpu.id),
        layouts=_layout_words(cur, res, answers),
    )


def _target_gate(res: GpuResult) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(what blocks the target, its fix, software warnings): the number format, then a
    catalog gap, then the software stack; the first that blocks is the one said."""
    caveats = tuple(res.dtype_gate.caveats)
    if not res.dtype_gate.passed:
        return res.dtype_gate.reason, None, caveats
    if res.problem:
        return f"catalog gap: {res.problem}; import a probe record to project it", None, caveats
    if res.software_gate is None:
        return None, None, caveats
    blocked, fix, warns = _gate_text(res.software_gate)
    return blocked, fix, caveats + warns


def _weak_evidence(cur: GpuResult, res: GpuResult) -> tuple[str, ...]:
    """Evidence the speedup leans on that is weaker than a measurement: borrowed rates, and
    probe records from different software stacks (part of the gap may be the stack)."""
    weak = _assumed(res) + _assumed(cur)
    torches = [x.assumptions.probe_torch for x in (cur, res) if x.assumptions]
    if len(torches) == 2 and None not in torches and torches[0] != torches[1]:
        weak += (f"probe records from different stacks: torch {torches[0]} on {cur.gpu} vs "
                 f"{torches[1]} on {res.gpu}; the upgrade guide saw +16% from a torch bump "
                 "alone, so part of this speedup may be software",)
    return weak


def _price(r: GpuResult) -> PriceQuote | None:
    """The hourly price this side was costed at, if it has one."""
    return r.assumptions.price if r.assumptions else None


def _fits(r: GpuResult) -> tuple[bool, ...]:
    """Per length, whether the side holds it: a borderline fit counts, and is said apart."""
    return tuple(p.fits or p.borderline for p in r.sweep)


def _break_evens(res: GpuResult, common: list[int], pc: PriceQuote | None,
                 pt: PriceQuote | None, f_tgt: Fitted | None, f_cur: Fitted | None
                 ) -> tuple[float | None, float | None, float | None]:
    """Where $/token ties: the target's hourly price, the multiple of its assumed compute
    rates, and the MFU that multiple means; all None without both prices and a common
    point."""
    if not (common and pc and pt and f_tgt is not None and f_cur is not None):
        return None, None, None
    speeds = [res.sweep[k].speedup for k in common]
    geo = float(np.exp(np.mean(np.log([s for s in speeds if s]))))
    be_eff = _break_even_efficiency(f_cur.proj, f_tgt.proj, common,
                                    pt.usd_per_hour / pc.usd_per_hour)
    return (break_even_price(pc.usd_per_hour, geo), be_eff,
            _break_even_mfu(res, f_tgt, common[0], be_eff))


def _break_even_mfu(res: GpuResult, f_tgt: Fitted, col: int, be_eff: float | None
                    ) -> float | None:
    """The MFU the target would reach at the break-even efficiency: a multiple of assumed
    rates means little until said as a utilisation one can compare with measurements."""
    mfu = res.sweep[col].mfu
    if be_eff is None or mfu is None:
        return None
    step_be = float(f_tgt.proj.step_at_scale(be_eff, "compute")[0, col])
    return mfu * float(f_tgt.proj.step_s[0, col]) / step_be


def _buy_back(res: GpuResult, cur: GpuResult, c: ResolvedSide, f_cur: Fitted | None,
              common: list[int], answers: Answers, cal: Calibration) -> BuyBack | None:
    """Training, where the target's cluster is faster: the current GPUs it would take to
    match it at the first length both run, the alternative to buying the target."""
    if not (common and c.rates is not None and f_cur is not None and c.workload.training):
        return None
    col = common[0]
    target_cluster = res.sweep[col].tokens_per_s_cluster or 0.0
    if target_cluster <= (cur.sweep[col].tokens_per_s_cluster or 0.0):
        return None
    return buy_back(c.workload, c.rates, f_cur.layouts[col], answers.workload.seq_lens[col],
                    target_cluster, _price(cur), cur.power_w, c.tuned or cal)


def _power_warning(res: GpuResult, answers: Answers) -> str | None:
    """The target's cluster over the power cap, and how many of its GPUs would fit under it."""
    if not (res.job and res.job.within_power_cap is False):
        return None
    return f"{cap_words(res.gpus, res.gpu, res.job)}, over the " \
           f"{answers.power_cap_kw:g} kW cap: at most {res.job.max_gpus_under_cap} fit"


def _fit_warnings(cur: GpuResult, res: GpuResult, c: ResolvedSide, g: ResolvedSide, seq: int,
                  cal: Calibration) -> tuple[str, ...]:
    """What qualifies either side's fit at the primary length: a borderline memory fit, a KV
    cache that binds, tensor or expert parallelism spread over PCIe."""
    pcie = (_over_pcie(x, s, seq) for x, s in ((cur, c), (res, g)))
    return (tuple(_borderline(cur, cal) + _borderline(res, cal)) + _capacity_binds(cur, res, seq)
            + tuple(w for w in pcie if w))


CAPS = {"kv-capacity": "the KV cache holds no more", "tpot": "the TPOT limit",
        "ttft": "the TTFT limit", "engine cap": "the engine's batch cap",
        "your concurrency": "your concurrency", "throughput peak": "more would serve less"}


def serving_words(r: GpuResult, p: SweepPoint) -> str:
    """One side's serving layout and what set its batch: 'h100-sxm 8 GPUs, TP 2, 287
    requests in flight per replica (the KV cache holds no more), TTFT 107 ms, TPOT 62 ms'."""
    assert p.layout is not None
    if not (p.fits or p.borderline):  # no figure for a layout that cannot hold the model
        return f"{r.gpu} {p.layout.gpus:,} GPU{'s' if p.layout.gpus != 1 else ''}: does not fit"
    cap = f" ({CAPS.get(p.batch_cap, p.batch_cap)})" if p.batch_cap else ""
    times = (f", TTFT {p.ttft_ms:,.0f} ms, TPOT {p.tpot_ms:,.1f} ms"
             if p.ttft_ms is not None and p.tpot_ms is not None else "")
    return f"{r.gpu} {p.layout.describe(True)}{cap}{times}"


def capacity_words(r: GpuResult, p: SweepPoint) -> str | None:
    """Where the KV cache binds, by how much: the reason a larger GPU serves more."""
    if p.binding != "capacity" or not p.kv_batch or not p.uncapped_batch \
            or not p.tokens_per_s_per_gpu or not p.uncapped_tokens_per_s_per_gpu:
        return None
    gain = p.uncapped_tokens_per_s_per_gpu / p.tokens_per_s_per_gpu
    return (f"KV capacity binds on {r.gpu}: {p.kv_batch:,} requests in flight fit after the "
            f"weights, of the {p.uncapped_batch:,} the latency limits and the engine would "
            f"take ({gain:.2f}x the tokens/s per GPU with room for them)")


def _layout_words(cur: GpuResult, res: GpuResult, answers: Answers) -> str | None:
    """Serving: both layouts the verdict compares, named (the re-tune may change TP)."""
    w = answers.workload
    if w.training:
        return None
    seq = w.seq_lens[0]
    a, b = cur.point(seq), res.point(seq)
    if a is None or b is None or a.layout is None or b.layout is None \
            or not any(p.fits or p.borderline for p in (a, b)):
        return None  # neither holds the model: there is no layout to compare
    return f"{serving_words(cur, a)} vs {serving_words(res, b)}"


def _over_pcie(r: GpuResult, side: ResolvedSide, seq: int) -> str | None:
    """TP or EP spread over PCIe (no NVLink-class link): what its traffic costs, and whether
    it is what binds the step."""
    p = r.point(seq)
    link = side.gpu.interconnect
    if p is None or p.layout is None or not p.step_s or (link and "pcie" not in
                                                         link.kind.lower()):
        return None
    spread = [f"{k.upper()} {v}" for k, v in (("tp", p.layout.tp), ("ep", p.layout.ep)) if v > 1]
    if not spread:
        return None
    comm = p.bucket_seconds.get("communication", 0.0)
    binds = comm >= max(p.bucket_seconds.values(), default=0.0)
    kind = link.kind if link else "the catalog names no scale-up link for it"
    return (f"{r.gpu}: {' and '.join(spread)} run over PCIe ({kind}): their all-reduce and "
            f"all-to-all take {comm / p.step_s:.0%} of its step"
            + (", the largest part: the link binds" if binds else ""))


def _capacity_binds(cur: GpuResult, res: GpuResult, seq: int) -> tuple[str, ...]:
    out = []
    for r in (cur, res):
        p = r.point(seq)
        words = capacity_words(r, p) if p is not None else None
        if words:
            out.append(words)
    return tuple(out)


TRAINING_DEFAULTS = ("micro_batch", "global_batch", "precision", "optimizer", "zero_stage",
                     "recompute", "fused_kernels", "gpus", "attention_kernel", "token_budget")
SERVING_DEFAULTS = ("precision", "gpus", "kv_dtype", "max_batch", "attention_kernel",
                    "token_budget")
LORA_DEFAULTS = ("base_format", "lora_rank", "lora_targets", "allow_quantized_base")


def _counted(answers: Answers) -> bool:
    """Whether every compared GPU has its own count (`id@N`), so `gpus` is not a default."""
    return all(split_count(x)[1] is not None for x in (answers.current, *answers.targets))


def _defaults(answers: Answers, sides: list[ResolvedSide], quotes: list[PriceQuote | None]
              ) -> list[DefaultUsed]:
    """Every value that shapes the decision and was not given, with where it came from."""
    w = answers.workload
    out = []
    per_side = {k for v in answers.layouts.values() for k in v.fields_given()}
    names = (TRAINING_DEFAULTS + (LORA_DEFAULTS if w.mode == "lora" else ())
             if w.training else SERVING_DEFAULTS)
    for name in names:
        if name in w.model_fields_set or name in per_side or (
                name == "recompute" and "checkpointing" in w.model_fields_set) or (
                name == "gpus" and _counted(answers)):
            continue
        value: object = getattr(w, name)
        source = "advisor's default"
        if name == "zero_stage" and sides[0].workload.zero_stage != w.zero_stage:
            value, source = sides[0].workload.zero_stage, \
                "PyTorch FSDP's default sharding, FULL_SHARD"
        if name == "global_batch":
            value = f"one micro-batch per data-parallel rank ({w.sequences_per_step})"
        elif name == "token_budget":
            value = "none: jobs are priced per hour and per Mtok"
        elif name == "kv_dtype":
            value = f"auto: {w.kv_bytes:g}-byte KV for {w.precision} weights"
        elif name == "lora_targets":
            value = ", ".join(w.lora_targets)
        out.append(DefaultUsed(field=f"workload.{name}", value=str(value), source=source))
    if not w.training:
        for layout in ("tp", "pp", "ep", "micro_batch"):
            if layout not in w.model_fields_set and layout not in per_side:
                what = "requests in flight" if layout == "micro_batch" else layout.upper()
                out.append(DefaultUsed(field=f"workload.{layout}",
                                       value=f"re-tuned per GPU (the {what} that serves most "
                                             "tokens/s per GPU)",
                                       source="advisor's re-tune"))
    if w.framework == "auto":
        out.append(DefaultUsed(field="workload.framework",
                               value=name_of(sides[0].workload.framework),
                               source=sides[0].framework_why))
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
           probes: Mapping[str, ProbeRecord] | None = None, cal: Calibration = CAL,
           alone: bool = False, workload_probe: ProbeRecord | None = None,
           resolved: Resolution | None = None) -> Decision:
    """Project the workload on the current GPU and every target, and judge each target
    (`alone`: the current GPU may stand without one, for a sweep or a pipeline). The
    current side is anchored on the answers' measurement, else on a workload-probe record
    of the current GPU; `resolved` is that resolution when the caller made it already."""
    resolved = resolved or resolve_anchored(answers, catalog, probes, cal, alone,
                                            workload_probe)
    sides = resolved.sides
    quotes = [quote(s.gpu.id, answers.prices, catalog) for s in sides]
    basis: Basis = answers.basis
    built = [_result(s, basis, q, answers, cal) for s, q in zip(sides, quotes, strict=True)]
    if resolved.anchor is not None:
        built = [(r.model_copy(update={"modelled_tokens_per_s_per_gpu": _primary_rate(m, basis)}),
                  f) for (r, f), m in zip(built, resolved.modelled, strict=True)]
    cur, f_cur = built[0]
    cur = cur.model_copy(update={
        "sweep": [_unit(p) for p in cur.sweep], "as_run": [_unit(p) for p in cur.as_run]})
    c0 = sides[0]
    targets = [_judge(_against(res, cur, s, c0, f_tgt, f_cur, cal), cur, s, c0, f_tgt, f_cur,
                      answers, cal)
               for (res, f_tgt), s in zip(built[1:], sides[1:], strict=True)]
    w = answers.workload
    return Decision(
        answers=answers, primary_seq_len=w.seq_lens[0], basis=basis,
        electricity_source="default" if answers.electricity_is_default else "user",
        band_level=0.9, current=cur, targets=targets,
        defaults=_defaults(answers, sides, quotes), notes=_notes(answers, resolved, cal),
        anchor=resolved.anchor, interactivity=_leads([cur, *targets], quotes, cal))


def _against(res: GpuResult, cur: GpuResult, s: ResolvedSide, c0: ResolvedSide,
             f_tgt: Fitted | None, f_cur: Fitted | None, cal: Calibration) -> GpuResult:
    """The target's points, re-tuned and as run, with their speedups over the current GPU's
    in the same basis."""
    rc, rt = c0.rates, s.rates
    return res.model_copy(update={
        "sweep": _compare(cur.sweep, res.sweep, f_cur.proj if f_cur else None,
                          f_tgt.proj if f_tgt else None, rc, rt, cal),
        "as_run": _compare(cur.as_run, res.as_run,
                           c0.projection.as_run.proj if c0.projection else None,
                           s.projection.as_run.proj if s.projection else None, rc, rt, cal)})


def _notes(answers: Answers, resolved: Resolution, cal: Calibration) -> list[str]:
    """What the figures rest on, for the reader to weigh them: the band, the basis, the
    kernels and engines, the workload's own shape, defaults, and any anchor (said first)."""
    sides = resolved.sides
    notes = [
        "speedup band: 90% (±1.645 sigma) from each rate's spread plus the model's "
        f"own error ({cal.model_sigma:.0%}, sized from its held-out cases)",
        ("speedups compare tokens/s per GPU, each GPU in the layout re-tuned for it (the "
         "as-run figures use your layout on both); cluster figures use each side's GPU count")
        if answers.basis == "retuned" else
        "speedups compare tokens/s per GPU in the layouts as you run them",
    ]
    notes += _engine_notes(answers.workload, sides)
    notes += _workload_notes(answers.workload)
    if answers.electricity_is_default:
        notes.append(f"electricity at the default ${answers.electricity_usd_per_kwh}/kWh")
    notes += [_dropped_note(s) for s in sides if s.dropped]
    if resolved.unused:
        notes.append(resolved.unused)
    anchor = resolved.anchor
    if anchor is not None:
        notes.insert(0, f"anchored on {anchor.whose} {anchor.measured} on {sides[0].gpu.id} "
                        f"(the model gives {anchor.modelled_tokens_per_s_per_gpu:,.0f} tokens/s "
                        f"per GPU as run); moved: {'; '.join(anchor.moved)}")
    return notes


def _engine_notes(w: Workload, sides: list[ResolvedSide]) -> list[str]:
    """Which attention kernel and which framework or serving engine each side was modelled
    with, and why: the speedup depends on them as much as on the silicon."""
    kernels = {s.gpu.id: s.rates.attention_why for s in sides if s.rates}
    notes = [f"attention on {gid}: {why}" for gid, why in kernels.items()]
    engines = {(s.workload.framework, s.framework_why) for s in sides}
    notes += [f"{'serving engine' if not w.training else 'framework'}: {name_of(f)} ({why})"
              for f, why in sorted(engines)]
    if not w.training:
        notes.append("serving engines differ here in how much of the card the KV cache gets "
                     "and in vLLM's prefill dispatch (AIConfigurator's per-engine figures); "
                     "their kernels, CUDA graphs and per-request host cost are modelled alike, "
                     "as no per-engine figure for them is published")
    return notes


def _workload_notes(w: Workload) -> list[str]:
    """Where the workload as given is not what a reader would assume: a batch that does not
    split, packed documents, a model's parameter count taken on trust."""
    notes = []
    if w.training and not w.batch_splits:
        notes.append(f"your global batch of {w.global_batch} does not split into micro-batches "
                     f"of {w.micro_batch} over {w.dp} data-parallel ranks; the as-run figures "
                     "round the accumulation down, the re-tuned layouts keep the batch")
    if w.packed_doc_len is not None:  # it changes the attention work: say by how much
        seq = w.seq_lens[0]
        notes.append(f"packed sequences: documents of {w.packed_doc_len:,} tokens in each "
                     f"{seq:,}-token sequence, attention counted per document (the sum of "
                     f"their squares: {seq / w.packed_doc_len:,.1f}x less attention work than "
                     f"one causal {seq:,}-token sequence)")
    shape_note = w.model.params_note()
    if shape_note:
        notes.append(shape_note)
    return notes


def _dropped_note(s: ResolvedSide) -> str:
    """A side whose GPUs cannot hold the current side's parallelism takes 1 for it as run;
    its re-tuned layout is its own, so only the as-run comparison is touched."""
    return (f"{s.gpu.id}: {s.gpus} GPU{'s' if s.gpus != 1 else ''} cannot hold the current "
            f"side's {', '.join(s.dropped)}: as run it takes 1 for "
            f"{'that' if len(s.dropped) == 1 else 'those'}; its re-tuned layout is its own")


def _primary_rate(side: ResolvedSide, basis: Basis) -> float | None:
    """The model's own tokens/s per GPU at the primary length, before any anchoring."""
    p = side.projection
    if p is None:
        return None
    fitted = p.retuned if basis == "retuned" else p.as_run
    return float(fitted.proj.tokens_per_s[0, 0]) if fitted.fits[0] else None
