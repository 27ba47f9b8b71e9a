"""The blocks a report is made of, independent of the toolkit and format it is drawn in:
the CLI draws them as text, Markdown, HTML or SVG, the wizard in Textual.

A table says which columns hold numbers (right-aligned, never wrapped, the unit in the
header) and which may be left out when the terminal is too narrow (`drop`: higher goes
first), so one description serves an 80-column terminal, a 200-column one and a
Markdown file alike. A chart is its data (bars on a scale, points on axes), drawn by
`advisor.present.plot` as lines each toolkit styles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from advisor.present.humanize import NA, UNKNOWN


@dataclass(frozen=True)
class Heading:
    text: str


@dataclass(frozen=True)
class Para:
    """A paragraph, wrapped to the width; `lead` is drawn bold before it (a verdict's GPUs)."""

    text: str
    lead: str = ""
    indent: int = 0
    dim: bool = False


@dataclass(frozen=True)
class Bullets:
    items: Sequence[str]
    title: str = ""
    indent: int = 2


@dataclass(frozen=True)
class Col:
    header: str
    unit: str = ""
    numeric: bool = False
    drop: int = 0
    """0: always shown; otherwise left out, highest first, when the table does not fit."""
    whole: bool | None = None
    """Never wrapped; default: number columns and the first (the row's name)."""

    def title(self, sep: str = " ") -> str:
        return f"{self.header}{sep}{self.unit}" if self.unit else self.header


@dataclass(frozen=True)
class Table:
    cols: Sequence[Col]
    rows: Sequence[Sequence[str]]
    title: str = ""
    notes: Sequence[str] = ()


LEGEND = {NA: f"{NA} does not apply or not supported", UNKNOWN: f"{UNKNOWN} not known"}


def legend(t: Table, shown: Sequence[int]) -> list[str]:
    """The line that says what the missing-figure marks in the `shown` columns mean."""
    marks = {row[i] for row in t.rows for i in shown if i < len(row)}
    said = [text for mark, text in LEGEND.items() if mark in marks]
    return ["; ".join(said)] if said else []


@dataclass(frozen=True)
class Bar:
    """One bar of a `BarChart`: `value` against the chart's scale with its band (`low` to
    `high`) and a `word` after it; where there is no value, `note` says why instead."""

    group: str
    """The series it belongs to (a target GPU), named on its first bar."""
    label: str
    """What the bar is at (a sequence length)."""
    value: float | None = None
    low: float | None = None
    high: float | None = None
    word: str = ""
    note: str = ""


@dataclass(frozen=True)
class BarChart:
    """Horizontal bars on one scale: a full bar is `scale`, and `mark` (1x: as fast as
    today) is ticked where a bar falls short of it."""

    title: str
    bars: Sequence[Bar]
    scale: float
    mark: float = 1.0
    notes: Sequence[str] = ()


@dataclass(frozen=True)
class Point:
    """One mark of a `Scatter`: `series` indexes the chart's series; of two points in one
    cell the higher `rank` is drawn (the later on a tie); `key` names it for a highlight."""

    series: int
    x: float
    y: float
    rank: int = 0
    key: str = ""


FRONT, PICK = 1, 2
"""A Scatter point's rank: on the Pareto front, the pick."""


@dataclass(frozen=True)
class Scatter:
    """Points on a character grid, each series with its own mark; `mark_x` draws a vertical
    line (the deadline, the user's target) named `mark_label`. Without points the chart is
    its title and notes (which then say why)."""

    title: str
    series: Sequence[str]
    points: Sequence[Point]
    x_title: str = ""
    x_labels: tuple[str, str] = ("", "")
    """Left and right ends of the x axis."""
    y_labels: tuple[str, str] = ("", "")
    """Bottom and top of the y axis."""
    x_log: bool = False
    mark_x: float | None = None
    mark_label: str = ""
    notes: Sequence[str] = ()
    width: int = 48
    height: int = 10
    """The grid a document draws it on (a screen may draw it smaller)."""


Chart = BarChart | Scatter
Block = Heading | Para | Bullets | Table | BarChart | Scatter
