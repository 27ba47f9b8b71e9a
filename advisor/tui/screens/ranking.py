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

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, ProgressBar, Static

from advisor.core import clean_block, rank
from advisor.present.humanize import duration, fmt_num
from advisor.present.verdict import statement
from advisor.present.words import asked, plural
from advisor.tui.messages import AskResult, ResultFailed, ResultReady
from advisor.tui.render import KIND, price_text

if TYPE_CHECKING:
    from advisor.core import GpuResult, Ranking, Remedy, Report
    from advisor.tui.state import Context

ORDERS = {"cost": "$/token", "time": "time", "energy": "energy"}
FIRST = {"upgrade": "upgrade first", "check": "check first"}
"""A ranked GPU's verdict while a remedy stands between it and running, by the remedy's kind."""


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
            yield DataTable(id="rank-table", cursor_type="row", zebra_stripes=True)
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
        report = self.report
        assert report is not None
        d = report.decision
        budget = d.answers.workload.token_budget is not None
        configs = self.ctx.state.configs
        ranking = rank(d, self.order,  # type: ignore[arg-type]
                       configs.deadline_days if configs is not None else None)
        self.ranked, self.remedies = ranking.ranked, ranking.remedies
        self.query_one("#rank-head", Static).update(self._head(d.primary_seq_len, d.current.gpus,
                                                               budget))
        self._fill(ranking, d.primary_seq_len, budget)
        self.query_one("#rank-out", Static).update(clean_block("\n".join(_below(ranking))))
        self.query_one("#rank-table", DataTable).focus()

    def _head(self, seq: int, gpus: int, budget: bool) -> str:
        note = ("" if budget else " [$warning]No token budget[/]: time ranks by cluster "
                "tokens/s and energy cannot be ranked; give a budget on Workload.")
        return (f"Ranked by [b]{ORDERS[self.order]}[/b] at {seq:,} tokens, each GPU re-tuned, "
                f"at {plural(gpus, 'GPU')} unless you gave it a count, and gated on the "
                f"stack it would run; [$warning]default[/] prices are catalog figures, not "
                f"quotes.{note}")

    def _fill(self, ranking: Ranking, seq: int, budget: bool) -> None:
        """The ranked GPUs, one row each; a narrow terminal drops the verdict and $/GPU-h
        columns (the highlighted row's line below says both)."""
        table = self.query_one("#rank-table", DataTable)
        table.clear(columns=True)
        narrow = self.app.size.width < 110
        columns = ["#", "GPU", "verdict", "$/Mtok", "$/GPU-h", "tokens/s per GPU",
                   "wall-clock" if budget else "cluster tokens/s", "kWh" if budget else "kW"]
        keep = (0, 1, 3, 4, 6, 7) if narrow else tuple(range(len(columns)))
        table.add_columns(*(columns[k] for k in keep))
        for i, r in enumerate(ranking.ranked, 1):
            cells = _cells(r, i, ranking, seq, budget, narrow)
            table.add_row(*(cells[k] for k in keep), key=r.gpu)

    ranked: list[GpuResult] = []  # noqa: RUF012 - replaced, never mutated
    remedies: dict[str, Remedy] = {}  # noqa: RUF012 - replaced, never mutated

    @on(DataTable.RowHighlighted, "#rank-table")
    def _row(self, event: DataTable.RowHighlighted) -> None:
        """Every figure of the highlighted GPU, in words ("dflt" is a catalog default)."""
        r = next((x for x in self.ranked if x.gpu == event.row_key.value), None)
        if r is None or self.report is None:
            return
        p = r.point(self.report.decision.primary_seq_len)
        verdict = ("today's GPU" if r.role == "current" else
                   f"first: {self.remedies[r.gpu].text}" if r.gpu in self.remedies else
                   statement(r.verdict.kind, r.verdict.headline, r.gpu) if r.verdict
                   else "no verdict")
        speed = f", {p.speedup:.2f}x per GPU" if p and p.speedup else ""
        tok = f"{fmt_num(p.tokens_per_s_per_gpu, 0)} tokens/s per GPU" if p else ""
        priced = r.assumptions is not None and r.assumptions.price is not None
        price = f"price {price_text(r)}" if priced else asked("no price", "price", "wizard")
        self.query_one("#rank-row", Static).update(clean_block(
            f"[b]{plural(r.gpus, 'GPU')} of {escape(r.gpu)}[/b]: {escape(verdict)}; {tok}{speed}; "
            f"{escape(price)} [dim](dflt = catalog default)[/]"))

    def action_close(self) -> None:
        self.dismiss(None)


def _verdict(r: GpuResult, ranking: Ranking) -> Text:
    if r.role == "current":
        return Text("today", style="bold")
    if r.gpu in ranking.remedies:  # blocked only until the remedy below
        return Text(FIRST[ranking.remedies[r.gpu].kind], style="yellow")
    if r.verdict is not None:
        label, _ = KIND[r.verdict.kind]
        return Text(label.lower())
    return Text("-")


def _cells(r: GpuResult, i: int, ranking: Ranking, seq: int, budget: bool,
           narrow: bool) -> list[str | Text]:
    """One ranked GPU's row: with a token budget, the job's wall-clock and energy; without
    one, the cluster's tokens/s and its power."""
    p, j = r.point(seq), r.job
    price = price_text(r)
    if narrow:
        price = price.replace(" your quote", " quote").replace(" default", " dflt")
        wall = f"{j.wall_clock_h / 24:,.1f} d" if budget and j else None
    else:
        wall = duration(j.wall_clock_h) if budget and j else None
    current = r.role == "current"
    return [
        str(i), Text(r.gpu + (" (now)" if current else ""), style="bold" if current else ""),
        _verdict(r, ranking),
        fmt_num(p.usd_per_mtok, 3) if p else "-",
        Text(price, style="yellow" if "default" in price or "dflt" in price else ""),
        fmt_num(p.tokens_per_s_per_gpu, 0) if p else "-",
        wall if wall is not None else fmt_num(p.tokens_per_s_cluster, 0) if p else "-",
        (fmt_num(j.energy_kwh, 0) if budget else fmt_num(j.power_kw, 1))
        if j and j.energy_kwh is not None else "-"]


def _below(ranking: Ranking) -> list[str]:
    """Under the table: the remedies the ranked GPUs need, the unpriced and unchecked ones,
    and the GPUs that are out with why."""
    lines = []
    first = ranking.by_remedy()
    if first:
        lines.append("[b]First[/b] [dim]for the ranked GPUs that need it[/]")
        lines += [f"  • {escape(', '.join(gpus))}: {escape(what)}"
                  for what, gpus in first.items()]
    unpriced, unchecked = ranking.unpriced(), ranking.unchecked()
    if unpriced:
        said = asked(f"for {', '.join(unpriced)}, so ranked last on $/token", "price", "wizard")
        lines.append(f"[$warning]No price[/] {escape(said)}")
    if unchecked:
        which = ("" if len(unchecked) == len(ranking.ranked) else
                 f" on {escape(', '.join(unchecked))}")
        lines.append(f"[$warning]Software not checked[/]{which}: no stack given, so ranked "
                     "on the hardware alone; give the job's on Software, a target's own "
                     "with its layout on Targets.")
    lines.append(f"[b]Out ({len(ranking.out)})[/b] [dim]the hardware cannot (format, memory), "
                 "another stack is needed, cannot be projected, or over the power cap or "
                 "the deadline[/]")
    lines += [f"  • {escape(r.gpu)}: {escape(why)}" for r, why in ranking.out]
    return lines
