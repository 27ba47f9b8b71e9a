"""Numbers as a person reads them, shared by the headless renderer and the wizard.

`1.0T tokens` rather than `1e+12 tokens`, `3.2 days` rather than `76.8 h`, `$0.41` rather
than `$0`, and one mark for each kind of missing figure: `NA` where a figure does not apply
(the GPU has no such format, the layout does not fit) and `UNKNOWN` where it applies but is
not known (not published, not measured). No rich, no pydantic: the wizard imports it too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from advisor.core.text import clean

if TYPE_CHECKING:
    from advisor.core import Gpu

SPELLING = {"tokens/s": ("tok/s", "tokens/sec", "tok/sec"), "x": ("×",), "-": ("–", "−")}
"""One spelling per unit across the CLI's output, and the variants it never prints (a test
scans every rendered output for them): `tokens/s` (`K tokens/s`, `12.3K tokens/s` for
thousands), `x` for a ratio and for a count of GPUs (`1.97x`, `8x h100-sxm`), `-` for a
range (`1.56-2.50`). `NA` is a mark, not a dash."""
NA = "—"
"""Does not apply or not supported: the GPU has no such number format, nothing fits."""
UNKNOWN = "?"
"""Applies but is not known: a figure not published, a price not quoted."""

_SCALES = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K"))


def fmt_num(value: float | int | None, digits: int | None = None) -> str:
    """A figure with thousands separators, to as many digits as its size calls for (`12,345`,
    `45.6`, `0.12`) unless told; UNKNOWN for None, as `number` says it. A caller whose figure
    does not apply (the GPU does not run, nothing fits) says NA before calling."""
    if value is None or not math.isfinite(value):
        return UNKNOWN
    if digits is None:
        digits = 0 if float(value).is_integer() else (1 if abs(value) >= 10 else 2)
    return f"{value:,.{digits}f}"


def number(value: float | None, digits: int = 0) -> str:
    """`12,345`, `0.089`; UNKNOWN for None. Small non-zero values keep two significant
    digits, so a price of $0.004 per Mtok never reads as 0."""
    if value is None or not math.isfinite(value):
        return UNKNOWN
    if value and abs(value) < 10 ** -digits:
        return f"{value:.2g}"
    return f"{value:,.{digits}f}"


def peak(g: Gpu, formats: Sequence[str], dtype: str) -> str:
    """A dense peak in TFLOPS: NA where the GPU's matrix units have no such format (`formats`,
    its architecture's), UNKNOWN where they do but no figure is published."""
    value = getattr(g.peak_tflops, dtype, None)
    if value is not None:
        return number(value)
    return UNKNOWN if any(f.startswith(dtype) for f in formats) else NA


def count(value: float | None, unit: str = "") -> str:
    """`1.0T`, `350M`, `8.0B`, `12.3K`, `512`: a count of tokens, parameters or requests."""
    if value is None or not math.isfinite(value):
        return UNKNOWN
    for scale, suffix in _SCALES:
        if abs(value) >= scale * 0.9995:
            scaled = value / scale
            text = f"{scaled:.1f}" if abs(scaled) < 99.95 else f"{scaled:,.0f}"
            return f"{text}{suffix}" + (f" {unit}" if unit else "")
    text = f"{value:.0f}" if float(value).is_integer() or abs(value) >= 100 \
        else f"{value:.2f}".rstrip("0").rstrip(".")  # never 1e-05
    return text + (f" {unit}" if unit else "")


def duration(hours: float | None) -> str:
    """`45 s`, `12 min`, `3.2 h`, `3.2 days`, `1.4 years`: the unit a person would pick."""
    if hours is None or not math.isfinite(hours):
        return UNKNOWN
    seconds = hours * 3600
    if seconds < 90:
        return f"{seconds:.0f} s"
    if hours < 1.5:
        return f"{seconds / 60:.0f} min"
    if hours < 48:
        return f"{hours:.1f} h"
    days = hours / 24
    if days < 730:
        return f"{days:,.1f} days"
    return f"{days / 365.25:,.1f} years"


def usd(value: float | None) -> str:
    """`$89,374`, `$410`, `$0.41`, `<$0.01`: cents only where they matter."""
    if value is None or not math.isfinite(value):
        return UNKNOWN
    if value and abs(value) < 0.005:
        return "<$0.01"
    return f"${value:,.2f}" if abs(value) < 100 else f"${value:,.0f}"


PRICE_WORDS = {"user": "quote", "default": "default"}
"""Whose $/GPU-hour a table's cell is (core's price source): a quote given, or a default."""


def price(usd_per_hour: float | None, source: str | None) -> str:
    """A $/GPU-hour cell under a `$/GPU-h` header: `3.50 quote`, `1.50 default`; UNKNOWN
    without a price."""
    if usd_per_hour is None or source is None:
        return UNKNOWN
    return f"{usd_per_hour:.2f} {PRICE_WORDS.get(source, source)}"


def ratio(value: float | None, digits: int = 2) -> str:
    """`1.83x`: how many times the current GPU's figure."""
    return UNKNOWN if value is None else f"{value:.{digits}f}x"


def band(value: float | None, low: float | None, high: float | None) -> str:
    """`1.83x (1.44-2.31)`: a ratio and its band, the band left out when there is none."""
    if value is None:
        return NA
    if low is None or high is None:
        return ratio(value)
    return f"{ratio(value)} ({low:.2f}-{high:.2f})"


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Plain space-padded columns, each cell left-aligned, for a fixed-width widget (a table
    whose rows are figures of different units: a column of them does not line up anyway).

    Cells are sanitised: a GPU name or a label from a pulled file cannot reach the
    terminal as an escape sequence, nor break the table with a newline."""
    table = [[clean(str(c)) for c in r] for r in (headers, *rows)]
    widths = [max(len(r[i]) if i < len(r) else 0 for r in table) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=False)).rstrip()

    return "\n".join([line(table[0]), "  ".join("-" * w for w in widths),
                      *(line(r) for r in table[1:])])


def axis(values: list[float], cells: int, log: bool) -> Callable[[float], int]:
    """Where a value falls on a chart's 0..cells-1 (a log scale for times that double);
    one distinct value lands in the middle."""
    f = math.log if log else float
    low, high = f(min(values)), f(max(values))
    if high - low < 1e-12:
        return lambda v: cells // 2
    return lambda v: round((f(v) - low) / (high - low) * (cells - 1))
