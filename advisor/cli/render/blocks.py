"""The blocks a headless report is made of, independent of the format it is drawn in.

A table says which columns hold numbers (right-aligned, never wrapped, the unit in the
header) and which may be left out when the terminal is too narrow (`drop`: higher goes
first), so one description serves an 80-column terminal, a 200-column one and a
Markdown file alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from advisor.present.humanize import NA, UNKNOWN

if TYPE_CHECKING:
    from rich.console import RenderableType


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
class Figure:
    """A chart: a rich renderable, drawn as text in a terminal, HTML and SVG, and as a
    fenced text block in Markdown."""

    title: str
    body: RenderableType
    notes: Sequence[str] = field(default_factory=tuple)


Block = Heading | Para | Bullets | Table | Figure


def reword(blocks: Sequence[Block], phrases: Mapping[str, str]) -> list[Block]:
    """The blocks with each phrase replaced, longest first: the engine's messages name the
    flags of `advisor compare` ("quote one with --price"), and a report decided from an
    answers file says where its answers go instead (as the wizard's words.py does)."""
    order = sorted(phrases, key=len, reverse=True)

    def text(t: str) -> str:
        for phrase in order:
            t = t.replace(phrase, phrases[phrase])
        return t

    out: list[Block] = []
    for b in blocks:
        if isinstance(b, Para):
            b = replace(b, text=text(b.text))
        elif isinstance(b, Bullets):
            b = replace(b, items=[text(i) for i in b.items])
        elif isinstance(b, Table):
            b = replace(b, rows=[[text(c) for c in row] for row in b.rows],
                        notes=[text(n) for n in b.notes])
        out.append(b)
    return out
