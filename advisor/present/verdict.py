"""One target's verdict as both front ends show it: the same reasons, the same flips and the
same warnings, in the same words, whichever draws them (a parity test holds them equal)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from advisor.present.words import Dialect, asked

if TYPE_CHECKING:
    from advisor.core import Flip, GpuResult, Headline, Reason, Verdict

KIND_WORDS = {"upgrade": "upgrade", "upgrade-for-time": "upgrade for time",
              "break-even": "break-even", "hold": "hold", "blocked-by-gate": "blocked",
              "capability": "capability upgrade"}
"""A verdict's kind as every output says it before the headline, or on the wizard's badge."""
SOURCE_WORDS = {"user": "your quote", "default": "default"}
"""Whose price a figure rests on."""
BASIS_WORDS = {"retuned": "re-tuned layouts on both GPUs",
               "as_run": "the layouts as you run them"}

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
    warnings = [asked(reason_text(r), r.ask, dialect) for r in v.reasons
                if r.kind in WARNING_KINDS]
    own = set(target.dtype_gate.caveats)
    warnings += [c for c in encoding_caveats(current, target) if c not in own]
    return VerdictView(reasons=[asked(reason_text(r), r.ask, dialect) for r in shown],
                       flips=[flip_text(f, target.gpu) for f in v.flips], warnings=warnings)


def reason_text(r: Reason) -> str:
    """One thing a verdict weighs, in words: "1.51x tokens/s per GPU, re-tuned ..."."""
    if r.code == "finding" or r.code == "said":
        return r.text
    if r.code == "speed":
        lens = r.lens
        where = ("overall" if not lens else f"at {lens[0]:,} tokens" if len(lens) == 1
                 else f"geometric mean over {min(lens):,}-{max(lens):,} tokens")
        counts = ("" if r.count_ratio == 1.0 else
                  f"; {r.count_ratio * r.speedup:.2f}x the cluster's tokens/s at "
                  f"{r.count_ratio:g}x the GPUs")
        return f"{r.speedup:.2f}x tokens/s per GPU, {BASIS_WORDS[r.basis]} ({where}){counts}"
    if r.code == "cost":
        (p_tgt, p_cur), (s_tgt, s_cur) = r.usd_per_hour, r.sources
        return (f"$/token {r.cost_ratio:.2f}x the current at ${p_tgt:.2f}/h "
                f"({SOURCE_WORDS.get(s_tgt, s_tgt)}) for {r.target} vs ${p_cur:.2f}/h "
                f"({SOURCE_WORDS.get(s_cur, s_cur)}) for {r.current}")
    if r.code == "no-price":
        return f"no price for {' or '.join(r.gpus or ('one of the GPUs',))}"
    if r.code == "tie":
        return f"the band straddles a tie: $/token {r.low:.2f}-{r.high:.2f}x the current"
    if r.code == "only-fits":
        return f"only {r.target} fits {', '.join(f'{n:,}' for n in r.lens)} tokens"
    current = f"{r.current_tokens:,}" if r.current_tokens else "none"
    return f"longest sequence that fits: {r.target_tokens:,} tokens vs {current}"


def flip_text(f: Flip, target: str) -> str:
    """What would change the verdict, in words: "flips to hold above $7.40/h for b200-sxm"."""
    if f.code == "said":
        return f.text
    if f.code == "fix":
        then = f"; then: {headline(*f.then, target)}" if f.then else ""
        return f"unblocked by: {f.fix}{then}"
    if f.code == "seq-len":
        return (f"{f.gpu} fits up to {f.threshold or 0:,.0f} tokens: at or below that it "
                "becomes a price question")
    if f.code == "price":
        at, now = f.threshold or 0.0, f.current or 0.0
        if f.becomes is None:
            return (f"$/token ties at ${at:.2f}/h for {f.gpu}; your ${now:.2f}/h is "
                    f"{'below' if now < at else 'above'} it by less than the model can tell "
                    "apart")
        side = "above" if f.becomes == "hold" else "below"
        return f"flips to {f.becomes} {side} ${at:.2f}/h for {f.gpu}"
    mfu = f" (MFU {f.mfu:.0%})" if f.mfu is not None else ""
    tail = ("below that it costs more per token, above it less" if f.flips_below is None
            else f"{'below' if f.flips_below else 'above'} that the verdict flips")
    return (f"ties on $/token if {f.gpu} reaches {f.threshold or 0:.2f}x the assumed matmul "
            f"and attention rates{mfu}; {tail}")


def headline(kind: str, h: Headline, target: str) -> str:
    """ "upgrade: 13% cheaper per token, 1.51x faster": the kind, then what it rests on."""
    return f"{KIND_WORDS[kind]}: {statement(kind, h, target)}"


def verdict_headline(v: Verdict, target: str) -> str:
    return headline(v.kind, v.headline, target)


def statement(kind: str, h: Headline, target: str) -> str:
    """The headline without its kind, for a front end that shows the kind apart (a badge)."""
    if h.said is not None:
        return h.said
    if kind == "blocked-by-gate":
        return h.cause or ""
    if kind == "capability":
        return f"{h.cause}; {target} can"
    if not h.fits or h.pace is None:
        return f"{target} fits none of the requested sequence lengths"
    pace, cost = _pace(h.pace, h.clusters), h.cost_ratio
    if kind == "break-even" and cost is not None and h.cost_band is not None:
        near = f"within {abs(cost - 1):.0%} of" if abs(cost - 1) >= 0.005 else "the same as"
        low, high = h.cost_band
        return (f"$/token {near} the current ($/token {low:.2f}-{high:.2f}x the current), "
                f"{pace}; decide on wall-clock and capacity")
    if cost is None:
        if kind == "upgrade-for-time":
            return f"{pace} (no price to weigh)"
        return f"{f'only {h.pace:.2f}x as fast' if h.pace >= 1 else pace}, and no price to weigh"
    if kind == "upgrade-for-time":
        return f"{pace} for {cost - 1:.0%} more per token"
    if cost <= 1.0:
        return f"{f'{1 - cost:.0%} cheaper per token' if cost < 0.995 else 'the same $/token'}, " \
               f"{pace}"
    return f"{f'{cost - 1:.0%} more per token' if cost >= 1.005 else 'the same $/token'}, {pace}"


def _pace(wall: float, clusters: bool) -> str:
    """ "1.51x faster", "as fast", "1.20x slower (wall clock, both clusters)"."""
    if abs(wall - 1.0) < 0.005:
        text = "as fast"
    else:
        text = f"{wall:.2f}x faster" if wall >= 1 else f"{1 / wall:.2f}x slower"
    return text + (" (wall clock, both clusters)" if clusters else "")


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
