"""A Decision as blocks: the verdict first, one line per target, then the details.

Order: the verdicts; the figures at the primary sequence length, one row per GPU; for
each target why, what flips it and what it costs; speedup by sequence length (a chart);
the rates and where they come from; the layouts; the inputs and the defaults used; notes.

Per-target figures are rows of `LEAD`, `JOB` (or `HOUR`), `SERVING` and `TAIL`, and lines
of `target_facts`: a new figure (TTFT, a batch size) is one entry there; the wizard's
verdict card shows the same cells (`side_by_side`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeGuard

from advisor.present.blocks import Block, Bullets, Col, Heading, Para, Table
from advisor.present.charts import bound_by, interactivity_chart, speedup_chart
from advisor.present.frozen_base import frozen_base_lines
from advisor.present.humanize import (
    NA,
    UNKNOWN,
    band,
    count,
    duration,
    number,
    price,
    ratio,
    usd,
)
from advisor.present.verdict import KIND_WORDS, verdict_headline, verdict_view
from advisor.present.words import Dialect, default_line

if TYPE_CHECKING:
    from advisor.core import Decision, GpuResult, SensitivityRow, SweepPoint

BUCKETS = {"dense": "dense", "attention": "attention", "elementwise": "elementwise",
           "optimizer": "optimizer", "communication": "comm", "overhead": "host"}
ASSUMED = ("transferred-efficiency", "generic-kernel-ratio")


@dataclass(frozen=True)
class Figure:
    """One column of the summary table: its header and how to read it off a GPU."""

    col: Col
    cell: Callable[[Decision, GpuResult, SweepPoint | None], str]


def gpu_price(r: GpuResult) -> str:
    """A GPU's $/GPU-hour as every price column says it: "3.50 quote", "1.50 default"."""
    q = r.assumptions.price if r.assumptions else None
    return price(q.usd_per_hour, q.source) if q else UNKNOWN


def _point(d: Decision, r: GpuResult) -> SweepPoint | None:
    return r.point(d.primary_seq_len)


def _job_usd(d: Decision, r: GpuResult, p: SweepPoint | None) -> str:
    return usd(r.job.usd) if r.job else NA


def _job_time(d: Decision, r: GpuResult, p: SweepPoint | None) -> str:
    return duration(r.job.wall_clock_h) if r.job else NA


def _energy(d: Decision, r: GpuResult, p: SweepPoint | None) -> str:
    return number(r.job.energy_kwh) if r.job and r.job.energy_kwh is not None else UNKNOWN


def _power(d: Decision, r: GpuResult, p: SweepPoint | None) -> str:
    """The cluster's draw in kW, to two digits below 1 kW (one GPU)."""
    if r.job is None:
        return NA
    kw = r.job.power_kw
    return number(kw, 1 if kw is None or kw >= 1 else 2)


def _max_seq(d: Decision, r: GpuResult, p: SweepPoint | None) -> str:
    return count(r.memory.max_seq_len) if r.memory.max_seq_len else NA


def _ran(p: SweepPoint | None) -> TypeGuard[SweepPoint]:
    """A point with figures: one a gate blocks, or that fits nowhere, has none to show."""
    return p is not None and p.tokens_per_s_per_gpu is not None


def _serving(d: Decision) -> bool:
    return not d.answers.workload.training


BATCH_CAPS = {"kv-capacity": "KV-cache capacity", "tpot": "your TPOT limit",
              "ttft": "your TTFT limit", "engine cap": "the engine's max batch",
              "your concurrency": "your requests in flight",
              "throughput peak": "throughput peaks"}
"""What sets a serving batch (core's `batch_cap`), as a sentence ends: "batch 273, set by
KV-cache capacity"."""


def batch_cap(cap: str | None) -> str:
    return BATCH_CAPS.get(cap or "", cap or "")


SERVING: list[Figure] = [
    Figure(Col("requests", "in flight", numeric=True, drop=1),
           lambda d, r, p: number(p.batch) if _ran(p) and p.batch else NA),
    Figure(Col("set by", drop=6),
           lambda d, r, p: batch_cap(p.batch_cap) or NA if _ran(p) else NA),
    Figure(Col("TTFT", "ms", numeric=True),
           lambda d, r, p: number(p.ttft_ms) if _ran(p) and p.ttft_ms is not None else NA),
    Figure(Col("TPOT", "ms", numeric=True),
           lambda d, r, p: number(p.tpot_ms, 1) if _ran(p) and p.tpot_ms is not None else NA),
    Figure(Col("tokens/s", "per user", numeric=True),
           lambda d, r, p: number(1000 / p.tpot_ms, 1) if _ran(p) and p.tpot_ms else NA),
]
"""Serving's own figures, inserted after the speedup column for a serving decision: what a
user waits (TTFT, TPOT, tokens/s each) stays at any width, the job's hour goes first."""


