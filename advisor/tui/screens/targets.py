"""Step 3: which GPUs to compare against, what each one costs, and the power terms."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.validation import Number
from textual.widgets import Input, Label

from advisor.core.model.answers import DEFAULT_ELECTRICITY_USD_PER_KWH
from advisor.tui.screens.base import StepScreen
from advisor.tui.widgets.catalog_table import CatalogTable
from advisor.tui.widgets.field import FormField


def field_id(gpu_id: str) -> str:
    return "price-" + gpu_id.replace(".", "_")


class TargetsScreen(StepScreen):
    STEP = 2
    _priced: list[str] | None = None

    def compose_body(self) -> ComposeResult:
        yield Label("Targets: highlight a row; [b]enter[/b] or [b]space[/b] adds or removes it; "
                    "type to filter.", classes="prompt")
        yield CatalogTable(self.ctx.catalog, mark=self._mark, mark_title="✓")
        with Horizontal(id="money"):
            with VerticalScroll(id="prices-box", can_focus=False):
                yield Label("[b]$/GPU-hour[/b]  blank keeps the catalog default",
                            classes="prompt")
                yield Vertical(id="prices")
            with Vertical(id="power"):
                yield Label("[b]Power[/b]", classes="prompt")
                yield FormField("$/kWh", Input(
                    value=_num(self.state.electricity_usd_per_kwh),
                    placeholder=f"{DEFAULT_ELECTRICITY_USD_PER_KWH}", id="electricity",
                    type="number", compact=True, valid_empty=True,
                    validators=[Number(minimum=0, maximum=5)]),
                    note=self._electricity_note())
                yield FormField("cap kW", Input(
                    value=_num(self.state.power_cap_kw), placeholder="none", id="power-cap",
                    type="number", compact=True, valid_empty=True,
                    validators=[Number(minimum=0.1, maximum=100000)]),
                    note="optional site limit")

    def on_mount(self) -> None:
        self._rebuild_prices()
        self.query_one("#gpus").focus()

    def refresh_view(self) -> None:
        """The current GPU may have changed on Welcome: marks and price rows follow."""
        self.query_one(CatalogTable).refresh_marks()
        self._rebuild_prices()
        super().refresh_view()

    def _mark(self, gpu_id: str) -> str:
        if gpu_id == self.state.current:
            return "now"
        return "✓" if gpu_id in self.state.targets else ""

    def _price_note(self, gpu_id: str) -> str:
        if gpu_id in self.state.quotes:
            return "your quote"
        price = self.ctx.catalog.default_price(gpu_id)
        if price is None:
            return "[$warning]no default: quote a price[/]"
        return f"[$warning]default[/]: {price.label}"

    def _electricity_note(self) -> str:
        if self.state.electricity_usd_per_kwh is None:
            return "[$warning]default[/]"
        return "your price"

    def _rebuild_prices(self) -> None:
        """One price row per GPU to price; rebuilt only when that list changes (mounting
        rows is most of what a revisit costs)."""
        gpus = self.state.gpus_for_pricing()
        if gpus == self._priced:
            return
        self._priced = gpus
        box = self.query_one("#prices", Vertical)
        box.remove_children()
        rows = []
        for gpu_id in gpus:
            default = self.ctx.catalog.default_price(gpu_id)
            label = f"{gpu_id} (now)" if gpu_id == self.state.current else gpu_id
            rows.append(FormField(label, Input(
                value=_num(self.state.quotes.get(gpu_id)),
                placeholder=f"{default.usd_per_hour:.2f}" if default else "quote",
                id=field_id(gpu_id), type="number", compact=True, valid_empty=True,
                validators=[Number(minimum=0.01, maximum=200)], name=gpu_id),
                note=self._price_note(gpu_id)))
        box.mount_all(rows)

    @on(CatalogTable.Selected)
    def _toggle(self, event: CatalogTable.Selected) -> None:
        gpu_id = event.gpu_id
        if gpu_id == self.state.current:
            self.notify("That is the current GPU; pick a different one to compare against.",
                        severity="warning")
            return
        if gpu_id in self.state.targets:
            self.state.targets.remove(gpu_id)
        else:
            self.state.targets.append(gpu_id)
        self.query_one(CatalogTable).refresh_marks()
        self._rebuild_prices()
        self.refresh_nav()

    @on(Input.Changed, "#prices Input")
    def _quote(self, event: Input.Changed) -> None:
        gpu_id = event.input.name
        assert gpu_id is not None
        if event.value and event.validation_result and event.validation_result.is_valid:
            self.state.quotes[gpu_id] = float(event.value)
        else:
            self.state.quotes.pop(gpu_id, None)
        event.input.parent.set_note(self._price_note(gpu_id))  # type: ignore[union-attr]
        self.refresh_nav()

    @on(Input.Changed, "#electricity")
    def _electricity(self, event: Input.Changed) -> None:
        valid = bool(event.validation_result and event.validation_result.is_valid)
        self.state.electricity_usd_per_kwh = float(event.value) if event.value and valid else None
        self.query_one("#electricity").parent.set_note(  # type: ignore[union-attr]
            self._electricity_note())
        self.refresh_nav()

    @on(Input.Changed, "#power-cap")
    def _power_cap(self, event: Input.Changed) -> None:
        valid = bool(event.validation_result and event.validation_result.is_valid)
        self.state.power_cap_kw = float(event.value) if event.value and valid else None
        self.refresh_nav()

    def ready(self) -> tuple[bool, str]:
        if not self.state.targets:
            return False, "add at least one target GPU"
        invalid = [i.name or i.id for i in self.query(Input) if not i.is_valid]
        if invalid:
            return False, f"fix the invalid value: {invalid[0]}"
        unpriced = [g for g in self.state.gpus_for_pricing()
                    if g not in self.state.quotes and self.ctx.catalog.default_price(g) is None]
        if unpriced:
            return False, f"quote a price for {', '.join(unpriced)}"
        n = len(self.state.targets)
        return True, f"{n} target{'s' if n > 1 else ''}: {', '.join(self.state.targets)}"


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:g}"
