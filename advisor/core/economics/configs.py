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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from advisor.core.errors import InputError
from advisor.core.model.options import ConfigOptions, Objective
from advisor.core.model.vocabulary import Ask
from advisor.core.model.workload import Workload

if TYPE_CHECKING:
    from advisor.core.economics.cost import PriceQuote
    from advisor.core.model.answers import Answers
    from advisor.core.model.catalog import Catalog
    from advisor.core.model.probe_record import ProbeRecord
    from advisor.core.projection.calibration import Calibration
    from advisor.core.projection.retune import Fitted
    from advisor.core.sides import ResolvedSide

class ConfigPoint(BaseModel):
    """One GPU type at one count: speed, time, money and power for the whole token budget."""

    model_config = ConfigDict(frozen=True)

    gpu: str
    name: str
    gpus: int
    nodes: int
    idle_gpus: int = Field(description="empty slots of partly used nodes, at idle draw")
    layout: str = Field(default="", description="the layout the engine re-tuned to")
    tokens_per_s: float = Field(description="the cluster's, communication included")
    tokens_per_s_per_gpu: float
    scaling_efficiency: float = Field(
        description="per-GPU rate over this GPU's at its smallest runnable count swept")
    comm_share: float = Field(description="share of a step spent in exposed communication")
    utilisation: float = Field(description="busy (compute or memory) share of a step")
    mfu: float
    eta_days: float = Field(gt=0, description="for the token budget (drawn on a log scale)")
    usd: float | None = Field(ge=0)
    usd_per_gpu_hour: float | None
    price_source: str | None = Field(description="user (your quote) or default (catalog)")
    gpu_days: float
    gpu_days_equiv: float | None = Field(
        description="$ over one current GPU-day: what the job costs in current-GPU days")
    power_kw: float = Field(description="average draw of the GPUs in use, at their utilisation "
                                        "(the verdict's figure)")
    idle_slots_kw: float = Field(default=0.0, description="empty node slots at idle draw")
    host_kw: float = Field(default=0.0, description="the nodes' hosts (CPUs, NICs, switches, "
                                                     "fans) at the GPUs' TDP")
    energy_kwh: float
    energy_usd: float
    pareto: bool = False
    meets_power_cap: bool | None = None
    meets_deadline: bool | None = None

    @property
    def label(self) -> str:
        return f"{self.gpus}x {self.gpu}"

    @property
    def rack_kw(self) -> float:
        """What a rack's power budget counts: the GPUs, the empty slots and the hosts."""
        return self.power_kw + self.idle_slots_kw + self.host_kw


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
    ask: Ask | None = None  # the input that would let it rank on its objective


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


# --- sweep, Pareto front, choice ------------------------------------------------------------


def sweep_configs(answers: Answers, catalog: Catalog,
                  probes: Mapping[str, ProbeRecord] | None = None,
                  cal: Calibration | None = None,
                  sides: Sequence[ResolvedSide] | None = None) -> ConfigSweep:
    """Every compared GPU at every count: re-tuned by the engine, priced, powered, ranked.

    Each GPU is the decision's own resolved side (`sides`, anchored on the user's measured
    run where there is one; resolved here when not given) moved to each count
    (`ResolvedSide.at`), so the row at the count the answers give is the verdict's figure,
    not a re-derivation.
    """
    from advisor.core.anchored import resolve_anchored
    from advisor.core.economics.cost import quote
    from advisor.core.projection.calibration import CAL

    cal = cal or CAL
    opts = answers.configs or ConfigOptions()
    w = answers.workload
    if w.token_budget is None:
        raise InputError("a configuration sweep needs a token budget (tokens to process)",
                         field="workload.token_budget")
    given = sides if sides is not None else resolve_anchored(answers, catalog, probes, cal,
                                                             alone=True).sides
    sides = _one_per_gpu(given)
    quotes = [quote(s.gpu.id, answers.prices, catalog) for s in sides]
    sweep = _Sweep(answers, opts, cal, quotes[0])
    points: list[ConfigPoint] = []
    skipped: list[Skipped] = []
    for n in opts.gpu_counts():
        for s, q in zip(sides, quotes, strict=True):
            got = sweep.point(s, q, n)
            if isinstance(got, Skipped):
                skipped.append(got)
            else:
                points.append(got)
    gpus = [s.gpu for s in sides]
    points = sorted(mark(points, answers.power_cap_kw, opts.deadline_days),
                    key=lambda p: (p.gpu != gpus[0].id, p.gpu, p.gpus))
    return ConfigSweep(
        current=gpus[0].id, gpus=[g.id for g in gpus], counts=opts.gpu_counts(),
        gpus_per_node=opts.gpus_per_node or sides[0].slots_per_node, seq_len=w.seq_lens[0],
        token_budget=w.token_budget,
        electricity_usd_per_kwh=answers.electricity_usd_per_kwh, points=points, skipped=skipped,
        choice=choose(points, opts.objective, answers.power_cap_kw, opts.deadline_days),
        assumptions=_assumptions(answers, opts, sides, quotes, cal.idle_power_fraction)
        + _superlinear(points),
    )


