"""`advisor configs`: how many of which GPU, and how to split a staged pipeline.

Two subcommands, drawn by the shared renderer (the pick first, then the tables, inputs and
assumptions, prices marked user or default), each with --format and a --json twin. The
sweep borrows every workload, price and probe flag of `advisor compare`, so the two
commands define them once; both call the same core functions `advisor decide` and the
wizard reach through `run()`.
"""

from __future__ import annotations

import argparse
import contextlib
from typing import TYPE_CHECKING, Any

from advisor.cli import COMMANDS
from advisor.cli.flags import COMMAND_LINE, errors_name_flags
from advisor.cli.numbers import plain, whole
from advisor.cli.output import add_output_options, show
from advisor.cli.schemas import CONFIG_SWEEP, PIPELINE
from advisor.core import MAX_GPUS, InputError, in_file

if TYPE_CHECKING:
    from advisor.core import Answers, Catalog, ConfigOptions, PipelineSpec

SWEEP_HELP = """\
Project the workload on --current and each --target at every GPU count (default 1, 2, 4,
8, 16 in nodes of 8), communication included, and give each configuration's throughput,
ETA and $ for --token-budget, GPU-days-equivalent (in current-GPU days, from the current
GPU's price), average power (busy GPUs at TDP x utilisation, idle GPUs at idle draw) and
energy. Marks the Pareto front over (time, $, kW) and picks the best configuration under
--power-cap (kW) and/or --deadline-days, cheapest or fastest as --objective says.
The workload flags are those of `advisor compare`; --gpus and --nodes are replaced by
--counts and --gpus-per-node. Or read everything from --answers FILE ([configs] section).
"""
PIPELINE_HELP = """\
Read a staged workload ([pipeline] in FILE; see examples/configs_pipeline.toml): each
stage's GPU, count, and rate, measured (wins, labelled measured), projected by the engine
from the stage's own workload, or assumed from FLOPs per token at an MFU. Reports each
stage's rate, the bottleneck, which side starves, throughput, ETA and a power band for the
split as given, the splits next to it, and the best splits of --gpus GPUs.
"""
def _ints(text: str) -> list[int]:
    """Counts separated by commas (`1,2,4,8` or `8,16,1k`), each read by the number grammar."""
    try:
        values = [int(whole(x)) for x in text.split(",") if x.strip()]
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"expected positive integers like 1,2,4,8: {text!r} "
                                         f"({exc})") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers like 1,2,4,8: {text!r}")
    return values


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "configs", help=COMMANDS["configs"],
        description="How many of which GPU, and how to split a staged pipeline.")
    cmds = p.add_subparsers(dest="configs_command", metavar="SUBCOMMAND", required=True)

    from advisor.cli.compare import add_workload_args

    s = cmds.add_parser("sweep",
                        help="every candidate GPU at every count: time, $, power, Pareto front",
                        description=SWEEP_HELP)
    add_workload_args(s, required=False, counts=False)
    s.add_argument("--answers", metavar="FILE", help="answers.toml (its [configs] section too)")
    s.add_argument("--counts", type=_ints, metavar="N,N,...", help="GPU counts to sweep")
    s.add_argument("--max-gpus", type=whole, help="default counts double up to this (16)")
    s.add_argument("--gpus-per-node", type=whole, help="GPUs per node (8)")
    s.add_argument("--deadline-days", type=plain, help="the job must finish within this")
    s.add_argument("--objective", choices=["cost", "time"],
                   help="best = cheapest (default) or fastest among those that qualify")
    s.add_argument("--no-idle-slots", action="store_true",
                   help="rented instances: a partly used node's empty slots draw nothing")
    add_output_options(s)
    s.set_defaults(handler=cmd_sweep)

    pl = cmds.add_parser("pipeline", help="stage rates, bottleneck, queues and best splits",
                         description=PIPELINE_HELP)
    pl.add_argument("file", metavar="FILE", help="TOML with a [pipeline] section")
    pl.add_argument("--gpus", type=whole, help="find the best splits of this many GPUs")
    pl.add_argument("--vary", metavar="STAGE", help="stage the neighbour table walks")
    add_output_options(pl)
    pl.set_defaults(handler=cmd_pipeline)


# --- sweep ----------------------------------------------------------------------------------------


