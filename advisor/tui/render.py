"""Report fields as words and figures for the screens and the copied summary.

Every function reads structured fields of the Report; none computes a result of its own
or parses core's prose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.present.humanize import NA, band, duration, fmt_num, usd
from advisor.present.verdict import KIND_WORDS
from advisor.present.words import field_label, plural

if TYPE_CHECKING:
    from advisor.core import Decision, GpuResult, Report, SensitivityRow, SweepPoint

KIND = {kind: (KIND_WORDS[kind].upper(), colour) for kind, colour in (
    ("upgrade", "$success"), ("upgrade-for-time", "$accent"), ("break-even", "$primary"),
    ("hold", "$warning"), ("blocked-by-gate", "$error"), ("capability", "$success"))}
"""The verdict's badge: its kind as every output words it, and a colour."""
BUCKET_NAMES = {"dense": "dense GEMMs", "attention": "attention", "elementwise": "elementwise",
                "optimizer": "optimizer", "communication": "communication",
                "overhead": "host overhead"}
RESOURCE_NAMES = {"compute": "compute", "memory": "memory bandwidth", "network": "network",
                  "host": "host", "capacity": "memory capacity"}
RESOURCE_SHORT = {"compute": "compute", "memory": "HBM", "network": "network", "host": "host",
                  "capacity": "capacity"}
"""For table cells; the legend beside the table spells them out."""


def speed(p: SweepPoint) -> str:
    """ "1.84x (1.46-2.33)": the speedup and its band, as every output writes it."""
    return band(p.speedup, p.speedup_low, p.speedup_high)


def price_text(r: GpuResult) -> str:
    """ "$4.80 your quote", "$3.90 default", or "no price"."""
    q = r.assumptions.price if r.assumptions else None
    if q is None:
        return "no price"
    return f"${q.usd_per_hour:.2f} {'your quote' if q.source == 'user' else 'default'}"


def figure(value: float | None, unit: str = "") -> str:
    """A figure with three significant digits, never rounded to a misleading 0."""
    if value is None:
        return NA
    text = fmt_num(value, 0) if abs(value) >= 100 else f"{value:.3g}"
    return f"{text} {unit}".rstrip()


def energy_text(r: GpuResult) -> str:
    """The job's energy with what it counts: the job's GPUs busy, no idle slots."""
    j = r.job
    if j is None or j.energy_kwh is None:
        return NA
    return figure(j.energy_kwh, "kWh")


def engine_name(framework: str | None) -> str:
    """What runs the workload, in the wizard's words ("vLLM", "Megatron")."""
    from advisor.tui.fields import ENGINES, FRAMEWORKS

    if framework is None:
        return NA
    return next((label for label, key in (*FRAMEWORKS, *ENGINES) if key == framework),
                framework)


def format_text(r: GpuResult) -> str:
    """The number format a side runs: "fp8", or "fp8, KV cache 1 byte" when serving."""
    precision = r.precision or r.dtype_gate.precision
    if not r.kv_bytes:
        return precision
    return f"{precision}, KV cache {r.kv_bytes:g} byte" + ("s" if r.kv_bytes > 1 else "")


BATCH_CAPS = {"kv-capacity": "KV-cache capacity", "tpot": "your TPOT limit",
              "ttft": "your TTFT limit", "engine cap": "the engine's max batch",
              "your concurrency": "your requests in flight",
              "throughput peak": "throughput peaks"}
"""Core's `batch_cap` words, as a sentence ends: "batch 273, set by KV-cache capacity"."""


def batch_text(p: SweepPoint | None) -> str:
    """Serving: requests in flight per replica and what set that number."""
    if p is None or p.batch is None:
        return NA
    cap = BATCH_CAPS.get(p.batch_cap or "", p.batch_cap or "")
    text = f"{p.batch:,}" + (f" ({cap})" if cap else "")
    if p.batch_cap == "kv-capacity" and p.uncapped_batch and p.uncapped_batch > p.batch:
        text += f", {p.uncapped_batch:,} without it"
    return text


