"""A chart block drawn as lines of styled text, for every toolkit: the CLI hands the lines to
rich (a terminal, HTML, SVG), Markdown writes their text, the wizard turns them into Textual
markup. A span's style is a set of words (`bold`, `dim`, `good`, `short`, `series-1`,
`front`, ...) each toolkit maps to its own styles; `Marks` are the glyphs (ASCII for a file
or a terminal that may not show more, block characters for the wizard).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from advisor.core.text import clean
from advisor.present.blocks import FRONT, PICK, BarChart, Point, Scatter
from advisor.present.humanize import axis, band

Span = tuple[str, str]
"""Text and its style words (space-separated; "" is plain)."""
Line = list[Span]

EIGHTHS = " ▏▎▍▌▋▊▉"


@dataclass(frozen=True)
class Marks:
    """The glyphs a chart is drawn with."""

    series: str
    """One mark per series, in order (repeated past the last)."""
    upper: bool
    """A point on the Pareto front is its series' mark in upper case (else only its style)."""
    front: str
    """How the legend says a point on the front is told apart."""
    pick: str
    line: str
    """A scatter's vertical line (the deadline, the user's target) and a bar's 1x tick."""
    axis: str
    """The y axis, the corner and the x axis."""


ASCII = Marks(series="ox+*#@%&", upper=True, front="upper case", pick="!", line="|",
              axis="|+-")
BLOCKS = Marks(series="◆■▲▼✚✖", upper=False, front="bright", pick="★", line="┆",
               axis="│└─")


def bar(value: float, scale: float, width: int) -> str:
    """A horizontal bar `value / scale` of `width` cells, in eighth-cell steps."""
    cells = max(0.0, min(1.0, value / scale)) * width
    full = int(cells)
    part = EIGHTHS[int((cells - full) * 8)]
    return ("█" * full + (part if full < width else "")).ljust(width)


def _bar_spans(value: float, chart: BarChart, width: int, marks: Marks) -> Line:
    """The bar, with the 1x tick where the bar falls short of it."""
    drawn = bar(value, chart.scale, width)
    style = "good" if value >= chart.mark else "short"
    at = round(width * chart.mark / chart.scale)
    if at >= width or drawn[at] != " ":
        return [(drawn, style)]
    return [(drawn[:at], style), (marks.line, "dim"), (drawn[at + 1:], "")]


def bar_lines(chart: BarChart, width: int, bar_width: int, marks: Marks) -> list[Line]:
    """One row per bar: its series (on the series' first bar), what it is at, the bar and its
    figure, band and word; a bar without a value says why. The text after the bar wraps
    under itself to fit `width`, where it can (a line longer than `width` cannot fit)."""
    groups = [clean(b.group) for b in chart.bars]
    labels = [clean(b.label) for b in chart.bars]
    name_w = max(map(len, groups), default=0)
    label_w = max(map(len, labels), default=0)
    lead = name_w + label_w + bar_width + 3
    out: list[Line] = []
    for i, b in enumerate(chart.bars):
        first = i == 0 or chart.bars[i - 1].group != b.group
        head: Line = [((groups[i] if first else "").ljust(name_w), "bold"),
                      (" " + labels[i].rjust(label_w) + " ", "")]
        if b.value is None:
            body, tail, style = [(" " * bar_width, "")], b.note, "dim"
        else:
            body = _bar_spans(b.value, chart, bar_width, marks)
            tail, style = f"{band(b.value, b.low, b.high)} {b.word}".rstrip(), ""
        wrapped = textwrap.wrap(clean(tail), max(1, width - lead - 1),
                                break_long_words=False) or [""]
        out.append([*head, *body, (" " + wrapped[0], style)])
        out += [[(" " * lead + " " + more, style)] for more in wrapped[1:]]
    return out


def _cells(chart: Scatter, fx: Callable[[float], int], width: int, height: int, top: str
           ) -> list[list[Point | None]]:
    """Which point each cell shows (top row first): the highest rank, the later on a tie;
    the point keyed `top` over every other. `fx`: the column of an x."""
    fy = axis([p.y for p in chart.points], height, log=False)
    cells: list[list[Point | None]] = [[None] * width for _ in range(height)]

    def rank(p: Point | None) -> int:
        return -1 if p is None else 99 if top and p.key == top else p.rank

    for p in chart.points:
        row, col = height - 1 - fy(p.y), fx(p.x)
        if rank(p) >= rank(cells[row][col]):
            cells[row][col] = p
    return cells


