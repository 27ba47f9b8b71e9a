"""The blocks a headless report is made of, independent of the format it is drawn in.

A table says which columns hold numbers (right-aligned, never wrapped, the unit in the
header) and which may be left out when the terminal is too narrow (`drop`: higher goes
first), so one description serves an 80-column terminal, a 200-column one and a
Markdown file alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

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


@dataclass(frozen=True)
class Figure:
    """A chart: a rich renderable, drawn as text in a terminal, HTML and SVG, and as a
    fenced text block in Markdown."""

    title: str
    body: RenderableType
    notes: Sequence[str] = field(default_factory=tuple)


Block = Heading | Para | Bullets | Table | Figure
