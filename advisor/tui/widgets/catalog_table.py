"""A searchable catalog table: free text, vendor, arch and minimum memory filters.

Welcome uses it to pick the current GPU, Targets to toggle several; the screen
decides what a selected row means and what the mark column says.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.events import Key
from textual.widgets import DataTable, Input, Select

from advisor.core import bounds
from advisor.present.humanize import UNKNOWN, number, peak
from advisor.tui.numbers import NumberSpec, parse_optional
from advisor.tui.widgets.field import Parsed

if TYPE_CHECKING:
    from advisor.core import Catalog, Gpu

MIN_MEM = NumberSpec("minimum memory", low=0, high=bounds.MAX_GPU_MEMORY_GIB, suffixes=False,
                     example="80")


def _right(text: str) -> Text:
    return Text(text, justify="right")


def price_cell(catalog: Catalog, gpu_id: str) -> Text:
    price = catalog.default_price(gpu_id)
    return _right(f"{price.usd_per_hour:.2f} default" if price else "none: quote")


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


class CatalogTable(Vertical):
    """Filters on top, one row per GPU below. Typing searches and never selects: only
    Enter selects the highlighted row (a space is part of a search such as "rtx pro")."""

    DEFAULT_CSS = """
    CatalogTable {
        height: 1fr;
        min-height: 6;
    }
    CatalogTable .filters {
        height: 1;
        margin-bottom: 1;
    }
    CatalogTable .filters #search {
        width: 1fr;
    }
    CatalogTable .filters Select {
        width: 18;
        margin-left: 1;
    }
    CatalogTable .filters #min-mem {
        width: 9;
        margin-left: 1;
    }
    CatalogTable DataTable {
        height: 1fr;
    }
    """

    def __init__(self, catalog: Catalog, mark: Callable[[str], str], mark_title: str,
                 on_select: Callable[[str], None], id: str | None = None) -> None:
        """`on_select`: called with the GPU picked (enter), in the same turn as the key: a
        ^n typed right after it sees the pick (a message would arrive after it)."""
        super().__init__(id=id, classes="catalog-table")
        self.catalog = catalog
        self.fresh = True
        self.mark = mark
        self.mark_title = mark_title
        self.on_select = on_select

    def compose(self) -> ComposeResult:
        vendors = sorted({g.vendor for g in self.catalog.gpus})
        archs = sorted({g.arch for g in self.catalog.gpus})
        with Horizontal(classes="filters"):
            yield Input(placeholder="search: h100, mi300, blackwell…", id="search", compact=True)
            yield Select([(v, v) for v in vendors], prompt="any vendor", id="vendor",
                         compact=True)
            yield Select([(a, a) for a in archs], prompt="any arch", id="arch", compact=True)
            yield Input(placeholder="min GiB", id="min-mem", compact=True,
                        validators=[Parsed(lambda t: parse_optional(t, MIN_MEM))])
        yield DataTable(cursor_type="row", zebra_stripes=True, id="gpus")

    def on_mount(self) -> None:
        """Columns sized once for the terminal: the name shrinks first, then goes."""
        table = self.query_one("#gpus", DataTable)
        id_width = max(len(g.id) for g in self.catalog.gpus)
        fixed = [("arch", "arch", 7), ("GiB", "mem", 4), ("TB/s", "bw", 5), ("bf16", "bf16", 6),
                 ("$/GPU-h", "price", 12)]
        width, fixed_width = self.app.size.width, sum(w for *_, w in fixed)
        spare = width - 8 - 2 * (len(fixed) + 3) - 3 - id_width - fixed_width
        self.name_width = min(spare, max(len(g.name) for g in self.catalog.gpus))
        if self.name_width < 12:  # no name column: the longest ids are clipped to fit
            id_width = min(id_width, width - 6 - 2 * (len(fixed) + 2) - 3 - fixed_width)
        self.id_width = id_width
        table.add_column(self.mark_title, key="mark", width=3)
        table.add_column("id", key="id", width=id_width)
        if self.name_width >= 12:
            table.add_column("name", key="name", width=self.name_width)
        for label, key, width in fixed:  # the figures read right-aligned, as numbers do
            table.add_column(label if key == "arch" else _right(label), key=key, width=width)
        self.refill()

    def shown_gpus(self) -> list[Gpu]:
        query = self.query_one("#search", Input).value
        vendor = self.query_one("#vendor", Select).value
        arch = self.query_one("#arch", Select).value
        min_mem_input = self.query_one("#min-mem", Input)
        try:
            min_mem = parse_optional(min_mem_input.value, MIN_MEM) or 0.0
        except ValueError:
            min_mem = 0.0
        gpus = self.catalog.match(query)
        return [g for g in gpus
                if (vendor is Select.NULL or g.vendor == vendor)
                and (arch is Select.NULL or g.arch == arch)
                and (g.memory.gib if g.memory else 0) >= min_mem]

    def refill(self) -> None:
        table = self.query_one("#gpus", DataTable)
        keep = self.highlighted()
        table.clear()
        for g in self.shown_gpus():
            mem = g.memory
            name = [_clip(g.name, self.name_width)] if self.name_width >= 12 else []
            table.add_row(self.mark(g.id), _clip(g.id, self.id_width), *name, g.arch,
                          _right(number(mem.gib) if mem else UNKNOWN),
                          _right(number(mem.bandwidth_tbps, 2) if mem else UNKNOWN),
                          _right(peak(g, self.catalog.arch_of(g).formats, "bf16")),
                          price_cell(self.catalog, g.id), key=g.id)
        if keep is not None and keep in table.rows:
            table.move_cursor(row=table.get_row_index(keep))

    def refresh_marks(self) -> None:
        """Update only the marks that changed: each cell update costs a table refresh."""
        table = self.query_one("#gpus", DataTable)
        for key in table.rows:
            assert key.value is not None
            mark = self.mark(key.value)
            if table.get_cell(key, "mark") != mark:
                table.update_cell(key, "mark", mark)

    def highlighted(self) -> str | None:
        table = self.query_one("#gpus", DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        return key.value

    def focus_gpu(self, gpu_id: str) -> None:
        table = self.query_one("#gpus", DataTable)
        if gpu_id in table.rows:
            table.move_cursor(row=table.get_row_index(gpu_id))

    @on(Input.Changed)
    @on(Select.Changed)
    def _filter(self) -> None:
        self.refill()

    def on_key(self, event: Key) -> None:
        """Typing on the table filters it in place: users type "h100" before reading a prompt.

        Focus stays on the table (moving it would race fast typists), and the
        first key after a selection starts a new search. Space is text here, never a
        selection; "?" is left for the help screen.
        """
        if not self.query_one("#gpus", DataTable).has_focus:
            return
        search = self.query_one("#search", Input)
        char = event.character
        if char == " " and self.fresh:
            event.stop()  # a space starts no search and selects nothing
            return
        if event.key == "backspace":
            search.value = search.value[:-1]
        elif char and char.isprintable() and char != "?":
            search.value = char if self.fresh else search.value + char
            self.fresh = False
        else:
            return
        event.stop()
        self.refill()  # now, not on Input.Changed: an Enter typed next must see these rows

    @on(Input.Submitted, "#search")
    def _to_table(self) -> None:
        self.query_one("#gpus", DataTable).focus()

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.fresh = True
            self.on_select(event.row_key.value)