def _one_per_gpu(sides: Sequence[ResolvedSide]) -> list[ResolvedSide]:
    """The sides in order, each GPU once: a target that is also the current GPU is swept once."""
    out: list[ResolvedSide] = []
    for s in sides:
        if s.gpu.id not in [x.gpu.id for x in out]:
            out.append(s)
    return out


@dataclass
class _Sweep:
    """What every (GPU, count) point of one sweep is projected and priced with, and each GPU's
    per-GPU rate at the first count it runs at (the scaling reference, filled as counts are
    swept from the smallest up)."""

    answers: Answers
    opts: ConfigOptions
    cal: Calibration
    base_quote: PriceQuote | None  # the current GPU's, for GPU-days-equivalent
    first_rate: dict[str, float] = field(default_factory=dict)

    def point(self, s: ResolvedSide, q: PriceQuote | None, n: int) -> ConfigPoint | Skipped:
        """One GPU at `n` GPUs, re-tuned, or why it is left out: gated, no rates, a count its
        layout cannot take, no layout that fits, or no TDP to draw power from."""
        if s.gate or s.rates is None:
            return Skipped(gpu=s.gpu.id, gpus=n, reason=s.gate or "no rates")
        try:
            at = s.at(n, self.opts.gpus_per_node).project(self.cal, s.workload.seq_lens[:1])
        except InputError as exc:
            return Skipped(gpu=s.gpu.id, gpus=n, reason=exc.message)
        assert at.projection is not None
        fitted = at.projection.retuned
        busy = float(fitted.proj.busy()[0, 0])
        busy_w, idle_w = s.power.draw_w(busy), s.power.idle_w
        if not fitted.fits[0]:
            return Skipped(gpu=s.gpu.id, gpus=n, reason=(
                f"does not fit: {fitted.memory_gib[0]:.0f} GiB of "
                f"{at.projection.usable_gib:.0f} usable in any layout"))
        if busy_w is None or idle_w is None:
            return Skipped(gpu=s.gpu.id, gpus=n,
                           reason="the catalog has no TDP, so no power draw")
        return self._priced(at, fitted, q, n, busy, busy_w, idle_w)

    def _priced(self, at: ResolvedSide, fitted: Fitted, q: PriceQuote | None, n: int,
                busy: float, busy_w: float, idle_w: float) -> ConfigPoint:
        """A fitted point's speed, time, money and power for the whole token budget, the empty
        slots of a partly used node drawing idle power when the options count them."""
        from advisor.core.economics.cost import job_cost

        answers, opts, w = self.answers, self.opts, self.answers.workload
        p = fitted.proj
        rate = float(p.tokens_per_s[0, 0])
        step = float(p.step_s[0, 0])
        nodes = at.workload.nodes
        idle = max(0, nodes * at.slots_per_node - n) if opts.count_idle_slots else 0
        job = job_cost(n, w.token_budget, rate, q, busy_w,
                       answers.electricity_usd_per_kwh, None, nodes=nodes,
                       host_w_per_node=at.host_w, slots=at.slots_per_node)
        idle_kw = idle * idle_w / 1000.0
        ref = self.first_rate.setdefault(at.gpu.id, rate)
        return ConfigPoint(
            gpu=at.gpu.id, name=at.gpu.name, gpus=n, nodes=nodes, idle_gpus=idle,
            layout=fitted.layouts[0].describe(not w.training),
            tokens_per_s=rate * n, tokens_per_s_per_gpu=rate,
            scaling_efficiency=rate / ref,
            comm_share=float(p.times["communication"][0, 0]) / step,
            utilisation=busy, mfu=float(p.mfu[0, 0]),
            eta_days=job.wall_clock_h / 24, usd=job.usd,
            usd_per_gpu_hour=q.usd_per_hour if q else None,
            price_source=q.source if q else None, gpu_days=job.gpu_days,
            gpu_days_equiv=(job.usd / (self.base_quote.usd_per_hour * 24)
                            if job.usd is not None and self.base_quote else None),
            power_kw=job.power_kw or 0.0, idle_slots_kw=idle_kw, host_kw=job.host_kw or 0.0,
            energy_kwh=(job.energy_kwh or 0.0) + idle_kw * job.wall_clock_h,
            energy_usd=(job.energy_usd or 0.0)
            + idle_kw * job.wall_clock_h * answers.electricity_usd_per_kwh,
        )