LEAD: list[Figure] = [
    Figure(Col("GPUs"), lambda d, r, p: r.label),
    Figure(Col("tokens/s", "per GPU", numeric=True),
           lambda d, r, p: number(p.tokens_per_s_per_gpu) if p and p.tokens_per_s_per_gpu
           else NA),
    Figure(Col("speedup", "(90% band)", numeric=True),
           lambda d, r, p: NA if not p or p.speedup is None else ratio(p.speedup)
           if r.role == "current" else band(p.speedup, p.speedup_low, p.speedup_high)),
    Figure(Col("cost", "$/Mtok", numeric=True, drop=2),
           lambda d, r, p: number(p.usd_per_mtok, 3) if p and p.usd_per_mtok is not None
           else (NA if not p or p.tokens_per_s_per_gpu is None else UNKNOWN)),
]
JOB: list[Figure] = [
    Figure(Col("job", "$", numeric=True), _job_usd),
    Figure(Col("wall-clock", "", numeric=True), _job_time),
    Figure(Col("energy", "kWh", numeric=True, drop=3), _energy),
]
POWER = Figure(Col("power", "kW", numeric=True, drop=3), _power)
HOUR: list[Figure] = [Figure(Col("cluster", "$/hour", numeric=True), _job_usd), POWER]
"""Without a token budget there is no job to time or total: an hour of each cluster."""
TAIL: list[Figure] = [
    Figure(Col("bound by", drop=4), lambda d, r, p: bound_by(p.binding) or NA if p else NA),
    Figure(Col("longest seq", "tokens", numeric=True, drop=5), _max_seq),
]


def blocks(d: Decision, dialect: Dialect) -> list[Block]:
    """`dialect`: where the reader gives inputs (compare's flags, an answers file)."""
    out = verdict_blocks(d, dialect)
    out += interactivity(d)
    for t in d.targets:
        out += target_details(d, t, dialect)
    out.append(speedup_chart(d))
    out += [rates_table(d), layouts_table(d)]
    buckets = bucket_table(d)
    if buckets is not None:
        out.append(buckets)
    out += inputs(d, dialect)
    if d.notes:
        out.append(Bullets(d.notes, title="Notes"))
    return out


def verdict_blocks(d: Decision, dialect: Dialect) -> list[Block]:
    """The verdict lines, how a LoRA's base is held, and the figures at the primary length."""
    out: list[Block] = [Heading(f"Verdict: {_context(d)}"), *verdict_lines(d)]
    base = frozen_base_lines(d, dialect)
    if base:
        out.append(Bullets(base, title="The frozen base (LoRA)"))
    return [*out, summary_table(d)]


LEVELS = (1, 2, 5, 10, 15, 20, 30, 40, 50, 60, 75, 100, 125, 150, 200, 300, 500, 1000, 2000)


def interactivity(d: Decision) -> list[Block]:
    """Serving: each GPU's tokens/s per GPU at tokens/s-per-user levels across its curve, who
    leads where, and the chart; the user's target is one of the levels."""
    results = [r for r in (d.current, *d.targets) if r.curve]
    if not results:
        return []
    from advisor.core import at_interactivity

    top = max(c.tokens_per_s_per_user for r in results for c in r.curve)
    low = min(c.tokens_per_s_per_user for r in results for c in r.curve)
    target = d.answers.workload.min_tokens_per_user
    levels = sorted({v for v in LEVELS if low <= v <= top} | ({target} if target else set()))
    rows = []
    for level in levels:
        row = [f"{level:g}" + (" (your target)" if level == target else "")]
        for r in results:
            c = at_interactivity(r.curve, level)
            row.append(f"{c.tokens_per_s_per_gpu:,.0f}" if c else NA)
            row.append(f"{c.batch:,} TP{c.tp}" + (f" EP{c.ep}" if c.ep > 1 else "") if c else NA)
        rows.append(row)
    cols = [Col("tokens/s", "per user", numeric=True)]
    for r in results:
        cols += [Col(r.gpu, "tokens/s per GPU", numeric=True), Col("batch", "layout", drop=2)]
    caps = ", ".join(f"{r.gpu} {batch_cap(p.batch_cap)}" for r in results
                     if (p := _point(d, r)) is not None and p.batch_cap)
    notes = [f"{NA}: that GPU cannot serve each user this fast"]
    if caps:
        notes.append(f"what sets each GPU's batch at the verdict's point: {caps}")
    by = {"cost": "the fewest $ per token", "throughput": "the most tokens/s per GPU"}
    leads = [f"{lead.gpu} from {lead.from_tokens_per_user:,.0f} to "
             f"{lead.to_tokens_per_user:,.0f} tokens/s per user ({by[lead.by]})"
             for lead in d.interactivity]
    out: list[Block] = [Table(cols, rows, title="Throughput against interactivity",
                              notes=notes)]
    if leads:
        out.append(Bullets(leads, title="Who leads at which interactivity"))
    chart = interactivity_chart(d)
    if chart is not None:
        out.append(chart)
    return out


