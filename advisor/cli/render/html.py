"""Blocks as one HTML page that opens offline: a heading per section, paragraphs, lists and
real tables (number columns right-aligned, each unit under its header, every column: a page
has no width), the charts as preformatted text in their colours. One inline stylesheet in
the system's own fonts; nothing is fetched, so the file reads the same on a laptop with no
network as in a browser online. Every string is escaped on its way in: data is never markup.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from advisor.cli.render.emit import chart_html
from advisor.core import clean, clean_block
from advisor.present import plot
from advisor.present.blocks import Block, Bullets, Heading, Para, Table, legend

MONOSPACE = ('ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", '
             '"Liberation Mono", monospace')
"""The system's monospace fonts, the first one installed wins: nothing to download."""
STYLE = f"""\
body {{ font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
  sans-serif; color: #1f2328; background: #ffffff; max-width: 76rem; margin: 2rem auto;
  padding: 0 1rem; line-height: 1.45; }}
h1 {{ font-size: 1.45rem; }}
h2 {{ font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #d0d7de; }}
table {{ border-collapse: collapse; margin: 0.4rem 0; }}
caption {{ text-align: left; font-weight: 600; padding: 0.4rem 0; }}
th, td {{ padding: 0.2rem 0.7rem; text-align: left; vertical-align: top;
  border-bottom: 1px solid #eaeef2; }}
th {{ border-bottom: 2px solid #d0d7de; }}
.num {{ text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }}
.unit {{ font-weight: normal; color: #57606a; }}
.note, .dim {{ color: #57606a; font-size: 0.9rem; margin: 0.15rem 0; }}
figure {{ margin: 1rem 0; }}
figcaption {{ font-weight: 600; }}
pre {{ font-family: {MONOSPACE}; font-size: 0.85rem; line-height: 1.25; overflow-x: auto; }}
"""


def page(blocks: Sequence[Block], title: str) -> str:
    body = [f"<h1>{_esc(title)}</h1>", *(_block(b) for b in blocks)]
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title)}</title>", f"<style>\n{STYLE}</style>", "</head>", "<body>",
        *body, "</body>", "</html>", ""])


def _block(block: Block) -> str:
    if isinstance(block, Heading):
        return f"<h2>{_esc(block.text)}</h2>"
    if isinstance(block, Para):
        lead = f"<strong>{_esc(block.lead)}</strong> " if block.lead else ""
        return f'<p{_class(block.dim and "dim")}>{lead}{_esc_block(block.text)}</p>'
    if isinstance(block, Bullets):
        head = f"<p><strong>{_esc(block.title)}</strong></p>\n" if block.title else ""
        items = "\n".join(f"<li>{_esc_block(item)}</li>" for item in block.items)
        return f"{head}<ul>\n{items}\n</ul>"
    if isinstance(block, Table):
        return _table(block)
    notes = "".join(f'\n<p class="note">{_esc(plot.text(n))}</p>'
                    for n in plot.notes(block, plot.ASCII))
    body = chart_html(block)  # none for a chart with nothing to draw: its notes say why
    drawn = f"\n<pre>{body}</pre>" if body else ""
    return (f"<figure>\n<figcaption>{_esc(block.title)}</figcaption>{drawn}{notes}\n"
            "</figure>")


def _table(t: Table) -> str:
    out = ["<table>"]
    if t.title:
        out.append(f"<caption>{_esc(t.title)}</caption>")
    heads = []
    for c in t.cols:
        unit = f'<br><span class="unit">{_esc(c.unit)}</span>' if c.unit else ""
        heads.append(f'<th scope="col"{_class(c.numeric and "num")}>{_esc(c.header)}{unit}</th>')
    out += ["<thead>", f"<tr>{''.join(heads)}</tr>", "</thead>", "<tbody>"]
    for row in t.rows:
        cells = [f'<td{_class(c.numeric and "num")}>{_esc_block(row[i]) if i < len(row) else ""}'
                 "</td>" for i, c in enumerate(t.cols)]
        out.append(f"<tr>{''.join(cells)}</tr>")
    out += ["</tbody>", "</table>"]
    out += [f'<p class="note">{_esc(n)}</p>'
            for n in [*t.notes, *legend(t, range(len(t.cols)))]]
    return "\n".join(out)


def _class(name: str | bool) -> str:
    return f' class="{name}"' if name else ""


def _esc(text: str) -> str:
    return html.escape(clean(text))


def _esc_block(text: str) -> str:
    """Text of several lines (a paragraph, a list item): each line escaped, kept apart."""
    return "<br>".join(html.escape(line) for line in clean_block(text).splitlines())
