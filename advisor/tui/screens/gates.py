"""Steps 4 and 5: the dtype and software gates, one shared layout, both read off the Report.

A table with one row per GPU and the full story of the highlighted one below. A target
that fails a gate is not dropped: it stays in the decision, blocked, and its row says why
and what would unblock it (the verdict's own remedy). The software step also takes the
stack the job runs on, which on a CPU-only box is not this box's.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.widget import Widget
from textual.widgets import DataTable, Input, Static

from advisor.core import clean, clean_block, format_stack, parse_stack
from advisor.present.verdict import encoding_caveats, flip_text, reason_text
from advisor.tui.render import format_text
from advisor.tui.screens.base import NARROW, ReportScreen
from advisor.tui.widgets.field import FormField, Parsed

if TYPE_CHECKING:
    from advisor.core import Catalog, GpuResult, Report, Stack

# Each state has its own word and mark, so nothing depends on colour alone.
MARK = {"pass": ("✔ pass", "success"), "beta": ("◐ beta", "warning"),
        "unverified": ("? unverified", "warning"),
        "fail": ("✘ blocked", "error"), "none": ("– not checked", "foreground-muted")}
FINDING = {"ok": ("✔ GA", "$success"), "beta": ("◐ beta", "$warning"),
           "upgrade": ("✘ upgrade", "$error"), "switch": ("✘ other stack", "$error"),
           "unsupported": ("✘ unsupported", "$error"), "unknown": ("? not checked", "$warning")}


def remedy(r: GpuResult) -> list[str]:
    """The verdict's own reason and remedy for a blocked target (markup lines)."""
    v = r.verdict
    if v is None or v.kind != "blocked-by-gate":
        return []
    lines = ["[b $error]stays in the decision, BLOCKED[/] (the verdict shows it with this "
             "reason)"]
    lines += [f"[b]remedy:[/b] {escape(flip_text(f, r.gpu))}" for f in v.flips]
    return lines