def _context(d: Decision) -> str:
    w = d.answers.workload
    basis = "re-tuned layouts" if d.basis == "retuned" else "layouts as you run them"
    formats = list(dict.fromkeys(r.precision or w.precision for r in (d.current, *d.targets)))
    fmt = formats[0] if len(formats) == 1 else " vs ".join(formats)
    return f"{w.model.name} {w.mode}, {fmt}, {d.primary_seq_len:,} tokens, {basis}"


def matchup(d: Decision, t: GpuResult) -> str:
    """`b200-sxm vs h200-sxm (8 GPUs each)`, or with each count when they differ."""
    cur = d.current
    if t.gpus == cur.gpus:
        each = "1 GPU" if t.gpus == 1 else f"{t.gpus} GPUs each"
        return f"{t.gpu} vs {cur.gpu} ({each})"
    return f"{t.label} vs {cur.label}"


def verdict_lines(d: Decision) -> list[Block]:
    """One paragraph per target: its matchup in bold, then the verdict's headline."""
    out: list[Block] = []
    for t in d.targets:
        v = t.verdict
        text = verdict_headline(v, t.gpu) if v else \
            f"no verdict: {t.problem or t.dtype_gate.reason}"
        out.append(Para(text, lead=matchup(d, t) + ":", indent=2))
    return out


def verdict_summary(d: Decision) -> list[str]:
    """The verdict lines as plain text, for --quiet."""
    return [f"{matchup(d, t)}: "
            f"{verdict_headline(t.verdict, t.gpu) if t.verdict else 'no verdict'}"
            for t in d.targets]


def _droppable(f: Figure) -> Figure:
    """A figure serving may leave out at a narrow width (the job's one-hour cost and time)."""
    return f if f.col.drop else Figure(replace(f.col, drop=2), f.cell)


def figures(d: Decision) -> list[Figure]:
    """The summary table's columns: the job's (an hour's without a token budget), serving's
    waits after the speedup."""
    rest = LEAD[3:] + (JOB if d.answers.workload.token_budget else HOUR) + TAIL
    if not _serving(d):
        return LEAD[:3] + rest
    return LEAD[:3] + SERVING + [_droppable(f) for f in rest]


def summary_notes(d: Decision) -> list[str]:
    """What the summary table's figures count: the job, whose speedup, the formats (the
    table puts the anchor first; the wizard's anchor card says it)."""
    budget = d.answers.workload.token_budget
    notes = [f"job and wall-clock: {count(budget, 'tokens')}" if budget else
             "no token budget: no job to time or total; $/hour counts all of each side's "
             "GPUs, so compare $/Mtok"]
    if len(d.answers.workload.seq_lens) > 1:  # the headline's speedup is not this table's
        notes.append("the verdict's speedup: the geometric mean over every length both "
                     f"GPUs fit; this table is at {d.primary_seq_len:,} tokens")
    if len({r.precision for r in (d.current, *d.targets)}) > 1:
        notes.append("formats: " + ", ".join(f"{r.gpu} {r.precision}"
                                             for r in (d.current, *d.targets)))
    return notes


FITS = {(True, False): "yes", (True, True): "borderline", (False, True): "borderline",
        (False, False): "no"}
