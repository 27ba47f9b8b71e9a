"""The verdict for one target: upgrade, upgrade-for-time, hold, blocked-by-gate or capability.

Order matters. A target that cannot execute the recipe (dtype) or whose
software is refused is blocked, whatever its speed. A target that runs what
the current GPU cannot run at all is a capability upgrade, whatever its price.
Otherwise money decides: cheaper per token is an upgrade; dearer but faster,
within the premium the user accepts for time, is an upgrade for time; the
rest is hold. Each verdict carries its ranked reasons, the assumption that
would flip it, and the band the assumptions allow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from advisor.core.economics.cost import SOURCE_WORDS
from advisor.core.model.vocabulary import Ask

Kind = Literal[
    "upgrade", "upgrade-for-time", "break-even", "hold", "blocked-by-gate", "capability"
]
# A saving this small, with the band straddling a tie, is within the model's noise.
TIE = 0.05


class Reason(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: Literal["gate", "capacity", "cost", "speed", "software", "evidence", "power", "price",
                  "format", "layout"]
    text: str
    weight: float  # ranking key: larger first
    ask: Ask | None = None  # the input that would complete it (a price not quoted)


class Headline(BaseModel):
    """What a verdict says first, as the facts it rests on; `advisor.present` words it with
    the verdict's kind ("upgrade: 13% cheaper per token, 1.51x faster")."""

    model_config = ConfigDict(frozen=True)

    cause: str | None = None
    """blocked-by-gate: what blocks the target (a gate's finding); capability: what stops
    the current GPU."""
    pace: float | None = None
    """Wall-clock speed against today's: the per-GPU speedup times the GPU-count ratio."""
    clusters: bool = False
    """The GPU counts differ, so `pace` is the two clusters', not one GPU's."""
    cost_ratio: float | None = None
    """$/token against today's; None where there is no price to weigh."""
    cost_band: tuple[float, float] | None = None
    """break-even: the 90% band of `cost_ratio`, which straddles a tie."""
    fits: bool = True
    """False: the target fits none of the requested sequence lengths."""
    said: str | None = None
    """A version-1 report's headline, its kind aside, as the advisor that wrote it worded it."""


class Flip(BaseModel):
    """An assumption and the value at which the verdict would change."""

    model_config = ConfigDict(frozen=True)

    assumption: str
    current: float | None
    threshold: float | None
    text: str
    then: tuple[Kind, Headline] | None = None
    """What the verdict becomes once the flip is made, where that is known (a gate's fix)."""


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: Kind
    headline: Headline
    reasons: list[Reason]
    flips: list[Flip]
    speedup: float | None  # geometric mean over the points where both GPUs fit
    speedup_low: float | None
    speedup_high: float | None
    cost_ratio: float | None  # target $/token over current $/token (below 1: cheaper)
    cost_ratio_low: float | None
    cost_ratio_high: float | None


@dataclass(frozen=True)
class Case:
    """What the verdict weighs for one target, gathered by decide()."""

    target: str
    current: str
    target_gate: str | None  # why the target cannot run, or None
    gate_fix: str | None  # what would unblock it
    current_incapable: str | None  # why the current GPU cannot run at all, or None
    software_warnings: tuple[str, ...]
    evidence_warnings: tuple[str, ...]
    seq_lens: tuple[int, ...]
    fits_current: tuple[bool, ...]
    fits_target: tuple[bool, ...]
    max_seq_current: int | None
    max_seq_target: int | None
    speedups: tuple[float | None, ...]
    lows: tuple[float | None, ...]
    highs: tuple[float | None, ...]
    price_current: float | None
    price_target: float | None
    price_sources: tuple[str, str]
    break_even_price: float | None
    break_even_efficiency: float | None  # x assumed target compute rates for a $/token tie
    break_even_mfu: float | None
    time_premium: float
    power_warning: str | None
    count_ratio: float = 1.0  # target GPUs / current GPUs: wall clock is per-GPU speed x this
    basis: str = "re-tuned layouts on both GPUs"
    borderline: tuple[str, ...] = ()  # fits within the memory model's own uncertainty
    format_switch: str | None = None  # what a change of number format costs besides speed
    layouts: str | None = None  # serving: the two layouts compared


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _capacity_reasons(c: Case) -> list[Reason]:
    only = [s for s, fc, ft in zip(c.seq_lens, c.fits_current, c.fits_target, strict=True)
            if ft and not fc]
    out = []
    if only:
        out.append(Reason(kind="capacity", weight=2.0,
                          text=f"only {c.target} fits {', '.join(f'{s:,}' for s in only)} tokens"))
    if c.max_seq_target and (c.max_seq_current or 0) < c.max_seq_target:
        cur = f"{c.max_seq_current:,}" if c.max_seq_current else "none"
        out.append(Reason(kind="capacity", weight=0.2,
                          text=f"longest sequence that fits: {c.max_seq_target:,} tokens vs {cur}"))
    return out


