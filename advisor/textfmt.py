"""Plain-text tables and numbers for the headless CLI (no rich, so startup stays fast)."""

from __future__ import annotations

from collections.abc import Sequence

from advisor.core.text import clean


def fmt_num(value: float | int | None, digits: int | None = None) -> str:
    """A figure for humans; `-` for unknown rather than a made-up zero."""
    if value is None:
        return "-"
    if digits is None:
        digits = 0 if float(value).is_integer() else (1 if abs(value) >= 10 else 2)
    return f"{value:,.{digits}f}"


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-align text, right-align numbers, one space-padded column each.

    Cells are sanitised: a GPU name or a label from a pulled file cannot reach the
    terminal as an escape sequence, nor break the table with a newline."""
    headers = [clean(str(h)) for h in headers]
    rows = [[clean(str(c)) for c in r] for r in rows]
    cols = list(zip(headers, *rows, strict=False)) if rows else [(h,) for h in headers]
    widths = [max(len(str(c)) for c in col) for col in cols]

    def numeric(text: str) -> bool:
        return bool(text) and text.replace(",", "").replace(".", "").replace("-", "").isdigit()

    def line(cells: Sequence[str]) -> str:
        out = []
        for cell, width in zip(cells, widths, strict=False):
            text = str(cell)
            out.append(text.rjust(width) if numeric(text) else text.ljust(width))
        return "  ".join(out).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])