"""Whether a point fits in memory (fits, borderline): borderline is within the memory
model's own uncertainty, either way."""
MEMORY: list[Figure] = [
    Figure(Col("memory", "GiB of usable", numeric=True, drop=3),
           lambda d, r, p: f"{number(p.memory_gib)} of {number(r.memory.usable_gib)}"
           if p else NA),
    Figure(Col("fits", drop=2), lambda d, r, p: FITS[p.fits, p.borderline] if p else NA),
]


def _who(r: GpuResult) -> str:
    """A GPU as a row names it: today's is "(now)", one a gate blocks "(blocked)"."""
    blocked = (r.verdict is not None and r.verdict.kind == "blocked-by-gate") \
        or not r.dtype_gate.passed
    marks = [*(["now"] if r.role == "current" else []), *(["blocked"] if blocked else [])]
    return r.label + (f" ({', '.join(marks)})" if marks else "")


def sweep_table(d: Decision) -> Table:
    """Every swept sequence length on every GPU, the current GPU first at each: the summary
    table's figures at each length (its cells, in its words) and memory against what each
    GPU holds. The wizard's Performance step shows it."""
    shown = LEAD[1:] + (SERVING if _serving(d) else []) + TAIL[:1] + MEMORY
    rows = [[f"{seq:,}", _who(r), *(f.cell(d, r, r.sweep[i]) for f in shown)]
            for i, seq in enumerate(d.answers.workload.seq_lens)
            for r in (d.current, *d.targets)]
    return Table([Col("sequence", "tokens", numeric=True), Col("GPUs"), *(f.col for f in shown)],
                 rows, title="Each sequence length on each GPU, the current GPU first")


def summary_table(d: Decision) -> Table:
    shown = figures(d)
    rows = [[f.cell(d, r, _point(d, r)) for f in shown] for r in (d.current, *d.targets)]
    return Table([f.col for f in shown], rows,
                 title=f"At {d.primary_seq_len:,} tokens, the current GPU first",
                 notes=anchor_lines(d)[:1] + summary_notes(d))


def side_by_side(d: Decision, t: GpuResult) -> Table:
    """The summary table's figures of the current GPU and one target, side by side: one row
    per figure, the same cells (the GPUs are the columns), and the power each draws."""
    cur = d.current
    shown = figures(d)[1:]
    rows = [[f.col.title(), f.cell(d, cur, _point(d, cur)), f.cell(d, t, _point(d, t))]
            for f in (shown if POWER in shown else [*shown, POWER])]
    return Table([Col(f"at {d.primary_seq_len:,} tokens"), Col(f"{cur.label} (now)"),
                  Col(t.label)], rows, notes=summary_notes(d))


def anchor_lines(d: Decision) -> list[str]:
    """What the decision is anchored on, beside the model's own figure, what that moved and
    how it carries to each target."""
    a = d.anchor
    if a is None:
        return []
    return [f"anchored on {a.whose} {a.measured} on {d.current.gpu} (the model alone: "
            f"{number(a.modelled_tokens_per_s_per_gpu)} tokens/s per GPU as run)",
            *(f"moved: {m}" for m in a.moved), *(f"carries to {x}" for x in a.transfers)]


def _job_line(d: Decision, t: GpuResult) -> list[str]:
    """The job for the token budget: its $, wall-clock, GPU-days, power and energy; without
    a budget, an hour of the cluster: its $ and power, nothing timed or totalled."""
    j = t.job
    if j is None:
        return []
    budget = d.answers.workload.token_budget
    money = usd(j.usd) if j.usd is not None else "no price"
    electricity = f" ({usd(j.energy_usd)} of electricity)" if j.energy_usd is not None else ""
    if not budget:
        power = f", {number(j.power_kw, 1)} kW{electricity}" if j.power_kw is not None else ""
        return [f"an hour of {t.label}: {money}{power}"]
    line = (f"job ({count(budget, 'tokens')}): {money}, {duration(j.wall_clock_h)} on "
            f"{t.label}, {number(j.gpu_days, 1)} GPU-days")
    if j.power_kw is not None and j.energy_kwh is not None:
        line += f", {number(j.power_kw, 1)} kW, {number(j.energy_kwh)} kWh{electricity}"
    return [line]