def _assumptions(answers: Answers, opts: ConfigOptions, sides: Sequence[ResolvedSide],
                 quotes: Sequence[PriceQuote | None], idle_fraction: float) -> list[str]:
    w = answers.workload
    gpus = [s.gpu for s in sides]
    per_node = ", ".join(sorted({f"{s.gpu.id} {opts.gpus_per_node or s.slots_per_node}"
                                 for s in sides}))
    out = [
        f"throughput at {w.seq_lens[0]:,} tokens per sequence, from the decision engine with "
        "each count in the layout re-tuned for it (communication included: DP/ZeRO/TP/CP/EP "
        f"over the scale-up link inside a node, {w.nic_gbit:g} Gbit/s NIC per GPU across "
        f"nodes; GPUs per node: {per_node})",
        _batch_rule({s.gpu.id: s.workload for s in sides}),
        "power: the GPUs in use at idle + utilisation x (limit - idle), as in the verdict; "
        + _host_words(sides, answers.power_cap_kw) + "; "
        + ("empty slots of a partly used node draw idle power, shown apart and counted in "
           "energy" if opts.count_idle_slots
           else "empty node slots not counted (rented instances)"),
    ]
    no_idle = [s.gpu.id for s in sides if s.power.idle_assumed]
    if no_idle:
        out.append(f"idle draw assumed {idle_fraction:.0%} of TDP for {', '.join(no_idle)} (the "
                   "catalog has none; the published RTX PRO 6000 case: ~50-60 W on a 600 W card)")
    for g, q in zip(gpus, quotes, strict=True):
        out.append(f"{g.id}: " + (f"${q.usd_per_hour:.2f}/GPU-hour ({q.source}: {q.label})" if q
                                  else "no price, so not ranked on cost"))
    if quotes[0] is None:
        out.append(f"GPU-days-equivalent needs a price for the current GPU ({gpus[0].id})")
    return out


def _host_words(sides: Sequence[ResolvedSide], cap: float | None) -> str:
    """What the power cap counts besides the GPUs, and the system figures it comes from."""
    per = ", ".join(sorted({f"{s.gpu.id} {s.host_w / 1000:.1f} kW per {s.slots_per_node}-slot "
                            "node" for s in sides if s.host_w}))
    what = (f"a power cap counts the GPUs, empty slots and each node's hosts (CPUs, NICs, "
            f"switches, fans; {per}" if per else "a power cap counts the GPUs and empty slots "
            "(no TDP, so no host figure")
    return ("" if cap is None else "the ") + what + ", from DGX/NVL72 system power over their " \
        "GPUs' TDP)"


