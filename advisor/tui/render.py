"""Report fields as words and figures for the wizard's screens, beside the blocks of
`advisor.present` they share with the CLI.

Every function reads structured fields of the Report; none computes a result of its own
or parses core's prose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.present.decision import anchor_lines, batch_cap, side_by_side
from advisor.present.humanize import NA, band
from advisor.present.verdict import KIND_WORDS
from advisor.present.words import field_label

if TYPE_CHECKING:
    from advisor.core import Decision, GpuResult, SensitivityRow, SweepPoint

KIND = {kind: (KIND_WORDS[kind].upper(), colour) for kind, colour in (
    ("upgrade", "$success"), ("upgrade-for-time", "$accent"), ("break-even", "$primary"),
    ("hold", "$warning"), ("blocked-by-gate", "$error"), ("capability", "$success"))}
"""The verdict's badge: its kind as every output words it, and a colour."""
BUCKET_NAMES = {"dense": "dense GEMMs", "attention": "attention", "elementwise": "elementwise",
                "optimizer": "optimizer", "communication": "communication",
                "overhead": "host overhead"}
RESOURCE_NAMES = {"compute": "compute", "memory": "memory bandwidth", "network": "network",
                  "host": "host", "capacity": "memory capacity"}


def speed(p: SweepPoint) -> str:
    """ "1.84x (1.46-2.33)": the speedup and its band, as every output writes it."""
    return band(p.speedup, p.speedup_low, p.speedup_high)


def price_text(r: GpuResult) -> str:
    """ "$4.80 your quote", "$3.90 default", or "no price"."""
    q = r.assumptions.price if r.assumptions else None
    if q is None:
        return "no price"
    return f"${q.usd_per_hour:.2f} {'your quote' if q.source == 'user' else 'default'}"


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


def batch_text(p: SweepPoint | None) -> str:
    """Serving: requests in flight per replica and what set that number."""
    if p is None or p.batch is None:
        return NA
    cap = batch_cap(p.batch_cap)
    text = f"{p.batch:,}" + (f" ({cap})" if cap else "")
    if p.batch_cap == "kv-capacity" and p.uncapped_batch and p.uncapped_batch > p.batch:
        text += f", {p.uncapped_batch:,} without it"
    return text


def figure_rows(d: Decision, t: GpuResult) -> tuple[list[str], list[list[str]], list[str]]:
    """The verdict card's figures, current beside target: what each side runs (its format,
    framework or engine, price), then the rows of the CLI's summary table, the same cells
    (`side_by_side`). Returns the headers, the rows and their notes."""
    cur = d.current
    shared = side_by_side(d, t)
    serving = not d.answers.workload.training
    rows = [["format", format_text(cur), format_text(t)],
            ["engine" if serving else "framework", engine_name(cur.framework),
             engine_name(t.framework)],
            ["$/GPU-hour", price_text(cur), price_text(t)],
            *(list(row) for row in shared.rows)]
    said = "energy and power: the GPUs at their projected draw (no idle slots)" + (
        "; TTFT/TPOT per request at the batch shown" if serving else "")
    anchored = anchor_lines(d)  # the anchor card says it
    return [c.title() for c in shared.cols], rows, [
        *(n for n in shared.notes if n not in anchored), said]


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
