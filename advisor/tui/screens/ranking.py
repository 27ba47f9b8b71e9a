"""Which GPU is best for this workload? Every catalog GPU, ranked.

The app calls `advisor.core.run` with the same answers and every other catalog GPU as a
target (`advisor rank` and `advisor compare --target all` print the same ranking). GPUs
that run, or would after an upgrade or a check named beside them, are ranked by $/token,
by time or by energy (1, 2, 3 switch); prices that are catalog defaults say so. The rest
are listed below with the reason they are out, the hardware's first.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, ProgressBar, Static

from advisor.core import clean_block, rank
from advisor.present.blocks import Col, Table
from advisor.present.humanize import ratio
from advisor.present.ranking import ranking_blocks
from advisor.present.verdict import statement
from advisor.present.words import plural
from advisor.tui.messages import AskResult, ResultFailed, ResultReady
from advisor.tui.widgets.blocks import BlockTable, markup, table_notes

if TYPE_CHECKING:
    from advisor.core import GpuResult, Ranking, Report
    from advisor.tui.state import Context


class RankingScreen(ModalScreen[None]):
    BINDINGS: ClassVar = [
        Binding("escape", "close", "Close", key_display="esc"),
        Binding("1", "order('cost')", "by $/token"),
        Binding("2", "order('time')", "by time"),
        Binding("3", "order('energy')", "by energy"),
    ]

    def __init__(self, ctx: Context) -> None:
        super().__init__()
        self.ctx = ctx
        self.order = "cost"
        self.report: Report | None = None
        self.ranking: Ranking | None = None
        self.done = asyncio.Event()
        """Set once the ranking (or why there is none) is on screen: what a test waits on."""

    def compose(self) -> ComposeResult:
        with Vertical(id="ranking", classes="dialog"):
            yield Static("[b]Which GPU is best for this workload?[/b] Every catalog GPU, the "
                         "same answers, ranked.", id="rank-title", markup=True)
            with Vertical(id="rank-loading"):
                others = len(self.ctx.catalog.gpus) - 1
                yield Static(f"projecting {others} catalog GPUs for these answers, each "
                             "re-tuned and judged as a target (its own count, layout and "
                             "stack if you gave one)…", id="rank-progress-text")
                yield ProgressBar(total=None, show_eta=False, show_percentage=False,
                                  id="rank-progress")
            yield Static("", id="rank-head", markup=True)
            yield BlockTable(id="rank-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="rank-row", markup=True)
            with VerticalScroll(id="rank-more"):
                yield Static("", id="rank-out", markup=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#rank-table").display = False
        self.app.post_message(AskResult("ranking"))

    def on_result_ready(self, message: ResultReady) -> None:
        if message.kind == "ranking":
            self.show_result(message.report)

    def on_result_failed(self, message: ResultFailed) -> None:
        if message.kind == "ranking":
            self.show_error(message.text)

    def show_result(self, report: Report) -> None:
        self.report = report
        self.query_one("#rank-loading").display = False
        self.query_one("#rank-table").display = True
        self._draw()
        self.call_after_refresh(self.done.set)

    def show_error(self, text: str) -> None:
        self.query_one("#rank-loading").display = False
        self.query_one("#rank-head", Static).update(
            f"[b $error]Cannot rank:[/] {escape(text)}")
        self.done.set()

    def action_order(self, order: str) -> None:
        self.order = order
        if self.report is not None:
            self._draw()

    def _draw(self) -> None:
        """The ranking's blocks as `advisor rank` prints them: the table under its title, then
        the remedies, what could not be counted, what is out, and the table's notes."""
        report = self.report
        assert report is not None
        configs = self.ctx.state.configs
        ranking = rank(report.decision, self.order,  # type: ignore[arg-type]
                       configs.deadline_days if configs is not None else None)
        self.ranking = ranking
        blocks = ranking_blocks(report, ranking, dialect="wizard")
        title, table, *below = blocks
        self.query_one("#rank-title", Static).update(markup(title))
        grid = self.query_one("#rank-table", BlockTable)
        grid.display = isinstance(table, Table)
        self.query_one("#ranking").set_class(not grid.display, "-none")
        notes = ""
        if isinstance(table, Table):
            grid.show(table, [r.gpu for r in ranking.ranked], self._style)
            self.query_one("#rank-head", Static).update(f"[b]{escape(table.title)}[/b]")
            notes = "\n[dim]" + escape("\n".join(table_notes(table))) + "[/]"
            grid.focus()
        else:
            self.query_one("#rank-head", Static).update(markup(table))
            self.query_one("#rank-row", Static).update("")
            self.query_one("#rank-more").focus()  # the keys scroll what is out
        self.query_one("#rank-out", Static).update(clean_block(
            "\n".join(markup(b) for b in below) + notes))

    def _style(self, row: int, col: Col, cell: str) -> str:
        """Today's GPU in bold; a verdict that waits on a remedy and a default price in
        yellow (the caveats below say why)."""
        assert self.ranking is not None
        r = self.ranking.ranked[row]
        header = col.header
        if header == "GPU" and r.role == "current":
            return "bold"
        if header == "verdict" and r.role != "current" and r.gpu in self.ranking.remedies:
            return "yellow"
        price = r.assumptions.price if r.assumptions else None
        return "yellow" if header == "price" and price and price.source == "default" else ""

    @on(DataTable.RowHighlighted, "#rank-table")
    def _row(self, event: DataTable.RowHighlighted) -> None:
        """The highlighted GPU's verdict in words, its speed against today's per GPU, and
        its cells in the columns this width leaves out."""
        ranking = self.ranking
        r = next((x for x in ranking.ranked if x.gpu == event.row_key.value), None) \
            if ranking is not None else None
        if r is None or ranking is None or self.report is None:
            return
        parts = [_verdict_words(r, ranking)]
        p = r.point(self.report.decision.primary_seq_len)
        if p is not None and p.speedup and r.role != "current":
            parts.append(f"{ratio(p.speedup)} tokens/s per GPU against today's")
        left = self.query_one("#rank-table", BlockTable).left_out(r.gpu)
        self.query_one("#rank-row", Static).update(clean_block(
            f"[b]{plural(r.gpus, 'GPU')} of {escape(r.gpu)}[/b]: "
            + escape("; ".join([*parts, *([left] if left else [])]))))

    def action_close(self) -> None:
        self.dismiss(None)


def _verdict_words(r: GpuResult, ranking: Ranking) -> str:
    """Today's GPU, the remedy a ranked GPU needs first, or its verdict's statement."""
    if r.role == "current":
        return "today's GPU"
    if r.gpu in ranking.remedies:
        return f"first: {ranking.remedies[r.gpu].text}"
    v = r.verdict
    return statement(v.kind, v.headline, r.gpu) if v else "no verdict"
