"""Step 9: for each target, the decision, why, what it costs side by side, and what flips it.

All of it is the Report's: the verdict kind and headline, its ranked reasons, its flip
points, the tornado (`sensitivity`: each assumption over its range with the verdict at
each end), the job's cost and energy, the stack-drift warnings and every default used.
From here: export the report (^e), copy a summary (^y), rank every GPU (^k).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.widgets import Static

from advisor.core import clean_block
from advisor.humanize import fmt_num, render_table
from advisor.tui.render import (
    KIND,
    WARNING_KINDS,
    defaults_lines,
    headline,
    report_warnings,
    sensitivity_lines,
    side_rows,
)
from advisor.tui.screens.base import ReportScreen
from advisor.tui.words import humanize

if TYPE_CHECKING:
    from advisor.core import Decision, GpuResult, Report


def card(decision: Decision, t: GpuResult) -> str:
    """One target's verdict as markup; core text is escaped, nothing is said twice."""
    v = t.verdict
    if v is None:
        return f"[b]{t.gpu}[/b] not projected: {escape(humanize(t.problem or ''))}"
    label, colour = KIND[v.kind]
    out = [f"[b reverse {colour}] {label} [/] [b]{t.gpus}x {t.gpu}[/b]  "
           f"{escape(headline(v.headline))}"]
    reasons = [r for r in v.reasons if r.kind not in WARNING_KINDS]
    out += [f"  • {escape(humanize(r.text))}" for r in reasons[:5]]
    if v.kind != "blocked-by-gate":
        out.append("")
        cur = decision.current
        rows = side_rows(cur, t, decision.primary_seq_len)
        out.append(escape(render_table(
            [f"at {decision.primary_seq_len:,} tokens", f"{cur.gpu} (now)", t.gpu],
            [list(r) for r in rows])))
        out.append("[dim]energy: the job's GPUs at their projected draw (no idle slots)[/]")
    if v.flips:
        out.append("")
        out.append("[b]what flips it[/b]" if v.kind != "blocked-by-gate" else "[b]remedy[/b]")
        out += [f"  ↻ {escape(humanize(f.text))}" for f in v.flips]
    if t.sensitivity:
        out.append("")
        out.append("[b]sensitivity[/b] [dim](each assumption over its range, the others "
                   "held; ↻ = the verdict changes)[/]")
        out += [f"  {escape(line)}" for line in sensitivity_lines(t.sensitivity)]
    b = t.buy_back
    if b is not None and b.gpus is not None:
        out.append("")
        out.append(f"[b]or match its speed with more {decision.current.gpu}[/b]: "
                   f"{escape(humanize(b.note))}; ${fmt_num(b.usd_per_mtok, 3)}/Mtok, "
                   f"{fmt_num(b.power_kw, 1)} kW")
    warnings = [r.text for r in v.reasons if r.kind in WARNING_KINDS]
    if warnings:
        out.append("[b $warning]warnings[/]")
        out += [f"  ! {escape(humanize(w))}" for w in warnings]
    return clean_block("\n".join(out))  # a resumed report's text is someone else's


class VerdictScreen(ReportScreen):
    STEP = 8
    BINDINGS: ClassVar = [
        Binding("ctrl+e", "app.export", "Export", key_display="^e"),
        Binding("ctrl+y", "app.copy_summary", "Copy", key_display="^y"),
        Binding("ctrl+k", "app.rank", "Rank", key_display="^k"),
    ]

    def compose_result(self) -> ComposeResult:
        yield Static("", id="verdict-summary", markup=True)
        yield VerticalScroll(id="verdicts")

    def render_result(self, report: Report) -> None:
        decision = report.decision
        summary = "  ".join(
            f"[b]{t.gpu}[/b] [{KIND[t.verdict.kind][1]}]{KIND[t.verdict.kind][0]}[/]"
            for t in decision.targets if t.verdict)
        summary += f"   [dim]vs {decision.current.gpus}x {decision.current.gpu} today[/]"
        if report.configs is not None:
            summary += (f"\n[dim]configurations (step 8): "
                        f"{escape(humanize(report.configs.choice.reason))}[/]")
        self.query_one("#verdict-summary", Static).update(clean_block(summary))
        box = self.query_one("#verdicts", VerticalScroll)
        box.remove_children()
        cards = []
        warnings = report_warnings(report)
        if warnings:
            cards.append(Static(clean_block("[b $warning]read first[/]\n" + "\n".join(
                f"  ! {escape(w)}" for w in warnings)), classes="verdict-card", markup=True))
        cards += [Static(card(decision, t), classes="verdict-card", markup=True)
                  for t in decision.targets]
        defaults = defaults_lines(decision)
        if defaults:
            cards.append(Static(clean_block(
                "[b]defaults used[/b] [dim](not given by you)[/]\n" + "\n".join(
                    f"  – {escape(x)}" for x in defaults)), classes="verdict-card", markup=True))
        cards.append(Static(clean_block("[dim]" + "\n".join(
            escape(humanize(n)) for n in decision.notes) + "[/]"), classes="notes", markup=True))
        box.mount_all(cards)
        box.focus()  # arrows and page keys scroll the cards

    def ready(self) -> tuple[bool, str]:
        ok, hint = super().ready()
        return ok, hint or "^e export · ^y copy summary · ^k rank every GPU"