def target_facts(d: Decision, t: GpuResult) -> list[str]:
    """What running the job costs on this target, and the alternative of buying the speed
    back with more current GPUs."""
    out = _job_line(d, t)
    if d.anchor is not None and t.modelled_tokens_per_s_per_gpu:
        p = t.point(d.primary_seq_len)
        if p is not None and p.tokens_per_s_per_gpu:
            out.append(f"anchored: {number(p.tokens_per_s_per_gpu)} tokens/s per GPU on "
                       f"{t.gpu}, the model alone {number(t.modelled_tokens_per_s_per_gpu)}; "
                       + "; ".join(x for x in d.anchor.transfers if x.startswith(t.gpu)))
    b = t.buy_back
    if b is not None:
        extra = ""
        if b.gpus is not None and b.comm_penalty is not None:
            extra = f", {b.comm_penalty:.0%} per-GPU communication penalty" + (
                f", ${b.usd_per_mtok:.3f}/Mtok" if b.usd_per_mtok is not None else "") + (
                f", {number(b.power_kw, 1)} kW" if b.power_kw is not None else "")
        out.append(f"or buy the speed back with more {d.current.gpu}: {b.note}{extra}")
    return out


def target_details(d: Decision, t: GpuResult, dialect: Dialect) -> list[Block]:
    said = verdict_view(d.current, t, dialect)
    out: list[Block] = [Heading(f"{t.label} against {d.current.label}")]
    if said.reasons:
        out.append(Bullets(said.reasons))
    if said.flips:
        out.append(Bullets(said.flips, title="What flips it"))
    if said.warnings:
        out.append(Bullets(said.warnings, title="Warnings"))
    out += sensitivity(t.sensitivity)
    facts = target_facts(d, t)
    if facts:
        out.append(Bullets(facts))
    return out


def _fig(v: float) -> str:
    """1,355 TFLOPS, 0.81x: the digits a range can tell apart."""
    return number(v, 0 if abs(v) >= 100 else 2)


def _tie(s: SensitivityRow) -> str:
    """Where $/token ties, inside the range; NA where it does not within it."""
    b = s.break_even
    inside = b is not None and min(s.low, s.high) <= b <= max(s.low, s.high)
    return f"{_fig(b)} {s.unit}" if b is not None and inside else NA


def sensitivity(rows: Sequence[SensitivityRow]) -> list[Block]:
    """The tornado as every output shows it: each assumption that moves the verdict within
    its range (the engine's order, widest swing first) with the range, the verdict at each
    end, where $/token ties and what the range rests on; then, in a note, the ones over whose
    range the verdict holds. Nothing where no assumption was moved (a blocked target)."""
    moving = [s for s in rows if s.flips]
    steady = ", ".join(s.assumption for s in rows if not s.flips)
    if not moving:
        return [Para(f"No assumption moves the verdict within its range, each moved alone: "
                     f"{steady}", dim=True)] if steady else []
    cells = [[s.assumption, f"{_fig(s.low)}-{_fig(s.high)} {s.unit}",
              " / ".join(KIND_WORDS.get(v, v) for v in (s.verdict_low, s.verdict_high)),
              _tie(s), s.source] for s in moving]
    held = [f"the verdict holds over the range of each of: {steady}"] if steady else []
    return [Table([Col("assumption"), Col("range"), Col("verdict", "low / high"),
                   Col("ties at", drop=1), Col("from", drop=2)],
                  cells, title="Assumptions that move the verdict",
                  notes=["each assumption over its range, the others held", *held])]


def rates_table(d: Decision) -> Table:
    rows = []
    notes: list[str] = []
    for r in (d.current, *d.targets):
        a = r.assumptions
        if a is None:
            rows.append([r.gpu, NA, "", NA, NA, "", NA, "", NA,
                         r.problem or r.dtype_gate.reason])
            continue
        ev = {e.quantity: e for e in a.evidence}
        mat = next((e for q, e in ev.items() if q.startswith("matmul")), None)
        att, hbm = ev.get("attention"), ev.get("HBM bandwidth")
        price = a.price
        assumed = "; ".join(e.detail for e in a.evidence if e.source in ASSUMED)
        rows.append([
            r.gpu,
            number(mat.value) if mat else UNKNOWN,
            mat.source if mat else "",
            a.attention_kernel,
            number(att.value) if att else UNKNOWN,
            att.source if att else "",
            number(hbm.value) if hbm else UNKNOWN,
            hbm.source if hbm else "",
            f"{price.usd_per_hour:.2f}" if price else UNKNOWN,
            price.source if price else "no price",
        ])
        if assumed:
            notes.append(f"{r.gpu}, assumed: {assumed}")
    cal = d.current.assumptions
    if cal:
        notes.insert(0, f"{cal.framework} framework; GEMMs at {cal.gemm_efficiency:.0%} of the "
                     f"sustained rate; {cal.overlap:.0%} of the overlap window hides "
                     f"communication; electricity ${d.answers.electricity_usd_per_kwh}/kWh "
                     f"({'your figure' if d.electricity_source == 'user' else 'default'})")
    formats = {r.gpu: r.precision or d.answers.workload.precision
               for r in (d.current, *d.targets)}
    if len(set(formats.values())) > 1:
        notes.append("matmul in each GPU's own format: "
                     + ", ".join(f"{g} {f}" for g, f in formats.items()))
    shared = next(iter(formats.values())) if len(set(formats.values())) == 1 else None
    tflops = f"{shared} TFLOPS" if shared else "TFLOPS"
    return Table([Col("GPU"), Col("matmul", tflops, numeric=True),
                  Col("matmul", "from", drop=4), Col("attention", "kernel", drop=2),
                  Col("attention", "TFLOPS", numeric=True, drop=1),
                  Col("attention", "from", drop=5), Col("HBM", "GB/s", numeric=True),
                  Col("HBM", "from", drop=6), Col("price", "$/GPU-h", numeric=True),
                  Col("price from", drop=3)],
                 rows, title="Rates and where they come from", notes=notes)


