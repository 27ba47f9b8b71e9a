"""Run both gates for the wizard and decide which targets go on.

No widgets here (only markup escaping): the gate screens show these rows, and the app calls
`apply_gates` before every step after Targets so a jump through the command
palette never skips an exclusion.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from textual.markup import escape as esc

from advisor.core.gates.dtype import check_dtype
from advisor.core.gates.software import SoftwareGate, check_software
from advisor.core.model.stack import Stack
from advisor.tui.forms import FORM_DEFAULTS
from advisor.tui.state import Context

Verdict = Literal["pass", "beta", "fail"]
GateName = Literal["dtype", "software"]


@dataclass(frozen=True)
class GateRow:
    gpu: str
    now: bool
    arch: str
    verdict: Verdict
    summary: str
    details: tuple[str, ...]
    """Markup lines shown for the highlighted GPU (core text already escaped)."""


def stack_of(ctx: Context) -> Stack:
    """The report's or this box's stack, or an empty one so the gate says what is missing."""
    return ctx.state.stack or ctx.hardware.stack or Stack(source="declared", packages={})


def precision_of(ctx: Context) -> str:
    return str(ctx.state.workload.get("precision", FORM_DEFAULTS["precision"]))


def dtype_rows(ctx: Context) -> list[GateRow]:
    rows = []
    precision = precision_of(ctx)
    for gpu_id in ctx.state.gpus_for_pricing():
        gpu = ctx.catalog.gpu(gpu_id)
        gate = check_dtype(gpu, ctx.catalog.arch_of(gpu), precision)
        details = [esc(gate.reason)]
        if gate.required:
            details.append(f"needs any of: {', '.join(gate.required)}")
        details += [f"[$warning]caveat[/]: {esc(c)}" for c in gate.caveats]
        rows.append(GateRow(gpu_id, gpu_id == ctx.state.current, gpu.arch,
                            "pass" if gate.passed else "fail",
                            gate.reason if gate.passed else f"missing {', '.join(gate.missing)}",
                            tuple(details)))
    return rows


def _software_details(gate: SoftwareGate) -> tuple[str, ...]:
    lines = [esc(gate.summary)]
    for f in gate.findings:
        colour = {"ok": "$success", "beta": "$warning"}.get(f.status, "$error")
        lines.append(f"[{colour}]{f.status:>11}[/]  {esc(f.message)}")
        if f.action:
            lines.append(f"{'':>13}[b]fix:[/b] {esc(f.action)}")
    return tuple(lines)


def software_rows(ctx: Context) -> list[GateRow]:
    """Only GPUs that passed the dtype gate: a GPU that cannot run the recipe needs no upgrade."""
    stack = stack_of(ctx)
    rows = []
    dtype_out = {r.gpu for r in dtype_rows(ctx) if r.verdict == "fail" and not r.now}
    for gpu_id in ctx.state.gpus_for_pricing():
        if gpu_id in dtype_out:
            continue
        gpu = ctx.catalog.gpu(gpu_id)
        gate = check_software(stack, gpu, ctx.catalog, precision=precision_of(ctx))
        verdict: Verdict = {"ok": "pass", "beta": "beta", "blocked": "fail"}[gate.status]  # type: ignore[assignment]
        rows.append(GateRow(gpu_id, gpu_id == ctx.state.current, gpu.arch, verdict,
                            gate.summary, _software_details(gate)))
    return rows


def apply_gates(ctx: Context, upto: GateName) -> None:
    """Exclude targets that fail the dtype gate and, from the software step on, that one too.

    The current GPU is never excluded: the user runs on it today, so a failure
    there is shown but means the recipe or stack needs a look, not a removal.
    """
    excluded: dict[str, str] = {}
    gates = [("dtype", dtype_rows)] + ([("software", software_rows)] if upto == "software" else [])
    for name, rows in gates:
        for row in rows(ctx):
            if row.verdict == "fail" and not row.now and row.gpu not in excluded:
                excluded[row.gpu] = f"{name} gate: {row.summary}"
    ctx.state.excluded = excluded
