"""`advisor report show FILE` and `advisor report diff OLD NEW`: read and compare reports.

Public upgrade guides advise re-measuring periodically; a diff says whether a new run
moved the answer, and whether prices, inputs, the stack or the measurements did it.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from advisor.core.text import clean, clean_block
from advisor.textfmt import fmt_num, render_table

if TYPE_CHECKING:
    from advisor.core import Change, Report


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("report", help="show a decision report, or what changed between two")
    rsub = p.add_subparsers(dest="report_command", metavar="SUBCOMMAND", required=True)

    show = rsub.add_parser("show", help="summarise a report written by `advisor decide`")
    show.add_argument("file", help="a report (TOML)")
    show.add_argument("--json", action="store_true", help="the whole report as JSON")
    show.set_defaults(handler=cmd_show)

    diff = rsub.add_parser("diff", help="what changed: verdicts, projections, prices, inputs, "
                                        "stack, probe figures")
    diff.add_argument("old", help="the earlier report")
    diff.add_argument("new", help="the later report")
    diff.add_argument("--json", action="store_true", help="the changes as a JSON list")
    diff.set_defaults(handler=cmd_diff)


def header(r: Report) -> str:
    """Provenance, quotes with their sources, probe stamps and warnings: what `compare`
    output lacks and a kept report needs."""
    p = r.provenance
    lines = [f"Report of {p.created:%Y-%m-%d %H:%M} UTC by advisor {p.advisor_version}, "
             f"shipped catalog {p.catalog_version}"]
    lines += [f"  with pulled {clean(s.kind)}: {clean(s.url)} (fetched {s.fetched_at:%Y-%m-%d})"
              for s in p.pulled]
    rows = [[q.gpu, fmt_num(q.usd_per_hour, 2), q.source, q.label,
             "; ".join(q.cited) + (f" ({q.retrieved})" if q.retrieved else "")]
            for q in r.quotes]
    lines += ["", "Prices", render_table(["GPU", "$/GPU-h", "source", "label", "cited"], rows)]
    if r.probes:
        rows = [[gpu, rec.stamp.hostname, rec.stamp.date, rec.stamp.versions.torch or "-",
                 rec.stamp.versions.cuda or rec.stamp.versions.hip or "-",
                 fmt_num(rec.mamf(r.decision.answers.workload.precision))]
                for gpu, rec in r.probes.items()]
        lines += ["", "Probe records used",
                  render_table(["GPU", "host", "date", "torch", "CUDA/HIP", "MAMF TFLOPS"], rows)]
    else:
        lines += ["", "Probe records used: none (catalog figures only)"]
    if r.warnings:
        lines += ["", "Warnings", *(f"  ! {clean(w)}" for w in r.warnings)]
    return "\n".join(lines)


def cmd_show(args: argparse.Namespace) -> int:
    from advisor.cli.compare import render
    from advisor.cli.configs import render_pipeline, render_sweep
    from advisor.io.documents import load_report

    report = load_report(args.file)
    if args.json:
        print(json.dumps(report.model_dump(mode="json", by_alias=True), indent=2))
        return 0
    parts = [header(report), render(report.decision)]
    if report.configs is not None:
        parts.append(render_sweep(report.configs, report.decision.answers))
    if report.pipeline is not None:
        parts.append(render_pipeline(report.pipeline))
    print(clean_block("\n\n".join(parts)))
    return 0


def render_changes(changes: list[Change]) -> str:
    if not changes:
        return "No changes: same verdicts, projections, prices, inputs, stack and probe figures."
    rows = [[c.topic, c.item, c.old, c.new, c.delta] for c in changes]
    out = [render_table(["topic", "what", "old", "new", "change"], rows)]
    topics = {c.topic for c in changes}
    if "verdict" in topics and topics & {"stack", "probes"}:
        out.append("\nThe stack or the probe records changed too: part of the difference may be "
                   "software, not hardware. Re-measure both GPUs on the same stack to tell.")
    return "\n".join(out)


def cmd_diff(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from advisor.core import diff_reports
    from advisor.io.documents import load_report

    changes = diff_reports(load_report(args.old), load_report(args.new))
    if args.json:
        print(json.dumps([asdict(c) | {"delta": c.delta} for c in changes], indent=2))
        return 0
    print(clean_block(render_changes(changes)))
    return 0
