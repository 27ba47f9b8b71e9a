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
from advisor.humanize import fmt_num
from advisor.tui.messages import AskResult, ResultFailed, ResultReady
from advisor.tui.render import KIND, headline, hours, price_text
from advisor.tui.words import humanize, plural

if TYPE_CHECKING:
    from advisor.core import GpuResult, Remedy, Report
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
        seq = d.primary_seq_len
        budget = d.answers.workload.token_budget is not None
        configs = self.ctx.state.configs
        ranking = rank(d, self.order,  # type: ignore[arg-type]
                       configs.deadline_days if configs is not None else None)
        ok, out = ranking.ranked, ranking.out
        note = ("" if budget else " [$warning]No token budget[/]: time ranks by cluster "
                "tokens/s and energy cannot be ranked; give a budget on Workload.")
        self.query_one("#rank-head", Static).update(
            f"Ranked by [b]{ORDERS[self.order]}[/b] at {seq:,} tokens, each GPU re-tuned, at "
            f"{plural(d.current.gpus, 'GPU')} unless you gave it a count, and gated on the "
            f"stack it would run; [$warning]default[/] prices are catalog figures, not "
            f"quotes.{note}")
        table = self.query_one("#rank-table", DataTable)
        table.clear(columns=True)
        narrow = self.app.size.width < 110
        columns = ["#", "GPU", "verdict", "$/Mtok", "$/GPU-h", "tok/s/GPU",
                   "wall-clock" if budget else "cluster tok/s", "kWh" if budget else "kW"]
        keep = (0, 1, 3, 4, 6, 7) if narrow else tuple(range(len(columns)))
        table.add_columns(*(columns[k] for k in keep))
        self.ranked = ok
        self.remedies = ranking.remedies
        for i, r in enumerate(ok, 1):
            p = r.point(seq)
            j = r.job
            if r.role == "current":
                verdict = Text("today", style="bold")
            elif r.gpu in ranking.remedies:  # blocked only until the remedy below
                verdict = Text(FIRST[ranking.remedies[r.gpu].kind], style="yellow")
            elif r.verdict is not None:
                label, _ = KIND[r.verdict.kind]
                verdict = Text(label.lower())
            else:
                verdict = Text("-")
            price = price_text(r)
            if narrow:
                price = price.replace(" your quote", " quote").replace(" default", " dflt")
                wall = f"{j.wall_clock_h / 24:,.1f} d" if budget and j else None
            else:
                wall = hours(j.wall_clock_h) if budget and j else None
            cells: list[str | Text] = [
                str(i), Text(r.gpu + (" (now)" if r.role == "current" else ""),
                             style="bold" if r.role == "current" else ""), verdict,
                fmt_num(p.usd_per_mtok, 3) if p else "-",
                Text(price, style="yellow" if "default" in price or "dflt" in price else ""),
                fmt_num(p.tokens_per_s_per_gpu, 0) if p else "-",
                wall if wall is not None else fmt_num(p.tokens_per_s_cluster, 0) if p else "-",
                (fmt_num(j.energy_kwh, 0) if budget else fmt_num(j.power_kw, 1))
                if j and j.energy_kwh is not None else "-"]
            table.add_row(*(cells[k] for k in keep), key=r.gpu)
        first = ranking.by_remedy()
        lines = []
        if first:
            lines.append("[b]First[/b] [dim]for the ranked GPUs that need it[/]")
            lines += [f"  – {escape(', '.join(gpus))}: {escape(humanize(what))}"
                      for what, gpus in first.items()]
        unpriced, unchecked = ranking.unpriced(), ranking.unchecked()
        if unpriced:
            lines.append(f"[$warning]No price[/] for {escape(', '.join(unpriced))}, so ranked "
                         "last on $/token: quote one on Targets.")
        if unchecked:
            which = ("" if len(unchecked) == len(ok) else
                     f" on {escape(', '.join(unchecked))}")
            lines.append(f"[$warning]Software not checked[/]{which}: no stack given, so ranked "
                         "on the hardware alone; give the job's on Software, a target's own "
                         "with its layout on Targets.")
        lines += [f"[b]Out ({len(out)})[/b] [dim]the hardware cannot (format, memory), "
                  "another stack is needed, cannot be projected, or over the power cap or "
                  "the deadline[/]"]
        lines += [f"  – {escape(r.gpu)}: {escape(humanize(why))}" for r, why in out]
        self.query_one("#rank-out", Static).update(clean_block("\n".join(lines)))
        table.focus()

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
                   headline(r.verdict.headline) if r.verdict else "no verdict")
        speed = f", {p.speedup:.2f}× per GPU" if p and p.speedup else ""
        tok = f"{fmt_num(p.tokens_per_s_per_gpu, 0)} tok/s per GPU" if p else ""
        priced = r.assumptions is not None and r.assumptions.price is not None
        price = f"price {price_text(r)}" if priced else "no price: quote one on Targets"
        self.query_one("#rank-row", Static).update(clean_block(
            f"[b]{plural(r.gpus, 'GPU')} of {escape(r.gpu)}[/b]: {escape(verdict)}; {tok}{speed}; "
            f"{escape(price)} [dim](dflt = catalog default)[/]"))

    def action_close(self) -> None:
        self.dismiss(None)
