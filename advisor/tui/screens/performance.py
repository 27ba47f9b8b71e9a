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

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.widgets import DataTable, Static, TabbedContent, TabPane

from advisor.core import clean_block
from advisor.present.charts import RESOURCE_SHORT, interactivity_chart, speedup_chart
from advisor.present.decision import anchor_lines
from advisor.present.humanize import fmt_num, ratio
from advisor.present.plot import bar
from advisor.present.words import plural
from advisor.tui.numbers import format_seq_lens
from advisor.tui.render import (
    BUCKET_NAMES,
    RESOURCE_NAMES,
    batch_text,
    engine_name,
    format_text,
    speed,
)
from advisor.tui.screens.base import NARROW, ReportScreen
from advisor.tui.widgets.charts import chart

if TYPE_CHECKING:
    from advisor.core import Decision, GpuResult, Report, SweepPoint

VIEWS = ("tab-sweep", "tab-buckets", "tab-layouts")


def _fits(p: SweepPoint, r: GpuResult) -> Text:
    mem = f"{p.memory_gib:,.0f}/{r.memory.usable_gib:,.0f}"
    if p.fits and p.borderline:
        return Text(f"◐ {mem}", style="yellow")
    return Text(f"✔ {mem}", style="green") if p.fits else Text(f"✘ {mem}", style="red")


COLUMNS = ("seq", "GPU", "tokens/s/GPU", "speedup (band)", "$/Mtok", "bound by", "mem GiB")
SERVING_COLUMNS = ("TTFT ms", "TPOT ms", "batch")
NARROW_COLUMNS = ("seq", "GPU", "tokens/s/GPU", "speedup", "$/Mtok", "bound by")
"""Below 110 columns; the highlighted row's every figure shows under the table."""


def sweep_columns(decision: Decision, band: bool = True) -> list[str]:
    serving = not decision.answers.workload.training
    if not band:
        return list(NARROW_COLUMNS)
    return list(COLUMNS) + (list(SERVING_COLUMNS) if serving else [])


def _label(r: GpuResult) -> str:
    blocked = (r.verdict is not None and r.verdict.kind == "blocked-by-gate") \
        or not r.dtype_gate.passed
    now = " (now, blocked)" if blocked else " (now)"
    return r.label + (now if r.role == "current" else " (blocked)" if blocked else "")


def sweep_rows(decision: Decision, band: bool = True) -> list[tuple[str, list[str | Text]]]:
    """(row key, cells) grouped by sequence length, current GPU first in each group; without
    `band` (narrow terminals) the band, memory and serving figures are left to the line
    under the table."""
    serving = not decision.answers.workload.training
    gpus = [decision.current, *decision.targets]
    rows: list[tuple[str, list[str | Text]]] = []
    for col, seq in enumerate(decision.answers.workload.seq_lens):
        for i, r in enumerate(gpus):
            p = r.sweep[col]
            today = ("1.00x (today)" if band else "1.00x") if p.runnable else "-"
            if r.role == "current":
                shown = today
            else:
                shown = speed(p) if band or p.speedup is None else ratio(p.speedup)
            row: list[str | Text] = [
                format_seq_lens((seq,)), _label(r), fmt_num(p.tokens_per_s_per_gpu, 0), shown,
                fmt_num(p.usd_per_mtok, 3),
                RESOURCE_SHORT.get(p.binding or "", "-") if p.binding and p.runnable else "-"]
            if band:
                row.append(_fits(p, r))
                if serving:
                    row += [fmt_num(p.ttft_ms, 0), fmt_num(p.tpot_ms, 1),
                            fmt_num(p.batch, 0) if p.batch is not None else "-"]
            rows.append((f"{i}:{col}", row))
    return rows


def point_line(decision: Decision, r: GpuResult, p: SweepPoint) -> str:
    """Every figure of one row, in words (markup): what a narrow table leaves out, and what
    no table column says (what set the batch, the format, the engine, the anchor)."""
    serving = not decision.answers.workload.training
    parts = [f"[b]{escape(_label(r))}[/b] at {p.seq_len:,} tokens: "
             f"{fmt_num(p.tokens_per_s_per_gpu, 0)} tokens/s per GPU"]
    if r.role == "current" and r.modelled_tokens_per_s_per_gpu is not None \
            and decision.anchor is not None and p.seq_len == decision.primary_seq_len:
        parts.append(f"anchored on your measured {escape(decision.anchor.measured)} "
                     f"(modelled {fmt_num(r.modelled_tokens_per_s_per_gpu, 0)})")
    elif r.modelled_tokens_per_s_per_gpu is not None and decision.anchor is not None \
            and p.seq_len == decision.primary_seq_len:
        parts.append(f"modelled {fmt_num(r.modelled_tokens_per_s_per_gpu, 0)} before the "
                     "anchor")
    if r.role != "current":
        parts.append(speed(p))
    parts.append(f"{format_text(r)} on {escape(engine_name(r.framework))}")
    if serving:
        parts.append(f"TTFT {fmt_num(p.ttft_ms, 0)} ms, TPOT {fmt_num(p.tpot_ms, 1)} ms, "
                     f"requests in flight {escape(batch_text(p))}")
    if p.binding and p.runnable:
        parts.append(f"bound by {RESOURCE_NAMES.get(p.binding, p.binding)}")
    mem = f"{p.memory_gib:,.1f} of {r.memory.usable_gib:,.1f} GiB"
    if p.borderline and p.memory_margin_gib is not None:
        how = "fits by" if p.memory_margin_gib >= 0 else "over by"
        mem += (f" [$warning]borderline: {how} {abs(p.memory_margin_gib):.1f} GiB, within the "
                "memory model's uncertainty: measure it[/]")
    elif not p.fits:
        mem += " [$error]does not fit[/]"
    parts.append(mem)
    if p.usd_per_mtok is not None:
        parts.append(f"${fmt_num(p.usd_per_mtok, 3)}/Mtok")
    return "; ".join(parts)


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
                    yield DataTable(id="sweep", cursor_type="row", zebra_stripes=True)
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
        table = self.query_one("#sweep", DataTable)
        keep = self._highlighted()
        table.clear(columns=True)
        band = self.size.width >= NARROW
        table.add_columns(*sweep_columns(decision, band))
        for key, row in sweep_rows(decision, band):
            table.add_row(*row, key=key)
        if keep is not None and keep in table.rows:
            table.move_cursor(row=table.get_row_index(keep))
        table.focus()
        self._show_row()
        curve = interactivity_chart(decision)
        self.query_one("#chart", Static).update(
            chart(speedup_chart(decision), max(40, self.size.width - 4))
            + (f"\n\n{chart(curve, 34, 9)}" if curve else ""))
        self.query_one("#buckets", Static).update(clean_block(bucket_text(decision)))
        self.query_one("#layouts", Static).update(clean_block(layout_text(decision)))

    def _highlighted(self) -> str | None:
        table = self.query_one("#sweep", DataTable)
        if not table.row_count:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    @on(DataTable.RowHighlighted, "#sweep")
    def _show_row(self) -> None:
        """The highlighted row's every figure, under the table."""
        decision, key = self.decision, self._highlighted()
        if decision is None or key is None:
            return
        side, col = (int(x) for x in key.split(":"))
        r = [decision.current, *decision.targets][side]
        p = r.sweep[col]
        self.query_one("#sweep-row", Static).update(clean_block(point_line(decision, r, p)))
