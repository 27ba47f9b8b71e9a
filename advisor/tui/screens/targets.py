"""Step 3: which GPUs to compare against, how many of each, what each one costs, what runs
differently on each (its own number format, KV format, TP/PP/EP, the stack it would run),
and the power terms.

A price is $/GPU-hour ("4.50", "$4.50/h") or a ratio to the current GPU's price ("3.4x");
blank keeps the catalog default, shown as a default with its source. A target's GPU count
is blank for the workload's own count. A GPU's layout ("layout" on its row) is blank for
the workload's: its row says what it runs differently.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.widgets import Button, Input, Label

from advisor.core import bounds, format_stack
from advisor.present.words import plural
from advisor.tui.fields import core_default
from advisor.tui.numbers import NumberSpec, parse_optional, parse_price, show_number
from advisor.tui.screens.base import StepScreen
from advisor.tui.screens.layout import LayoutScreen, describe_layout, workload_words
from advisor.tui.widgets.catalog_table import CatalogTable
from advisor.tui.widgets.field import FormField, Parsed, text_input

if TYPE_CHECKING:
    from advisor.tui.numbers import Price

COUNT = NumberSpec("GPU count", integer=True, low=1, high=bounds.MAX_GPUS, example="4")
ELECTRICITY = NumberSpec("electricity price", low=0, high=bounds.MAX_USD_PER_KWH,
                         suffixes=False, example="0.12")
CAP = NumberSpec("power cap", low=bounds.MIN_POWER_CAP_KW, high=bounds.MAX_POWER_CAP_KW,
                 suffixes=False, example="40")
PREMIUM = NumberSpec("time premium", low=0, high=bounds.MAX_TIME_PREMIUM * 100, suffixes=False,
                     example="10")  # in percent


def field_id(gpu_id: str) -> str:
    return gpu_id.replace(".", "_")


def show_price(entry: Price | None) -> str:
    if entry is None:
        return ""
    kind, value = entry
    return f"{value:g}x" if kind == "ratio" else f"{value:g}"


def parse_price_or_blank(text: str, allow_ratio: bool) -> Price | None:
    return parse_price(text, allow_ratio) if text.strip() else None


class PriceRow(Horizontal):
    """One GPU: its price, its GPU count (targets only) and what the price means."""

    def __init__(self, gpu_id: str, now: bool, price: str, count: str, placeholder: str,
                 gpus_default: int) -> None:
        super().__init__(classes="price-row")
        self.gpu_id = gpu_id
        self.now = now
        self._price = price
        self._count = count
        self._placeholder = placeholder
        self._gpus_default = gpus_default

    label_width = 30

    def on_mount(self) -> None:
        screen = self.screen
        if isinstance(screen, TargetsScreen):
            screen.call_after_refresh(screen.price_notes)

    def compose(self) -> ComposeResult:
        label = f"{self.gpu_id} (now)" if self.now else self.gpu_id
        gpu = Label(label, classes="price-gpu")
        gpu.styles.width = self.label_width
        yield gpu
        yield text_input(self._price, f"price-{field_id(self.gpu_id)}",
                         lambda t: parse_price_or_blank(t, not self.now),
                         placeholder=self._placeholder, name=self.gpu_id)
        if self.now:
            yield Label(f"x {self._gpus_default}", classes="price-count-now")
        else:
            yield Input(self._count, id=f"count-{field_id(self.gpu_id)}", compact=True,
                        placeholder=f"{self._gpus_default}", name=self.gpu_id,
                        validators=[Parsed(lambda t: parse_optional(t, COUNT))],
                        classes="price-count")
        yield Button("layout", name=self.gpu_id, classes="price-layout", compact=True,
                     tooltip="this GPU's own number format, KV format, TP/PP/EP, and the "
                             "stack it would run")
        yield Label("", classes="price-note", markup=True)

    def set_note(self, note: str, error: bool = False) -> None:
        self.set_class(error, "-invalid")
        for label in self.query(".price-note").results(Label):  # none while being removed
            label.update(note)


class TargetsScreen(StepScreen):
    STEP = 2
    _priced: list[str] | None = None

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(id="targets-body", can_focus=False):
            yield Label("Targets: type to search, [b]enter[/b] adds or removes the highlighted "
                        "row.", classes="prompt")
            yield CatalogTable(self.ctx.catalog, mark=self._mark, mark_title="✓",
                               on_select=self._toggle)
            yield Label("[b]$/GPU-hour[/b] blank: the catalog default · [b]3.4x[/b]: times "
                        "the current GPU's price · [b]GPUs[/b] blank: the workload's count",
                        classes="prompt", id="prices-title")
            yield Vertical(id="prices")
            with Vertical(id="power"):
                yield FormField("$/kWh", text_input(
                    show_number(self.state.electricity_usd_per_kwh), "electricity",
                    lambda t: parse_optional(t, ELECTRICITY),
                    placeholder=f"{core_default_electricity():g} (default)"),
                    note=self._electricity_note(), id="f-electricity")
                yield FormField("power cap kW", text_input(
                    show_number(self.state.power_cap_kw), "power-cap",
                    lambda t: parse_optional(t, CAP), placeholder="none"),
                    note="[dim]optional rack limit: counts the GPUs and their hosts[/]",
                    id="f-cap")
                yield FormField("time premium %", text_input(
                    show_number(None if self.state.time_premium is None
                                else self.state.time_premium * 100), "premium",
                    lambda t: parse_optional(t, PREMIUM),
                    placeholder=f"{core_time_premium() * 100:g} (default)"),
                    note=self._premium_note(), id="f-premium")

    def mounted(self) -> None:
        self._rebuild_prices()
        self.query_one("#gpus").focus()

    def refresh_view(self) -> None:
        """The current GPU may have changed on Welcome: marks and price rows follow."""
        self.query_one(CatalogTable).refresh_marks()
        self._rebuild_prices()
        self.price_notes()
        super().refresh_view()

    def _mark(self, gpu_id: str) -> str:
        if gpu_id == self.state.current:
            return "now"
        return "✓" if gpu_id in self.state.targets else ""

    # -- notes ------------------------------------------------------------------------

    def _price_note(self, gpu_id: str) -> tuple[str, bool]:
        """What the price used will be, and where it comes from."""
        catalog = self.ctx.catalog
        entry = self.state.quotes.get(gpu_id)
        if entry is not None:
            kind, value = entry
            if kind == "usd":
                return "your quote", False
            base = self.state.current_price(catalog)
            if base is None:
                return f"✘ {self.state.current} has no price to multiply: quote it", True
            return (f"= ${value * base:,.2f}/h ({value:g} x {self.state.current}'s "
                    f"${base:,.2f})"), False
        price = catalog.default_price(gpu_id)
        if price is None:
            return "[$warning]no default price: quote one[/]", False
        return f"[$warning]default[/] [dim]{escape(price.label)}[/]", False

    def price_notes(self) -> None:
        for row in self.query(PriceRow):
            if any(w.endswith(f" of {row.gpu_id}") for w in self.state.invalid):
                continue  # showing what is refused
            found = row.query(f"#price-{field_id(row.gpu_id)}").results(Input)
            price = next(found, None)
            if price is None or not price.is_valid:  # not composed yet, or showing an error
                continue
            note, error = self._price_note(row.gpu_id)
            count = self.state.counts.get(row.gpu_id)
            own = describe_layout(dict(self.state.layouts.get(row.gpu_id, {})), self.mode)
            stack = self.state.stacks.get(row.gpu_id)
            if stack is not None:
                own = ", ".join(x for x in (own, f"runs {format_stack(stack)}") if x)
            if own:
                note = f"[b]{escape(own)}[/b]; {note}"
            if count is not None:
                note = f"{plural(count, 'GPU')}; {note}"
            row.set_note(note, error)

    def _electricity_note(self) -> str:
        if self.state.electricity_usd_per_kwh is None:
            return "[$warning]default[/] [dim](advisor's)[/]"
        return "your price"

    def _premium_note(self) -> str:
        text = "[dim]extra $/token worth paying to finish sooner[/]"
        if self.state.time_premium is None:
            return f"[$warning]default[/] {text}"
        return text

    def _rebuild_prices(self) -> None:
        """One price row per GPU to price; rebuilt only when that list changes."""
        gpus = self.state.gpus()
        if gpus == self._priced:
            return
        self._priced = gpus
        box = self.query_one("#prices", Vertical)
        box.remove_children()
        catalog = self.ctx.catalog
        gpus_default = int(self.state.given.get("gpus", core_default("gpus")))
        rows = []
        for gpu_id in gpus:
            default = catalog.default_price(gpu_id)
            count = self.state.counts.get(gpu_id)
            rows.append(PriceRow(
                gpu_id, gpu_id == self.state.current, show_price(self.state.quotes.get(gpu_id)),
                "" if count is None else str(count),
                f"{default.usd_per_hour:.2f}" if default else "quote", gpus_default))
        width = max([len(g) for g in gpus] + [8]) + 7
        for row in rows:
            row.label_width = width
        box.mount_all(rows)
        self.call_after_refresh(self.price_notes)

    @property
    def mode(self) -> str:
        return str(self.state.given.get("mode", core_default("mode")))

    # -- events -----------------------------------------------------------------------

    @on(Button.Pressed, ".price-layout")
    def _edit_layout(self, event: Button.Pressed) -> None:
        gpu_id = event.button.name
        assert gpu_id is not None

        def done(given: dict[str, Any] | None) -> None:
            if given is None:
                return
            stack = given.pop("stack", None)
            self.state.set_own(gpu_id, given, stack)
            self.price_notes()
            self.refresh_nav()

        own = self.state.stacks.get(gpu_id)
        self.app.push_screen(LayoutScreen(
            gpu_id, self.mode, dict(self.state.layouts.get(gpu_id, {})),
            workload_words(dict(self.state.given), self.mode),
            current=gpu_id == self.state.current,
            stack=format_stack(own) if own else ""), done)

    def _toggle(self, gpu_id: str) -> None:
        if gpu_id == self.state.current:
            self.notify("That is the current GPU; pick a different one to compare against.",
                        severity="warning")
            return
        self.state.toggle_target(gpu_id)
        self.query_one(CatalogTable).refresh_marks()
        self._rebuild_prices()
        self.refresh_nav()

    def _row_of(self, widget: Input) -> PriceRow:
        row = widget.parent
        assert isinstance(row, PriceRow)
        return row

    @on(Input.Changed, "#prices Input")
    def _price_typed(self, event: Input.Changed) -> None:
        gpu_id = event.input.name
        assert gpu_id is not None
        row = self._row_of(event.input)
        result = event.validation_result
        what = "GPU count" if (event.input.id or "").startswith("count-") else "price"
        where = f"the {what} of {gpu_id}"
        if result is not None and not result.is_valid:
            self.state.set_invalid(where, result.failure_descriptions[0])
            errors = [m for w, m in self.state.invalid.items() if w.endswith(f" of {gpu_id}")]
            row.set_note("  ".join(f"✘ {m}" for m in errors), True)
            self.refresh_nav()
            return
        self.state.set_invalid(where, None)
        others = [m for w, m in self.state.invalid.items() if w.endswith(f" of {gpu_id}")]
        if others:  # the row's other field is still refused
            row.set_note("  ".join(f"✘ {m}" for m in others), True)
        if event.input.id and event.input.id.startswith("count-"):
            count = parse_optional(event.value, COUNT)
            self.state.set_count(gpu_id, None if count is None else int(count))
        else:
            self.state.set_quote(gpu_id, parse_price_or_blank(event.value,
                                                              gpu_id != self.state.current))
        self.price_notes()
        self.refresh_nav()

    def _valid(self, event: Input.Changed, where: str) -> bool:
        result = event.validation_result
        if result is not None and not result.is_valid:
            self.state.set_invalid(where, result.failure_descriptions[0])
            return False
        self.state.set_invalid(where, None)
        return True

    @on(Input.Changed, "#electricity")
    def _electricity(self, event: Input.Changed) -> None:
        if self._valid(event, "the electricity price"):
            self.state.set_electricity(parse_optional(event.value, ELECTRICITY))
        self.query_one("#f-electricity", FormField).set_note(self._electricity_note())
        self.refresh_nav()

    @on(Input.Changed, "#power-cap")
    def _power_cap(self, event: Input.Changed) -> None:
        if self._valid(event, "the power cap"):
            self.state.set_power_cap(parse_optional(event.value, CAP))
        self.refresh_nav()

    @on(Input.Changed, "#premium")
    def _premium(self, event: Input.Changed) -> None:
        if self._valid(event, "the time premium"):
            value = parse_optional(event.value, PREMIUM)
            self.state.set_time_premium(None if value is None else value / 100)
        self.query_one("#f-premium", FormField).set_note(self._premium_note())
        self.refresh_nav()

    def ready(self) -> tuple[bool, str]:
        if not self.state.targets:
            return False, "add at least one target GPU"
        invalid = [i for i in self.query(Input) if i.id != "search" and not i.is_valid]
        if invalid:
            where = next(iter(self.state.invalid), None)
            what = invalid[0].name or invalid[0].id or "a field"
            return False, f"fix {where} first" if where else f"fix the value for {what} first"
        unpriced = [g for g in self.state.gpus()
                    if g not in self.state.quotes and self.ctx.catalog.default_price(g) is None]
        if unpriced:
            return True, f"no $/token without a price: {', '.join(unpriced)}"
        try:
            self.state.resolved_prices(self.ctx.catalog)
        except ValueError as exc:
            return False, str(exc)
        n = len(self.state.targets)
        return True, f"{n} target{'s' if n > 1 else ''}: {', '.join(self.state.target_specs())}"


def core_default_electricity() -> float:
    from advisor.core import DEFAULT_ELECTRICITY_USD_PER_KWH

    return float(DEFAULT_ELECTRICITY_USD_PER_KWH)


def core_time_premium() -> float:
    from advisor.core import Answers

    return float(Answers.model_fields["time_premium"].default)


__all__ = ["Any", "TargetsScreen"]
