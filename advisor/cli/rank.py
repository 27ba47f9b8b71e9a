"""`advisor rank`: every catalog GPU for one workload, best first, as the wizard's ^k does.

The answers come from a file (--answers) or the workload flags of `advisor compare`; every
other catalog GPU (of --vendor) becomes a target at the current side's count, the targets
you name keep their own count, layout and stack, and `run()` judges them all. The ranking
(`advisor.core.rank`) orders those that run by $/token, time or energy, names the remedy a
GPU needs first, and lists the rest with why. `advisor compare --target all` is this command.
"""

from __future__ import annotations

import argparse
import contextlib
from typing import TYPE_CHECKING, Any

from advisor.cli import COMMANDS
from advisor.cli.flags import COMMAND_LINE, errors_name_flags
from advisor.cli.output import add_output_options, show
from advisor.cli.schemas import RANKING
from advisor.core import InputError, in_file

if TYPE_CHECKING:
    from advisor.core import Answers, Catalog, GpuResult, Ranking, Report

DESCRIPTION = """\
Rank every catalog GPU for the workload in --answers FILE (or the workload flags of
`advisor compare`): each re-tuned and judged as a target at the current side's GPU count
(a target you name keeps its count, layout and stack), ordered by --by (cost: $/token,
time, or energy), with the remedy a GPU needs first beside it (an upgrade, or a check of
a package nobody has support data for). GPUs that cannot hold the format or the memory,
need another vendor's stack, or break the power cap or the deadline are listed apart,
with why.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from advisor.cli.compare import add_workload_args

    p = sub.add_parser("rank", help=COMMANDS["rank"], description=DESCRIPTION)
    add_workload_args(p, required=False, counts=True)
    p.add_argument("--answers", metavar="FILE", help="answers.toml; - reads standard input")
    add_rank_args(p)
    add_output_options(p)
    p.set_defaults(handler=cmd_rank)


def add_rank_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--by", choices=["cost", "time", "energy"], default="cost",
                   help="order: $/token (default), wall-clock time, or energy")
    p.add_argument("--vendor", help="rank only this vendor's GPUs (NVIDIA, AMD, Intel, ...)")


def _answers(args: argparse.Namespace, catalog: Catalog) -> Answers:
    from advisor.cli.compare import answers_from_args
    from advisor.io.documents import load_answers

    if args.answers:
        if args.current or args.model or args.params:
            raise InputError("give --answers or workload flags, not both", field="--answers")
        return load_answers(args.answers, catalog)
    if not args.current:
        raise InputError("--current required (or --answers FILE)", field="--current")
    args.target = args.target or [args.current]  # every catalog GPU is a target below
    return answers_from_args(args, catalog)


def cmd_rank(args: argparse.Namespace) -> int:
    from advisor.io.catalog_store import effective_catalog

    catalog = effective_catalog()
    named = contextlib.nullcontext() if args.answers else errors_name_flags(args.current)
    with named:
        show_ranking(args, _answers(args, catalog), catalog, args.vendor,
                     args.answers or COMMAND_LINE)
    return 0


def show_ranking(args: argparse.Namespace, answers: Answers, catalog: Catalog,
                 vendor: str | None, where: str) -> None:
    """Rank the catalog (of `vendor`) for these answers and print it as the flags ask."""
    from advisor.core import rank, ranking_answers, run
    from advisor.io.catalog_store import provenance
    from advisor.io.probe_store import probes_for, workloads_for

    if vendor and vendor.lower() not in {g.vendor.lower() for g in catalog.gpus}:
        known = ", ".join(sorted({g.vendor for g in catalog.gpus}))
        raise InputError(f"unknown vendor; known: {known}", field="--vendor", value=vendor)
    with in_file(where):
        ranked = ranking_answers(answers, catalog, vendor)
        ids = [s.gpu for s in ranked.compared(catalog)]
        report = run(ranked, catalog, probes_for(ids, catalog, args.probe), provenance(),
                     workloads=workloads_for(ids, catalog, args.probe))
    deadline = answers.configs.deadline_days if answers.configs is not None else None
    ranking = rank(report.decision, args.by, deadline)
    from advisor.present.ranking import ranking_blocks

    show(args, lambda: ranking_blocks(report, ranking,
                                       dialect="flags" if where == COMMAND_LINE else "answers"),
         "advisor: ranking", lambda: ranking_json(report, ranking),
         lambda: [f"{i}. {r.gpu}" + (f" (first: {ranking.remedies[r.gpu].text})"
                                     if r.gpu in ranking.remedies else "")
                  for i, r in enumerate(ranking.ranked, 1)], schema=RANKING)


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