def _options(args: argparse.Namespace, base: ConfigOptions | None) -> ConfigOptions:
    from advisor.core import ConfigOptions, load_model

    given = {"counts": args.counts, "max_gpus": args.max_gpus,
             "gpus_per_node": args.gpus_per_node, "deadline_days": args.deadline_days,
             "objective": args.objective,
             "count_idle_slots": False if args.no_idle_slots else None}
    data = {**(base.model_dump() if base else {}),
            **{k: v for k, v in given.items() if v is not None}}
    try:
        return load_model(ConfigOptions, data, COMMAND_LINE)
    except InputError as exc:  # each option is its flag: gpus_per_node is --gpus-per-node
        if exc.field:
            exc.field = "--" + exc.field.split(".")[0].replace("_", "-")
        raise


def _sweep_answers(args: argparse.Namespace, catalog: Catalog) -> Answers:
    from advisor.cli.compare import answers_from_args
    from advisor.io.documents import load_answers

    flags = [f for f, v in (("--current", args.current), ("--model", args.model),
                            ("--params", args.params)) if v is not None]
    if args.answers:
        if flags:
            raise InputError("give --answers or workload flags, not both", field=flags[0])
        answers = load_answers(args.answers, catalog)
    else:
        missing = [f for f, v in (("--current", args.current), ("--seq-len", args.seq_len),
                                  ("--model or --params", args.model or args.params)) if not v]
        if missing:
            raise InputError(f"{', '.join(missing)} required (or --answers FILE)",
                             field=missing[0])
        args.target = args.target or [args.current]
        answers = answers_from_args(args, catalog)
    update: dict[str, Any] = {"configs": _options(args, answers.configs)}
    if args.power_cap is not None:
        update["power_cap_kw"] = args.power_cap
    return answers.model_copy(update=update)


def cmd_sweep(args: argparse.Namespace) -> int:
    from advisor.core import run
    from advisor.io.catalog_store import effective_catalog, provenance
    from advisor.io.probe_store import probes_for

    catalog = effective_catalog()
    named = contextlib.nullcontext() if args.answers else errors_name_flags(args.current)
    with named, in_file(args.answers or COMMAND_LINE):
        answers = _sweep_answers(args, catalog)
        ids = [s.gpu for s in answers.compared(catalog, alone=True)]
        if answers.workload.token_budget is None:
            raise InputError("a configuration sweep needs a token budget (tokens to process)",
                             field="--token-budget")
        result = run(answers, catalog, probes_for(ids, catalog, args.probe),
                     provenance()).configs
        assert result is not None
    from advisor.present.configs import sweep_blocks

    show(args, lambda: sweep_blocks(result, answers, "answers" if args.answers else "flags"),
         f"advisor: GPU-count sweep, {answers.current}", lambda: result.model_dump(mode="json"),
         lambda: [result.choice.reason], schema=CONFIG_SWEEP)
    return 0


# --- pipeline -------------------------------------------------------------------------------------


def load_pipeline(path: str) -> PipelineSpec:
    """The [pipeline] section of a TOML file (a standalone file or an answers.toml)."""
    from advisor.core import PipelineSpec, load_model, parse_toml
    from advisor.io.documents import read_input

    text, file = read_input(path)
    data = parse_toml(text, file)
    if not isinstance(data.get("pipeline"), dict):
        raise InputError("no [pipeline] section", file=file, field="pipeline")
    try:
        return load_model(PipelineSpec, data["pipeline"], file)
    except InputError as exc:
        exc.field = f"pipeline.{exc.field}" if exc.field else "pipeline"
        raise


def cmd_pipeline(args: argparse.Namespace) -> int:
    from advisor.core import PipelineSpec, load_model, run_pipeline
    from advisor.io.catalog_store import effective_catalog

    if args.gpus is not None and not 1 <= args.gpus <= MAX_GPUS:
        raise InputError(f"must be 1 to {MAX_GPUS:,} GPUs", field="--gpus", value=args.gpus)
    spec = load_pipeline(args.file)
    if args.vary:
        spec = load_model(PipelineSpec, {**spec.model_dump(), "vary": args.vary}, "--vary")
    with in_file(args.file):
        report = run_pipeline(spec, effective_catalog(), gpus=args.gpus)
    from advisor.present.configs import pipeline_blocks

    show(args, lambda: pipeline_blocks(report), f"advisor: pipeline {args.file}",
         lambda: report.model_dump(mode="json"),
         lambda: [f"bottleneck: {report.current.bottleneck}; {report.current.queue}"],
         schema=PIPELINE)
    return 0
