"""The ranking of every catalog GPU as blocks: the order, one row per GPU that runs (with the
remedy it needs first, if any), the ones that are out and why, and what the figures rest on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.present.blocks import Block, Bullets, Col, Heading, Para, Table
from advisor.present.decision import SERVING, gpu_price
from advisor.present.humanize import NA, UNKNOWN, duration, number
from advisor.present.words import Dialect, asked, plural

if TYPE_CHECKING:
    from advisor.core import Decision, GpuResult, Ranking, Remedy, Report, SweepPoint
    from advisor.present.decision import Figure

ORDERS = {"cost": "$/token", "time": "time", "energy": "energy"}
FIRST = {"upgrade": "upgrade first", "check": "check first"}
"""A ranked GPU's verdict while a remedy stands between it and running, by the remedy's kind."""


def _verdict(r: GpuResult, remedies: dict[str, Remedy]) -> str:
    if r.role == "current":
        return "today"
    if r.gpu in remedies:  # blocked only until the remedy below
        return FIRST[remedies[r.gpu].kind]
    return r.verdict.kind if r.verdict else NA


def ranking_blocks(report: Report, ranking: Ranking, *, dialect: Dialect = "flags"
                   ) -> list[Block]:
    """The ranked table first, then the remedies the ranked GPUs need, what the ranking could
    not count, and what is out and why. `dialect`: where a missing price or stack is given."""
    d = report.decision
    waits = [] if d.answers.workload.training else [f for f in SERVING if not f.col.drop]
    out: list[Block] = [Heading(f"Which GPU for {d.answers.workload.model.name}?")]
    out.append(_ranked_table(d, ranking, waits) if ranking.ranked else Para(
        f"none of the {len(ranking.out)} GPUs runs these answers: each is listed below with "
        "why (the power cap and the deadline count too)"))
    return out + _remedies(ranking) + _caveats(ranking, _has_budget(d), dialect) + _out(ranking)


def _has_budget(d: Decision) -> bool:
    """With a token budget the table shows the job (wall-clock, kWh); without, the rates."""
    return d.answers.workload.token_budget is not None


def _ranked_table(d: Decision, ranking: Ranking, waits: list[Figure]) -> Table:
    """One row per ranked GPU in rank order, with a serving workload's wait columns."""
    seq, budget = d.primary_seq_len, _has_budget(d)
    rows = [_ranked_row(i, r, d, ranking.remedies, waits)
            for i, r in enumerate(ranking.ranked, 1)]
    return Table(
        [Col("#", numeric=True), Col("GPU", whole=True), Col("GPUs", numeric=True, drop=4),
         Col("verdict", drop=3), Col("cost", "$/Mtok", numeric=True),
         *(f.col for f in waits), Col("price", "$/GPU-h", drop=5),
         Col("tokens/s", "per GPU", numeric=True, drop=2),
         Col("wall-clock" if budget else "cluster", "" if budget else "tokens/s", numeric=True),
         Col("energy" if budget else "power", "kWh" if budget else "kW", numeric=True,
             drop=1)],
        rows, title=f"Ranked by {ORDERS[ranking.order]} at {seq:,} tokens",
        notes=[f"each GPU re-tuned for these answers at {plural(d.current.gpus, 'GPU')} unless "
               "you gave it a count, and gated on the stack it would run; a GPU that needs only an "
               "upgrade (or a check of a package with no support data) is ranked on its "
               "figures, its remedy listed below; 'default' prices are the catalog's medians "
               "of dated public quotes, not quotes"])


def _ranked_row(i: int, r: GpuResult, d: Decision, remedies: dict[str, Remedy],
                waits: list[Figure]) -> list[str]:
    """A ranked GPU's cells, in the table's column order."""
    p = r.point(d.primary_seq_len)
    return [
        str(i), r.gpu + (" (now)" if r.role == "current" else ""), str(r.gpus),
        _verdict(r, remedies),
        number(p.usd_per_mtok, 3) if p and p.usd_per_mtok else UNKNOWN,
        *(f.cell(d, r, p) for f in waits), gpu_price(r),
        number(p.tokens_per_s_per_gpu) if p else NA,
        _pace(r, p, _has_budget(d)), _energy(r, _has_budget(d))]


def _pace(r: GpuResult, p: SweepPoint | None, budget: bool) -> str:
    """The job's wall-clock for the budget, else the cluster's tokens/s."""
    j = r.job
    if not (j and p):
        return NA
    return duration(j.wall_clock_h) if budget else number(p.tokens_per_s_cluster)


def _energy(r: GpuResult, budget: bool) -> str:
    """The job's kWh for the budget, else its power draw in kW; UNKNOWN without a power
    figure."""
    j = r.job
    if not (j and j.power_kw is not None):
        return UNKNOWN
    return number(j.energy_kwh) if budget else number(j.power_kw, 1)


def _remedies(ranking: Ranking) -> list[Block]:
    """What the ranked GPUs need first, by remedy."""
    first = ranking.by_remedy()
    return [Bullets([f"{', '.join(gpus)}: {what}" for what, gpus in first.items()],
                    title="First, for the ranked GPUs that need it")] if first else []


def _out(ranking: Ranking) -> list[Block]:
    """The GPUs that are out, and why."""
    return [Bullets([f"{r.gpu} ({plural(r.gpus, 'GPU')}): {why}" for r, why in ranking.out],
                    title=f"Out ({len(ranking.out)}): the hardware cannot, another stack is "
                          "needed, or over the cap or the deadline")] if ranking.out else []


def _caveats(ranking: Ranking, budget: bool, dialect: Dialect) -> list[Block]:
    """What the ranking could not count (prices, the stack, a token budget), each with where
    to give it: the answers file's tables or compare's flags."""
    out: list[Block] = []
    unpriced, unchecked = ranking.unpriced(), ranking.unchecked()
    if unpriced:
        out.append(Para(asked(f"no price for {', '.join(unpriced)}, so ranked last on $/token",
                              "price", dialect), dim=True))
    if unchecked:
        out.append(_unchecked_note(unchecked, len(ranking.ranked), dialect))
    if not budget:
        out.append(Para("no token budget: time ranks by cluster tokens/s and energy cannot be "
                        "ranked; give one for wall-clock, $ and kWh", dim=True))
    return out


def _unchecked_note(unchecked: list[str], ranked: int, dialect: Dialect) -> Para:
    """Which ranked GPUs were ranked without a software check (all, or the named ones)."""
    which = (": no stack given, so every GPU is" if len(unchecked) == ranked
             else f" on {', '.join(unchecked)}: no stack given for them, so they are")
    return Para(asked(f"software not checked{which} ranked on the hardware alone", "stack",
                      dialect), dim=True)
