"""Report fields as words and figures for the screens and the copied summary.

Every function reads structured fields of the Report; none computes a result of its own
or parses core's prose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.humanize import fmt_num
from advisor.tui.words import field_label, humanize

if TYPE_CHECKING:
    from advisor.core import Decision, GpuResult, Report, SensitivityRow, SweepPoint

KIND = {
    "upgrade": ("UPGRADE", "$success"),
    "upgrade-for-time": ("UPGRADE FOR TIME", "$accent"),
    "break-even": ("BREAK-EVEN", "$primary"),
    "hold": ("HOLD", "$warning"),
    "blocked-by-gate": ("BLOCKED", "$error"),
    "capability": ("CAPABILITY UPGRADE", "$success"),
}
BUCKET_NAMES = {"dense": "dense GEMMs", "attention": "attention", "elementwise": "elementwise",
                "optimizer": "optimizer", "communication": "communication",
                "overhead": "host overhead"}
RESOURCE_NAMES = {"compute": "compute", "memory": "memory bandwidth", "network": "network",
                  "host": "host", "capacity": "memory capacity"}
RESOURCE_SHORT = {"compute": "compute", "memory": "HBM", "network": "network", "host": "host",
                  "capacity": "capacity"}
"""For table cells; the legend beside the table spells them out."""
WARNING_KINDS = ("software", "evidence", "power")


def hours(h: float | None) -> str:
    if h is None:
        return "-"
    return f"{h:,.0f} h ({h / 24:,.1f} d)" if h >= 48 else f"{h:,.1f} h"


def money(usd: float | None, digits: int = 0) -> str:
    return "-" if usd is None else f"${usd:,.{digits}f}"


def speed(p: SweepPoint) -> str:
    """ "1.84× (1.46–2.33)": the speedup and its band."""
    if p.speedup is None:
        return "-"
    band = (f" ({p.speedup_low:.2f}–{p.speedup_high:.2f})"
            if p.speedup_low is not None and p.speedup_high is not None else "")
    return f"{p.speedup:.2f}×{band}"


def headline(text: str) -> str:
    """The verdict's headline without the kind its badge already says ("upgrade: ...")."""
    kind, sep, rest = text.partition(": ")
    known = {k.replace("-", " ") for k in KIND} | {"blocked", "capability"}
    return humanize(rest if sep and kind.lower() in known else text)


def price_text(r: GpuResult) -> str:
    q = r.assumptions.price if r.assumptions else None
    if q is None:
        return "no price"
    return f"${q.usd_per_hour:.2f} {'your quote' if q.source == 'user' else 'default'}"


def energy_text(r: GpuResult) -> str:
    """The job's energy with what it counts: the job's GPUs busy, no idle slots."""
    j = r.job
    if j is None or j.energy_kwh is None:
        return "-"
    return f"{fmt_num(j.energy_kwh, 0)} kWh"


def side_rows(cur: GpuResult, tgt: GpuResult, seq: int) -> list[tuple[str, str, str]]:
    """$/token, wall-clock and energy for the token budget, current beside target."""
    def col(r: GpuResult) -> list[str]:
        p = r.point(seq)
        j = r.job
        return [
            f"{r.gpus}",
            price_text(r),
            fmt_num(p.tokens_per_s_per_gpu, 0) if p else "-",
            money(p.usd_per_mtok, 3) if p and p.usd_per_mtok is not None else "-",
            hours(j.wall_clock_h if j else None),
            money(j.usd if j else None),
            energy_text(r),
            fmt_num(j.power_kw, 1) if j and j.power_kw is not None else "-",
        ]
    labels = ["GPUs", "$/GPU-hour", "tokens/s per GPU", "$ per Mtok", "wall-clock", "job $",
              "energy", "power kW"]
    return [(label, a, b) for label, a, b in zip(labels, col(cur), col(tgt), strict=True)]


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
        out.append(f"{mark} {humanize(s.assumption)} {lo}–{hi}{unit}: {verdicts}{tie} "
                   f"({humanize(s.source)})")
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
    return [f"{field_label(d.field)}: {humanize(d.value)} ({humanize(d.source)})"
            for d in decision.defaults]


def report_warnings(report: Report) -> list[str]:
    return [humanize(w) for w in report.warnings]
