"""The configurations step's Pipeline view: stages on their own GPUs, and how to split them.

A staged workload (N GPUs run a frozen target's forward pass and feed M GPUs that train
a drafter; RL rollouts feed a trainer) runs at its slowest stage's pace. The user types
each stage's GPU, count, measured rate and power (or resumes answers carrying a
[pipeline]); the spec goes into the answers (`WizardState.pipeline`), the app runs the
engine, and this view shows the Report's `pipeline`: each stage's rate and its source,
the bottleneck, which side starves, the split as given, its neighbours (7+1 vs 6+1 vs
5+1) and the best splits of the box. An export writes the same [pipeline].
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.message import Message
from textual.widgets import Button, DataTable, Input, Static

from advisor.core import InputError, PipelineSpec, clean_block
from advisor.present.blocks import Col
from advisor.present.configs import neighbour_tables
from advisor.present.humanize import duration, number
from advisor.tui.fields import any_field_def
from advisor.tui.state import Context
from advisor.tui.widgets.blocks import BlockTable, Styler

if TYPE_CHECKING:
    from advisor.core import PipelineBalance, PipelineReport, Report, StageSpec


def parse_budget(text: str) -> float | None:
    value: float | None = any_field_def("token_budget").parse(text)
    return value

STAGE_COLUMNS = (("name", "stage"), ("gpu", "catalog GPU"), ("gpus", "GPUs"),
                 ("rate", "stage /s"), ("active", "active W"), ("idle", "idle W"))
"""The stages table's inputs: (key in the input id, header)."""
STAGE_ROWS = 2
EXAMPLE_GPU = "rtx-pro-6000-bw-server"
EXAMPLE: dict[str, Any] = {
    "stages": [("targets", 7), ("drafter", 1)], "rate": "0.74", "active": "587.5",
    "idle": "60", "tpu": "46891.9", "budget": "11.196B", "box": "8", "vary": "targets"}
"""The published 7+1 drafter case (examples/configs_pipeline.toml): 7 GPUs run a frozen
27B target and feed 1 drafter GPU; both sides at 0.74 batches/s, 34.7K tokens/s."""
INTRO = ("A workload made of stages on their own GPUs (producers feeding a trainer) runs at "
         "its slowest stage. Give each stage's measured rate (work units/s, the whole stage at "
         "its GPU count) and draw, e.g. the "
         "published drafter case: 7 target GPUs + 1 drafter, 0.74 batches/s each side, "
         "46,892 tokens per batch, 587.5 W busy, 60 W idle, in a box of 8 "
         "(the Example button fills it in).")
BAR = 20
_UNSET = object()
NARROW_WIDTH = 110
NARROW_STAGE_COLUMNS = (0, 1, 2, 3, 5, 7, 9)
"""stage, GPU, GPUs, K tokens/s/GPU, rate, util, state."""
"""Widest bar of the neighbours chart, in cells."""


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.12g}"


def _parse(label: str, text: str, kind: type[int] | type[float]) -> Any:
    text = text.strip()
    if not text:
        return None
    try:
        return kind(text)
    except ValueError:
        raise ValueError(f"{label}: {text!r} is not a{'n integer' if kind is int else ' number'}") \
            from None


def stage_fields(stage: StageSpec | None) -> dict[str, str]:
    """One stage's inputs as text; a rate that is not in units/s (tokens/s, a workload to
    project, FLOPs at an MFU) is left blank and kept as loaded."""
    if stage is None:
        return {key: "" for key, _ in STAGE_COLUMNS}
    return {"name": stage.name, "gpu": stage.gpu, "gpus": str(stage.gpus),
            "rate": _num(stage.measured_units_per_s), "active": _num(stage.active_w),
            "idle": _num(stage.idle_w)}