@dataclass(frozen=True)
class _Ruling:
    """One rule's call: its verdict, headline, and the reasons and flips only it adds."""

    kind: Kind
    headline: Headline
    reasons: tuple[Reason, ...] = ()
    flips: tuple[Flip, ...] = ()


def judge(c: Case) -> Verdict:
    """Verdict, reasons (ranked), flip points and band for one target.

    The rules run in the module's order: a gate blocks whatever the speed, a capability
    counts whatever the price, and only then does money decide."""
    speed, low, high = _speed_band(c)
    cost, cost_lo, cost_hi = _cost_band(c, speed, low, high)
    if c.target_gate:
        ruling = _blocked(c, c.target_gate, speed, cost)
    elif c.current_incapable or (not any(c.fits_current) and any(c.fits_target)):
        ruling = _capability(c)
    elif speed is None:
        ruling = _Ruling("hold", Headline(fits=False))
    else:
        ruling = _priced(c, speed, cost, cost_lo, cost_hi)
    # Stable sort: a rule's lead reason (gate 10, capability 5) outweighs every context one.
    reasons = sorted(_context_reasons(c) + list(ruling.reasons), key=lambda r: -r.weight)
    return Verdict(kind=ruling.kind, headline=ruling.headline, reasons=reasons,
                   flips=list(ruling.flips), speedup=speed, speedup_low=low, speedup_high=high,
                   cost_ratio=cost, cost_ratio_low=cost_lo, cost_ratio_high=cost_hi)


def _speed_band(c: Case) -> tuple[float | None, float | None, float | None]:
    """Speedup and its band, as geometric means over the points where both GPUs fit: a
    length only one GPU holds is a capacity reason, not a speed."""
    both = [i for i, (fc, ft) in enumerate(zip(c.fits_current, c.fits_target, strict=True))
            if fc and ft and c.speedups[i] is not None]
    if not both:
        return None, None, None
    return (_geomean([c.speedups[i] for i in both]),  # type: ignore[misc]
            _geomean([c.lows[i] for i in both]),  # type: ignore[misc]
            _geomean([c.highs[i] for i in both]))  # type: ignore[misc]


def _cost_band(c: Case, speed: float | None, low: float | None, high: float | None
               ) -> tuple[float | None, float | None, float | None]:
    """$/token against the current GPU's, and its band: the price ratio over the speedup, so
    the fastest end of the speed band is the cheapest end of this one."""
    if c.price_current is None or c.price_target is None:
        return None, None, None
    ratio = c.price_target / c.price_current
    if not (speed and low and high):
        return None, None, None
    return ratio / speed, ratio / high, ratio / low


def _context_reasons(c: Case) -> list[Reason]:
    """What the reader should weigh whichever rule decides: software, evidence, power,
    capacity, a change of number format, and the layouts compared."""
    reasons = [Reason(kind="software", weight=0.4, text=w) for w in c.software_warnings]
    reasons += [Reason(kind="evidence", weight=0.3, text=w) for w in c.evidence_warnings]
    if c.power_warning:
        reasons.append(Reason(kind="power", weight=0.6, text=c.power_warning))
    reasons += _capacity_reasons(c)
    reasons += [Reason(kind="capacity", weight=0.8, text=t) for t in c.borderline]
    if c.format_switch:
        reasons.append(Reason(kind="format", weight=0.9, text=c.format_switch))
    if c.layouts:
        reasons.append(Reason(kind="layout", weight=0.35, text=f"compared: {c.layouts}"))
    return reasons


def _blocked(c: Case, gate: str, speed: float | None, cost: float | None) -> _Ruling:
    """A target that cannot run the recipe is blocked whatever its speed; the fix, when there
    is one, says what the verdict would be once applied."""
    flips: tuple[Flip, ...] = ()
    if c.gate_fix:
        flips = (Flip(assumption="software stack", current=None, threshold=None,
                      text=f"unblocked by: {c.gate_fix}",
                      then=_money(c, speed, cost) if speed is not None else None),)
    return _Ruling("blocked-by-gate", Headline(cause=gate),
                   (Reason(kind="gate", weight=10.0, text=gate),), flips)


def _capability(c: Case) -> _Ruling:
    """The target runs what the current GPU cannot run at all, whatever the price; when only
    memory stops the current GPU, the length at which it becomes a price question."""
    why = c.current_incapable or (
        f"{c.current} cannot run this at any requested sequence length (out of memory)")
    flips: tuple[Flip, ...] = ()
    if c.max_seq_current and not c.current_incapable:
        flips = (Flip(assumption="sequence length", current=float(max(c.seq_lens)),
                      threshold=float(c.max_seq_current),
                      text=f"{c.current} fits up to {c.max_seq_current:,} tokens: at or "
                           "below that it becomes a price question"),)
    return _Ruling("capability", Headline(cause=why),
                   (Reason(kind="capacity", weight=5.0, text=why),), flips)


