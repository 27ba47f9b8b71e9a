"""The verdict as Markdown, for the clipboard ("copy summary") or a file.

Plain text that reads well pasted into a chat or a ticket: one line per target with its
verdict, the reasons and what flips it, the figures side by side, the defaults the
decision used and the warnings. Every line comes from the Report.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from advisor.present.verdict import KIND_WORDS, statement, verdict_view
from advisor.tui.render import (
    anchor_lines,
    defaults_lines,
    report_warnings,
    side_rows,
)

if TYPE_CHECKING:
    from advisor.core import Catalog, Report

def _table(headers: list[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def summary_markdown(report: Report, catalog: Catalog | None = None) -> str:
    d = report.decision
    w = d.answers.workload
    cur = d.current
    lines = [f"# advisor: move {w.model.name} ({w.mode}, {w.precision}) off "
             f"{cur.gpus}x {cur.gpu}?", ""]
    for t in d.targets:
        v = t.verdict
        if v is None:
            lines.append(f"- **{t.gpus}x {t.gpu}**: not projected ({t.problem or ''})")
            continue
        lines.append(f"- **{t.gpus}x {t.gpu}**: {KIND_WORDS[v.kind].upper()}: "
                     f"{statement(v.kind, v.headline, t.gpu)}")
    lines.append("")
    anchor = anchor_lines(d)
    if anchor:
        lines += [f"_{anchor[0]}_", *(f"- {x}" for x in anchor[1:]), ""]
    seq = d.primary_seq_len
    for t in d.targets:
        v = t.verdict
        if v is None:
            continue
        lines.append(f"## {t.gpu}: {KIND_WORDS[v.kind].upper()}")
        said = verdict_view(cur, t, "wizard")
        lines += [f"- {r}" for r in said.reasons]
        lines += [f"- flips: {f}" for f in said.flips]
        lines += [f"- warning: {w}" for w in said.warnings]
        if t.verdict is not None and t.verdict.kind != "blocked-by-gate":
            lines.append("")
            lines += _table([f"at {seq:,} tokens", f"{cur.gpu} (now)", t.gpu],
                            side_rows(cur, t, seq, not w.training, w.token_budget is not None))
        lines.append("")
    warnings = report_warnings(report)
    if warnings:
        lines.append("## Warnings")
        lines += [f"- {x}" for x in warnings]
        lines.append("")
    defaults = defaults_lines(d)
    if defaults:
        lines.append("## Defaults used (not given)")
        lines += [f"- {x}" for x in defaults]
        lines.append("")
    p = report.provenance
    lines.append(f"_advisor {p.advisor_version}, catalog {p.catalog_version}, "
                 f"{p.created.isoformat()}_")
    from advisor.core import clean_block

    return clean_block("\n".join(lines)) + "\n"  # it is pasted into terminals too