class GateScreen(ReportScreen):
    FIX_HINT = "Go back (esc) and change the answers."
    own_stacks: Mapping[str, Stack] = MappingProxyType({})
    """A target's own stack in the answers of the report drawn (set on Targets)."""

    def verdict_of(self, r: GpuResult) -> str:
        raise NotImplementedError

    def summary_of(self, r: GpuResult) -> str:
        raise NotImplementedError

    def details_of(self, r: GpuResult) -> list[str]:
        raise NotImplementedError

    def question(self) -> str:
        raise NotImplementedError

    def compose_inputs(self) -> ComposeResult:
        yield Static(self.question(), classes="prompt", markup=True, id="gate-question")
        yield from self.compose_extra()

    def compose_result(self) -> ComposeResult:
        yield DataTable(cursor_type="row", id="gate")
        with VerticalScroll(id="details"):
            yield Static("", id="detail-text", markup=True)

    def compose_extra(self) -> ComposeResult:
        yield from ()

    def mounted(self) -> None:
        self.first_focus().focus()
        super().mounted()

    def first_focus(self) -> Widget:
        return self.query_one("#gate", DataTable)

    def refresh_view(self) -> None:
        self.query_one("#gate-question", Static).update(self.question())
        super().refresh_view()

    def render_result(self, report: Report) -> None:
        d = report.decision
        self.rows = {r.gpu: r for r in (d.current, *d.targets)}
        self.own_stacks = d.answers.stacks
        table = self.query_one("#gate", DataTable)
        keep = table.cursor_row
        table.clear(columns=True)
        # Narrow: the arch is left to the details below, so the why column keeps its words.
        narrow = self.size.width < NARROW
        gpu_w = max(len(f"{r.gpu} (now)") for r in self.rows.values())
        arch_w = 0 if narrow else max(len(r.dtype_gate.arch) for r in self.rows.values())
        columns = 3 if narrow else 4
        fixed = gpu_w + arch_w + 13 + columns * 2 + 2  # cells, their padding, the scrollbar
        table.add_column("GPU", width=gpu_w)
        if not narrow:
            table.add_column("arch", width=arch_w)
        table.add_column("result", width=13)
        table.add_column("why", width=max(20, self.size.width - 2 - fixed))
        colours = self.app.theme_variables
        for r in self.rows.values():
            word, colour = MARK[self.verdict_of(r)]
            cells = [Text(f"{r.gpu} (now)" if r.role == "current" else r.gpu),
                     Text(r.dtype_gate.arch),
                     Text(word, style=f"bold {colours.get(colour, '')}"),
                     Text(clean(self.summary_of(r)))]
            if narrow:
                del cells[1]
            table.add_row(*cells, key=r.gpu, height=None)
        if table.row_count:
            table.move_cursor(row=min(keep, table.row_count - 1))
            self._show(list(self.rows)[table.cursor_row])

    @on(DataTable.RowHighlighted, "#gate")
    def _highlight(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None and event.row_key.value in self.rows:
            self._show(event.row_key.value)

    def _show(self, gpu_id: str) -> None:
        r = self.rows[gpu_id]
        word, colour = MARK[self.verdict_of(r)]
        lines = [f"[b]{r.gpu}[/b] ({r.dtype_gate.arch}) [b ${colour}]{word}[/]",
                 *self.details_of(r)]
        if r.role == "current" and self.verdict_of(r) == "fail":
            lines.append("[$warning]this is the GPU you run on today: the recipe or the stack "
                         "needs a look[/]")
        lines += remedy(r) if self.verdict_of(r) == "fail" else []
        self.query_one("#detail-text", Static).update(clean_block("\n".join(lines)))

    def ready(self) -> tuple[bool, str]:
        ok, hint = super().ready()
        if not ok:
            return ok, hint
        report = self.drawn_report
        if report is None:
            return False, "judging…"
        blocked = [t.gpu for t in report.decision.targets if self.verdict_of(t) == "fail"]
        unchecked = [t.gpu for t in report.decision.targets if self.verdict_of(t) == "none"]
        if unchecked and len(unchecked) == len(report.decision.targets):
            return True, "not checked: no stack declared, so the software gate is skipped"
        if blocked and len(blocked) == len(report.decision.targets):
            return True, "every target is blocked here: the verdict will say so, with the fix"
        if blocked:
            return True, f"blocked here, kept in the verdict: {', '.join(blocked)}"
        if unchecked:
            return True, f"not checked (no stack): {', '.join(unchecked)}"
        return True, "every target passes"


class DtypeScreen(GateScreen):
    STEP = 3

    def precision(self) -> str:
        from advisor.tui.fields import core_default

        return str(self.state.given.get("precision", core_default("precision")))

    def question(self) -> str:
        own = {g: v["precision"] for g, v in self.state.layout_data().items()
               if "precision" in v}
        sides = "".join(f", [b]{escape(p)}[/b] on {escape(g)}" for g, p in own.items())
        return (f"Can each GPU execute its number format in hardware ([b]{self.precision()}"
                f"[/b]{sides})? A missing format makes a GPU incapable, not slow; a GPU's own "
                "format is set with its layout on Targets.")

    def verdict_of(self, r: GpuResult) -> str:
        return "pass" if r.dtype_gate.passed else "fail"

    def summary_of(self, r: GpuResult) -> str:
        g = r.dtype_gate
        text = g.reason if g.passed else f"missing {', '.join(g.missing)}"
        return f"{g.precision}: {text}" + (" (caveat below)" if g.caveats else "")

    def details_of(self, r: GpuResult) -> list[str]:
        return format_lines(r, self.drawn_report)


def format_lines(r: GpuResult, report: Report | None) -> list[str]:
    """A GPU's number format, why it can or cannot run it, its encoding caveats, and for a
    target what the switch from the current GPU's format costs (the verdict's own reason)."""
    g = r.dtype_gate
    lines = [f"runs [b]{escape(format_text(r))}[/b]", escape(g.reason)]
    if g.required:
        lines.append(f"needs any of: {', '.join(g.required)}")
    lines += [f"[$warning]caveat[/]: {escape(c)}" for c in g.caveats]
    if report is not None and r.role == "target":
        lines += [f"[$warning]caveat[/]: {escape(c)}"
                  for c in encoding_caveats(report.decision.current, r)[len(g.caveats):]]
        v = r.verdict
        lines += [f"[b]format switch[/b]: {escape(reason_text(x))}"
                  for x in (v.reasons if v else []) if x.kind == "format"]
    return lines


EXAMPLE_STACKS = {"AMD": "torch==2.7.1+rocm6.4 (add the kernels your job needs)",
                  "NVIDIA": "torch==2.7.1+cu128 flash-attn==2.8.3"}
"""A placeholder in the current GPU's vendor's words: a CUDA build is no example on AMD."""


def example_stack(catalog: Catalog, current: str | None) -> str:
    vendor = catalog.gpu(current).vendor if current else "NVIDIA"
    return EXAMPLE_STACKS.get(vendor, "torch==<version> (and the kernels your job needs)")


class SoftwareScreen(GateScreen):
    STEP = 4

    def question(self) -> str:
        return ("Does the job's stack (or a target's own, given with its layout on Targets) "
                "support each GPU? [b]✔ GA[/b] is supported, [b]◐ beta[/b] runs without a "
                "vendor promise, [b]✘[/b] needs the fix shown, [b]?[/b] has no support data "
                "(not a pass).")

    def verdict_of(self, r: GpuResult) -> str:
        g = r.software_gate
        if g is None:
            return "none"
        return {"ok": "pass", "beta": "beta", "unverified": "unverified",
                "blocked": "fail"}[g.status]

    def summary_of(self, r: GpuResult) -> str:
        g = r.software_gate
        return "no stack declared: type the job's stack above" if g is None else g.summary

    def details_of(self, r: GpuResult) -> list[str]:
        g = r.software_gate
        if g is None:
            return ["[$warning]not checked[/]: no stack is declared, so the software gate is "
                    + escape("skipped (as `advisor decide` does for answers without [stack])")]
        own = self.own_stacks.get(r.gpu)
        lines = [escape(g.summary)]
        if own is not None:
            lines.append(f"[b]checked against its own stack[/b] (set with its layout on "
                         f"Targets): {escape(format_stack(own))}")
        for f in g.findings:
            word, colour = FINDING[f.status]
            lines.append(f"[b {colour}]{word:<13}[/] [b]{escape(f.package)}[/b]: "
                         f"{escape(f.message)}")
            if f.action:
                lines.append(f"{'':>14}[b]fix:[/b] {escape(f.action)}")
        stack = own if own is not None else self.state.job_stack(self.ctx.hardware)
        if stack is not None:
            unchecked = [p for p in stack.packages if p not in stack.needs]
            if unchecked:
                lines.append(f"[$warning]not checked[/] (detected, not declared as needed): "
                             f"{escape(', '.join(unchecked))}")
        return lines

    def _stack_note(self) -> str:
        if self.state.stack is not None:
            return "declared by you: every package listed is checked"
        if self.state.job_stack(self.ctx.hardware) is None and self.ctx.hardware.has_gpu:
            return "[$warning]no stack: the gate is skipped[/]; type the job's stack"
        if self.ctx.hardware.has_gpu:
            return "[$warning]detected on this box[/]; edit if the job runs elsewhere"
        return ("[$warning]this box has no GPU: no stack, the gate is skipped[/]; type the "
                "stack your GPU job uses")

    def compose_extra(self) -> ComposeResult:
        stack = self.state.job_stack(self.ctx.hardware)
        yield FormField("job's stack", Input(
            format_stack(stack) if stack else "", id="stack", compact=True,
            placeholder=example_stack(self.ctx.catalog, self.state.current),
            validators=[Parsed(lambda t: parse_stack(t) if t.strip() else None)]),
            note=self._stack_note(), id="stack-field")

    def refresh_view(self) -> None:
        """The current GPU may have changed vendor since the placeholder was written."""
        self.query_one("#stack", Input).placeholder = example_stack(self.ctx.catalog,
                                                                    self.state.current)
        super().refresh_view()

    def first_focus(self) -> Widget:
        if self.state.job_stack(self.ctx.hardware) is None:
            return self.query_one("#stack", Input)
        return super().first_focus()

    @on(Input.Changed, "#stack")
    def _declare(self, event: Input.Changed) -> None:
        if not (event.validation_result and event.validation_result.is_valid):
            self.refresh_nav()
            return
        hardware = self.ctx.hardware
        detected = hardware.stack if hardware.has_gpu else None
        stack = parse_stack(event.value) if event.value.strip() else None
        if stack is None:  # cleared: no stack, the gate is skipped
            new, box = None, False
        elif detected is not None and format_stack(detected) == format_stack(stack):
            new, box = None, True  # this box's, as detected
        else:
            new, box = stack, self.state.box_stack
        if (new, box) != (self.state.stack, self.state.box_stack):
            self.state.declare_stack(new, box)
            self.query_one("#stack-field", FormField).set_note(self._stack_note())
            self.ask()
        self.refresh_nav()

    def ready(self) -> tuple[bool, str]:
        if self.query_one("#stack-field", FormField).has_class("-invalid"):
            return False, "fix the stack first (package==version, torch included)"
        return super().ready()


__all__ = ["ClassVar", "DtypeScreen", "SoftwareScreen"]
