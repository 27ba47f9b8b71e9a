"""Configuration sweep: how many of which GPU, and the best one under a power cap or a deadline.

Real decisions sound like "4x or 8x B200?" or "can we drop to 6 GPUs to fit the rack?".
For each candidate GPU the sweep projects the workload at each GPU count with the
decision engine, so scaling pays for its communication: a larger data-parallel group
spends longer in the all-reduce and may cross nodes. It then prices the token budget
and draws power as busy GPUs at their utilisation plus idle GPUs at idle draw. The
Pareto front over (wall clock, $, kW) holds the configurations worth considering;
`choose` picks one under the user's constraints with an explicit objective.

Answers carry ConfigOptions, and the wizard imports answers at startup without numpy,
so this module stays light at import: the engine loads inside the functions that run it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from advisor.core.errors import InputError
from advisor.core.model.options import ConfigOptions, Objective
from advisor.core.model.workload import Workload

if TYPE_CHECKING:
    from advisor.core.economics.cost import PriceQuote
    from advisor.core.model.answers import Answers
    from advisor.core.model.catalog import Catalog, Gpu
    from advisor.core.model.probe_record import ProbeRecord
    from advisor.core.model.stack import Stack
    from advisor.core.projection.calibration import Calibration
    from advisor.core.projection.rates import GpuRates

class ConfigPoint(BaseModel):
    """One GPU type at one count: speed, time, money and power for the whole token budget."""

    model_config = ConfigDict(frozen=True)

    gpu: str
    name: str
    gpus: int
    nodes: int
    idle_gpus: int = Field(description="empty slots of partly used nodes, at idle draw")
    tokens_per_s: float = Field(description="the cluster's, communication included")
    tokens_per_s_per_gpu: float
    scaling_efficiency: float = Field(
        description="per-GPU rate over this GPU's at its smallest runnable count swept")
    comm_share: float = Field(description="share of a step spent in exposed communication")
    utilisation: float = Field(description="busy (compute or memory) share of a step")
    mfu: float
    eta_days: float
    usd: float | None
    usd_per_gpu_hour: float | None
    price_source: str | None = Field(description="user (your quote) or default (catalog)")
    gpu_days: float
    gpu_days_equiv: float | None = Field(
        description="$ over one current GPU-day: what the job costs in current-GPU days")
    power_kw: float = Field(description="average draw: busy GPUs at utilisation, idle at idle")
    energy_kwh: float
    energy_usd: float
    pareto: bool = False
    meets_power_cap: bool | None = None
    meets_deadline: bool | None = None

    @property
    def label(self) -> str:
        return f"{self.gpus}x {self.gpu}"


class Skipped(BaseModel):
    model_config = ConfigDict(frozen=True)

    gpu: str
    gpus: int
    reason: str


class Choice(BaseModel):
    """The pick under the constraints, or why nothing qualifies and what comes closest."""

    model_config = ConfigDict(frozen=True)

    objective: Objective
    power_cap_kw: float | None
    deadline_days: float | None
    best: ConfigPoint | None
    closest_miss: ConfigPoint | None
    reason: str


class ConfigSweep(BaseModel):
    model_config = ConfigDict(frozen=True)

    current: str
    gpus: list[str]
    counts: list[int]
    gpus_per_node: int
    seq_len: int
    token_budget: float
    electricity_usd_per_kwh: float
    points: list[ConfigPoint]
    skipped: list[Skipped]
    choice: Choice
    assumptions: list[str]

    def front(self) -> list[ConfigPoint]:
        return [p for p in self.points if p.pareto]


# --- the engine, per layout ------------------------------------------------------------------


@dataclass(frozen=True)
class EngineRun:
    """The engine's projection of one GPU in one layout; `problem` says why it cannot run."""

    tokens_per_s_per_gpu: float
    utilisation: float
    mfu: float
    comm_share: float
    busy_w: float | None
    idle_w: float | None
    problem: str | None