def _mark(chart: Scatter, p: Point, marks: Marks, ranked: bool, top: str) -> Span:
    glyph = marks.series[p.series % len(marks.series)]
    words = [f"series-{p.series % len(marks.series)}"]
    if ranked:
        words.append({PICK: "pick", FRONT: "front"}.get(p.rank, "back"))
        if p.rank == PICK:
            glyph = marks.pick
        elif p.rank == FRONT and marks.upper:
            glyph = glyph.upper()
    if top and p.key == top:
        words.append("top")
    return glyph, " ".join(words)


def scatter_lines(chart: Scatter, width: int, height: int, marks: Marks, top: str = ""
                  ) -> list[Line]:
    """The points on a `width` x `height` grid with the y axis labelled at its ends and the
    x axis under it; `top`: the key of a point drawn over any other (a highlighted row)."""
    if not chart.points:
        return []
    xs = [p.x for p in chart.points]
    fx = axis(xs, width, log=chart.x_log)
    cells = _cells(chart, fx, width, height, top)
    line_at = None
    if chart.mark_x is not None and min(xs) <= chart.mark_x <= max(xs):
        line_at = fx(chart.mark_x)
    ranked = any(p.rank for p in chart.points)
    bottom, top_label = (clean(x) for x in chart.y_labels)
    pad = max(len(bottom), len(top_label))
    v, corner, h = marks.axis[0], marks.axis[1], marks.axis[2]
    out: list[Line] = []
    for i, row in enumerate(cells):
        label = top_label if i == 0 else bottom if i == height - 1 else ""
        spans: Line = [(f"{label.rjust(pad)} {v}", "dim")]
        for col, p in enumerate(row):
            spans.append(_mark(chart, p, marks, ranked, top) if p is not None else
                          (marks.line, "dim") if col == line_at else (" ", ""))
        out.append(spans)
    lo, hi = (clean(x) for x in chart.x_labels)
    title = clean(chart.x_title).center(max(1, width - len(lo) - len(hi)))
    out.append([(f"{'':>{pad}} {corner}{h * width}", "dim")])
    out.append([(f"{'':>{pad}}  {lo}{title}{hi}", "dim")])
    return out


def legend(chart: Scatter, marks: Marks) -> Line:
    """Each series' mark, what the front and the pick look like, the vertical line, then
    the chart's notes: one line, to be wrapped like a note."""
    out: Line = []
    for i, name in enumerate(chart.series):
        n = i % len(marks.series)
        out += [(", " if i else "", ""), (marks.series[n], f"series-{n}"), (f" {clean(name)}", "")]
    said = []
    ranks = {p.rank for p in chart.points}
    if FRONT in ranks or PICK in ranks:
        said.append(f"{marks.front}: on the Pareto front (time, $, kW)")
    if PICK in ranks:
        said.append(f"{marks.pick} the pick")
    if chart.mark_x is not None and chart.mark_label:
        said.append(f"{marks.line} {clean(chart.mark_label)}")
    said += [clean(n) for n in chart.notes]
    if said:
        out.append((("; " if out else "") + "; ".join(said), ""))
    return out


def notes(chart: BarChart | Scatter, marks: Marks) -> list[Line]:
    """What is said under a chart: a scatter's legend (or, without points, why), a bar
    chart's notes."""
    if isinstance(chart, Scatter):
        return [legend(chart, marks)] if chart.points else [[(clean(n), "")]
                                                            for n in chart.notes]
    ticked = any(b.value is not None and b.value < chart.mark for b in chart.bars)
    said = [f"{marks.line} {chart.mark:g}x"] if ticked else []
    return [[("; ".join([*said, *(clean(n) for n in chart.notes)]), "")]]


BAR_WIDTH = 28
"""A full bar in a terminal or a document."""
DOCUMENT_WIDTH = 110
"""Columns of a document's chart (and of an SVG export): wide enough for every table,
narrow enough to read."""


def lines(chart: BarChart | Scatter, width: int, marks: Marks) -> list[Line]:
    """The chart as a terminal or a document draws it: bars `BAR_WIDTH` cells wide and their
    text wrapped to `width`, a scatter on its own grid."""
    if isinstance(chart, BarChart):
        return bar_lines(chart, width, BAR_WIDTH, marks)
    return scatter_lines(chart, chart.width, chart.height, marks)


def text(spans: Sequence[Span]) -> str:
    return "".join(t for t, _ in spans)
