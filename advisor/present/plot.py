"""A scatter of points on a character grid, for the charts both front ends draw (the CLI in
rich, the wizard in Textual markup): where each point lands, and the axis labels."""

from __future__ import annotations

from dataclasses import dataclass

from advisor.present.humanize import axis


@dataclass(frozen=True)
class Scatter:
    """`cells[row][col]` is the series drawn there (top row first), "|" for the marked x, or
    "" for empty; the axes' end labels beside them."""

    cells: list[list[str]]
    y_top: str
    y_bottom: str
    x_left: str
    x_right: str


def scatter(series: dict[str, list[tuple[float, float]]], width: int, height: int,
            mark_x: float | None = None) -> Scatter | None:
    """Every series' (x, y) points on a `width` x `height` grid, linear axes; a later series
    draws over an earlier one; `mark_x` a vertical line where it falls inside the x range."""
    points = [(name, x, y) for name, pts in series.items() for x, y in pts]
    if not points:
        return None
    xs, ys = [x for _, x, _ in points], [y for _, _, y in points]
    fx, fy = axis(xs, width, log=False), axis(ys, height, log=False)
    cells = [[""] * width for _ in range(height)]
    if mark_x is not None and min(xs) <= mark_x <= max(xs):
        for row in cells:
            row[fx(mark_x)] = "|"
    for name, x, y in points:
        cells[height - 1 - fy(y)][fx(x)] = name
    return Scatter(cells, f"{max(ys):,.0f}", f"{min(ys):,.0f}", f"{min(xs):,.0f}",
                   f"{max(xs):,.0f}")