def _priced(c: Case, speed: float, cost: float | None, cost_lo: float | None,
            cost_hi: float | None) -> _Ruling:
    """Money decides; a band that straddles a tie is said, and a saving or premium within
    the noise is called break-even rather than a verdict the model cannot tell apart."""
    kind, headline = _money(c, speed, cost)
    reasons: list[Reason] = []
    _money_reasons(c, speed, cost, reasons)
    if cost is not None and cost_lo is not None and cost_hi is not None \
            and cost_lo < 1.0 < cost_hi:
        if kind in ("upgrade", "hold") and abs(cost - 1.0) <= TIE:
            kind = "break-even"
            headline = headline.model_copy(update={"cost_band": (cost_lo, cost_hi)})
        reasons.append(Reason(kind="evidence", weight=0.45,
                              text=f"the band straddles a tie: $/token {cost_lo:.2f}-"
                                   f"{cost_hi:.2f}x the current"))
    return _Ruling(kind, headline, tuple(reasons), tuple(_money_flips(c, kind, speed)))


def _money(c: Case, speed: float, cost: float | None) -> tuple[Kind, Headline]:
    """Cheaper per token is an upgrade; dearer but faster within the time premium (or faster
    by more than it, with no price to weigh) is an upgrade for time; the rest is hold."""
    wall = speed * c.count_ratio
    said = Headline(pace=wall, clusters=c.count_ratio != 1.0, cost_ratio=cost)
    if cost is None:
        return ("upgrade-for-time" if wall > 1.0 + c.time_premium else "hold"), said
    if cost <= 1.0:
        return "upgrade", said
    if wall > 1.0 and cost <= 1.0 + c.time_premium:
        return "upgrade-for-time", said
    return "hold", said


def _money_reasons(c: Case, speed: float, cost: float | None, reasons: list[Reason]) -> None:
    both = [s for s, fc, ft in zip(c.seq_lens, c.fits_current, c.fits_target, strict=True)
            if fc and ft]
    basis = (f"at {both[0]:,} tokens" if len(both) == 1 else
             f"geometric mean over {min(both):,}-{max(both):,} tokens") if both else "overall"
    counts = ("" if c.count_ratio == 1.0 else
              f"; {c.count_ratio * speed:.2f}x the cluster's tokens/s at "
              f"{c.count_ratio:g}x the GPUs")
    reasons.append(Reason(kind="speed", weight=abs(math.log(speed)),
                          text=f"{speed:.2f}x tokens/s per GPU, {c.basis} ({basis}){counts}"))
    if cost is not None and c.price_current and c.price_target:
        src_cur, src_tgt = (SOURCE_WORDS.get(s, s) for s in c.price_sources)
        reasons.append(Reason(
            kind="cost", weight=abs(math.log(cost)) + 0.5,
            text=f"$/token {cost:.2f}x the current at ${c.price_target:.2f}/h ({src_tgt}) for "
                 f"{c.target} vs ${c.price_current:.2f}/h ({src_cur}) for {c.current}"))
    else:
        missing = [g for g, p in ((c.current, c.price_current), (c.target, c.price_target))
                   if not p] or ["one of the GPUs"]
        reasons.append(Reason(kind="price", weight=0.5, ask="price",
                              text=f"no price for {' or '.join(missing)}"))


def _money_flips(c: Case, kind: Kind, speed: float) -> list[Flip]:
    out = []
    if c.break_even_price is not None and c.price_target is not None:
        if kind == "upgrade":
            text = f"flips to hold above ${c.break_even_price:.2f}/h for {c.target}"
        elif kind == "break-even":
            side = "below" if c.price_target < c.break_even_price else "above"
            text = (f"$/token ties at ${c.break_even_price:.2f}/h for {c.target}; your "
                    f"${c.price_target:.2f}/h is {side} it by less than the model can tell apart")
        else:
            text = f"flips to upgrade below ${c.break_even_price:.2f}/h for {c.target}"
        out.append(Flip(assumption=f"{c.target} price", current=c.price_target,
                        threshold=c.break_even_price, text=text))
    if c.break_even_efficiency is not None:
        mfu = f" (MFU {c.break_even_mfu:.0%})" if c.break_even_mfu is not None else ""
        ties = (f"ties on $/token if {c.target} reaches {c.break_even_efficiency:.2f}x the "
                f"assumed matmul and attention rates{mfu}")
        if kind == "break-even":
            tail = "; below that it costs more per token, above it less"
        else:
            tail = f"; {'below' if kind == 'upgrade' else 'above'} that the verdict flips"
        out.append(Flip(assumption=f"{c.target} achieved efficiency", current=1.0,
                        threshold=c.break_even_efficiency, text=ties + tail))
    return out
