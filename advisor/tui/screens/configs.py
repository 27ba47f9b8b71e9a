"""Step 8: how many of which GPU. Every candidate at every GPU count, communication
included, priced and powered for the token budget; the Pareto front over time, $ and kW;
and the best configuration under the power cap and an optional deadline.

Nothing here computes: the options are `answers.configs` (so the report carries them),
and the sweep is the Report's `configs`, made by `advisor.core.run` with everything else.
Energy is one figure per configuration; where a partly used node's empty slots are
counted (an owned box), the row says how many.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Resize
from textual.markup import escape
from textual.widgets import DataTable, Input, Select, Static, TabbedContent, TabPane

from advisor.core import bounds, clean_block
from advisor.present.blocks import Col
from advisor.present.charts import cost_chart, point_key
from advisor.present.configs import choice, sweep_notes, sweep_table
from advisor.tui.fields import any_field_def
from advisor.tui.numbers import (
    NumberSpec,
    parse_list,
    parse_optional,
    show_count,
    show_number,
)
from advisor.tui.screens.base import ComputedScreen
from advisor.tui.widgets.blocks import BlockTable, markup, table_notes
from advisor.tui.widgets.charts import chart
from advisor.tui.widgets.field import FormField, sync_input, text_input
from advisor.tui.widgets.pipeline import PipelinePanel

if TYPE_CHECKING:
    from advisor.core import ConfigOptions, ConfigPoint, ConfigSweep, Report
    from advisor.present.blocks import Scatter

OBJECTIVES = (("cheapest", "cost"), ("fastest", "time"))
COUNTS = NumberSpec("GPU count", integer=True, low=1, high=bounds.MAX_SWEEP_GPUS,
                    example="4, 8, 16")
PER_NODE = NumberSpec("GPUs per node", integer=True, low=1, high=bounds.MAX_GPUS_PER_NODE,
                      example="8")
DEADLINE = NumberSpec("deadline", low=bounds.MIN_DEADLINE_DAYS, high=bounds.MAX_DEADLINE_DAYS,
                      suffixes=False, example="30")


def opt_int(value: float | None) -> int | None:
    return None if value is None else int(value)


def show_budget(value: float | None) -> str:
    spec = any_field_def("token_budget").spec
    return show_count(value, spec) if spec else show_number(value)


def parse_budget(text: str) -> float | None:
    value: float | None = any_field_def("token_budget").parse(text)
    return value


OPTIONS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "counts": ("counts", lambda text: list(parse_list(text, COUNTS))),
    "per-node": ("gpus_per_node", lambda text: opt_int(parse_optional(text, PER_NODE))),
    "deadline": ("deadline_days", lambda text: parse_optional(text, DEADLINE)),
}
"""Input id -> (ConfigOptions field, parser)."""
def point_text(p: ConfigPoint, left_out: str) -> str:
    """The highlighted configuration: its layout, and its cells in the columns this width
    leaves out (markup)."""
    return (f"[b]{p.label}[/b]: {escape(p.layout)}"
            + (f"; {escape(left_out)}" if left_out else ""))


class ConfigsScreen(ComputedScreen):
    """Two views: the GPU-count sweep, and a staged workload's pipeline balance."""

    STEP = 7
    COMPUTES = "report"
    FIX_HINT = "Change the options above, or go back (esc) and change the answers."
    BINDINGS: ClassVar = [Binding("ctrl+t", "toggle_view", "View", key_display="^t")]

    def compose_body(self) -> ComposeResult:
        with TabbedContent(id="cfg-tabs"):
            with TabPane("GPU counts", id="tab-counts"):
                yield from super().compose_body()
            with TabPane("Pipeline", id="tab-pipeline"):
                if self.state.pipeline is not None:  # a resumed one shows as loaded
                    yield PipelinePanel(self.ctx, id="pipeline")

    def _panel(self) -> PipelinePanel | None:
        return next(self.query(PipelinePanel).results(), None)

    async def _open_pipeline(self) -> None:
        """The Pipeline view is built when first opened: a hundred-odd widgets that the
        GPU-count view does not need."""
        if self._panel() is None:
            panel = PipelinePanel(self.ctx, id="pipeline")
            await self.query_one("#tab-pipeline", TabPane).mount(panel)
            report = self.drawn_report
            if report is not None:
                panel.show_report(report)

    @on(TabbedContent.TabActivated, "#cfg-tabs")
    async def _tab(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "tab-pipeline":
            await self._open_pipeline()

    async def action_toggle_view(self) -> None:
        tabs = self.query_one("#cfg-tabs", TabbedContent)
        tabs.active = "tab-pipeline" if tabs.active == "tab-counts" else "tab-counts"
        if tabs.active == "tab-pipeline":
            await self._open_pipeline()
            self.query_one("#pl-0-name").focus()
        else:
            self.query_one("#counts").focus()

    @property
    def options(self) -> ConfigOptions:
        from advisor.core import ConfigOptions

        return self.state.configs or ConfigOptions()

    def _budget(self) -> float | None:
        budget: float | None = self.state.given.get("token_budget")
        return budget

    def compose_inputs(self) -> ComposeResult:
        opts = self.options
        yield Static("How many of which GPU? Each candidate at each count, communication "
                     "included, for the whole token budget.", classes="prompt")
        with Horizontal(id="cfg-form"):
            with Vertical():
                yield FormField("GPU counts", text_input(
                    ", ".join(map(str, opts.gpu_counts())), "counts",
                    OPTIONS["counts"][1]).add_class("-wide"), note=self._counts_note(),
                    id="counts-field")
                yield FormField("GPUs per node", text_input(
                    show_number(opts.gpus_per_node), "per-node", OPTIONS["per-node"][1],
                    placeholder="catalog's"), note=self._per_node_note(), id="per-node-field")
                yield FormField("token budget", text_input(
                    show_budget(self._budget()), "cfg-budget", parse_budget,
                    placeholder="none (default)"),
                    note="tokens to train or serve, e.g. 300B", id="budget-field")
            with Vertical():
                yield FormField("deadline days", text_input(
                    show_number(opts.deadline_days), "deadline", OPTIONS["deadline"][1],
                    placeholder="none"), note="optional")
                yield FormField("best is the", Select(
                    OBJECTIVES, value=opts.objective, id="objective", allow_blank=False,
                    compact=True), note="within the limits")
                yield FormField("power cap", note=self._cap_note(), id="cap-field")

    def compose_result(self) -> ComposeResult:
        yield Static("", id="cfg-best", markup=True)
        yield BlockTable(id="cfg-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="cfg-row", markup=True)
        with VerticalScroll(id="cfg-more"), Horizontal(id="cfg-panels"):
            yield Static("", id="cfg-chart", markup=True)
            yield Static("", id="cfg-notes", markup=True)

    def mounted(self) -> None:
        """The counts first: typing replaces them, and the table follows as you type."""
        self.query_one("#counts").focus()
        self._size_table()
        super().mounted()

    def _counts_note(self) -> str:
        if self.state.configs is None or self.state.configs.counts is None:
            return "[$warning]default[/] (1, 2, 4… up to 16); e.g. 4, 8, 16"
        return "to try, e.g. 4, 8, 16"

    def _per_node_note(self) -> str:
        """What a blank count means for the GPUs compared, in each one's own link's words."""
        if self.options.gpus_per_node is not None:
            return "[dim]slots per node: its scale-up link inside, the NIC across[/]"
        parts = []
        for gpu_id in self.state.gpus():
            link = self.ctx.catalog.gpu(gpu_id).interconnect
            parts.append(f"{gpu_id} {link.domain_gpus} over {link.kind}" if link
                         else f"{gpu_id}: no scale-up link in the catalog")
        return "[$warning]default[/] [dim]each GPU's scale-up domain: " + \
            escape("; ".join(parts)) + "[/]"

    def _cap_note(self) -> str:
        cap = self.state.power_cap_kw
        return f"{cap:g} kW [dim](set on Targets; GPUs and their hosts)[/]" if cap is not None \
            else "[dim]none (set on Targets)[/]"

    def refresh_view(self) -> None:
        """Targets or Workload may have changed the cap or the budget since the last visit."""
        self.query_one("#cap-field", FormField).set_note(self._cap_note())
        self.query_one("#per-node-field", FormField).set_note(self._per_node_note())
        sync_input(self.query_one("#cfg-budget", Input), self._budget(), parse_budget,
                   show_budget)
        super().refresh_view()

    @on(PipelinePanel.Changed)
    def _pipeline_changed(self) -> None:
        self.ask()

    def show_error(self, message: str) -> None:
        super().show_error(message)
        panel = self._panel()
        if panel is not None:
            panel.show_error(message)

    def render_result(self, report: Report) -> None:
        panel = self._panel()
        if panel is not None:
            panel.show_report(report)
        sweep = report.configs
        self.sweep = sweep
        self.cost = cost_chart(sweep, "wizard") if sweep is not None else None
        if sweep is None and not self.state.sweep:
            self.show_message("[b $warning]The resumed answers have no GPU-count sweep.[/] "
                              "Change an option above to add one.")
            return
        if sweep is None:
            self.show_message("[b $warning]No token budget yet.[/] Type one above (tokens to "
                              "train or serve, e.g. 300B) to sweep GPU counts; without one the "
                              "engine makes no sweep, and Next goes on to the verdict.")
            return
        answers = report.decision.answers
        self.query_one("#cfg-best", Static).update(clean_block(
            markup(choice(sweep, "wizard"))))
        table = self.query_one("#cfg-table", BlockTable)
        keep = self._cursor_to or table.highlighted
        drawn = sweep_table(sweep, answers)
        table.show(drawn, [point_key(p) for p in sweep.points], self._style)
        self._size_table()
        pick = sweep.choice.best or sweep.choice.closest_miss
        self._cursor_to = keep if keep in table.rows else (point_key(pick) if pick else None)
        self._tries = 0
        self._place_cursor()
        self._draw_chart()
        self.query_one("#cfg-notes", Static).update(clean_block("\n".join(
            ["[dim]" + escape("\n".join(table_notes(drawn))) + "[/]",
             *(markup(b) for b in sweep_notes(sweep))])))

    def _style(self, row: int, col: Col, cell: str) -> str:
        """The pick in bold; its mark in green, a broken limit in red, a default price in
        yellow."""
        sweep = self.sweep
        assert sweep is not None
        p = sweep.points[row]
        if col.header == "GPU":
            return "bold" if p == sweep.choice.best else ""
        if col.header == "marks":  # the pick's mark green, a broken limit's red
            if p == sweep.choice.best:
                return "bold green"
            return "bold red" if False in (p.meets_power_cap, p.meets_deadline) else ""
        return "yellow" if col.header == "price" and p.price_source == "default" else ""

    def on_resize(self, event: Resize) -> None:
        self._size_table()

    def _size_table(self) -> None:
        """A definite height from the start, so the cursor never scrolls against a stale one."""
        table = self.query_one("#cfg-table", DataTable)
        cap = max(6, self.app.size.height * 2 // 5)
        table.styles.height = min(table.row_count + 1, cap) if table.row_count else cap

    _cursor_to: str | None = None
    _tries = 0

    def _place_cursor(self) -> None:
        """Move the cursor once the table is laid out and has measured its rows. The result
        appears in the same call that fills the table, and a cursor moved before layout
        scrolls against a table of no height: where it landed depended on load."""
        table = self.query_one("#cfg-table", DataTable)
        key = self._cursor_to
        if key is None or key not in table.rows:
            return
        if (table.size.height <= 1 or table.virtual_size.height <= table.row_count) \
                and self._tries < 50:
            self._tries += 1
            self.call_after_refresh(self._place_cursor)
            return
        self._cursor_to, self._tries = None, 0
        table.scroll_to(y=0, animate=False, force=True)
        table.move_cursor(row=table.get_row_index(key))

    sweep: ConfigSweep | None = None
    cost: Scatter | None = None  # the sweep's chart, drawn again as the cursor moves

    def _draw_chart(self) -> None:
        if self.sweep is not None and self.cost is not None:
            table = self.query_one("#cfg-table", BlockTable)
            key = table.highlighted
            self.query_one("#cfg-chart", Static).update(chart(self.cost, 40, 8, top=key or ""))
            point = next((p for p in self.sweep.points if point_key(p) == key), None)
            self.query_one("#cfg-row", Static).update(
                clean_block(point_text(point, table.left_out(key))) if point and key else "")

    @on(DataTable.RowHighlighted, "#cfg-table")
    def _row(self) -> None:
        self._draw_chart()

    @on(Input.Changed, "#cfg-form Input")
    def _typed(self, event: Input.Changed) -> None:
        result = event.validation_result
        row = event.input.parent
        where = f"{row.label} on Configurations" if isinstance(row, FormField) else "a field"
        self.state.set_invalid(where, result.failure_descriptions[0]
                               if result is not None and not result.is_valid else None)
        if result is None or result.is_valid:
            key = event.input.id
            if key == "cfg-budget":
                self._set_budget(parse_budget(event.value))
            elif key in OPTIONS:
                field, parse = OPTIONS[key]
                self._set_option(field, parse(event.value))
        self.refresh_nav()

    @on(Select.Changed, "#objective")
    def _objective(self, event: Select.Changed) -> None:
        self._set_option("objective", event.value)

    def _set_budget(self, budget: float | None) -> None:
        if budget != self._budget():
            self.state.set_budget(budget)
            self.ask()

    def _set_option(self, field: str, value: object) -> None:
        """Replace one option and sweep again; an unchanged value (each input reports once
        as it mounts, and "1, 2, 4" is what counts=None means) leaves the options alone."""
        from advisor.core import ConfigOptions

        opts = self.options
        current = opts.gpu_counts() if field == "counts" else getattr(opts, field)
        if value == current:
            return
        given = opts.model_dump(exclude_unset=True)
        self.state.set_configs(ConfigOptions.model_validate({**given, field: value}))
        if field == "counts":
            self.query_one("#counts-field", FormField).set_note(self._counts_note())
        if field == "gpus_per_node":
            self.query_one("#per-node-field", FormField).set_note(self._per_node_note())
        self.ask()

    def ready(self) -> tuple[bool, str]:
        bad = [f for f in self.query(FormField) if f.has_class("-invalid")]
        if bad:
            return False, f"fix {bad[0].label} first"
        if self._budget() is None:
            return True, "no token budget: Next skips the sweep"
        if self.query_one("#compute-error").display:
            return True, "no sweep for these answers"
        return True, "" if self.shown else "sweeping…"