def resolve_gpus(
    workload: Workload, gpus: Sequence[Gpu], catalog: Catalog,
    probes: Mapping[str, ProbeRecord] | None, stack: Stack | None, cal: Calibration,
) -> list[tuple[GpuRates | None, str | None]]:
    """Rates for each GPU (the first is the current one, whose probe efficiency transfers),
    or why it cannot be projected: a number-format or software gate, or a catalog gap."""
    from advisor.core.gates.dtype import check_dtype
    from advisor.core.gates.software import check_software
    from advisor.core.projection.rates import PEAK_KEYS, resolve_rates, transfer_efficiency

    by_id = {catalog.gpu(k).id: v for k, v in (probes or {}).items()}
    current = gpus[0]
    key = next((k for k in PEAK_KEYS[workload.precision] if current.peak_tflops.get(k)), "bf16")
    donor = transfer_efficiency(current, by_id.get(current.id), key)
    out: list[tuple[GpuRates | None, str | None]] = []
    for g in gpus:
        gate = check_dtype(g, catalog.arch_of(g), workload.precision)
        soft = check_software(stack, g, catalog, precision=workload.precision) if stack else None
        if not gate.passed:
            out.append((None, gate.reason))
        elif soft is not None and soft.status == "blocked":
            out.append((None, soft.summary))
        else:
            try:
                out.append((resolve_rates(g, workload, by_id.get(g.id),
                                          None if g is current else donor, cal), None))
            except InputError as exc:
                out.append((None, exc.message))
    return out


def run_layout(workload: Workload, gpus: Sequence[Gpu],
               rates: Sequence[GpuRates | None], cal: Calibration) -> list[EngineRun]:
    """Project `workload` (its own GPU count and nodes) at its primary sequence length."""
    from advisor.core.economics.cost import gpu_power_w
    from advisor.core.projection.memory import fit, memory_model
    from advisor.core.projection.roofline import COMPUTE, MEMORY, simulate

    live = [r for r in rates if r is not None]
    proj = simulate(workload, live, workload.seq_lens[:1], cal) if live else None
    mem = memory_model(workload, cal)
    out, row = [], 0
    for g, r in zip(gpus, rates, strict=True):
        if r is None or proj is None:
            out.append(EngineRun(0.0, 0.0, 0.0, 0.0, None, None, "cannot be projected"))
            continue
        spent = proj.resource_time()[:, row, 0]
        step = float(proj.step_s[row, 0])
        util = float((spent[COMPUTE] + spent[MEMORY]) / spent.sum())
        memfit = fit(mem, g, workload.seq_lens[:1], cal)
        problem = None if memfit.fits[0] else (
            f"does not fit: {memfit.total_gib[0]:.0f} GiB of {memfit.usable_gib:.0f} usable")
        out.append(EngineRun(
            tokens_per_s_per_gpu=float(proj.tokens_per_s[row, 0]), utilisation=util,
            mfu=float(proj.model_flops[row, 0] / step / proj.peak[row, 0]),
            comm_share=float(proj.times["communication"][row, 0]) / step,
            busy_w=gpu_power_w(r, util, cal), idle_w=gpu_power_w(r, 0.0, cal), problem=problem))
        row += 1
    return out


