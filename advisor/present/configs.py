"""The GPU-count sweep and the pipeline balance as blocks: the pick first, then the
configurations, the chart and what they rest on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from advisor.present.blocks import Block, Bullets, Col, Heading, Para, Table
from advisor.present.charts import cost_chart
from advisor.present.humanize import NA, UNKNOWN, count, duration, number, price, usd
from advisor.present.words import Dialect, asked

if TYPE_CHECKING:
    from advisor.core import (
        Answers,
        ConfigPoint,
        ConfigSweep,
        PipelineBalance,
        PipelineReport,
    )


def _days(days: float | None) -> str:
    return duration(days * 24) if days is not None else NA


MARKS = (("pick", "the pick"), ("front", "on the Pareto front over time, $ and kW"),
         ("over cap", "over the power cap"), ("late", "past the deadline"))
"""The marks column's words, in the order a row shows them, and what each means."""


def _marks(p: ConfigPoint, pick: ConfigPoint | None) -> str:
    said = {"pick": p == pick, "front": p.pareto, "over cap": p.meets_power_cap is False,
            "late": p.meets_deadline is False}
    return ", ".join(word for word, _ in MARKS if said[word])


def _sweep_row(p: ConfigPoint, r: ConfigSweep, today: int) -> list[str]:
    """One configuration's cells, in the table's column order; (now): today's GPU and count."""
    now = " (now)" if p.gpu == r.current and p.gpus == today else ""
    return [p.gpu + now, str(p.gpus), str(p.nodes), str(p.idle_gpus),
            number(p.tokens_per_s / 1e3, 1), f"{p.scaling_efficiency:.0%}",
            f"{p.comm_share:.0%}", _days(p.eta_days), usd(p.usd),
            number(p.gpu_days_equiv, 1) if p.gpu_days_equiv is not None else UNKNOWN,
            number(p.power_kw, 1), number(p.rack_kw, 1), number(p.energy_kwh),
            price(p.usd_per_gpu_hour, p.price_source), _marks(p, r.choice.best)]


def sweep_table(r: ConfigSweep, answers: Answers) -> Table:
    """One row per configuration, in the sweep's order: what `advisor configs sweep` prints
    and the wizard's Configurations step shows."""
    c = r.choice
    rows = [_sweep_row(p, r, answers.workload.gpus) for p in r.points]
    return Table(
        [Col("GPU"), Col("GPUs", numeric=True), Col("nodes", numeric=True, drop=5),
         Col("idle", "slots", numeric=True, drop=6), Col("throughput", "K tokens/s", numeric=True),
         Col("scaling", numeric=True, drop=3), Col("comm", "share", numeric=True, drop=4),
         Col("wall-clock", numeric=True), Col("job", "$", numeric=True),
         Col("GPU-days", f"in {r.current}", numeric=True, drop=2),
         Col("power", "kW", numeric=True),
         Col("with hosts", "kW", numeric=True, drop=0 if c.power_cap_kw is not None else 8),
         Col("energy", "kWh", numeric=True, drop=1),
         Col("price", "$/GPU-h", drop=7), Col("marks")],
        rows, title="Configurations",
        notes=[f"scaling: per-GPU rate over the smallest count that runs; comm share: exposed "
               f"communication in a step; GPU-days in {r.current}: the job's $ at its price; "
               "idle slots: empty node slots at idle draw; with hosts: the GPUs, empty slots "
               "and each node's hosts (CPUs, NICs, switches, fans), what a rack's power cap "
               "counts; (now): today's GPU and count; "
               + "; ".join(f"{word}: {what}" for word, what in MARKS)])


def choice(r: ConfigSweep, dialect: Dialect) -> Para:
    """The pick and why, or that none meets the limits and which comes closest."""
    c = r.choice
    return Para(asked(c.reason, c.ask, dialect), lead=f"Best ({c.objective}):")


def sweep_notes(r: ConfigSweep) -> list[Block]:
    """What was not projected and why, then the assumptions the sweep rests on."""
    out: list[Block] = []
    if r.skipped:
        reasons: dict[str, list[str]] = {}
        for sk in r.skipped:
            reasons.setdefault(sk.reason, []).append(f"{sk.gpus}x {sk.gpu}")
        out.append(Bullets([f"{', '.join(who)}: {why}" for why, who in reasons.items()],
                           title="Not projected"))
    return [*out, Bullets(r.assumptions, title="Sweep assumptions")]


def sweep_blocks(r: ConfigSweep, answers: Answers, dialect: Dialect) -> list[Block]:
    """The pick, the configuration table, the time-vs-cost chart, what was skipped and the
    assumptions."""
    w = answers.workload
    m = w.model
    head = (f"{m.name} ({count(m.params_total)} parameters), {w.mode}, {w.precision}, "
            f"{r.seq_len:,} tokens per sequence, micro-batch {w.micro_batch}; "
            f"{count(r.token_budget, 'tokens')}; electricity ${r.electricity_usd_per_kwh}/kWh")
    return [Heading("GPU-count sweep"), choice(r, dialect), Para(head, lead="Workload:"),
            sweep_table(r, answers), cost_chart(r, dialect), *sweep_notes(r)]


def _split(split: Sequence[int]) -> str:
    return "+".join(str(n) for n in split)


