"""One target's verdict as both front ends show it: the same reasons, the same flips and the
same warnings, in the same words, whichever draws them (a parity test holds them equal)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from advisor.present.words import Dialect, asked

if TYPE_CHECKING:
    from advisor.core import GpuResult

WARNING_KINDS = ("software", "evidence", "power")
"""Reasons that warn rather than decide: shown apart, under warnings."""
SHOWN_REASONS = 5
"""The ranked reasons shown; a change of number format is shown whatever its rank, as it is
part of what the speedup means."""


@dataclass(frozen=True)
class VerdictView:
    reasons: list[str]
    flips: list[str]
    warnings: list[str]


def verdict_view(current: GpuResult, target: GpuResult, dialect: Dialect) -> VerdictView:
    """What is said of `target`'s verdict against the current GPU; empty without a verdict."""
    v = target.verdict
    if v is None:
        return VerdictView([], [], [])
    ranked = [r for r in v.reasons if r.kind not in WARNING_KINDS]
    shown = ranked[:SHOWN_REASONS] + [r for r in ranked[SHOWN_REASONS:] if r.kind == "format"]
    warnings = [asked(r.text, r.ask, dialect) for r in v.reasons if r.kind in WARNING_KINDS]
    own = set(target.dtype_gate.caveats)
    warnings += [c for c in encoding_caveats(current, target) if c not in own]
    return VerdictView(reasons=[asked(r.text, r.ask, dialect) for r in shown],
                       flips=[f.text for f in v.flips], warnings=warnings)


def encoding_caveats(cur: GpuResult, tgt: GpuResult) -> list[str]:
    """The number-format encoding caveats that follow a target: its own (FNUZ fp8 on
    MI300X), and the current GPU's when the target runs the other encoding (checkpoints
    made for the current GPU need converting)."""
    g, c = tgt.dtype_gate, cur.dtype_gate
    out = list(g.caveats)
    if c.caveats and not g.caveats and g.passed and g.precision == c.precision:
        out += [f"moving from {cur.gpu}: its {c.precision} encoding is not {tgt.gpu}'s, so "
                f"checkpoints do not move as they are ({x})" for x in c.caveats]
    return out