def spec_from_form(stages: list[dict[str, str]], tpu: str, budget: str, box: str, vary: str,
                   base: PipelineSpec | None = None) -> PipelineSpec | None:
    """The spec the form describes, None when it is empty; ValueError or ValidationError
    when it is incomplete. What the form has no field for (unit, span, source, a stage's
    projected rate) is kept from `base`, the spec the form was filled from."""
    if not any(v.strip() for row in stages for v in row.values()) and not tpu.strip():
        return None
    specs = []
    for i, row in enumerate(stages):
        if not any(v.strip() for v in row.values()):
            continue
        name = row["name"].strip() or f"stage {i + 1}"
        old = base.stages[i].model_dump() if base and i < len(base.stages) else {}
        rate = _parse(f"{name} units/s", row["rate"], float)
        if rate is not None or not old:
            for key in ("measured_tokens_per_s", "workload", "flops_per_token", "mfu",
                        "peak_tflops", "hop_s_per_unit"):
                old.pop(key, None)
            old["measured_units_per_s"] = rate
        if rate is None and not old.get("measured_tokens_per_s") and not old.get("workload") \
                and not old.get("flops_per_token"):
            raise ValueError(f"{name}: give its measured rate in units/s")
        specs.append({**old, "name": name, "gpu": row["gpu"].strip(),
                      "gpus": _parse(f"{name} GPUs", row["gpus"], int),
                      "active_w": _parse(f"{name} active W", row["active"], float),
                      "idle_w": _parse(f"{name} idle W", row["idle"], float)})
    keep = base.model_dump(exclude={"stages", "tokens_per_unit", "token_budget", "box_gpus",
                                    "vary"}) if base else {}
    return PipelineSpec.model_validate({
        **keep, "stages": specs, "tokens_per_unit": _parse("tokens per unit", tpu, float),
        "token_budget": parse_budget(budget) if budget.strip() else None,
        "box_gpus": _parse("box GPUs", box, int), "vary": vary.strip() or None})