def layout(workload: Workload, gpus: int, per_node: int) -> tuple[Workload | None, str]:
    """The workload on `gpus` GPUs in nodes of `per_node`, or None and why that layout fails."""
    nodes = -(-gpus // per_node)
    try:
        return Workload.model_validate({**workload.model_dump(), "gpus": gpus, "nodes": nodes}), ""
    except ValidationError as exc:
        return None, exc.errors()[0]["msg"].removeprefix("Value error, ")


# --- sweep, Pareto front, choice ------------------------------------------------------------


def sweep_configs(answers: Answers, catalog: Catalog,
                  probes: Mapping[str, ProbeRecord] | None = None,
                  cal: Calibration | None = None) -> ConfigSweep:
    """Every candidate GPU at every count: projected, priced, powered, then ranked."""
    from advisor.core.economics.cost import job_cost, quote
    from advisor.core.projection.calibration import CAL

    cal = cal or CAL
    opts = answers.configs or ConfigOptions()
    w = answers.workload
    if w.token_budget is None:
        raise InputError("a configuration sweep needs a token budget (tokens to process)",
                         field="workload.token_budget")
    gpus: list[Gpu] = []
    for gid in (answers.current, *answers.targets):
        g = catalog.gpu(gid)
        if g not in gpus:
            gpus.append(g)
    resolved = resolve_gpus(w, gpus, catalog, probes, answers.stack, cal)
    rates = [r for r, _ in resolved]
    quotes = [quote(g.id, answers.prices, catalog) for g in gpus]
    base_quote = quotes[0]
    points: list[ConfigPoint] = []
    skipped: list[Skipped] = []
    first_rate: dict[str, float] = {}
    for n in opts.gpu_counts():
        trial, why = layout(w, n, opts.gpus_per_node)
        if trial is None:
            skipped += [Skipped(gpu=g.id, gpus=n, reason=why) for g in gpus]
            continue
        idle = trial.nodes * opts.gpus_per_node - n if opts.count_idle_slots else 0
        runs = run_layout(trial, gpus, rates, cal)
        for g, run, (_, gate), q in zip(gpus, runs, resolved, quotes, strict=True):
            problem = gate or run.problem or (
                None if run.busy_w is not None else "the catalog has no TDP, so no power draw")
            if problem or run.busy_w is None or run.idle_w is None:
                skipped.append(Skipped(gpu=g.id, gpus=n, reason=problem or ""))
                continue
            per_gpu_w = (n * run.busy_w + idle * run.idle_w) / n
            job = job_cost(trial, run.tokens_per_s_per_gpu, q, per_gpu_w,
                           answers.electricity_usd_per_kwh, None)
            ref = first_rate.setdefault(g.id, run.tokens_per_s_per_gpu)
            points.append(ConfigPoint(
                gpu=g.id, name=g.name, gpus=n, nodes=trial.nodes, idle_gpus=idle,
                tokens_per_s=run.tokens_per_s_per_gpu * n,
                tokens_per_s_per_gpu=run.tokens_per_s_per_gpu,
                scaling_efficiency=run.tokens_per_s_per_gpu / ref,
                comm_share=run.comm_share, utilisation=run.utilisation, mfu=run.mfu,
                eta_days=job.wall_clock_h / 24, usd=job.usd,
                usd_per_gpu_hour=q.usd_per_hour if q else None,
                price_source=q.source if q else None, gpu_days=job.gpu_days,
                gpu_days_equiv=(job.usd / (base_quote.usd_per_hour * 24)
                                if job.usd is not None and base_quote else None),
                power_kw=job.power_kw or 0.0, energy_kwh=job.energy_kwh or 0.0,
                energy_usd=job.energy_usd or 0.0,
            ))
    points = sorted(mark(points, answers.power_cap_kw, opts.deadline_days),
                    key=lambda p: (p.gpu != gpus[0].id, p.gpu, p.gpus))
    return ConfigSweep(
        current=gpus[0].id, gpus=[g.id for g in gpus], counts=opts.gpu_counts(),
        gpus_per_node=opts.gpus_per_node, seq_len=w.seq_lens[0], token_budget=w.token_budget,
        electricity_usd_per_kwh=answers.electricity_usd_per_kwh, points=points, skipped=skipped,
        choice=choose(points, opts.objective, answers.power_cap_kw, opts.deadline_days),
        assumptions=_assumptions(answers, opts, gpus, rates, quotes, cal.idle_power_fraction),
    )


def _assumptions(answers: Answers, opts: ConfigOptions, gpus: Sequence[Gpu],
                 rates: Sequence[GpuRates | None], quotes: Sequence[PriceQuote | None],
                 idle_fraction: float) -> list[str]:
    w = answers.workload
    out = [
        f"throughput at {w.seq_lens[0]:,} tokens per sequence, from the decision engine "
        "(communication included: DP/ZeRO/TP/CP/EP over NVLink inside a node, "
        f"{w.nic_gbit:g} Gbit/s NIC per GPU across nodes of {opts.gpus_per_node})",
        (f"the global batch stays at {w.global_batch} sequences (fewer micro-batches per GPU "
         "as the count grows)") if w.global_batch else
        "weak scaling: each added data-parallel rank brings its own micro-batch",
        "power: busy GPUs at idle + utilisation x (TDP - idle); "
        + ("empty slots of a partly used node at idle draw" if opts.count_idle_slots
           else "empty node slots not counted (rented instances)"),
    ]
    no_idle = [g.id for g, r in zip(gpus, rates, strict=True)
               if r is not None and r.tdp_w is not None and r.idle_w is None]
    if no_idle:
        out.append(f"idle draw assumed {idle_fraction:.0%} of TDP for {', '.join(no_idle)} (the "
                   "catalog has none; the published RTX PRO 6000 case: ~50-60 W on a 600 W card)")
    for g, q in zip(gpus, quotes, strict=True):
        out.append(f"{g.id}: " + (f"${q.usd_per_hour:.2f}/GPU-hour ({q.source}: {q.label})" if q
                                  else "no price (quote one with --price); not ranked on cost"))
    if quotes[0] is None:
        out.append(f"GPU-days-equivalent needs a price for the current GPU ({gpus[0].id})")
    return out


def _dominates(a: ConfigPoint, b: ConfigPoint) -> bool:
    """No worse on every axis both have (time, kW, and $ where both are priced), better on one."""
    pairs = [(a.eta_days, b.eta_days), (a.power_kw, b.power_kw)]
    if a.usd is not None and b.usd is not None:
        pairs.append((a.usd, b.usd))
    return all(x <= y for x, y in pairs) and any(x < y for x, y in pairs)


def mark(points: Sequence[ConfigPoint], power_cap_kw: float | None,
         deadline_days: float | None) -> list[ConfigPoint]:
    """Points with their Pareto membership and whether they meet the cap and the deadline."""
    return [p.model_copy(update={
        "pareto": not any(_dominates(q, p) for q in points if q is not p),
        "meets_power_cap": p.power_kw <= power_cap_kw if power_cap_kw is not None else None,
        "meets_deadline": p.eta_days <= deadline_days if deadline_days is not None else None,
    }) for p in points]


def _miss(p: ConfigPoint, cap: float | None, deadline: float | None) -> float:
    """How far past its worst constraint a point lands, as a fraction (0 when it meets both)."""
    over = [p.power_kw / cap - 1 if cap else 0.0, p.eta_days / deadline - 1 if deadline else 0.0]
    return max(0.0, *over)


def choose(points: Sequence[ConfigPoint], objective: Objective, power_cap_kw: float | None,
           deadline_days: float | None) -> Choice:
    """The cheapest (or fastest) point meeting the cap and the deadline, else the closest miss.

    Cost ranks priced points first; time breaks cost ties and cost breaks time ties.
    """
    def key(p: ConfigPoint) -> tuple[float, ...]:
        usd = p.usd if p.usd is not None else float("inf")
        return (usd, p.eta_days, p.power_kw) if objective == "cost" else (
            p.eta_days, usd, p.power_kw)

    limits = " and ".join(x for x in (
        f"a {power_cap_kw:g} kW power cap" if power_cap_kw is not None else "",
        f"a {deadline_days:g}-day deadline" if deadline_days is not None else "") if x)
    what = "cheapest" if objective == "cost" else "fastest"
    ok = [p for p in points if _miss(p, power_cap_kw, deadline_days) == 0]
    if ok:
        best = min(ok, key=key)
        return Choice(objective=objective, power_cap_kw=power_cap_kw, deadline_days=deadline_days,
                      best=best, closest_miss=None,
                      reason=f"{best.label} is the {what} of {len(ok)} configuration(s)"
                             + (f" meeting {limits}" if limits else ""))
    if not points:
        return Choice(objective=objective, power_cap_kw=power_cap_kw, deadline_days=deadline_days,
                      best=None, closest_miss=None, reason="no configuration could be projected")
    near = min(points, key=lambda p: (_miss(p, power_cap_kw, deadline_days), key(p)))
    misses = []
    if power_cap_kw is not None and near.power_kw > power_cap_kw:
        misses.append(f"{near.power_kw:.1f} kW against {power_cap_kw:g}")
    if deadline_days is not None and near.eta_days > deadline_days:
        misses.append(f"{near.eta_days:.1f} days against {deadline_days:g}")
    return Choice(objective=objective, power_cap_kw=power_cap_kw, deadline_days=deadline_days,
                  best=None, closest_miss=near,
                  reason=f"no configuration meets {limits}; the closest is {near.label} "
                         f"({'; '.join(misses)})")
