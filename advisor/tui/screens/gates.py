"""Steps 4 and 5: the dtype and software gates, one shared layout.

A table with one row per GPU and the full story of the highlighted one below.
Failing targets are dropped when the user goes on; if none is left, Next is
blocked and the hint says to go back. The software step also takes the stack
the job runs on, which on a CPU-only box is not this box's.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import DataTable, Input, Static

from advisor.tui.forms import format_stack, parse_stack
from advisor.tui.gating import (
    GateName,
    GateRow,
    apply_gates,
    dtype_rows,
    precision_of,
    software_rows,
    stack_of,
)
from advisor.tui.screens.base import StepScreen
from advisor.tui.widgets.field import FormField, Parsed

PLAIN = {"pass": "✔ pass", "beta": "◐ beta", "fail": "✘ fail"}
COLOUR = {"pass": "success", "beta": "warning", "fail": "error"}
MARK = {k: f"[${COLOUR[k]}]{v}[/]" for k, v in PLAIN.items()}


class GateScreen(StepScreen):
    GATE: ClassVar[GateName]

    def rows(self) -> list[GateRow]:
        raise NotImplementedError

    def question(self) -> str:
        raise NotImplementedError

    def compose_body(self) -> ComposeResult:
        yield Static(self.question(), classes="prompt", markup=True)
        yield from self.compose_extra()
        table: DataTable[Text] = DataTable(cursor_type="row", id="gate")
        table.add_columns("GPU", "arch", "result", "why")
        yield table
        with VerticalScroll(id="details"):
            yield Static("", id="detail-text", markup=True)

    def compose_extra(self) -> ComposeResult:
        yield from ()

    def on_mount(self) -> None:
        self.refill()
        self.first_focus().focus()

    def first_focus(self) -> Widget:
        return self.query_one("#gate", DataTable)

    def refresh_view(self) -> None:
        self.query_one(".prompt", Static).update(self.question())
        self.refill()
        super().refresh_view()

    def refill(self) -> None:
        """Judge again (the answers changed) and redraw the table and the details."""
        apply_gates(self.ctx, self.GATE)
        self.gate_rows = {r.gpu: r for r in self.rows()}
        table = self.query_one("#gate", DataTable)
        table.clear()
        colours = self.app.theme_variables
        for r in self.gate_rows.values():
            verdict = Text(PLAIN[r.verdict], style=f"bold {colours[COLOUR[r.verdict]]}")
            table.add_row(Text(f"{r.gpu} (now)" if r.now else r.gpu), Text(r.arch), verdict,
                          Text(r.summary), key=r.gpu)
        self._show(next(iter(self.gate_rows)))

    @on(DataTable.RowHighlighted, "#gate")
    def _highlight(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self._show(event.row_key.value)

    def _show(self, gpu_id: str) -> None:
        row = self.gate_rows[gpu_id]
        self.query_one("#detail-text", Static).update(
            f"[b]{row.gpu}[/b] {MARK[row.verdict]}\n" + "\n".join(row.details))

    def ready(self) -> tuple[bool, str]:
        left = self.state.active_targets
        out = [g for g in self.state.targets if g not in left]
        if not left:
            return False, "no target passes: go back and change the targets or the recipe"
        if out:
            return True, f"Next drops {', '.join(out)}"
        return True, "every target passes"


class DtypeScreen(GateScreen):
    STEP = 3
    GATE = "dtype"

    def rows(self) -> list[GateRow]:
        return dtype_rows(self.ctx)

    def question(self) -> str:
        return (f"Can each GPU execute [b]{precision_of(self.ctx)}[/b] in hardware? A missing "
                "format makes a GPU incapable, not slow.")


class SoftwareScreen(GateScreen):
    STEP = 4
    GATE = "software"

    def rows(self) -> list[GateRow]:
        return software_rows(self.ctx)

    def question(self) -> str:
        return ("Does the job's stack support each GPU? [$success]pass[/] is GA, "
                "[$warning]beta[/] runs without a vendor promise, [$error]fail[/] needs the "
                "fix shown below.")

    def _stack_note(self) -> str:
        if self.state.stack is not None:
            return "declared by you (enter this box's to undo)"
        if self.ctx.hardware.has_gpu:
            return "detected on this box; edit if the job runs elsewhere"
        return "[$warning]this box has no GPU: type the stack your GPU job uses[/]"

    def compose_extra(self) -> ComposeResult:
        yield FormField("job's stack", Input(
            format_stack(stack_of(self.ctx)), id="stack", compact=True,
            placeholder="torch==2.7.1+cu128 flash-attn==2.8.3",
            validators=[Parsed(parse_stack)]), note=self._stack_note(), id="stack-field")

    def first_focus(self) -> Widget:
        if not self.ctx.hardware.has_gpu and self.state.stack is None:
            return self.query_one("#stack", Input)  # this box's CPU torch is not the job's
        return super().first_focus()

    def ready(self) -> tuple[bool, str]:
        ok, hint = super().ready()
        if not ok:
            return False, "no target passes: correct the job's stack above, or go back"
        return ok, hint

    @on(Input.Submitted, "#stack")
    @on(Input.Changed, "#stack")
    def _declare(self, event: Input.Changed | Input.Submitted) -> None:
        detected = self.ctx.hardware.stack
        try:
            stack = parse_stack(event.value)
        except ValueError:
            return
        same = detected is not None and format_stack(detected) == format_stack(stack)
        self.state.stack = None if same else stack
        self.query_one("#stack-field", FormField).set_note(self._stack_note())
        self.refill()
        self.refresh_nav()