def balance_table(title: str, rows: list[PipelineBalance], now: PipelineBalance) -> Table:
    """Splits of a pipeline, one row each: the split as given marked (now)."""
    body = [[_split(b.split) + (" (now)" if b.split == now.split else ""), str(b.idle_gpus),
             number(b.tokens_per_s / 1e3, 1),
             _days(b.eta_days), b.bottleneck, f"{b.power_kw_low:.2f}-{b.power_kw_high:.2f}",
             "{:.2f}-{:.2f}".format(*b.kw_saved) if b.kw_saved else NA, b.queue]
            for b in rows]
    return Table([Col("split"), Col("idle", "GPUs", numeric=True, drop=3),
                  Col("throughput", "K tokens/s", numeric=True), Col("wall-clock", numeric=True),
                  Col("bottleneck"), Col("power", "kW (band)", numeric=True, drop=2),
                  Col("saved vs now", "kW", numeric=True, drop=1), Col("queues", drop=4)],
                 body, title=title)


def neighbour_tables(r: PipelineReport) -> list[Table]:
    """The splits next to the one given, and the best splits of the box."""
    return [balance_table(f"Moving GPUs on or off {r.vary}", r.neighbours, r.current),
            balance_table(f"Best splits of {r.best_gpus} GPUs (fastest first; ties to the "
                          "lower draw)", r.best, r.current)]


def pipeline_blocks(r: PipelineReport) -> list[Block]:
    """Stage rates and sources, the split now, its neighbours and the best splits."""
    now = r.current
    stages = Table(
        [Col("stage"), Col("GPU"), Col("GPUs", numeric=True),
         Col("per GPU", "K tokens/s", numeric=True), Col("per GPU", f"{r.unit}/s", numeric=True),
         Col("rate from", drop=1), Col("busy", "W", numeric=True, drop=3),
         Col("idle", "W", numeric=True, drop=4), Col("power from", drop=2)],
        [[s.name, s.gpu, str(s.gpus), number(s.tokens_per_s_per_gpu / 1e3, 2),
          number(s.tokens_per_s_per_gpu / r.tokens_per_unit, 3), s.detail,
          number(s.active_w), number(s.idle_w), s.power_source] for s in r.stages],
        title=f"Stages (1 {r.unit} = {r.tokens_per_unit:,.0f} tokens)")
    loads = Table(
        [Col("stage"), Col("GPUs", numeric=True), Col("capacity", "K tokens/s", numeric=True),
         Col("utilisation", numeric=True), Col("state"), Col("power", "kW (band)", numeric=True)],
        [[ld.name, str(ld.gpus), number(ld.capacity * r.tokens_per_unit / 1e3, 1),
          f"{ld.utilisation:.0%}", ld.state,
          f"{ld.power_w_low / 1e3:.2f}-{ld.power_w_high / 1e3:.2f}"] for ld in now.stages],
        title=f"Now: {_split(now.split)} in a box of {r.box_gpus} GPUs")
    head = (f"{number(now.tokens_per_s / 1e3, 1)}K tokens/s"
            + (f", {_days(now.eta_days)}" if now.eta_days else "")
            + f", {now.power_kw_low:.2f}-{now.power_kw_high:.2f} kW; bottleneck: "
            f"{now.bottleneck}; {now.queue}")
    out: list[Block] = [Heading(f"Pipeline{': ' + r.source if r.source else ''}"),
                        Para(head, lead=f"Now ({_split(now.split)}):"), stages, loads,
                        *neighbour_tables(r)]
    for a in r.alternatives:
        out += _alternative(r, a)
    out.append(Bullets(r.assumptions, title="Pipeline assumptions"))
    return out


def _alternative(r: PipelineReport, a: Any) -> list[Block]:
    """The same pipeline on another GPU: as given (a write-up's assumptions) and as the
    engine projects it, split by split, with GPU-days in current-GPU days."""
    now = r.current
    base = (f"now {number(now.tokens_per_s / 1e3, 1)}K tokens/s"
            + (f", {_days(now.eta_days)}" if now.eta_days else "")
            + (f", {number(r.current_gpu_days, 1)} GPU-days" if r.current_gpu_days else ""))
    rows = [[_split(s.split), number(s.tokens_per_s / 1e3, 1), s.bottleneck,
             _days(s.eta_days), number(s.gpu_days_equiv, 1),
             number((s.engine_tokens_per_s or 0) / 1e3, 1), _days(s.engine_eta_days),
             number(s.engine_gpu_days_equiv, 1)] for s in a.splits]
    table = Table([Col("split"), Col("given", "K tokens/s", numeric=True),
                   Col("bottleneck", drop=3),
                   Col("given", "wall-clock", numeric=True),
                   Col("given", "GPU-days", numeric=True, drop=2),
                   Col("engine", "K tokens/s", numeric=True),
                   Col("engine", "wall-clock", numeric=True),
                   Col("engine", "GPU-days", numeric=True, drop=1)],
                  rows, title=f"On {a.gpu} ({a.source or 'rates as given'})")
    out: list[Block] = [Para(f"price: {a.price_note}; {base}", lead=f"{a.gpu}:"), table]
    if a.differences:
        out.append(Bullets(a.differences))
    return out
