"""Report fields as words and figures for the wizard's screens, beside the blocks of
`advisor.present` they share with the CLI.

Every function reads structured fields of the Report; none computes a result of its own
or parses core's prose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.present.decision import gpu_price, side_by_side
from advisor.present.humanize import NA
from advisor.present.verdict import KIND_WORDS

if TYPE_CHECKING:
    from advisor.core import Decision, GpuResult

KIND = {kind: (KIND_WORDS[kind].upper(), colour) for kind, colour in (
    ("upgrade", "$success"), ("upgrade-for-time", "$accent"), ("break-even", "$primary"),
    ("hold", "$warning"), ("blocked-by-gate", "$error"), ("capability", "$success"))}
"""The verdict's badge: its kind as every output words it, and a colour."""
BUCKET_NAMES = {"dense": "dense GEMMs", "attention": "attention", "elementwise": "elementwise",
                "optimizer": "optimizer", "communication": "communication",
                "overhead": "host overhead"}
RESOURCE_NAMES = {"compute": "compute", "memory": "memory bandwidth", "network": "network",
                  "host": "host", "capacity": "memory capacity"}


def engine_name(framework: str | None) -> str:
    """What runs the workload, in the wizard's words ("vLLM", "Megatron")."""
    from advisor.tui.fields import ENGINES, FRAMEWORKS

    if framework is None:
        return NA
    return next((label for label, key in (*FRAMEWORKS, *ENGINES) if key == framework),
                framework)


def format_text(r: GpuResult) -> str:
    """The number format a side runs: "fp8", or "fp8, KV cache 1 byte" when serving."""
    precision = r.precision or r.dtype_gate.precision
    if not r.kv_bytes:
        return precision
    return f"{precision}, KV cache {r.kv_bytes:g} byte" + ("s" if r.kv_bytes > 1 else "")


def figure_rows(d: Decision, t: GpuResult) -> tuple[list[str], list[list[str]], list[str]]:
    """The verdict card's figures, current beside target: what each side runs (its format,
    framework or engine, price), then the rows of the CLI's summary table, the same cells
    (`side_by_side`). Returns the headers, the rows and their notes."""
    cur = d.current
    shared = side_by_side(d, t)
    serving = not d.answers.workload.training
    rows = [["format", format_text(cur), format_text(t)],
            ["engine" if serving else "framework", engine_name(cur.framework),
             engine_name(t.framework)],
            ["price $/GPU-h", gpu_price(cur), gpu_price(t)],
            *(list(row) for row in shared.rows)]
    said = "energy and power: the GPUs at their projected draw (no idle slots)" + (
        "; TTFT/TPOT per request at the batch shown" if serving else "")
    return [c.title() for c in shared.cols], rows, [*shared.notes, said]
