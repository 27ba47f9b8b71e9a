"""Step 7: the projection, in three views of the same Report.

- Sweep: each sequence length on each GPU (tokens/s, speedup with its band, $/Mtok, the
  binding resource, memory against capacity; TTFT/TPOT when serving), beside a chart.
- Where the time goes: each GPU's step split into buckets (dense GEMMs, attention,
  elementwise, optimizer, communication, host overhead), with each bucket's binding
  resource and its speedup against the current GPU.
- Layouts and rates: the layout as you run it and the one re-tuned per GPU (the verdict's
  basis), the attention kernel the projection assumed and why, and every rate's source.

Nothing here computes: every figure is a field of the Report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.widgets import DataTable, Static, TabbedContent, TabPane

from advisor.core import clean_block
from advisor.present.blocks import Col
from advisor.present.charts import interactivity_chart, speedup_chart
from advisor.present.decision import anchor_lines, sweep_table
from advisor.present.humanize import fmt_num, number
from advisor.present.plot import bar
from advisor.present.words import plural
from advisor.tui.render import (
    BUCKET_NAMES,
    RESOURCE_NAMES,
    engine_name,
    format_text,
)
from advisor.tui.screens.base import ReportScreen
from advisor.tui.widgets.blocks import BlockTable
from advisor.tui.widgets.charts import chart

if TYPE_CHECKING:
    from advisor.core import Decision, GpuResult, Report, SweepPoint

VIEWS = ("tab-sweep", "tab-buckets", "tab-layouts")
FIT_STYLES = {"yes": "green", "borderline": "yellow", "no": "red"}


def point_line(decision: Decision, r: GpuResult, p: SweepPoint, left_out: str) -> str:
    """What no table column says of one row (markup): the anchor, the format and engine,
    the batch the KV cache held back, how near memory a borderline fit is; then its cells in
    the columns this width leaves out (`left_out`)."""
    parts = [f"[b]{escape(r.label)}[/b] at {p.seq_len:,} tokens"]
    modelled = r.modelled_tokens_per_s_per_gpu
    if modelled is not None and decision.anchor is not None \
            and p.seq_len == decision.primary_seq_len:
        parts.append(f"anchored on your measured {escape(decision.anchor.measured)} "
                     f"(modelled {number(modelled)})" if r.role == "current" else
                     f"modelled {number(modelled)} before the anchor")
    parts.append(f"{format_text(r)} on {escape(engine_name(r.framework))}")
    if p.batch_cap == "kv-capacity" and p.batch and p.uncapped_batch \
            and p.uncapped_batch > p.batch:
        parts.append(f"{p.uncapped_batch:,} requests in flight without the KV-cache limit")
    if p.borderline and p.memory_margin_gib is not None:
        how = "fits by" if p.memory_margin_gib >= 0 else "over by"
        parts.append(f"[$warning]borderline: {how} {abs(p.memory_margin_gib):.1f} GiB, within "
                     "the memory model's uncertainty: measure it[/]")
    elif not p.fits:
        parts.append("[$error]does not fit[/]")
    return "; ".join([*parts, *([escape(left_out)] if left_out else [])])


def bucket_text(decision: Decision, width: int = 24) -> str:
    """Where each GPU's step time goes at the headline sequence length (markup)."""
    seq = decision.primary_seq_len
    lines = [f"[b]Where the step time goes[/b] at {seq:,} tokens, re-tuned layouts "
             "[dim](share of the step; bound by; speedup of that bucket against "
             f"{decision.current.gpu} per token)[/]"]
    for r in (decision.current, *decision.targets):
        p = r.point(seq)
        lines.append("")
        if p is None or not p.bucket_seconds or not p.step_s:
            lines.append(f"[b]{r.gpus}x {r.gpu}[/b]  [dim]not projected: "
                         f"{escape(r.problem or 'blocked at a gate')}[/]")
            continue
        total = sum(p.bucket_seconds.values()) or 1.0
        step = f"{p.step_s * 1000:,.0f} ms per step" if p.step_s >= 0.001 else \
            f"{p.step_s * 1e6:,.0f} µs per step"
        fit = "" if p.fits else "  [$error]does not fit: figures for reference[/]"
        lines.append(f"[b]{r.gpus}x {r.gpu}[/b]{' (now)' if r.role == 'current' else ''}  "
                     f"{step}{fit}")
        for key, seconds in p.bucket_seconds.items():
            if seconds <= 0:
                continue
            share = seconds / total
            bound = RESOURCE_NAMES.get(p.bucket_binding.get(key, ""), "-")
            versus = p.bucket_speedup.get(key)
            vs = f"{versus:.2f}x" if versus is not None else ""
            lines.append(f"  {BUCKET_NAMES.get(key, key):<14} [$accent]{bar(share, 1.0, width)}"
                         f"[/] {share:>4.0%}  {bound:<16} {vs}")
    return "\n".join(lines)


