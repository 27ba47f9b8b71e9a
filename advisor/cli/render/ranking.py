"""The ranking of every catalog GPU as blocks: the order, one row per GPU that runs (with the
remedy it needs first, if any), the ones that are out and why, and what the figures rest on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from advisor.cli.render.blocks import Block, Bullets, Col, Heading, Para, Table
from advisor.cli.render.decision import SERVING
from advisor.humanize import NA, duration, number

if TYPE_CHECKING:
    from advisor.core import GpuResult, Ranking, Remedy, Report

ORDERS = {"cost": "$/token", "time": "time", "energy": "energy"}
FIRST = {"upgrade": "upgrade first", "check": "check first"}
"""A ranked GPU's verdict while a remedy stands between it and running, by the remedy's kind."""


def _price(r: GpuResult) -> str:
    q = r.assumptions.price if r.assumptions else None
    if q is None:
        return "none"
    return f"{q.usd_per_hour:.2f} {'quote' if q.source == 'user' else 'default'}"


def _verdict(r: GpuResult, remedies: dict[str, Remedy]) -> str:
    if r.role == "current":
        return "today"
    if r.gpu in remedies:  # blocked only until the remedy below
        return FIRST[remedies[r.gpu].kind]
    return r.verdict.kind if r.verdict else NA


def _gpus(n: int) -> str:
    return f"{n} GPU{'s' if n != 1 else ''}"


def ranking_blocks(report: Report, ranking: Ranking, *, answers_file: bool = False
                   ) -> list[Block]:
    """The ranked table first, then what is out, then the notes. `answers_file`: the answers
    came from a file, so a missing price or stack is given there, not with compare's flags."""
    d = report.decision
    seq = d.primary_seq_len
    budget = d.answers.workload.token_budget is not None
    waits = [] if d.answers.workload.training else [f for f in SERVING if not f.col.drop]
    rows = []
    for i, r in enumerate(ranking.ranked, 1):
        p = r.point(seq)
        j = r.job
        rows.append([
            str(i), r.gpu + (" (now)" if r.role == "current" else ""), str(r.gpus),
            _verdict(r, ranking.remedies),
            number(p.usd_per_mtok, 3) if p and p.usd_per_mtok else "?",
            *(f.cell(d, r, p) for f in waits), _price(r),
            number(p.tokens_per_s_per_gpu) if p else NA,
            (duration(j.wall_clock_h) if budget else number(p.tokens_per_s_cluster))
            if j and p else NA,
            (number(j.energy_kwh) if budget else number(j.power_kw, 1))
            if j and j.power_kw is not None else "?"])
    table = Table(
        [Col("#", numeric=True), Col("GPU", whole=True), Col("GPUs", numeric=True, drop=4),
         Col("verdict", drop=3), Col("cost", "$/Mtok", numeric=True),
         *(f.col for f in waits), Col("price", "$/GPU-h", drop=5),
         Col("tokens/s", "per GPU", numeric=True, drop=2),
         Col("wall-clock" if budget else "cluster", "" if budget else "tokens/s", numeric=True),
         Col("energy" if budget else "power", "kWh" if budget else "kW", numeric=True,
             drop=1)],
        rows, title=f"Ranked by {ORDERS[ranking.order]} at {seq:,} tokens",
        notes=[f"each GPU re-tuned for these answers at {_gpus(d.current.gpus)} unless you gave "
               "it a count, and gated on the stack it would run; a GPU that needs only an "
               "upgrade (or a check of a package with no support data) is ranked on its "
               "figures, its remedy listed below; 'default' prices are the catalog's medians "
               "of dated public quotes, not quotes"])
    out: list[Block] = [Heading(f"Which GPU for {d.answers.workload.model.name}?")]
    out.append(table if rows else Para(
        f"none of the {len(ranking.out)} GPUs runs these answers: each is listed below with "
        "why (the power cap and the deadline count too)"))
    first = ranking.by_remedy()
    if first:
        out.append(Bullets([f"{', '.join(gpus)}: {what}" for what, gpus in first.items()],
                           title="First, for the ranked GPUs that need it"))
    if ranking.out:
        out.append(Bullets([f"{r.gpu} ({_gpus(r.gpus)}): {why}" for r, why in ranking.out],
                           title=f"Out ({len(ranking.out)}): the hardware cannot, another "
                                 "stack is needed, or over the cap or the deadline"))
    unpriced, unchecked = ranking.unpriced(), ranking.unchecked()
    if unpriced:
        where = "under [prices] in the answers file" if answers_file else "with --price GPU=USD"
        out.append(Para(f"no price for {', '.join(unpriced)}, so ranked last on $/token: "
                        f"quote one {where}", dim=True))
    if unchecked:
        where = ("[stack] in the answers file, or a target's own as stacks.<id>" if answers_file
                 else "--stack 'torch==2.7.1+cu128 ...', or a target's own with "
                      "--target-stack GPU=...")
        which = (": no stack given, so every GPU is" if len(unchecked) == len(ranking.ranked)
                 else f" on {', '.join(unchecked)}: no stack given for them, so they are")
        out.append(Para(f"software not checked{which} ranked on the hardware alone; give the "
                        f"job's ({where})", dim=True))
    if not budget:
        out.append(Para("no token budget: time ranks by cluster tokens/s and energy cannot be "
                        "ranked; give one for wall-clock, $ and kWh", dim=True))
    return out


def ranking_json(report: Report, ranking: Ranking) -> dict[str, Any]:
    d = report.decision
    seq = d.primary_seq_len

    def row(r: GpuResult) -> dict[str, Any]:
        p = r.point(seq)
        q = r.assumptions.price if r.assumptions else None
        remedy = ranking.remedies.get(r.gpu)
        return {"gpu": r.gpu, "gpus": r.gpus, "role": r.role,
                "verdict": r.verdict.kind if r.verdict else None,
                "usd_per_mtok": p.usd_per_mtok if p else None,
                "price": q.model_dump() if q else None,
                "tokens_per_s_per_gpu": p.tokens_per_s_per_gpu if p else None,
                "tokens_per_s_cluster": p.tokens_per_s_cluster if p else None,
                "job": r.job.model_dump() if r.job else None,
                "remedy": remedy.text if remedy else None,
                "remedy_kind": remedy.kind if remedy else None}

    return {"order": ranking.order, "seq_len": seq,
            "ranked": [row(r) for r in ranking.ranked],
            "out": [{**row(r), "why": why} for r, why in ranking.out]}
