"""Blocks as GitHub-flavoured Markdown: every column of every table (a file has no width),
charts as fenced text, and data escaped so that it can never become markup. The CLI's
`--format md` and the wizard's copied summary are this."""

from __future__ import annotations

from collections.abc import Sequence

from advisor.core import clean_block
from advisor.present import plot
from advisor.present.blocks import Block, Bullets, Chart, Heading, Para, Table, legend


def document(blocks: Sequence[Block], title: str) -> str:
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
        elif isinstance(block, Table):
            out += _table(block)
        else:
            out += _chart(block)
    return "\n".join(out) + "\n"


def _chart(chart: Chart) -> list[str]:
    drawn = [plot.text(line).rstrip() for line in plot.lines(chart, plot.DOCUMENT_WIDTH,
                                                             plot.ASCII)]
    out = [f"**{_md(chart.title)}**", ""]
    if drawn:
        out += ["```text", *drawn, "```"]
    return out + [f"*{_md(plot.text(n))}*" for n in plot.notes(chart, plot.ASCII)]


def _table(t: Table) -> list[str]:
    out = [f"**{_md(t.title)}**", ""] if t.title else []
    out.append("| " + " | ".join(_cell(c.title()) for c in t.cols) + " |")
    out.append("| " + " | ".join("---:" if c.numeric else "---" for c in t.cols) + " |")
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in t.rows]
    notes = [*t.notes, *legend(t, range(len(t.cols)))]
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
