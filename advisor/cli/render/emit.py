"""Draw blocks as text fitted to the terminal or as an SVG, and pick the drawer of a format.

Text goes through rich, so a table takes the terminal's width (`COLUMNS` where there is
no terminal, 80 by default) as `fit` lays it out: text columns wrap, number columns never
do, and the columns that do not fit are left out and named; a chart that does not fit is
left out and said so. On a stream that cannot show every character rich draws its rules
and boxes in ASCII. The SVG is rich's recording console at a fixed width, in the system's
monospace font (nothing fetched when it opens); Markdown and HTML are `markdown` and
`html`. Every string from a report or a catalog is sanitised on its way out (`clean`): a
pulled name cannot reach a terminal as an escape.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Literal, TextIO

from advisor.core import clean, clean_block
from advisor.present import plot
from advisor.present.blocks import (
    Block,
    Bullets,
    Chart,
    Heading,
    Para,
    Table,
    legend,
)
from advisor.present.fit import Fit, fit

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.text import Text

Format = Literal["text", "md", "html", "svg", "json"]
STYLES = {"bold": "bold", "dim": "dim", "good": "green", "short": "yellow", "back": "dim",
          "front": "bold", "pick": "bold green"}
"""A chart's style words (`advisor.present.plot`) in rich's styles; the others are plain."""


def console(file: TextIO | None = None, width: int | None = None,
            record: bool = False) -> Console:
    from rich.console import Console

    return Console(file=file, width=width, record=record, highlight=False, emoji=False,
                   soft_wrap=False, force_terminal=True if record else None,
                   color_system="truecolor" if record else "auto")


def print_text(blocks: Iterable[Block], file: TextIO | None = None) -> None:
    """The blocks on stdout (or `file`), fitted to the terminal, with no trailing blanks."""
    out = file or sys.stdout
    con = console(out)
    with con.capture() as captured:
        draw(blocks, con)
    out.write(_TRAILING.sub(lambda m: "".join(_SGR.findall(m.group())), captured.get()))


_SGR = re.compile(r"\x1b\[[0-9;]*m")
_TRAILING = re.compile(r"(?:[ ]|\x1b\[[0-9;]*m)+$", re.MULTILINE)
"""Blanks at the end of a line (rich pads to the width), kept colour codes aside."""


def render(blocks: Sequence[Block], fmt: Format, title: str) -> str:
    """The blocks as one document in `fmt` (text, md, html or svg)."""
    if fmt == "md":
        from advisor.present import markdown

        return markdown.document(blocks, title)
    if fmt == "html":
        from advisor.cli.render import html

        return html.page(blocks, title)
    if fmt == "text":
        buffer = io.StringIO()
        draw(blocks, console(buffer))
        return buffer.getvalue()
    rec = console(io.StringIO(), width=plot.DOCUMENT_WIDTH, record=True)
    draw(blocks, rec)
    return offline_svg(rec.export_svg(title=clean(title)))


MONOSPACE = "ui-monospace, Menlo, Consolas, 'DejaVu Sans Mono', 'Liberation Mono', monospace"
"""The SVG's font: the system's monospace, the first one installed wins."""
_FONT_FACE = re.compile(r"[ \t]*@font-face\s*\{[^}]*\}\n?")
_FONT_FAMILY = re.compile(r"font-family:\s*Fira Code,\s*monospace")


def offline_svg(svg: str) -> str:
    """rich's SVG without its web fonts: its `@font-face` rules load Fira Code from a CDN when
    the file opens; the text is drawn in the system's monospace instead."""
    return _FONT_FAMILY.sub(f"font-family: {MONOSPACE}", _FONT_FACE.sub("", svg))


def styled(line: plot.Line, style: str = "") -> Text:
    """One line of a chart in rich's styles."""
    from rich.text import Text

    out = Text(style=style)
    for text, words in line:
        out.append(text, style=" ".join(STYLES[w] for w in words.split() if w in STYLES))
    return out


def chart_body(chart: Chart, width: int) -> Text:
    """A chart's lines, in the ASCII marks a file or any terminal shows."""
    from rich.text import Text

    return Text("\n").join(styled(line) for line in plot.lines(chart, width, plot.ASCII))


