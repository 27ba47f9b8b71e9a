"""`advisor configs`: how many of which GPU, and how to split a staged pipeline.

Two subcommands share one renderer style (plain tables, inputs and assumptions shown,
prices marked user or default) and a --json twin each. The sweep borrows every workload,
price and probe flag of `advisor compare`, so the two commands define them once; both
call the same core functions `advisor decide` and the wizard reach through `run()`.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from typing import TYPE_CHECKING, Any

from advisor.cli.numbers import plain, whole
from advisor.core import MAX_GPUS, InputError, clean_block, in_file
from advisor.textfmt import fmt_num, render_table

if TYPE_CHECKING:
    from advisor.core import (
        Answers,
        Catalog,
        ConfigOptions,
        ConfigSweep,
        PipelineBalance,
        PipelineReport,
        PipelineSpec,
    )

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
        "configs", help="GPU-count sweep and pipeline split",
        description="How many of which GPU, and how to split a staged pipeline.")
    cmds = p.add_subparsers(dest="configs_command", metavar="SUBCOMMAND", required=True)

    from advisor.cli.compare import add_workload_args

    s = cmds.add_parser("sweep",
                        help="every candidate GPU at every count: time, $, power, Pareto front",
                        description=SWEEP_HELP,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
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
    s.set_defaults(handler=cmd_sweep)

    pl = cmds.add_parser("pipeline", help="stage rates, bottleneck, queues and best splits",
                         description=PIPELINE_HELP,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    pl.add_argument("file", metavar="FILE", help="TOML with a [pipeline] section")
    pl.add_argument("--gpus", type=whole, help="find the best splits of this many GPUs")
    pl.add_argument("--vary", metavar="STAGE", help="stage the neighbour table walks")
    pl.add_argument("--json", action="store_true", help="machine-readable output")
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
    return load_model(ConfigOptions, data, "command line")


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
    from advisor.core import sweep_configs
    from advisor.io.catalog_store import effective_catalog
    from advisor.io.probe_store import probes_for

    catalog = effective_catalog()
    answers = _sweep_answers(args, catalog)
    with in_file(args.answers or "command line"):
        ids = [s.gpu for s in answers.compared(catalog, alone=True)]
        result = sweep_configs(answers, catalog, probes_for(ids, catalog, args.probe))
    print(json.dumps(result.model_dump(mode="json"), indent=2) if args.json
          else clean_block(render_sweep(result, answers)))
    return 0


def _price_cell(usd_per_hour: float | None, source: str | None) -> str:
    return f"${usd_per_hour:.2f} {source}" if usd_per_hour is not None else "no price"


def render_sweep(r: ConfigSweep, answers: Answers) -> str:
    """Inputs, the configuration table, the Pareto front, the pick and what was skipped."""
    w = answers.workload
    m = w.model
    head = (f"Workload: {m.name} ({m.params_total / 1e9:.1f}B params), {w.mode}, {w.precision}, "
            f"{r.seq_len:,} tokens per sequence, micro-batch {w.micro_batch}; "
            f"token budget {r.token_budget:.4g} tokens; "
            f"electricity ${r.electricity_usd_per_kwh}/kWh")
    rows = []
    for p in r.points:
        flags = ("*" if p.pareto else "") + ("" if p.meets_power_cap is not False else " >cap") + (
            "" if p.meets_deadline is not False else " late")
        rows.append([
            p.gpu, str(p.gpus), str(p.nodes), str(p.idle_gpus), fmt_num(p.tokens_per_s / 1e3, 1),
            f"{p.scaling_efficiency:.0%}", f"{p.comm_share:.0%}", fmt_num(p.eta_days, 2),
            fmt_num(p.usd, 0), fmt_num(p.gpu_days_equiv, 1), fmt_num(p.power_kw, 2),
            fmt_num(p.energy_kwh, 0), _price_cell(p.usd_per_gpu_hour, p.price_source),
            flags.strip()])
    table = render_table(
        ["GPU", "N", "nodes", "idle", "Ktok/s", "scaling", "comm", "ETA days", "$", "GPU-d eq",
         "kW", "kWh", "$/GPU-h", "front"], rows)
    legend = (f"scaling = per-GPU rate over the smallest count that runs; comm = exposed "
              f"communication share of a step; GPU-d eq = $ in {r.current} GPU-days; idle = "
              "empty node slots at idle draw; * = Pareto front over time, $ and kW; "
              ">cap = over the power cap; late = past the deadline")
    c = r.choice
    pick = f"Best ({c.objective}): {c.reason}"
    parts = [head, f"Configurations\n{table}\n{textwrap.fill(legend, 100)}", pick]
    if r.skipped:
        reasons: dict[str, list[str]] = {}
        for sk in r.skipped:
            reasons.setdefault(sk.reason, []).append(f"{sk.gpus}x {sk.gpu}")
        parts.append("Not projected\n" + "\n".join(
            f"  - {', '.join(who)}: {why}" for why, who in reasons.items()))
    parts.append("Assumptions\n" + "\n".join(f"  - {a}" for a in r.assumptions))
    return "\n\n".join(parts)


# --- pipeline -------------------------------------------------------------------------------------


def load_pipeline(path: str) -> PipelineSpec:
    """The [pipeline] section of a TOML file (a standalone file or an answers.toml)."""
    from advisor.core import PipelineSpec, load_model, parse_toml
    from advisor.io.files import read_text

    data = parse_toml(read_text(path), path)
    if not isinstance(data.get("pipeline"), dict):
        raise InputError("no [pipeline] section", file=path, field="pipeline")
    try:
        return load_model(PipelineSpec, data["pipeline"], path)
    except InputError as exc:
        exc.field = f"pipeline.{exc.field}" if exc.field else "pipeline"
        raise


def cmd_pipeline(args: argparse.Namespace) -> int:
    from advisor.core import PipelineSpec, analyse_pipeline, load_model
    from advisor.io.catalog_store import effective_catalog

    if args.gpus is not None and not 1 <= args.gpus <= MAX_GPUS:
        raise InputError(f"must be 1 to {MAX_GPUS:,} GPUs", field="--gpus", value=args.gpus)
    spec = load_pipeline(args.file)
    if args.vary:
        spec = load_model(PipelineSpec, {**spec.model_dump(), "vary": args.vary}, "--vary")
    with in_file(args.file):
        report = analyse_pipeline(spec, effective_catalog(), gpus=args.gpus)
    print(json.dumps(report.model_dump(mode="json"), indent=2) if args.json
          else clean_block(render_pipeline(report)))
    return 0


def _split(b: PipelineBalance) -> str:
    return "+".join(str(n) for n in b.split)


def _balance_rows(rows: list[PipelineBalance], ref: PipelineBalance) -> list[list[str]]:
    from advisor.core import kw_saved

    return [[_split(b), str(b.idle_gpus), fmt_num(b.tokens_per_s / 1e3, 1),
             fmt_num(b.eta_days, 2), b.bottleneck,
             f"{b.power_kw_low:.2f}-{b.power_kw_high:.2f}",
             "{:.2f}-{:.2f}".format(*kw_saved(ref, b)),
             b.queue] for b in rows]


BALANCE_HEADERS = ["split", "idle", "Ktok/s", "ETA days", "bottleneck", "kW (band)",
                   "kW saved vs now", "queues"]


def render_pipeline(r: PipelineReport) -> str:
    """Stage rates and sources, the split now, its neighbours and the best splits."""
    stages = render_table(
        ["stage", "GPU", "GPUs", "Ktok/s per GPU", f"{r.unit}/s per GPU", "rate", "busy W",
         "idle W", "power from"],
        [[s.name, s.gpu, str(s.gpus), fmt_num(s.tokens_per_s_per_gpu / 1e3, 2),
          fmt_num(s.tokens_per_s_per_gpu / r.tokens_per_unit, 3), s.detail,
          fmt_num(s.active_w, 0), fmt_num(s.idle_w, 0), s.power_source] for s in r.stages])
    now = r.current
    loads = render_table(
        ["stage", "GPUs", "capacity Ktok/s", "utilisation", "state", "kW (band)"],
        [[ld.name, str(ld.gpus), fmt_num(ld.capacity * r.tokens_per_unit / 1e3, 1),
          f"{ld.utilisation:.0%}", ld.state,
          f"{ld.power_w_low / 1e3:.2f}-{ld.power_w_high / 1e3:.2f}"] for ld in now.stages])
    head = (f"Now: {_split(now)} in a box of {r.box_gpus} GPUs, "
            f"{now.tokens_per_s / 1e3:,.1f} Ktok/s"
            + (f", ETA {now.eta_days:.2f} days" if now.eta_days else "")
            + f", {now.power_kw_low:.2f}-{now.power_kw_high:.2f} kW; bottleneck: "
            f"{now.bottleneck}; {now.queue}")
    parts = [f"Pipeline{': ' + r.source if r.source else ''}",
             f"Stages (1 {r.unit} = {r.tokens_per_unit:,.0f} tokens)\n{stages}",
             f"{head}\n{loads}",
             f"Moving GPUs on or off {r.vary}\n"
             + render_table(BALANCE_HEADERS, _balance_rows(r.neighbours, now)),
             f"Best splits of {r.best_gpus} GPUs (fastest first; ties to the lower draw)\n"
             + render_table(BALANCE_HEADERS, _balance_rows(r.best, now))]
    parts += [_alternative(r, a) for a in r.alternatives]
    parts.append("Assumptions\n" + "\n".join(f"  - {a}" for a in r.assumptions))
    return "\n\n".join(parts)


def _alternative(r: PipelineReport, a: Any) -> str:
    """The same pipeline on another GPU: as given (e.g. a write-up's assumptions) and as the
    engine projects it, split by split, with GPU-days-equivalent in current-GPU days."""
    now = r.current
    base = (f"now: {now.tokens_per_s / 1e3:,.1f} Ktok/s, "
            + (f"{now.eta_days:.2f} days, " if now.eta_days else "")
            + (f"{r.current_gpu_days:.1f} GPU-days" if r.current_gpu_days else ""))
    rows = [[_split_text(s.split), fmt_num(s.tokens_per_s / 1e3, 1), s.bottleneck,
             fmt_num(s.eta_days, 2), fmt_num(s.gpu_days_equiv, 1),
             fmt_num((s.engine_tokens_per_s or 0) / 1e3, 1), fmt_num(s.engine_eta_days, 2),
             fmt_num(s.engine_gpu_days_equiv, 1)] for s in a.splits]
    table = render_table(["split", "Ktok/s", "bottleneck", "days", "GPU-days eq", "engine Ktok/s",
                          "engine days", "engine GPU-days eq"], rows)
    lines = [f"On {a.gpu} ({a.source or 'rates as given'}); price: {a.price_note}; {base}",
             table]
    lines += [f"  - {d}" for d in a.differences]
    return "\n".join(lines)


def _split_text(split: list[int]) -> str:
    return "+".join(str(n) for n in split)