def error_line(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        msg = str(err["msg"]).removeprefix("Value error, ")
        return f"{where}: {msg}" if where else msg
    if isinstance(exc, InputError):
        return exc.one_line()
    return str(exc)


def split_label(b: PipelineBalance) -> str:
    return "+".join(str(n) for n in b.split)


def head_text(r: PipelineReport) -> str:
    """The split as given (markup): throughput, wall-clock, power band, bottleneck, queues."""
    now = r.current
    eta = f", [b]{duration(now.eta_days * 24)}[/b]" if now.eta_days else ""
    where = f" [dim]({escape(r.source)})[/]" if r.source else ""
    neck = "[b $success]none: balanced[/]" if now.balanced \
        else f"[b $warning]{escape(now.bottleneck)}[/]"
    return (f"[b]Now {split_label(now)}[/b] in a box of {r.box_gpus} GPUs: "
            f"[b]{now.tokens_per_s / 1e3:,.1f}K tokens/s[/b] "
            f"({now.units_per_s:.3g} {escape(r.unit)}/s)"
            f"{eta}, {now.power_kw_low:.2f}-{now.power_kw_high:.2f} kW{where}\n"
            f"Bottleneck: {neck}. Queues: {escape(now.queue)}")


def stage_rows(r: PipelineReport) -> list[list[str | Text]]:
    """Each stage: its rate and where it comes from, its draw, and its load in the split."""
    rows: list[list[str | Text]] = []
    for s, load in zip(r.stages, r.current.stages, strict=True):
        source = Text(s.source, style="green" if s.source == "measured" else "yellow")
        label = "balanced" if r.current.balanced else load.state
        state = Text(label, style="bold" if label == "bottleneck" else
                     "yellow" if "starved" in load.state or "blocked" in load.state else "")
        numbers = [str(s.gpus), number(s.tokens_per_s_per_gpu / 1e3, 2),
                   number(s.tokens_per_s_per_gpu / r.tokens_per_unit, 3),
                   number(load.capacity * r.tokens_per_unit / 1e3, 1),
                   f"{load.utilisation:.0%}", f"{s.active_w:.0f}/{s.idle_w:.0f}"]
        rows.append([s.name, s.gpu, *(Text(n, justify="right") for n in numbers[:3]), source,
                     *(Text(n, justify="right") for n in numbers[3:]), state])
    return rows


def stage_columns(r: PipelineReport) -> tuple[str, ...]:
    return ("stage", "GPU", "GPUs", "K tokens/s/GPU", f"{r.unit}/s/GPU", "rate", "cap K tokens/s",
            "util", "W busy/idle", "state")


def _split_styler(rows: list[PipelineBalance], now: PipelineBalance) -> Styler:
    """The split as given in bold; a balanced split's bottleneck in green."""
    def style(i: int, col: Col, cell: str) -> str:
        b = rows[i]
        if col.header in ("split", "throughput"):
            return "bold" if b.split == now.split else ""
        return "green" if col.header == "bottleneck" and b.balanced else ""

    return style


def split_chart(r: PipelineReport) -> str:
    """K tokens/s of each neighbouring split as text bars (markup); the split as given marked."""
    rows = r.neighbours
    if not rows:
        return ""
    top = max(b.tokens_per_s for b in rows) or 1.0
    width = max(len(split_label(b)) for b in rows)
    lines = [f"[b]K tokens/s moving GPUs on or off {escape(r.vary)}[/b]"]
    for b in rows:
        n = max(1, round(BAR * b.tokens_per_s / top))
        now = b.split == r.current.split
        colour = "$success" if b.balanced else "$warning" if now else "$primary"
        lines.append(f"{split_label(b):>{width}} [{colour}]{'█' * n}[/]{' ' * (BAR - n)} "
                     f"{b.tokens_per_s / 1e3:5.1f}{' ◀ now' if now else ''}")
    return "\n".join(lines)


def notes_text(r: PipelineReport) -> str:
    lines = [f"[b]Rates[/b] [dim](1 {escape(r.unit)} = {r.tokens_per_unit:,.0f} tokens)[/]"]
    lines += [f"  • {escape(s.name)}: {escape(s.detail)}; power {escape(s.power_source)}"
              for s in r.stages]
    lines.append("[b]Assumptions[/b]")
    lines += [f"  • {escape(a)}" for a in r.assumptions]
    return "\n".join(lines)


class PipelinePanel(Vertical):
    """The stages form and the balance the Report holds; writes the spec into the answers."""

    DEFAULT_CSS = """
    PipelinePanel {
        height: 1fr;
        overflow-y: auto;
    }
    #pl-intro {
        height: auto;
        color: $text-muted;
    }
    #pl-form {
        height: auto;
        margin-top: 1;
    }
    #pl-grid {
        grid-size: 6;
        grid-columns: 12 22 5 8 8 7;
        grid-gutter: 0 1;
        grid-rows: 1;
        width: 67;
        height: auto;
    }
    #pl-totals {
        grid-size: 2;
        grid-columns: 15 14;
        grid-gutter: 0 1;
        grid-rows: 1;
        width: 30;
        height: auto;
        margin-left: 2;
    }
    #pl-example {
        margin-left: 2;
        min-width: 9;
    }
    #pl-status {
        height: auto;
        margin-top: 1;
    }
    #pl-result {
        height: auto;
        margin-top: 1;
    }
    #pl-result Static, #pl-result DataTable, #pl-splits {
        height: auto;
    }
    #pl-head, #pl-best-title, #pl-notes, #pl-stages, #pl-splits {
        margin-top: 1;
    }
    #pl-splits {
        layout: vertical;
    }
    #pl-chart {
        margin-bottom: 1;
    }
    PipelinePanel.-narrow #pl-form {
        layout: vertical;
    }
    PipelinePanel.-narrow #pl-totals {
        margin-left: 0;
        grid-size: 4;
        grid-columns: 15 14 15 14;
        width: 64;
    }
    PipelinePanel.-narrow #pl-example {
        margin: 1 0 0 0;
    }
    """

    class Changed(Message):
        """The spec in the answers changed: the report must be made again."""

    def __init__(self, ctx: Context, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ctx = ctx
        self.state = ctx.state
        self._base = ctx.state.pipeline
        """The spec the form was filled from: kept as is until the user edits a field."""
        self._initial: dict[str, str] = {}
        self._asked: object = _UNSET
        self.report: PipelineReport | None = None

    def _fields(self) -> dict[str, str]:
        base = self._base
        values: dict[str, str] = {}
        rows = max(STAGE_ROWS, len(base.stages) if base else 0)
        for i in range(rows):
            stage = base.stages[i] if base and i < len(base.stages) else None
            for key, text in stage_fields(stage).items():
                values[f"pl-{i}-{key}"] = text
        values.update({
            "pl-tpu": _num(base.tokens_per_unit) if base else "",
            "pl-budget": _num(base.token_budget) if base else "",
            "pl-box": str(base.box_gpus) if base and base.box_gpus else "",
            "pl-vary": base.vary or "" if base else ""})
        return values

    def compose(self) -> ComposeResult:
        values = self._fields()
        self._initial = values
        rows = sum(1 for k in values if k.endswith("-name"))
        yield Static(INTRO, id="pl-intro", classes="prompt")
        with Horizontal(id="pl-form"):
            with Grid(id="pl-grid"):
                for _, header in STAGE_COLUMNS:
                    yield Static(f"[b]{header}[/b]", classes="pl-header")
                for i in range(rows):
                    for key, _ in STAGE_COLUMNS:
                        yield Input(values[f"pl-{i}-{key}"], id=f"pl-{i}-{key}", compact=True,
                                    classes=f"pl-{key}")
            with Grid(id="pl-totals"):
                for key, label, hint in (("tpu", "tokens per unit", "e.g. 46891.9"),
                                         ("budget", "token budget", "e.g. 11.2B"),
                                         ("box", "box GPUs", "default: the stages' sum"),
                                         ("vary", "stage to vary", "default: the first")):
                    yield Static(label, classes="pl-label")
                    yield Input(values[f"pl-{key}"], id=f"pl-{key}", compact=True,
                                placeholder=hint)
            yield Button("Example", id="pl-example", compact=True)
        yield Static("", id="pl-status", markup=True)
        with VerticalScroll(id="pl-result"):
            yield Static("", id="pl-head", markup=True)
            yield DataTable(id="pl-stages", cursor_type="none", zebra_stripes=True)
            with Horizontal(id="pl-splits"):
                yield Static("", id="pl-chart", markup=True)
                yield BlockTable(id="pl-neighbours", cursor_type="none", zebra_stripes=True)
            yield Static("", id="pl-best-title", markup=True)
            yield BlockTable(id="pl-best", cursor_type="none", zebra_stripes=True)
            yield Static("", id="pl-notes", markup=True)

    def on_mount(self) -> None:
        self.set_class(self.app.size.width < NARROW_WIDTH, "-narrow")
        self.query_one("#pl-result").display = False
        self._update()

    def on_resize(self) -> None:
        self.set_class(self.app.size.width < NARROW_WIDTH, "-narrow")

    def form_spec(self) -> PipelineSpec | None:
        """The spec the form holds (ValueError / ValidationError when incomplete); the one
        it was filled from while no field has been edited."""
        values = {i.id: i.value for i in self.query(Input) if i.id}
        if values == self._initial:
            return self._base
        rows = sum(1 for k in values if k.endswith("-name"))
        stages = [{key: values[f"pl-{i}-{key}"] for key, _ in STAGE_COLUMNS}
                  for i in range(rows)]
        return spec_from_form(stages, values["pl-tpu"], values["pl-budget"], values["pl-box"],
                              values["pl-vary"], self._base)

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        self._update()

    @on(Button.Pressed, "#pl-example")
    def _example_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.fill_example()

    def fill_example(self) -> None:
        """The published 7+1 drafter case; on the current GPU if the catalog lacks its own."""
        gpu = EXAMPLE_GPU if self.ctx.catalog.match(EXAMPLE_GPU) else self.state.current or ""
        with self.prevent(Input.Changed):
            for i, (name, count) in enumerate(EXAMPLE["stages"]):
                for key, value in (("name", name), ("gpu", gpu), ("gpus", str(count)),
                                   ("rate", EXAMPLE["rate"]), ("active", EXAMPLE["active"]),
                                   ("idle", EXAMPLE["idle"])):
                    self.query_one(f"#pl-{i}-{key}", Input).value = value
            for key in ("tpu", "budget", "box", "vary"):
                self.query_one(f"#pl-{key}", Input).value = EXAMPLE[key]
        self._update()

    def _status(self, message: str) -> None:
        status = self.query_one("#pl-status", Static)
        status.display = bool(message)
        status.update(message)

    def _update(self) -> None:
        """Parse the form; a valid spec goes into the answers and is analysed in a worker."""
        try:
            spec = self.form_spec()
        except (ValueError, ValidationError) as exc:
            self._status(f"[$warning]Incomplete:[/] {escape(error_line(exc))}")
            self.query_one("#pl-result").display = False
            return
        if spec == self.state.pipeline and spec == self._asked:
            return  # each input reports once as it mounts
        self._asked = spec
        if spec != self.state.pipeline:
            self.state.set_pipeline(spec)
            self.post_message(self.Changed())
        if spec is None:
            self.report = None
            self._status("[dim]No pipeline: fill the stages above (or press Example) "
                         " to see its balance.[/]")
            self.query_one("#pl-result").display = False
            return
        self._status("[dim]balancing…[/]")

    def show_report(self, report: Report) -> None:
        """The Report made from the answers, this spec included."""
        spec = self.state.pipeline
        if spec is None or report.decision.answers.pipeline != spec:
            return
        result = report.pipeline
        if result is None:
            self._status("[b $error]No balance in the report.[/]")
            self.query_one("#pl-result").display = False
            return
        self.report = result
        self._status("")
        self.query_one("#pl-result").display = True
        self.render_report(result)

    def show_error(self, text: str) -> None:
        if self.state.pipeline is not None:
            self._status(f"[b $error]Cannot balance this pipeline:[/] {escape(text)}")
            self.query_one("#pl-result").display = False

    def render_report(self, r: PipelineReport) -> None:
        self.query_one("#pl-head", Static).update(clean_block(head_text(r)))
        narrow = self.app.size.width < NARROW_WIDTH
        self._table("#pl-stages", stage_columns(r), stage_rows(r),
                    NARROW_STAGE_COLUMNS if narrow else None)
        neighbours, best = neighbour_tables(r)
        for selector, table, rows in (("#pl-neighbours", neighbours, r.neighbours),
                                      ("#pl-best", best, r.best)):
            self.query_one(selector, BlockTable).show(
                table, [str(i) for i in range(len(rows))], _split_styler(rows, r.current))
        self.query_one("#pl-chart", Static).update(split_chart(r))
        self.query_one("#pl-best-title", Static).update(f"[b]{escape(best.title)}[/b]")
        self.query_one("#pl-notes", Static).update(clean_block(notes_text(r)))

    def _table(self, selector: str, columns: tuple[str, ...],
               rows: list[list[str | Text]], keep: tuple[int, ...] | None = None) -> None:
        """`keep`: the column indices a narrow terminal shows (the rest are in the text
        around the tables: queues in the head, rates and draw in the notes)."""
        if keep is not None:
            columns = tuple(columns[i] for i in keep)
            rows = [[row[i] for i in keep] for row in rows]
        table = self.query_one(selector, DataTable)
        table.clear(columns=True)
        table.add_columns(*columns)
        for i, cells in enumerate(rows):
            table.add_row(*cells, key=str(i))