def _batch_rule(workloads: Mapping[str, Workload]) -> str:
    w = next(iter(workloads.values()))
    if not w.training:
        return "serving: requests in flight are per GPU, so each count serves its own"
    if w.global_batch:
        return (f"the global batch stays at {w.global_batch} sequences (fewer micro-batches per "
                "GPU as the count grows)")
    own = {(v.gpus, v.sequences_per_step) for v in workloads.values()}
    if len(own) == 1:
        ((n, batch),) = own
        where = f"below {n} GPUs the global batch stays at your {batch} sequences"
    else:
        where = "below each GPU's own count the global batch stays at its layout's (" + ", ".join(
            f"{g} {v.gpus} GPUs, {v.sequences_per_step} sequences"
            for g, v in workloads.items()) + ")"
    return (f"{where} (gradient accumulation, as when a run shrinks); from there each added "
            "data-parallel rank brings its own micro-batch")


def _superlinear(points: Sequence[ConfigPoint]) -> list[str]:
    """Scaling above 100% reads as an error unless the smaller count's layout says why."""
    out = []
    for gpu in dict.fromkeys(p.gpu for p in points):
        mine = [p for p in points if p.gpu == gpu]
        top = max(mine, key=lambda p: p.scaling_efficiency)
        if top.scaling_efficiency > 1.05:
            first = mine[0].layout
            why = ("more GPUs shard the weights and optimizer state and need less of that"
                   if "offload" in first or "recompute" in first else
                   "each GPU's share of the weights and optimizer step shrinks with the count")
            out.append(f"{gpu}: scaling reaches {top.scaling_efficiency:.0%} at {top.gpus} GPUs "
                       f"because the {mine[0].gpus}-GPU run needs '{first}'; {why}")
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
        "meets_power_cap": p.rack_kw <= power_cap_kw if power_cap_kw is not None else None,
        "meets_deadline": p.eta_days <= deadline_days if deadline_days is not None else None,
    }) for p in points]


def _miss(p: ConfigPoint, cap: float | None, deadline: float | None) -> float:
    """How far past its worst constraint a point lands, as a fraction (0 when it meets both)."""
    over = [p.rack_kw / cap - 1 if cap else 0.0, p.eta_days / deadline - 1 if deadline else 0.0]
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
        unpriced = objective == "cost" and all(p.usd is None for p in points)
        head = (f"no configuration has a price, so none is cheapest; {best.label} is the "
                "fastest" if unpriced else
                f"{best.label} is the {what}")  # unpriced, cost ranks on time alone
        return Choice(objective=objective, power_cap_kw=power_cap_kw, deadline_days=deadline_days,
                      best=best, closest_miss=None, ask="price" if unpriced else None,
                      reason=f"{head} of {len(ok)} configuration(s)"
                             + (f" meeting {limits}" if limits else ""))
    if not points:
        return Choice(objective=objective, power_cap_kw=power_cap_kw, deadline_days=deadline_days,
                      best=None, closest_miss=None, reason="no configuration could be projected")
    near = min(points, key=lambda p: (_miss(p, power_cap_kw, deadline_days), key(p)))
    misses = []
    if power_cap_kw is not None and near.rack_kw > power_cap_kw:
        misses.append(f"{near.rack_kw:.1f} kW against {power_cap_kw:g}, hosts included")
    if deadline_days is not None and near.eta_days > deadline_days:
        misses.append(f"{near.eta_days:.1f} days against {deadline_days:g}")
    return Choice(objective=objective, power_cap_kw=power_cap_kw, deadline_days=deadline_days,
                  best=None, closest_miss=near,
                  reason=f"no configuration meets {limits}; the closest is {near.label} "
                         f"({'; '.join(misses)})")
