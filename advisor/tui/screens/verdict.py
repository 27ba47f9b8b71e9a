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
from advisor.present.blocks import Table
from advisor.present.decision import anchor_lines, defaults_used, sensitivity, target_facts
from advisor.present.frozen_base import frozen_base_lines
from advisor.present.humanize import render_table
from advisor.present.verdict import statement, verdict_view
from advisor.present.words import asked, plural
from advisor.tui.render import KIND, figure_rows
from advisor.tui.screens.base import ReportScreen
from advisor.tui.widgets.blocks import markup, plain_table

if TYPE_CHECKING:
    from advisor.core import Decision, GpuResult, Report

CARD_WIDTH = 112
"""A card's text at the wizard's 120 columns (its border and padding aside)."""


def card(decision: Decision, t: GpuResult, width: int = CARD_WIDTH) -> str:
    """One target's verdict as markup, its tables `width` cells wide at most; core text is
    escaped, nothing is said twice."""
    v = t.verdict
    if v is None:
        return f"[b]{t.gpu}[/b] not projected: {escape(t.problem or '')}"
    label, colour = KIND[v.kind]
    out = [f"[b reverse {colour}] {label} [/] [b]{plural(t.gpus, 'GPU')} of {t.gpu}[/b]  "
           f"{escape(statement(v.kind, v.headline, t.gpu))}"]
    said = verdict_view(decision.current, t, "wizard")
    out += [f"  • {escape(r)}" for r in said.reasons]
    if v.kind != "blocked-by-gate":
        heads, rows, notes = figure_rows(decision, t)
        out += ["", escape(render_table(heads, rows)), "[dim]" + escape("; ".join(notes)) + "[/]"]
    if v.flips:
        out.append("")
        out.append("[b]what flips it[/b]" if v.kind != "blocked-by-gate" else "[b]remedy[/b]")
        out += [f"  ↻ {escape(f)}" for f in said.flips]
    for block in sensitivity(t.sensitivity):
        out += ["", plain_table(block, width) if isinstance(block, Table) else markup(block)]
    facts = target_facts(decision, t)
    if facts:
        out.append("")
        out += [f"  • {escape(x)}" for x in facts]
    if said.warnings:
        out.append("[b $warning]warnings[/]")
        out += [f"  ! {escape(w)}" for w in said.warnings]
    return clean_block("\n".join(out))  # a resumed report's text is someone else's


def anchor_card(decision: Decision) -> str:
    """What the decision is anchored on, as `anchor_lines` says it: its first line, which
    names the anchor, in the accent colour; what it moved and how it carries, under it."""
    lines = anchor_lines(decision)
    return clean_block(f"[b $accent]{escape(lines[0])}[/]" + "".join(
        f"\n  • {escape(x)}" for x in lines[1:]))


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
            c = report.configs.choice
            summary += (f"\n[dim]configurations (step 8): "
                        f"{escape(asked(c.reason, c.ask, 'wizard'))}[/]")
        self.query_one("#verdict-summary", Static).update(clean_block(summary))
        box = self.query_one("#verdicts", VerticalScroll)
        box.remove_children()
        cards = []
        if decision.anchor is not None:
            cards.append(Static(anchor_card(decision), classes="verdict-card", markup=True))
        warnings = report.warnings
        if warnings:
            cards.append(Static(clean_block("[b $warning]read first[/]\n" + "\n".join(
                f"  ! {escape(w)}" for w in warnings)), classes="verdict-card", markup=True))
        base = frozen_base_lines(decision, "wizard")
        if base:
            cards.append(Static(clean_block("[b]the frozen base (LoRA)[/b]\n" + "\n".join(
                f"  • {escape(x)}" for x in base)), classes="verdict-card",
                markup=True))
        width = self.app.size.width - (120 - CARD_WIDTH)
        cards += [Static(card(decision, t, width), classes="verdict-card", markup=True)
                  for t in decision.targets]
        cards.append(Static(clean_block(markup(defaults_used(decision, "wizard"))),
                            classes="verdict-card", markup=True))
        # The anchor card says what core's first note says when there is an anchor.
        notes = decision.notes[1:] if decision.anchor is not None else decision.notes
        cards.append(Static(clean_block("[dim]" + "\n".join(
            escape(n) for n in notes) + "[/]"), classes="notes", markup=True))
        box.mount_all(cards)
        box.focus()  # arrows and page keys scroll the cards

    def ready(self) -> tuple[bool, str]:
        ok, hint = super().ready()
        return ok, hint or "^e export · ^y copy summary · ^k rank every GPU"
