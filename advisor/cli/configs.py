"""`advisor configs`: how many of which GPU, how to split a staged pipeline, and the published
RTX PRO 6000 -> B200 projection with the assumptions that carry its verdict.

Three subcommands share one renderer style (plain tables, inputs and assumptions shown,
prices marked user or default) and a --json twin each. The sweep borrows every workload,
price and probe flag of `advisor compare`, so the two commands define them once.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from typing import TYPE_CHECKING, Any

from advisor.core.errors import InputError, in_file
from advisor.core.model.bounds import MAX_GPUS
from advisor.core.text import clean_block
from advisor.textfmt import fmt_num, render_table

if TYPE_CHECKING:
    from advisor.core.economics.configs import ConfigSweep
    from advisor.core.economics.pipeline import PipelineBalance
    from advisor.core.economics.scenario import Check, Projected, ScenarioInputs, Sensitivity
    from advisor.core.economics.stages import PipelineReport
    from advisor.core.model.answers import Answers
    from advisor.core.model.catalog import Catalog
    from advisor.core.model.options import ConfigOptions, PipelineSpec

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
SCENARIO_HELP = """\
The published RTX PRO 6000 -> B200 projection for a drafter-training pipeline
(cost-power-figures.md): its arithmetic reproduced and checked figure by figure, then each
assumption (MFU on each side, the peak basis, FLOPs per token, the 60 ms GPU->CPU hop, the
price ratio) moved across its range in a tornado table that says which ones flip the
verdict between faster-and-cheaper, faster-but-dearer and slower.
"""
SHORT = {"faster and cheaper": "faster+cheaper", "faster but dearer": "faster+dearer",
         "slower": "slower"}


def _ints(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers like 1,2,4,8: {text!r}")
    return values


def _setting(text: str) -> tuple[str, float]:
    key, sep, value = text.partition("=")
    try:
        number = float(value)
    except ValueError:
        sep = ""
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=NUMBER, e.g. target_mfu=0.35: {text!r}")
    return key.strip(), number


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "configs", help="GPU-count sweep, pipeline split, and the RTX PRO 6000 -> B200 case",
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
    s.add_argument("--max-gpus", type=int, help="default counts double up to this (16)")
    s.add_argument("--gpus-per-node", type=int, help="GPUs per node (8)")
    s.add_argument("--deadline-days", type=float, help="the job must finish within this")
    s.add_argument("--objective", choices=["cost", "time"],
                   help="best = cheapest (default) or fastest among those that qualify")
    s.add_argument("--no-idle-slots", action="store_true",
                   help="rented instances: a partly used node's empty slots draw nothing")
    s.set_defaults(handler=cmd_sweep)

    pl = cmds.add_parser("pipeline", help="stage rates, bottleneck, queues and best splits",
                         description=PIPELINE_HELP,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    pl.add_argument("file", metavar="FILE", help="TOML with a [pipeline] section")
    pl.add_argument("--gpus", type=int, help="find the best splits of this many GPUs")
    pl.add_argument("--vary", metavar="STAGE", help="stage the neighbour table walks")
    pl.add_argument("--json", action="store_true", help="machine-readable output")
    pl.set_defaults(handler=cmd_pipeline)

    sc = cmds.add_parser("scenario", help="the published RTX PRO 6000 -> B200 projection, "
                                          "checked, with its assumption sensitivity",
                         description=SCENARIO_HELP,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    sc.add_argument("--split", type=_ints, default=[3, 1], metavar="TARGETS,DRAFTERS",
                    help="the B200 split the tornado judges (default 3,1: 4x B200)")
    sc.add_argument("--set", type=_setting, action="append", default=[], metavar="NAME=NUMBER",
                    help="replace one input, e.g. target_mfu=0.35 or price_ratio=4 (see --json)")
    sc.add_argument("--json", action="store_true", help="machine-readable output")
    sc.set_defaults(handler=cmd_scenario)


# --- sweep ----------------------------------------------------------------------------------------


def _options(args: argparse.Namespace, base: ConfigOptions | None) -> ConfigOptions:
    from advisor.core.formats import load_model
    from advisor.core.model.options import ConfigOptions

    given = {"counts": args.counts, "max_gpus": args.max_gpus,
             "gpus_per_node": args.gpus_per_node, "deadline_days": args.deadline_days,
             "objective": args.objective,
             "count_idle_slots": False if args.no_idle_slots else None}
    data = {**(base.model_dump() if base else {}),
            **{k: v for k, v in given.items() if v is not None}}
    return load_model(ConfigOptions, data, "command line")


def _sweep_answers(args: argparse.Namespace, catalog: Catalog) -> Answers:
    from advisor.cli.compare import _answers
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
        answers = _answers(args, catalog)
    update: dict[str, Any] = {"configs": _options(args, answers.configs)}
    if args.power_cap is not None:
        update["power_cap_kw"] = args.power_cap
    return answers.model_copy(update=update)


def cmd_sweep(args: argparse.Namespace) -> int:
    from advisor.core.economics.configs import sweep_configs
    from advisor.io.catalog_store import effective_catalog
    from advisor.io.probe_store import probes_for

    catalog = effective_catalog()
    answers = _sweep_answers(args, catalog)
    probes = probes_for([answers.current, *answers.targets], catalog, args.probe)
    with in_file(args.answers or "command line"):
        result = sweep_configs(answers, catalog, probes)
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
    from advisor.core.formats import load_model, parse_toml
    from advisor.core.model.options import PipelineSpec
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
    from advisor.core.economics.stages import analyse_pipeline
    from advisor.core.formats import load_model
    from advisor.core.model.options import PipelineSpec
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
    from advisor.core.economics.pipeline import kw_saved

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
             + render_table(BALANCE_HEADERS, _balance_rows(r.best, now)),
             "Assumptions\n" + "\n".join(f"  - {a}" for a in r.assumptions)]
    return "\n\n".join(parts)


# --- scenario -------------------------------------------------------------------------------------


def cmd_scenario(args: argparse.Namespace) -> int:
    from advisor.core.economics.scenario import (
        catalog_caveats,
        current_days,
        current_gpu_days,
        engine_speedup,
        project,
        published_check,
        published_inputs,
        sensitivity,
        with_overrides,
    )
    from advisor.io.catalog_store import effective_catalog

    if len(args.split) != 2 or max(args.split) > MAX_GPUS:
        raise InputError(f"--split takes TARGETS,DRAFTERS of at most {MAX_GPUS:,} GPUs each, "
                         "e.g. 3,1", field="--split", value=args.split)
    catalog = effective_catalog()
    inputs = with_overrides(published_inputs(catalog), dict(args.set))
    split = (args.split[0], args.split[1])
    checks = published_check(published_inputs(catalog))
    projections = [project(inputs, sp) for sp in ((3, 1), (7, 1))]
    sens = sensitivity(inputs, split, engine_speedup(catalog))
    if args.json:
        print(json.dumps({
            "inputs": inputs.model_dump(mode="json"),
            "current": {"days": current_days(inputs), "gpu_days_equiv": current_gpu_days(inputs)},
            "check": [{**c.model_dump(mode="json"), "ok": c.ok} for c in checks],
            "projections": [p.model_dump(mode="json") for p in projections],
            "sensitivity": sens.model_dump(mode="json"),
            "catalog_caveats": catalog_caveats(catalog),
        }, indent=2))
    else:
        print(render_scenario(inputs, checks, projections, sens, catalog_caveats(catalog)))
    return 0


def render_scenario(inputs: ScenarioInputs, checks: list[Check], projections: list[Projected],
                    sens: Sensitivity, caveats: list[str]) -> str:
    """The check against the write-up, the projections, and the tornado table."""
    from advisor.core.economics.scenario import SOURCE, current_days, current_gpu_days

    check = render_table(
        ["figure", "published", "predicted", "within", "note"],
        [[c.figure, fmt_num(c.published), fmt_num(c.predicted, 3),
          f"{'yes' if c.ok else 'NO'} ({c.tolerance:.0%})", c.note] for c in checks])
    proj = render_table(
        ["configuration", "Ktok/s", "days", "GPU-days eq", "speedup", "cost ratio", "verdict",
         "bottleneck"],
        [["4x RTX PRO 6000 (3+1, measured)", fmt_num(inputs.current_tokens_per_s / 1e3, 1),
          fmt_num(current_days(inputs), 2), fmt_num(current_gpu_days(inputs), 1), "1.00x",
          "1.00", "(current)", "-"]]
        + [[p.label, fmt_num(p.tokens_per_s / 1e3, 1), fmt_num(p.days, 2),
            fmt_num(p.gpu_days_equiv, 1), f"{p.speedup:.2f}x", f"{p.cost_ratio:.2f}", p.verdict,
            p.bottleneck] for p in projections])
    tornado = render_table(
        ["assumption", "baseline", "low end", "verdict (cost ratio)", "high end",
         "verdict (cost ratio)", "break-even", "flips"],
        [[t.assumption, t.baseline, t.low, f"{SHORT[t.low_verdict]} ({t.low_cost_ratio:.2f})",
          t.high, f"{SHORT[t.high_verdict]} ({t.high_cost_ratio:.2f})", t.break_even_label or "-",
          "YES" if t.flips else "no"] for t in sens.rows])
    sources = render_table(
        ["assumption", "range and where it comes from"],
        [[t.assumption, t.source] for t in sens.rows])
    fields = type(inputs).model_fields
    given = render_table(
        ["input", "value", "source"],
        [[k, f"{v:g}" if isinstance(v, float) else str(v), fields[k].description or ""]
         for k, v in inputs.model_dump().items()])
    return "\n\n".join([
        f"Source: {SOURCE}",
        "Published figures vs this arithmetic (published inputs)\n" + check,
        "Projection (GPU-days eq = GPUs x price ratio x days, in RTX PRO 6000 days; cost ratio "
        "= job cost over 4x RTX PRO 6000's)\n" + proj,
        f"Which assumption carries the verdict: {sens.baseline.label}, one at a time\n"
        + tornado,
        sources, sens.summary, "Inputs\n" + given,
        "Catalog caveats\n" + "\n".join(f"  - {c}" for c in caveats),
    ])