def layout_text(decision: Decision) -> str:
    """As run and re-tuned, per GPU, and what each projection assumed (markup)."""
    w = decision.answers.workload
    serving = not w.training
    seq = decision.primary_seq_len
    basis = "re-tuned layouts" if decision.basis == "retuned" else "your layouts as run"
    lines = [f"[b]Layouts[/b] at {seq:,} tokens [dim](the verdict compares {basis})[/]"]
    for r in (decision.current, *decision.targets):
        p = r.point(seq)
        a = next((x for x in r.as_run if x.seq_len == seq), None)
        change = r.change_at(seq)
        lines.append(f"[b]{r.gpus}x {r.gpu}[/b]")
        if a is not None and a.layout is not None:
            fit = "" if a.fits else (" [$error]does not fit[/]"
                                     + (f": {escape(change)}" if change else ""))
            lines.append(f"  as you run it: {escape(a.layout.describe(serving))}{fit}")
        if p is not None and p.layout is not None:
            lines.append(f"  re-tuned:      {escape(p.layout.describe(serving))}")
    lines.append("")
    lines.append("[b]Rates and where they come from[/b]")
    for r in (decision.current, *decision.targets):
        rates = r.assumptions
        if rates is None:
            lines.append(f"[b]{r.gpu}[/b] [dim]not projected: "
                         f"{escape(r.problem or 'blocked at a gate')}[/]")
            continue
        lines.append(f"[b]{r.gpu}[/b] attention kernel [b]{escape(rates.attention_kernel)}[/b]: "
                     f"{escape(rates.attention_why)}; framework "
                     f"{escape(rates.framework)}"
                     + (f"; probe {escape(rates.probe)}" if rates.probe else ""))
        for e in rates.evidence:
            lines.append(f"  {escape(e.quantity)}: {fmt_num(e.value)} {escape(e.unit)} "
                         f"[dim]{escape(e.source)}: {escape(e.detail)}[/]")
    return "\n".join(lines)


class PerformanceScreen(ReportScreen):
    STEP = 6
    BINDINGS: ClassVar = [Binding("ctrl+t", "next_view", "View", key_display="^t")]
    decision: Decision | None = None

    def compose_result(self) -> ComposeResult:
        yield Static("", id="perf-summary", markup=True)
        with TabbedContent(id="perf-tabs"):
            with TabPane("Sweep", id="tab-sweep"), Horizontal(id="perf"):
                with Vertical(id="sweep-box"):
                    yield BlockTable(id="sweep", cursor_type="row", zebra_stripes=True)
                    yield Static("", id="sweep-row", markup=True)
                with VerticalScroll(id="chart-box", can_focus=False):
                    yield Static("", id="chart", markup=True)
            with TabPane("Where the time goes", id="tab-buckets"), \
                    VerticalScroll(id="buckets-box"):
                yield Static("", id="buckets", markup=True)
            with TabPane("Layouts and rates", id="tab-layouts"), \
                    VerticalScroll(id="layouts-box"):
                yield Static("", id="layouts", markup=True)

    def action_next_view(self) -> None:
        tabs = self.query_one("#perf-tabs", TabbedContent)
        tabs.active = VIEWS[(VIEWS.index(tabs.active) + 1) % len(VIEWS)] \
            if tabs.active in VIEWS else VIEWS[0]

    def render_result(self, report: Report) -> None:
        decision = report.decision
        self.decision = decision
        w = decision.answers.workload
        basis = "re-tuned layout on each GPU" if decision.basis == "retuned" \
            else "your layout as run"
        serving = "" if w.training else (f", {w.osl:,} output tokens per request; batch = "
                                         "requests in flight per replica")
        anchor = anchor_lines(decision)
        anchored = f"\n[$accent]{escape(anchor[0])}[/]" if anchor else ""
        self.query_one("#perf-summary", Static).update(
            f"[b]{escape(w.model.name)}[/b] {w.mode}, {plural(w.gpus, 'GPU')} today{serving}. "
            f"Speedup is tokens/s per GPU against {decision.current.gpu}, {basis}; bound by: "
            f"what limits the step (HBM = memory bandwidth); ^t switches view.{anchored}")
        gpus = [decision.current, *decision.targets]
        self.query_one("#sweep", BlockTable).show(
            sweep_table(decision), [f"{i}:{col}" for col in range(len(w.seq_lens))
                                    for i in range(len(gpus))], self._style)
        self.query_one("#sweep", BlockTable).focus()
        self._show_row()
        curve = interactivity_chart(decision)
        self.query_one("#chart", Static).update(
            chart(speedup_chart(decision), max(40, self.size.width - 4))
            + (f"\n\n{chart(curve, 34, 9)}" if curve else ""))
        self.query_one("#buckets", Static).update(clean_block(bucket_text(decision)))
        self.query_one("#layouts", Static).update(clean_block(layout_text(decision)))

    def _style(self, row: int, col: Col, cell: str) -> str:
        """Today's GPU in bold; whether a point fits in green, yellow (borderline) or red."""
        if col.header == "GPUs":  # rows: each length, the current GPU first at each
            d = self.decision
            return "bold" if d is not None and row % (1 + len(d.targets)) == 0 else ""
        return FIT_STYLES.get(cell, "") if col.header == "fits" else ""

    @on(DataTable.RowHighlighted, "#sweep")
    def _show_row(self) -> None:
        """What the highlighted row's cells do not say, under the table."""
        decision = self.decision
        table = self.query_one("#sweep", BlockTable)
        key = table.highlighted
        if decision is None or key is None:
            return
        side, col = (int(x) for x in key.split(":"))
        r = [decision.current, *decision.targets][side]
        self.query_one("#sweep-row", Static).update(clean_block(
            point_line(decision, r, r.sweep[col], table.left_out(key))))
