"""`advisor decide --answers FILE --out REPORT`: the whole pipeline with no terminal.

Gates, probe records (the imported ones for the compared GPUs, plus any --probe
files), projection, verdict, the GPU-count sweep and the pipeline balance all come
from `run()`, the same entry the wizard uses; this module reads the answers, renders
the report and writes it.
"""

from __future__ import annotations

import argparse
import sys

from advisor.cli import COMMANDS
from advisor.cli.output import add_output_options, chosen, status

DESCRIPTION = """\
Reads answers.toml (see examples/answers.toml), decides, and writes the decision
report (TOML) atomically to --out. Probe records imported with `advisor probe
import` are used for the GPUs being compared unless --no-stored-probes; records
measured on different software stacks are flagged loudly. Bad input gives one
line naming the file, field and value, and exit code 2.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "decide", help=COMMANDS["decide"],
        description=DESCRIPTION,
    )
    p.add_argument("--answers", required=True, metavar="FILE",
                   help="the answers (TOML); - reads them from standard input")
    p.add_argument("--out", metavar="FILE",
                   help="where to write the report (TOML); - writes it to standard output and "
                        "the verdict lines to standard error")
    p.add_argument("--probe", action="append", default=[], metavar="FILE",
                   help="a probe record for one of the compared GPUs; repeatable")
    p.add_argument("--no-stored-probes", action="store_true",
                   help="ignore records imported with `advisor probe import`")
    add_output_options(p, json_help="print the summary as JSON (same as --format json)")
    p.set_defaults(handler=cmd_decide)


def cmd_decide(args: argparse.Namespace) -> int:
    from advisor.cli.compare import show_report
    from advisor.core import (
        clean,
        clean_block,
        drift_warning,
        in_file,
        report_to_toml,
        run,
        stack_drift,
    )
    from advisor.io.atomic import check_output_path
    from advisor.io.catalog_store import effective_catalog, provenance
    from advisor.io.documents import load_answers
    from advisor.io.probe_store import probes_for, workloads_for
    from advisor.present.decision import verdict_summary

    chosen(args)  # a contradictory --json --format fails before the work
    if args.out is not None:
        check_output_path(args.out)  # a bad --out (an empty one too) fails now, not after
    catalog = effective_catalog()
    answers = load_answers(args.answers, catalog)
    with in_file(args.answers):  # what the engine refuses is in the answers
        ids = [s.gpu for s in answers.compared(catalog)]
        stored = not args.no_stored_probes
        probes = probes_for(ids, catalog, args.probe, stored=stored)
        report = run(answers, catalog, probes, provenance(),
                     workloads=workloads_for(ids, catalog, args.probe, stored=stored))
    if args.out is not None:  # written before the summary, so a closed stdout cannot lose it
        _write_report(args.out, report_to_toml(report))
    drift = stack_drift(report.probes)
    if drift:
        print(clean_block(drift_warning(drift)), file=sys.stderr)
    if args.out == "-":  # standard output holds the report: the verdict lines go to stderr
        if not args.quiet:
            print(clean_block("\n".join(verdict_summary(report.decision))), file=sys.stderr)
        return 0
    show_report(args, report, kept=False)
    if args.out is not None:  # the path as the error line shows it: escapes made visible
        status(args, f"report written to {clean(args.out)}",
               file=sys.stderr if chosen(args) != "text" else sys.stdout)
    return 0


def _write_report(out: str, text: str) -> None:
    """Write the report to --out; if that fails after the work (the disk filled, a FIFO
    nobody reads), keep it in the data folder and say where, in the one error line."""
    from advisor.core import InputError
    from advisor.io.atomic import write_output
    from advisor.io.paths import unsaved_path

    try:
        write_output(out, text)
    except InputError as exc:
        kept = write_output(unsaved_path("report", ".toml"), text, create_parents=True)
        raise InputError(f"{exc.message}; the report is saved in {kept}", file=exc.file) \
            from None
