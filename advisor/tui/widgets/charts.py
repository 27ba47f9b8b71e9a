"""The charts of `advisor.present.charts` in Textual markup: the lines `advisor.present.plot`
draws, in block marks and the theme's colours, so the wizard shows the chart the CLI
prints from the same data."""

from __future__ import annotations

from textual.markup import escape

from advisor.core import clean_block
from advisor.present import plot
from advisor.present.blocks import BarChart, Scatter

BAR_WIDTH = 16
COLOURS = ("$accent", "$success", "$primary", "$error", "$foreground", "$secondary")
STYLES = {"bold": "b", "dim": "dim", "good": "$success", "short": "$warning", "back": "dim",
          "top": "reverse"}
"""A chart's style words in Textual's styles; a series takes its colour from COLOURS."""


def _style(words: str) -> str:
    out = []
    for word in words.split():
        if word.startswith("series-"):
            out.append(COLOURS[int(word.removeprefix("series-")) % len(COLOURS)])
        elif word in STYLES:
            out.append(STYLES[word])
    return " ".join(out)


def markup(line: plot.Line) -> str:
    """One line of a chart as markup; its text is escaped."""
    return "".join(f"[{style}]{escape(text)}[/]" if (style := _style(words)) else escape(text)
                   for text, words in line)


def chart(c: BarChart | Scatter, width: int, height: int = 0, top: str = "") -> str:
    """The chart as markup: its title, the bars (their text wrapped to `width`) or the points
    on a `width` x `height` grid (`top`: the key of the point drawn highlighted), then its
    notes."""
    drawn = plot.bar_lines(c, width, BAR_WIDTH, plot.BLOCKS) if isinstance(c, BarChart) \
        else plot.scatter_lines(c, width, height, plot.BLOCKS, top)
    lines = [f"[b]{escape(c.title)}[/b]", *(markup(line) for line in drawn)]
    lines += [f"[dim]{markup(note)}[/]" for note in plot.notes(c, plot.BLOCKS)]
    return clean_block("\n".join(lines))  # a resumed report's names are someone else's
