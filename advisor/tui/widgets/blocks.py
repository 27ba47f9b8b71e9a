"""The blocks of `advisor.present` as the wizard draws them: a `Table` as a DataTable, and
headings, paragraphs and lists as markup, so a screen shows the cells and words the CLI
prints from the same data.

A table keeps the columns its width holds and leaves out the others in the order the CLI
does (`advisor.present.fit`: the droppable first), each cell whole (a DataTable does not
wrap); a column's unit is the second line of its header, numbers are right-aligned, and
each row has the key a screen names it by (a GPU, a configuration). What a width leaves
out, `left_out` says row by row, for the line under the table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from rich.cells import cell_len
from rich.text import Text
from textual.events import Resize
from textual.markup import escape
from textual.widgets import DataTable

from advisor.core import clean, clean_block
from advisor.present.blocks import Block, Bullets, Col, Heading, Para, Table, legend
from advisor.present.fit import fit
from advisor.present.humanize import render_table

Styler = Callable[[int, Col, str], str]
"""A cell's rich style from its row's index in the Table, its column and its text ("" for
none)."""


def _plain(row: int, col: Col, cell: str) -> str:
    return ""


def _header(t: Table, i: int) -> Text:
    col = t.cols[i]
    out = Text(clean(col.header), style="bold", justify="right" if col.numeric else "left")
    if col.unit:
        out.append("\n" + clean(col.unit), style="dim")
    return out


def kept(t: Table, width: int) -> list[int]:
    """The columns of `t` a DataTable `width` cells wide shows whole, in the table's order."""
    whole = Table([replace(c, whole=True) for c in t.cols], t.rows)
    return fit(whole, width, cell_len).keep


class BlockTable(DataTable[Text]):
    """A present `Table`, drawn: one row per Table row, keyed by `keys`; each column keyed
    by its title ("cost $/Mtok")."""

    shown: Table | None = None
    """The Table drawn."""
    keys: Sequence[str] = ()
    keep: list[int] = []  # noqa: RUF012 - replaced, never mutated
    """The Table's columns this width shows."""
    _styler: Styler | None = None

    def show(self, t: Table, keys: Sequence[str], style: Styler | None = None) -> None:
        """Draw `t`, its rows keyed by `keys`; the cursor stays on the row it was on."""
        self.shown, self.keys, self._styler = t, keys, style
        self._draw()

    def _room(self) -> int:
        """The cells a row may take: the table's width once laid out, else the screen's."""
        return (self.size.width or self.app.size.width) - 2

    def _draw(self, keep: list[int] | None = None) -> None:
        """`keep`: the columns this width shows, where the caller has just counted them."""
        t, style = self.shown, self._styler or _plain
        if t is None:
            return
        at = self.highlighted
        self.keep = keep if keep is not None else kept(t, self._room())
        self.clear(columns=True)
        self.header_height = 2 if any(t.cols[i].unit for i in self.keep) else 1
        for i in self.keep:
            self.add_column(_header(t, i), key=t.cols[i].title())
        for r, (key, row) in enumerate(zip(self.keys, t.rows, strict=True)):
            self.add_row(*(Text(clean(row[i]), style=style(r, t.cols[i], row[i]),
                                justify="right" if t.cols[i].numeric else "left")
                           for i in self.keep), key=key)
        if at is not None and at in self.rows:
            self.move_cursor(row=self.get_row_index(at), animate=False)

    def on_resize(self, event: Resize) -> None:
        """A new width shows the columns it holds (a wider one more, a narrower fewer)."""
        if self.shown is not None and (keep := kept(self.shown, self._room())) != self.keep:
            self._draw(keep)

    @property
    def highlighted(self) -> str | None:
        """The key of the row under the cursor."""
        if not self.row_count:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    def left_out(self, key: str) -> str:
        """The row's cells in the columns this width leaves out, each after its column's
        name ("price $/GPU-h 1.50 default; energy kWh 30,059"): the line under the table."""
        t = self.shown
        if t is None or key not in self.keys:
            return ""
        row = t.rows[list(self.keys).index(key)]
        return "; ".join(f"{t.cols[i].title()} {row[i]}" for i in range(len(t.cols))
                         if i not in self.keep and row[i])


def table_notes(t: Table) -> list[str]:
    """What a table's figures count and what its missing-figure marks mean (the row line
    shows the columns a width leaves out, marks and all)."""
    return [*t.notes, *legend(t, range(len(t.cols)))]


def plain_table(t: Table, width: int) -> str:
    """A table as plain columns under its title, for a card (markup): the columns `width`
    holds, its notes dimmed, and which columns it left out."""
    keep = kept(Table([replace(c, header=c.title(), unit="") for c in t.cols], t.rows), width)
    left_out = [c.title() for i, c in enumerate(t.cols) if i not in keep]
    notes = [*table_notes(t)] + ([f"left out at this width: {', '.join(left_out)} (^y "
                                  "copies them)"] if left_out else [])
    body = render_table([t.cols[i].title() for i in keep], [[r[i] for i in keep] for r in t.rows])
    return "\n".join([*([f"[b]{escape(t.title)}[/b]"] if t.title else []), escape(body),
                      "[dim]" + escape("; ".join(notes)) + "[/]"])


def markup(block: Block) -> str:
    """A heading, paragraph or list as markup (data escaped); a table or chart says its
    title only (a screen draws those in their own widgets)."""
    if isinstance(block, Heading):
        return f"[b]{escape(clean(block.text))}[/b]"
    if isinstance(block, Para):
        lead = f"[b]{escape(clean(block.lead))}[/b] " if block.lead else ""
        text = " " * block.indent + lead + escape(clean_block(block.text))
        return f"[dim]{text}[/]" if block.dim else text
    if isinstance(block, Bullets):
        title = [f"[b]{escape(clean(block.title))}[/b]"] if block.title else []
        pad = " " * block.indent
        return "\n".join([*title, *(f"{pad}• {escape(clean_block(x))}" for x in block.items)])
    return f"[b]{escape(clean(block.title))}[/b]"