def side_rows(cur: GpuResult, tgt: GpuResult, seq: int, serving: bool = False,
              budget: bool = True) -> list[tuple[str, str, str]]:
    """What each side runs and what it costs, current beside target. Without a token
    budget there is no job to time: the cost is per hour of all its GPUs, and power."""
    def col(r: GpuResult) -> list[str]:
        p = r.point(seq)
        j = r.job
        cells = [plural(r.gpus, "GPU"), format_text(r), engine_name(r.framework),
                 price_text(r), figure(p.tokens_per_s_per_gpu) if p else NA]
        if serving:
            cells += [figure(p.ttft_ms if p else None), figure(p.tpot_ms if p else None),
                      batch_text(p), RESOURCE_NAMES.get(p.binding or "", NA) if p else NA]
        cells.append(usd(p.usd_per_mtok) if p and p.usd_per_mtok is not None else NA)
        if budget:
            cells += [duration(j.wall_clock_h) if j else NA,
                      usd(j.usd) if j and j.usd is not None else NA, energy_text(r)]
        else:
            cells.append(usd(j.usd) if j and j.usd is not None else NA)
        cells.append(figure(j.power_kw) if j and j.power_kw is not None else NA)
        return cells

    labels = ["GPUs", "format", "engine" if serving else "framework", "$/GPU-hour",
              "tokens/s per GPU"]
    if serving:
        labels += ["TTFT ms", "TPOT ms", "requests in flight", "bound by"]
    labels.append("$ per Mtok")
    labels += ["wall-clock", "job $", "energy"] if budget else ["$ per hour, all GPUs"]
    labels.append("power kW")
    return [(label, a, b) for label, a, b in zip(labels, col(cur), col(tgt), strict=True)]


def anchor_lines(decision: Decision) -> list[str]:
    """What the decision is anchored on, beside the model's own figure, and what moved."""
    a = decision.anchor
    if a is None:
        return []
    lines = [f"anchored on {a.whose} {a.measured} on {decision.current.gpu} "
             f"(the model gives {fmt_num(a.modelled_tokens_per_s_per_gpu, 0)} tokens/s per GPU "
             "as run)"]
    lines += [f"moved: {m}" for m in a.moved]
    lines += [f"carries to {t}" for t in a.transfers]
    return lines


def sensitivity_lines(rows: list[SensitivityRow]) -> list[str]:
    """The tornado, widest swing first, as the engine ranked it: each assumption over its
    range, the verdict at each end, and where $/token ties if inside the range."""
    out = []
    for s in rows:
        lo, hi = _short(s.low, s.unit), _short(s.high, s.unit)
        same = s.verdict_low == s.verdict_high
        verdicts = (f"{s.verdict_low} throughout" if same
                    else f"{s.verdict_low} at {lo}, {s.verdict_high} at {hi}")
        tie = (f"; ties at {_short(s.break_even, s.unit)}"
               if s.break_even is not None and min(s.low, s.high) <= s.break_even
               <= max(s.low, s.high) else "")
        mark = "↻" if s.flips else "·"
        unit = "" if s.unit.startswith("$") else f" {s.unit}"
        out.append(f"{mark} {s.assumption} {lo}-{hi}{unit}: {verdicts}{tie} "
                   f"({s.source})")
    return out


def _short(value: float, unit: str) -> str:
    if unit == "$/h":
        return f"${value:,.2f}/h"
    if unit.startswith("$"):
        return f"${value:,.2f}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.2f}"


def defaults_lines(decision: Decision) -> list[str]:
    """Each default the decision used, named and worded as the form shows that field in
    this mode ("requests in flight: 64", "fused kernels: no")."""
    from advisor.tui.fields import field_for, show_value

    mode = decision.answers.workload.mode
    out = []
    for d in decision.defaults:
        f = field_for(d.field.removeprefix("workload."), mode) \
            if d.field.startswith("workload.") else None
        label = f.label if f is not None else field_label(d.field)
        value = show_value(f, d.value) if f is not None and f.kind == "choice" else d.value
        out.append(f"{label}: {value} ({d.source})")
    return out


def report_warnings(report: Report) -> list[str]:
    return list(report.warnings)
