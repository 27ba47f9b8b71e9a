"""Which flag an answers field came from. `compare` and `configs sweep` build the answers
from flags, so what the answers (or the engine) refuse about `targets.1` or
`workload.seq_lens.0` is said about `--target` or `--seq-len`: the thing the user typed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from advisor.core import InputError

COMMAND_LINE = "command line"
"""The answers' file name when flags built them."""

FLAG_OF: dict[str, str] = {
    "current": "--current", "targets": "--target", "prices": "--price",
    "power_limits_w": "--power-limit", "electricity_usd_per_kwh": "--electricity",
    "power_cap_kw": "--power-cap", "basis": "--as-run", "workload.seq_lens": "--seq-len",
    "workload.zero_stage": "--zero", "workload.model": "--model or --params",
    "measured.tokens_per_s_per_gpu": "--measured-tokens-per-s",
    "measured.peak_memory_gib": "--measured-peak-gib",
    "measured": "--measured-*", "workload": "the workload flags",
}
"""Answers fields whose flag is not their name with dashes (`workload.micro_batch` is
`--micro-batch`, `measured.step_s` is `--measured-step-s`)."""
KEYED = ("prices", "power_limits_w")  # `--price GPU=...`: the GPU is part of what is named


def flag_of(field: str, current: str | None = None) -> str:
    """The flag (and, for a per-GPU flag, the GPU) an answers field path was given as;
    `current` is the current GPU's catalog id, which a per-GPU format is the flag of."""
    parts = field.split(".")
    head = parts[0]
    if head in KEYED and len(parts) > 1:
        return f"{FLAG_OF[head]} {'.'.join(parts[1:])}"
    if head == "layouts" and len(parts) > 2:
        side = "current" if parts[1] == current else "target"
        return f"--{side}-{parts[2].replace('_', '-')}"
    if parts[:2] == ["workload", "model"] and len(parts) > 2:  # a dimension: --vocab
        return f"--{parts[2].replace('_', '-')}"
    if ".".join(parts[:2]) in FLAG_OF:
        return FLAG_OF[".".join(parts[:2])]
    if head == "workload" and len(parts) > 1:
        return f"--{parts[1].replace('_', '-')}"
    if head == "measured" and len(parts) > 1:
        return f"--measured-{parts[1].replace('_', '-')}"
    return FLAG_OF.get(head, field)


@contextlib.contextmanager
def errors_name_flags(current: str | None = None) -> Iterator[None]:
    """Inside, an error about answers built from flags names the flag, not the field."""
    try:
        yield
    except InputError as exc:
        if exc.file in (None, "", COMMAND_LINE):
            exc.file = COMMAND_LINE
            if exc.field and not exc.field.startswith("-"):
                exc.field = flag_of(exc.field, current)
        raise
