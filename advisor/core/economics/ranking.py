"""Which GPU is best for this workload: every catalog GPU, judged as a decision like any other.

The ranking asks the same question as the verdict for every GPU at once, so it goes
through the same answers and the same resolution: the targets the user entered keep
their own count, layout and stack, the others run at the current side's count. A GPU that
needs only a package upgrade (or a check of a package nobody has data for) is ranked on
its figures with that remedy beside it; one that cannot hold the format or the memory, or
needs another vendor's stack, or is over the power cap or past the deadline, is listed out
with the reason, the hardware's first. `advisor compare --target all`, `advisor rank` and
the wizard's ^k all read this one ranking.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from advisor.core.economics.cost import cap_words
from advisor.core.model.answers import Answers, check_against_catalog, split_count

if TYPE_CHECKING:
    from advisor.core.model.catalog import Catalog
    from advisor.core.result import Decision, GpuResult

Order = Literal["cost", "time", "energy"]


def ranking_answers(answers: Answers, catalog: Catalog, vendor: str | None = None) -> Answers:
    """The answers with every catalog GPU (of `vendor` when given) as a target: a target the
    user entered keeps its count (`id@N`), layout and stack, every other GPU runs at the
    current side's count. A name no catalog GPU has is one line naming its field."""
    check_against_catalog(answers, catalog)
    current_id, current_count = split_count(answers.current)
    current = catalog.gpu(current_id).id
    entered = {catalog.gpu(split_count(t)[0]).id: t for t in answers.targets}
    count = current_count or answers.workload.gpus
    pool = [g for g in catalog.gpus if g.id != current
            and (vendor is None or g.vendor.lower() == vendor.lower() or g.id in entered)]
    targets = [entered.get(g.id, g.id if count == answers.workload.gpus else f"{g.id}@{count}")
               for g in pool]
    return answers.model_copy(update={"targets": targets, "configs": None, "pipeline": None})


RemedyKind = Literal["upgrade", "check"]


@dataclass(frozen=True)
class Remedy:
    """What a ranked GPU needs before it runs: a package upgrade (or reinstall), or a check
    of packages nobody has support data for on it."""

    kind: RemedyKind
    text: str  # the gate's own actions


@dataclass(frozen=True)
class Ranking:
    order: Order
    ranked: list[GpuResult]  # the ones that run (or would, after a remedy), in order
    remedies: dict[str, Remedy]  # a ranked GPU's one thing to do first, by GPU
    out: list[tuple[GpuResult, str]]  # the others, with why

    def by_remedy(self) -> dict[str, list[str]]:
        """The ranked GPUs that need something first, grouped by what: remedy -> GPUs."""
        out: dict[str, list[str]] = {}
        for gpu, what in self.remedies.items():
            out.setdefault(what.text, []).append(gpu)
        return out

    def unchecked(self) -> list[str]:
        """The ranked GPUs no stack was checked on (none given for them): ranked on the
        hardware alone."""
        return [r.gpu for r in self.ranked if r.software_gate is None]

    def unpriced(self) -> list[str]:
        """The ranked GPUs with no price, which cannot be ranked on $/token: quote one."""
        return [r.gpu for r in self.ranked
                if r.assumptions is None or r.assumptions.price is None]


def remedy(r: GpuResult) -> Remedy | None:
    """What a target needs before it runs, when that is only a package upgrade or a check
    of a package nobody has support data for; None when it needs nothing (or more)."""
    g = r.software_gate
    if r.role == "current" or g is None or g.remedy is None:
        return None
    return Remedy("check" if g.status == "unverified" else "upgrade", g.remedy)


def why_out(r: GpuResult, seq: int, power_cap_kw: float | None,
            deadline_days: float | None) -> str | None:
    """Why a GPU cannot be ranked for these answers, or None when it can. What the hardware
    cannot do (a format, the memory) is said before any software remedy."""
    if r.problem:
        return r.problem
    if not r.dtype_gate.passed:
        return r.dtype_gate.reason
    p = r.point(seq)
    if p is not None and not (p.fits or p.borderline):
        return (f"does not fit at {seq:,} tokens on {r.gpus} GPU{'s' if r.gpus != 1 else ''} "
                f"({p.memory_gib:,.0f} GiB needed per GPU in any layout)")
    v = r.verdict
    if v is not None and v.kind == "blocked-by-gate" and remedy(r) is None:
        return v.headline.cause or "blocked"
    if p is None or not p.runnable or not p.tokens_per_s_per_gpu:
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


def rank(decision: Decision, order: Order = "cost",
         deadline_days: float | None = None) -> Ranking:
    """Every GPU of the decision that runs these answers (or would after an upgrade or a
    check, named beside it), best first, and the others with why. `deadline_days`: the
    answers' [configs] deadline, which `ranking_answers` leaves out with the sweep."""
    a = decision.answers
    seq = decision.primary_seq_len
    budget = a.workload.token_budget is not None
    deadline = deadline_days if deadline_days is not None else (
        a.configs.deadline_days if a.configs is not None else None)
    ok: list[GpuResult] = []
    out: list[tuple[GpuResult, str]] = []
    remedies: dict[str, Remedy] = {}
    for r in (decision.current, *decision.targets):
        why = why_out(r, seq, a.power_cap_kw, deadline)
        if why is not None:
            out.append((r, why))
            continue
        ok.append(r)
        first = remedy(r)
        if first is not None:
            remedies[r.gpu] = first
    ok.sort(key=lambda r: _key(r, order, seq, budget))
    return Ranking(order=order, ranked=ok, remedies=remedies, out=out)
