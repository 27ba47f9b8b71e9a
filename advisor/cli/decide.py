"""`advisor decide --answers FILE --out REPORT`: the whole pipeline with no terminal.

Gates, probe records (the imported ones for the compared GPUs, plus any --probe
files), projection and verdict, from an answers file to a TOML report. The
terminal summary is the same as `advisor compare`; --json prints its JSON shape.
"""

from __future__ import annotations

import argparse
import json
import sys

DESCRIPTION = """\
Reads answers.toml (see examples/answers.toml), decides, and writes the decision
report (TOML) atomically to --out. Probe records imported with `advisor probe
import` are used for the GPUs being compared unless --no-stored-probes; records
measured on different software stacks are flagged loudly. Bad input gives one
line naming the file, field and value, and exit code 2.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "decide", help="headless run: answers.toml in, decision report (TOML) out",
        description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--answers", required=True, metavar="FILE", help="the answers (TOML)")
    p.add_argument("--out", metavar="FILE", help="where to write the report (TOML)")
    p.add_argument("--probe", action="append", default=[], metavar="FILE",
                   help="a probe record for one of the compared GPUs; repeatable")
    p.add_argument("--no-stored-probes", action="store_true",
                   help="ignore records imported with `advisor probe import`")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(handler=cmd_decide)


def cmd_decide(args: argparse.Namespace) -> int:
    from advisor.cli.compare import render, summary
    from advisor.cli.configs import render_pipeline, render_sweep
    from advisor.core.decide import decide
    from advisor.core.economics.configs import sweep_configs
    from advisor.core.economics.stages import analyse_pipeline
    from advisor.core.errors import in_file
    from advisor.core.report.document import build_report, report_to_toml
    from advisor.core.text import clean_block
    from advisor.io.atomic import write_atomic
    from advisor.io.catalog_store import effective_catalog, provenance
    from advisor.io.documents import load_answers
    from advisor.io.probe_store import DRIFT_NOTE, drift_warning, probes_for, stack_drift

    catalog = effective_catalog()
    answers = load_answers(args.answers, catalog)
    ids = [catalog.gpu(g).id for g in (answers.current, *answers.targets)]
    probes = probes_for(ids, catalog, args.probe, stored=not args.no_stored_probes)
    with in_file(args.answers):  # what decide refuses is in the answers
        decision = decide(answers, catalog, probes)
        configs = sweep_configs(answers, catalog, probes) if answers.configs else None
        pipeline = analyse_pipeline(answers.pipeline, catalog, probes=probes) \
            if answers.pipeline else None

    drift = stack_drift(probes)
    warnings = [f"stack drift: {d.line()}" for d in drift] + ([DRIFT_NOTE] if drift else [])
    if drift:
        print(clean_block(drift_warning(drift)), file=sys.stderr)
    if args.json:
        out = summary(decision)
        if configs is not None:
            out["configs"] = configs.model_dump(mode="json")
        if pipeline is not None:
            out["pipeline"] = pipeline.model_dump(mode="json")
        print(json.dumps(out, indent=2))
    else:
        print(clean_block(render(decision)))
        if configs is not None:
            print("\n" + clean_block(render_sweep(configs, answers)))
        if pipeline is not None:
            print("\n" + clean_block(render_pipeline(pipeline)))
    if args.out:
        report = build_report(decision, catalog, probes, provenance(), warnings,
                              configs=configs, pipeline=pipeline)
        write_atomic(args.out, report_to_toml(report))
        print(f"report written to {args.out}", file=sys.stderr if args.json else sys.stdout)
    return 0