def layouts_table(d: Decision) -> Table:
    serving = not d.answers.workload.training
    rows = []
    for r in (d.current, *d.targets):
        p = _point(d, r)
        q = next((x for x in r.as_run if x.seq_len == d.primary_seq_len), None)
        fit = r.change_at(d.primary_seq_len)
        mine = q.layout.describe(serving) if q and q.layout else NA
        rows.append([
            r.gpu,
            number(q.tokens_per_s_per_gpu) if q and q.tokens_per_s_per_gpu else NA,
            number(p.tokens_per_s_per_gpu) if p and p.tokens_per_s_per_gpu else NA,
            mine + (f" (does not fit: {fit})" if fit else ""),
            p.layout.describe(serving) if p and p.layout else NA,
        ])
    return Table([Col("GPU"), Col("as you run it", "tokens/s per GPU", numeric=True),
                  Col("re-tuned", "tokens/s per GPU", numeric=True), Col("your layout"),
                  Col("re-tuned layout")],
                 rows, title=f"Layouts at {d.primary_seq_len:,} tokens")


def bucket_table(d: Decision) -> Table | None:
    """Per-bucket speedup of each target: which part of the step gains what."""
    points = [(t, _point(d, t)) for t in d.targets]
    names = [b for b in BUCKETS if any(p and b in p.bucket_speedup for _, p in points)]
    if not names:
        return None
    rows = [[t.gpu, *(number(p.bucket_speedup[b], 2) if p and b in p.bucket_speedup else NA
                      for b in names)] for t, p in points]
    cols = [Col("GPU"), *(Col(BUCKETS[b], "x", numeric=True, drop=len(names) - i)
                          for i, b in enumerate(names))]
    return Table(cols, rows, title="Speedup by part of the step (current time over target's)")


def defaults_used(d: Decision, dialect: Dialect) -> Block:
    """Each value the decision used that was not given, where it is given, and whose it is;
    or that every value was given."""
    mode = d.answers.workload.mode
    lines = [default_line(x.field, x.value, x.source, dialect, mode) for x in d.defaults]
    return Bullets(lines, title="Defaults (values you did not give):") if lines else \
        Para("Defaults: none; every value was given.")


def inputs(d: Decision, dialect: Dialect) -> list[Block]:
    w = d.answers.workload
    m = w.model
    size = (f"{count(m.params_total)} parameters, {count(m.params_active)} active"
            if m.experts else f"{count(m.params_total)} parameters")
    seqs = ", ".join(f"{s:,}" for s in w.seq_lens)
    if w.training:
        how = (f"{w.mode}, {w.precision}, global batch {w.sequences_per_step:,} x "
               f"{w.seq_lens[0]:,} tokens")
    elif w.mode == "serve":
        how = (f"serving {w.precision} weights, {w.kv_bytes:g}-byte KV cache, input {seqs} / "
               f"output {w.osl:,} tokens")
    else:
        how = f"{w.mode}, {w.precision}, sequence lengths {seqs}"
    out: list[Block] = [Heading("Inputs"), Para(f"{m.name} ({size}), {how}", lead="Workload:")]
    if m.source:
        out.append(Para(m.source, lead="Model shape:"))
    return [*out, defaults_used(d, dialect)]
