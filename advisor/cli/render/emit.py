"""Draw blocks as text fitted to the terminal, Markdown, HTML or SVG.

Text goes through rich, so a table takes the terminal's width (`COLUMNS` where there is
no terminal, 80 by default): text columns wrap, number columns never do, and when even
wrapped the table cannot fit, its low-value columns are left out and a note says which.
HTML and SVG are rich's recording console at a fixed width, so a shared file looks the
same wherever it is opened. Every string from a report or a catalog is sanitised here,
once, on its way out (`clean`): a pulled name cannot reach a terminal as an escape.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Literal, TextIO

from advisor.cli.render.blocks import Block, Bullets, Figure, Heading, Para, Table
from advisor.core import clean, clean_block
from advisor.humanize import NA, UNKNOWN

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

Format = Literal["text", "md", "html", "svg", "json"]
SHARE_WIDTH = 110
"""Columns of an HTML or SVG export: wide enough for every table, narrow enough to read."""
LEGEND = {NA: f"{NA} does not apply or not supported", UNKNOWN: f"{UNKNOWN} not known"}


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
        return markdown(blocks, title)
    if fmt == "text":
        buffer = io.StringIO()
        draw(blocks, console(buffer))
        return buffer.getvalue()
    rec = console(io.StringIO(), width=SHARE_WIDTH, record=True)
    draw(blocks, rec)
    if fmt == "svg":
        return rec.export_svg(title=clean(title))
    heading = _html_escape(clean(title)).replace("{", "{{").replace("}", "}}")
    return rec.export_html(inline_styles=True, code_format=_HTML.replace("{title}", heading))


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
    if isinstance(block, Figure):
        out: list[RenderableType] = [Text(clean(block.title), style="bold"), block.body]
        return out + [Text(clean(n), style="dim") for n in block.notes]
    return _table(block, con)


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
    from rich.text import Text

    keep = list(range(len(t.cols)))
    left_out: list[str] = []
    while _width(t, keep) > con.width:
        droppable = [i for i in keep if t.cols[i].drop > 0]
        if not droppable:
            break
        victim = max(droppable, key=lambda i: (t.cols[i].drop, i))
        keep.remove(victim)
        left_out.append(t.cols[victim].title())
    out: list[RenderableType] = []
    if t.title:
        out.append(Text(clean(t.title), style="bold"))
    out.append(_rich_table(t, keep))
    notes = [*t.notes, *_legend(t, keep)]
    if left_out:
        notes.append(f"left out at this width: {', '.join(left_out)} (a wider terminal, or "
                     "--format md, shows them)")
    out += [Text(clean_block(n), style="dim") for n in notes]
    return out


GAP = 3
"""Between two columns: a padding cell each side of the box's blank divider."""
LONGEST_WORD = 18
"""A text column is never squeezed below its longest word, up to this many characters."""


def _least(t: Table, i: int) -> int:
    """The narrowest column `i` can be: numbers and the first column whole, other text down
    to its longest word."""
    col = t.cols[i]
    cells = [clean(row[i]) for row in t.rows if i < len(row)]
    if _whole(t, i):
        return max([len(col.header), len(col.unit), *(len(c) for c in cells)])
    words = [len(w) for text in (col.header, col.unit, *cells) for w in text.split()]
    return min(LONGEST_WORD, max(words, default=1))


def _whole(t: Table, i: int) -> bool:
    col = t.cols[i]
    return col.whole if col.whole is not None else (col.numeric or i == 0)


def _width(t: Table, keep: Sequence[int]) -> int:
    return sum(_least(t, i) for i in keep) + GAP * (len(keep) - 1)


def _legend(t: Table, keep: Sequence[int]) -> list[str]:
    marks = {row[i] for row in t.rows for i in keep if i < len(row)}
    shown = [text for mark, text in LEGEND.items() if mark in marks]
    return ["; ".join(shown)] if shown else []


def _rich_table(t: Table, keep: Sequence[int]) -> RenderableType:
    from rich import box
    from rich.table import Table as RichTable
    from rich.text import Text

    table = RichTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1),
                      header_style="bold")
    for i in keep:
        col = t.cols[i]
        header = Text(clean(col.header))
        if col.unit:
            header.append("\n" + clean(col.unit), style="dim")
        table.add_column(header, justify="right" if col.numeric else "left", no_wrap=_whole(t, i),
                         overflow="fold", min_width=_least(t, i))
    for row in t.rows:
        table.add_row(*(Text(clean(row[i]) if i < len(row) else "") for i in keep))
    return table


# --- Markdown -------------------------------------------------------------------------------------


def markdown(blocks: Sequence[Block], title: str) -> str:
    """GitHub-flavoured Markdown: every column of every table (a file has no width), charts
    as fenced text."""
    out = [f"# {_md(title)}"]
    for block in blocks:
        out.append("")
        if isinstance(block, Heading):
            out.append(f"## {_md(block.text)}")
        elif isinstance(block, Para):
            lead = f"**{_md(block.lead)}** " if block.lead else ""
            text = f"{lead}{_md(block.text)}"
            out.append(f"*{text}*" if block.dim else text)
        elif isinstance(block, Bullets):
            out += [_md(block.title), ""] if block.title else []
            out += [f"- {_md(item)}" for item in block.items]
        elif isinstance(block, Figure):
            buffer = io.StringIO()
            con = console(buffer, width=SHARE_WIDTH)
            con.print(block.body)
            body = "\n".join(line.rstrip() for line in buffer.getvalue().splitlines())
            out += [f"**{_md(block.title)}**", "", "```text", clean_block(body), "```"]
            out += [f"*{_md(n)}*" for n in block.notes]
        else:
            out += _md_table(block)
    return "\n".join(out) + "\n"


def _md_table(t: Table) -> list[str]:
    out = [f"**{_md(t.title)}**", ""] if t.title else []
    out.append("| " + " | ".join(_cell(c.title()) for c in t.cols) + " |")
    out.append("| " + " | ".join("---:" if c.numeric else "---" for c in t.cols) + " |")
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in t.rows]
    notes = [*t.notes, *_legend(t, range(len(t.cols)))]
    if notes:
        out.append("")
        out += [f"*{_md(n)}*" for n in notes]
    return out


def _md(text: str) -> str:
    """Text with Markdown's active characters escaped, so data cannot become markup."""
    text = clean_block(text).replace("\\", "\\\\")
    for ch in "*_`[]<>|#":
        text = text.replace(ch, "\\" + ch)
    return text.replace("\n", "  \n")


def _cell(text: str) -> str:
    return _md(text).replace("  \n", "<br>") or " "


def _html_escape(text: str) -> str:
    import html

    return html.escape(text)


_HTML = """\
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<title>{title}</title>
<style>
{stylesheet}
body {{
    color: {foreground};
    background-color: {background};
    margin: 2em;
}}
</style>
</head>
<body>
    <pre style="font-family:Menlo,'DejaVu Sans Mono',consolas,'Courier New',monospace">\
<code style="font-family:inherit">{code}</code></pre>
</body>
</html>
"""
