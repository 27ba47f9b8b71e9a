"""Step 7: the sweep (sequence length × GPU) beside a speedup chart.

Nothing here computes: every figure is a field of the Decision's sweep points.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import DataTable, Static

from advisor.textfmt import fmt_num
from advisor.tui.forms import format_seq_lens
from advisor.tui.screens.base import DecisionScreen
from advisor.tui.widgets.charts import speedup_chart

if TYPE_CHECKING:
    from advisor.core.decide import Decision, GpuResult, SweepPoint

COLUMNS = (("seq", 5), ("tok/s/GPU", 9), ("speedup", 7), ("$/Mtok", 6), ("bound by", 8),
           ("mem GiB", 9))


def _fits(p: SweepPoint, r: GpuResult) -> Text:
    mem = f"{p.memory_gib:,.0f}/{r.memory.usable_gib:,.0f}"
    return Text(f"✔ {mem}", style="green") if p.fits else Text(f"✘ {mem}", style="red")


def sweep_rows(decision: Decision) -> list[tuple[str | Text, ...]]:
    """Rows grouped by sequence length, current GPU first in each group."""
    gpus = [decision.current, *decision.targets]
    rows: list[tuple[str | Text, ...]] = []
    for col, seq in enumerate(decision.answers.workload.seq_lens):
        for r in gpus:
            p = r.sweep[col]
            speed = "1.00×" if r.role == "current" and p.runnable else (
                f"{p.speedup:.2f}×" if p.speedup is not None else "-")
            rows.append((format_seq_lens((seq,)), f"{r.gpu} (now)" if r.role == "current"
                         else r.gpu, fmt_num(p.tokens_per_s_per_gpu, 0), speed,
                         fmt_num(p.usd_per_mtok, 3), p.binding or "-", _fits(p, r)))
    return rows


def evidence_line(decision: Decision) -> str:
    """Where the rates came from, per GPU: probe, catalog MAMF or an assumption."""
    parts = []
    for r in (decision.current, *decision.targets):
        a = r.assumptions
        if a is None:
            parts.append(f"{r.gpu}: not projected ({r.problem or 'gated'})")
            continue
        sources = sorted(set(a.rate_sources.values()))
        probe = f", probe {a.probe}" if a.probe else ""
        parts.append(f"{r.gpu}: {', '.join(sources)}{probe}")
    return "[dim]rates from: " + "; ".join(parts) + "[/]"


class PerformanceScreen(DecisionScreen):
    STEP = 6

    def compose_result(self) -> ComposeResult:
        yield Static("", id="perf-summary", markup=True)
        with Horizontal(id="perf"):
            yield DataTable(id="sweep", cursor_type="row", zebra_stripes=True)
            yield Static("", id="chart", markup=True)
        yield Static("", id="evidence", markup=True)

    def render_result(self, decision: Decision) -> None:
        w = decision.answers.workload
        self.query_one("#perf-summary", Static).update(
            f"[b]{w.model.name}[/b] {w.mode}, {w.gpus} GPUs, {w.precision}, micro-batch "
            f"{w.micro_batch}{', packed' if w.packed_doc_len else ''}. Speedup is tokens/s per "
            f"GPU against {decision.current.gpu} at the same GPU count.")
        table = self.query_one("#sweep", DataTable)
        table.clear(columns=True)
        gpu_width = max(len(r.gpu) for r in (decision.current, *decision.targets)) + 6
        table.add_column(COLUMNS[0][0], width=COLUMNS[0][1])
        table.add_column("GPU", width=gpu_width)
        for label, width in COLUMNS[1:]:
            table.add_column(label, width=width)
        for row in sweep_rows(decision):
            table.add_row(*row)
        table.focus()
        self.query_one("#chart", Static).update(speedup_chart(decision))
        self.query_one("#evidence", Static).update(evidence_line(decision))