def chart_html(chart: Chart) -> str:
    """A chart as escaped HTML text with its colours as inline styles (HTML's <pre>)."""
    rec = console(io.StringIO(), width=plot.DOCUMENT_WIDTH, record=True)
    rec.print(chart_body(chart, plot.DOCUMENT_WIDTH))
    return rec.export_html(inline_styles=True, code_format="{code}").rstrip()


def draw(blocks: Iterable[Block], con: Console) -> None:
    first = True
    for block in blocks:
        if not first:
            con.print()
        first = False
        for renderable in _renderables(block, con):
            con.print(renderable)


def _renderables(block: Block, con: Console) -> list[RenderableType]:
    from rich.padding import Padding
    from rich.text import Text

    if isinstance(block, Heading):
        from rich.rule import Rule

        title = Text(clean(block.text), style="bold")
        if title.cell_len + 4 > con.width:  # a rule would cut it: the whole title instead
            return [title]
        return [Rule(title, align="left", style="dim")]
    if isinstance(block, Para):
        text = Text(style="dim" if block.dim else "")
        if block.lead:
            text.append(clean(block.lead), style="bold")
            text.append(" ")
        text.append(clean_block(block.text))
        return [Padding(text, (0, 0, 0, block.indent))]
    if isinstance(block, Bullets):
        head: list[RenderableType] = [Text(clean(block.title), style="bold")] if block.title \
            else []
        return [*head, _hanging("-", block.items, block.indent)]
    if isinstance(block, Table):
        return _table(block, con)
    return _chart(block, con)


def _chart(chart: Chart, con: Console) -> list[RenderableType]:
    """A chart is drawn only where it fits, line for line (wrapped, its marks would move):
    a bar's text wraps under itself, the bars and a scatter's grid do not."""
    from rich.text import Text

    title = Text(clean(chart.title), style="bold")
    body = chart_body(chart, con.width)
    if any(line.cell_len > con.width for line in body.split()):
        return [title, Text("left out at this width (a wider terminal, or --format md, "
                            "shows it)", style="dim")]
    notes = [styled(n, "dim") for n in plot.notes(chart, plot.ASCII)]
    return [title, *([body] if body.plain else []), *notes]  # an empty one's notes say why


def _hanging(mark: str, items: Sequence[str], indent: int) -> RenderableType:
    """A list whose wrapped lines stay under their item's first word."""
    from rich.padding import Padding
    from rich.table import Table as RichTable
    from rich.text import Text

    grid = RichTable.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for item in items:
        grid.add_row(mark, Text(clean_block(item)))  # Text: a `[` in data is not markup
    return Padding(grid, (0, 0, 0, indent))


def _table(t: Table, con: Console) -> list[RenderableType]:
    from rich.cells import cell_len
    from rich.text import Text

    f = fit(t, con.width, cell_len)
    out: list[RenderableType] = []
    if t.title:
        out.append(Text(clean(t.title), style="bold"))
    out.append(_rich_table(t, f, con))
    notes = [*t.notes, *legend(t, f.keep)]
    if f.left_out:
        names = ", ".join(t.cols[i].title() for i in f.left_out)
        notes.append(f"left out at this width: {names} (a wider terminal, or --format md, "
                     "shows them)")
    out += [Text(clean_block(n), style="dim") for n in notes]
    return out


ASCII_HEAD = "    \n    \n -- \n    \n    \n    \n    \n    \n"
"""rich's SIMPLE_HEAD drawn with `-`: for a stream that cannot show its line."""


def _rich_table(t: Table, f: Fit, con: Console) -> RenderableType:
    from rich import box
    from rich.table import Table as RichTable
    from rich.text import Text

    rule = box.Box(ASCII_HEAD, ascii=True) if con.options.ascii_only else box.SIMPLE_HEAD
    table = RichTable(box=rule, show_edge=False, pad_edge=False, padding=(0, 1),
                      header_style="bold")
    for i, width, unwrapped in zip(f.keep, f.widths, f.whole, strict=True):
        col = t.cols[i]
        header = Text(clean(col.header))
        if col.unit:
            header.append("\n" + clean(col.unit), style="dim")
        table.add_column(header, justify="right" if col.numeric else "left",
                         no_wrap=unwrapped, overflow="fold", width=width)
    for row in t.rows:
        table.add_row(*(Text(clean(row[i]) if i < len(row) else "") for i in f.keep))
    return table
