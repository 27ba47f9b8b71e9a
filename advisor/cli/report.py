"""`advisor report show FILE` and `advisor report diff OLD NEW`: read and compare reports.

Public upgrade guides advise re-measuring periodically; a diff says whether a new run
moved the answer, and whether prices, inputs, the stack or the measurements did it.
"""

from __future__ import annotations

import argparse

from advisor.cli import COMMANDS
from advisor.cli.output import add_output_options, chosen, show
from advisor.cli.schemas import DECISION_REPORT, REPORT_DIFF


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "report", help=COMMANDS["report"])
    rsub = p.add_subparsers(dest="report_command", metavar="SUBCOMMAND", required=True)

    show_p = rsub.add_parser(
        "show", help="a report written by `advisor decide`, as text or to share",
        description="The verdict first, then every figure, input and source. --format md, "
                    "html or svg writes a document to share (HTML and SVG carry the charts); "
                    "--format json is the whole report, which `report show` reads back.")
    show_p.add_argument("file", help="a report (TOML, or the JSON of --format json); - reads "
                                   "standard input")
    add_output_options(show_p, json_help="the whole report as JSON (same as --format json)")
    show_p.set_defaults(handler=cmd_show)

    diff = rsub.add_parser("diff", help="what changed: verdicts, projections, prices, inputs, "
                                        "stack, probe figures")
    diff.add_argument("old", help="the earlier report (- for standard input)")
    diff.add_argument("new", help="the later report")
    add_output_options(diff, json_help="the changes as a JSON list (same as --format json)")
    diff.set_defaults(handler=cmd_diff)


def cmd_show(args: argparse.Namespace) -> int:
    from advisor.cli.compare import show_report
    from advisor.io.documents import load_report

    chosen(args)
    report = load_report(args.file)
    show_report(args, report, kept=True,
                data=lambda: report.model_dump(mode="json", by_alias=True),
                schema=DECISION_REPORT)
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from advisor.core import diff_reports
    from advisor.io.documents import load_report
    from advisor.present.report import changes_blocks

    chosen(args)
    changes = diff_reports(load_report(args.old), load_report(args.new))
    show(args, lambda: changes_blocks(changes), f"advisor: {args.old} against {args.new}",
         lambda: {"changes": [asdict(c) | {"delta": c.delta} for c in changes]},
         lambda: [f"{len(changes)} change(s)" + (
             "; the verdict changed" if any(c.topic == "verdict" for c in changes) else "")],
         schema=REPORT_DIFF)
    return 0
