"""Which GPU is best for this workload: every catalog GPU, judged as a decision like any other.

The ranking asks the same question as the verdict for every GPU at once, so it goes
through the same answers and the same resolution: the targets the user entered keep
their own count and layout, the others run at the current side's count; a GPU over the
power cap or past the deadline is not ranked, it is listed out with the figure that
keeps it out, like a GPU that fails a gate or does not fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from advisor.core.economics.cost import cap_words
from advisor.core.model.answers import Answers, split_count

if TYPE_CHECKING:
    from advisor.core.model.catalog import Catalog
    from advisor.core.result import Decision, GpuResult

Order = Literal["cost", "time", "energy"]


def ranking_answers(answers: Answers, catalog: Catalog) -> Answers:
    """The answers with every catalog GPU as a target: a target the user entered keeps its
    count (`id@N`) and layout, every other GPU runs at the current side's count."""
    current_id, current_count = split_count(answers.current)
    current = catalog.gpu(current_id).id
    entered = {catalog.gpu(split_count(t)[0]).id: t for t in answers.targets}
    count = current_count or answers.workload.gpus
    targets = [entered.get(g.id, g.id if count == answers.workload.gpus else f"{g.id}@{count}")
               for g in catalog.gpus if g.id != current]
    return answers.model_copy(update={"targets": targets, "configs": None, "pipeline": None})


@dataclass(frozen=True)
class Ranking:
    ranked: list[GpuResult]  # the ones that run, in order
    out: list[tuple[GpuResult, str]]  # the others, with why


def why_out(r: GpuResult, seq: int, power_cap_kw: float | None,
            deadline_days: float | None) -> str | None:
    """Why a GPU cannot be ranked for these answers, or None when it can."""
    v = r.verdict
    if v is not None and v.kind == "blocked-by-gate":
        return v.headline.removeprefix("blocked: ")
    if r.problem:
        return r.problem
    p = r.point(seq)
    if p is None or not p.runnable or not p.tokens_per_s_per_gpu:
        if p is not None and not p.fits:
            return f"does not fit at {seq:,} tokens ({p.memory_gib:,.0f} GiB needed)"
        return "not projected"
    j = r.job
    if power_cap_kw is not None and (j is None or j.power_kw is None):
        return f"the catalog has no power figure for it, so the {power_cap_kw:g} kW cap " \
               "cannot be checked"
    if power_cap_kw is not None and j is not None and j.within_power_cap is False:
        return (f"{cap_words(r.gpus, r.gpu, j)}, over the {power_cap_kw:g} kW cap (at most "
                f"{j.max_gpus_under_cap} fit)")
    if deadline_days is not None and j is not None and j.wall_clock_h / 24 > deadline_days:
        return f"takes {j.wall_clock_h / 24:,.1f} days, past the {deadline_days:g}-day deadline"
    return None


def _key(r: GpuResult, order: Order, seq: int, budget: bool) -> tuple[int, float]:
    """Missing figures (no price) rank last, never first."""
    p = r.point(seq)
    j = r.job
    value: float | None
    if order == "cost":
        value = p.usd_per_mtok if p else None
    elif order == "time":
        value = (j.wall_clock_h if j and budget else
                 -(p.tokens_per_s_cluster or 0) if p else None)
    else:
        value = j.energy_kwh if j and budget else None
    return (1, 0.0) if value is None else (0, value)


def rank(decision: Decision, order: Order = "cost") -> Ranking:
    """Every GPU of the decision that runs these answers, best first, and the others."""
    a = decision.answers
    seq = decision.primary_seq_len
    budget = a.workload.token_budget is not None
    deadline = a.configs.deadline_days if a.configs is not None else None
    ok: list[GpuResult] = []
    out: list[tuple[GpuResult, str]] = []
    for r in (decision.current, *decision.targets):
        why = why_out(r, seq, a.power_cap_kw, deadline)
        if why is None:
            ok.append(r)
        else:
            out.append((r, why))
    ok.sort(key=lambda r: _key(r, order, seq, budget))
    return Ranking(ranked=ok, out=out)
