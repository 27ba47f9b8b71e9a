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
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from advisor.core.model.vocabulary import Ask, Basis

Kind = Literal[
    "upgrade", "upgrade-for-time", "break-even", "hold", "blocked-by-gate", "capability"
]
# A saving this small, with the band straddling a tie, is within the model's noise.
TIE = 0.05


ReasonKind = Literal["gate", "capacity", "cost", "speed", "software", "evidence", "power",
                     "price", "format", "layout"]
"""What a reason is about: warnings (software, evidence, power) are shown apart."""


class _Weighed(BaseModel):
    model_config = ConfigDict(frozen=True)

    weight: float  # ranking key: larger first
    ask: Ask | None = None  # the input that would complete it (a price not quoted)


class Finding(_Weighed):
    """Another check's own statement, carried as that check said it: a gate's, the fit's,
    the evidence's, a change of number format, the layouts compared."""

    code: Literal["finding"] = "finding"
    kind: Literal["gate", "capacity", "software", "evidence", "power", "format", "layout"]
    text: str


class SpeedReason(_Weighed):
    """Tokens/s per GPU against the current GPU's, over the lengths both fit."""

    code: Literal["speed"] = "speed"
    kind: Literal["speed"] = "speed"
    speedup: float
    basis: Basis
    lens: tuple[int, ...]
    count_ratio: float = 1.0  # target GPUs over current GPUs: the clusters' rate differs


class CostReason(_Weighed):
    """$/token against the current GPU's, and the two prices it comes from."""

    code: Literal["cost"] = "cost"
    kind: Literal["cost"] = "cost"
    cost_ratio: float
    target: str
    current: str
    usd_per_hour: tuple[float, float]  # target, current
    sources: tuple[str, str]  # target, current: whose price ("user", "default")


class NoPriceReason(_Weighed):
    """Money cannot be weighed: these GPUs have no price (empty: one of them, unnamed)."""

    code: Literal["no-price"] = "no-price"
    kind: Literal["price"] = "price"
    gpus: tuple[str, ...]


class TieReason(_Weighed):
    """The $/token band straddles a tie."""

    code: Literal["tie"] = "tie"
    kind: Literal["evidence"] = "evidence"
    low: float
    high: float


class OnlyFitsReason(_Weighed):
    """Lengths only the target holds."""

    code: Literal["only-fits"] = "only-fits"
    kind: Literal["capacity"] = "capacity"
    target: str
    lens: tuple[int, ...]


class LongestFitReason(_Weighed):
    """The longest sequence each GPU holds, where the target's is longer."""

    code: Literal["longest-fit"] = "longest-fit"
    kind: Literal["capacity"] = "capacity"
    target_tokens: int
    current_tokens: int | None


class SaidReason(_Weighed):
    """A version-1 report's reason, as the advisor that wrote it worded it."""

    code: Literal["said"] = "said"
    kind: ReasonKind
    text: str


Reason = Annotated[Finding | SpeedReason | CostReason | NoPriceReason | TieReason
                   | OnlyFitsReason | LongestFitReason | SaidReason, Field(discriminator="code")]
"""One thing a verdict weighs, as its figures; `advisor.present` words each code."""


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


class _Flip(BaseModel):
    model_config = ConfigDict(frozen=True)

    current: float | None = None  # the assumption's value now
    threshold: float | None = None  # where the verdict changes


class FixFlip(_Flip):
    """The gate's fix, and the verdict it leads to where that is known."""

    code: Literal["fix"] = "fix"
    fix: str
    then: tuple[Kind, Headline] | None = None


class SeqLenFlip(_Flip):
    """The current GPU holds lengths up to `threshold`: there it is a price question."""

    code: Literal["seq-len"] = "seq-len"
    gpu: str


class PriceFlip(_Flip):
    """The target's $/GPU-hour at which $/token ties with the current GPU's."""

    code: Literal["price"] = "price"
    gpu: str
    becomes: Literal["hold", "upgrade"] | None  # past the threshold; None: a tie already


class EfficiencyFlip(_Flip):
    """The multiple of the target's assumed matmul and attention rates at which $/token
    ties (with the MFU that is), and on which side the verdict changes."""

    code: Literal["efficiency"] = "efficiency"
    gpu: str
    mfu: float | None
    flips_below: bool | None  # True: falling below flips it; None: a tie already


class SaidFlip(_Flip):
    """A version-1 report's flip, as the advisor that wrote it worded it."""

    code: Literal["said"] = "said"
    text: str


Flip = Annotated[FixFlip | SeqLenFlip | PriceFlip | EfficiencyFlip | SaidFlip,
                 Field(discriminator="code")]
"""An assumption and the value at which the verdict would change; `advisor.present` words
each code."""


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
    basis: Basis = "retuned"
    borderline: tuple[str, ...] = ()  # fits within the memory model's own uncertainty
    format_switch: str | None = None  # what a change of number format costs besides speed
    layouts: str | None = None  # serving: the two layouts compared


def _geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _capacity_reasons(c: Case) -> list[Reason]:
    only = [s for s, fc, ft in zip(c.seq_lens, c.fits_current, c.fits_target, strict=True)
            if ft and not fc]
    out: list[Reason] = []
    if only:
        out.append(OnlyFitsReason(weight=2.0, target=c.target, lens=tuple(only)))
    if c.max_seq_target and (c.max_seq_current or 0) < c.max_seq_target:
        out.append(LongestFitReason(weight=0.2, target_tokens=c.max_seq_target,
                                    current_tokens=c.max_seq_current or None))
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
    reasons: list[Reason] = [Finding(kind="software", weight=0.4, text=w)
                             for w in c.software_warnings]
    reasons += [Finding(kind="evidence", weight=0.3, text=w) for w in c.evidence_warnings]
    if c.power_warning:
        reasons.append(Finding(kind="power", weight=0.6, text=c.power_warning))
    reasons += _capacity_reasons(c)
    reasons += [Finding(kind="capacity", weight=0.8, text=t) for t in c.borderline]
    if c.format_switch:
        reasons.append(Finding(kind="format", weight=0.9, text=c.format_switch))
    if c.layouts:
        reasons.append(Finding(kind="layout", weight=0.35, text=f"compared: {c.layouts}"))
    return reasons


def _blocked(c: Case, gate: str, speed: float | None, cost: float | None) -> _Ruling:
    """A target that cannot run the recipe is blocked whatever its speed; the fix, when there
    is one, says what the verdict would be once applied."""
    flips: tuple[Flip, ...] = ()
    if c.gate_fix:
        flips = (FixFlip(fix=c.gate_fix,
                         then=_money(c, speed, cost) if speed is not None else None),)
    return _Ruling("blocked-by-gate", Headline(cause=gate),
                   (Finding(kind="gate", weight=10.0, text=gate),), flips)


def _capability(c: Case) -> _Ruling:
    """The target runs what the current GPU cannot run at all, whatever the price; when only
    memory stops the current GPU, the length at which it becomes a price question."""
    why = c.current_incapable or (
        f"{c.current} cannot run this at any requested sequence length (out of memory)")
    flips: tuple[Flip, ...] = ()
    if c.max_seq_current and not c.current_incapable:
        flips = (SeqLenFlip(gpu=c.current, current=float(max(c.seq_lens)),
                            threshold=float(c.max_seq_current)),)
    return _Ruling("capability", Headline(cause=why),
                   (Finding(kind="capacity", weight=5.0, text=why),), flips)


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
        reasons.append(TieReason(weight=0.45, low=cost_lo, high=cost_hi))
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
    both = tuple(s for s, fc, ft in zip(c.seq_lens, c.fits_current, c.fits_target,
                                         strict=True) if fc and ft)
    reasons.append(SpeedReason(weight=abs(math.log(speed)), speedup=speed, basis=c.basis,
                               lens=both, count_ratio=c.count_ratio))
    if cost is not None and c.price_current and c.price_target:
        reasons.append(CostReason(
            weight=abs(math.log(cost)) + 0.5, cost_ratio=cost, target=c.target,
            current=c.current, usd_per_hour=(c.price_target, c.price_current),
            sources=(c.price_sources[1], c.price_sources[0])))
    else:
        missing = tuple(g for g, p in ((c.current, c.price_current), (c.target, c.price_target))
                        if not p)
        reasons.append(NoPriceReason(weight=0.5, ask="price", gpus=missing))


def _money_flips(c: Case, kind: Kind, speed: float) -> list[Flip]:
    """The target's price and achieved efficiency at which $/token ties, and which way
    crossing each one moves the verdict (break-even: it is a tie already)."""
    out: list[Flip] = []
    tie = kind == "break-even"
    if c.break_even_price is not None and c.price_target is not None:
        out.append(PriceFlip(gpu=c.target, current=c.price_target,
                             threshold=c.break_even_price,
                             becomes=None if tie else "hold" if kind == "upgrade" else "upgrade"))
    if c.break_even_efficiency is not None:
        out.append(EfficiencyFlip(gpu=c.target, current=1.0,
                                  threshold=c.break_even_efficiency, mfu=c.break_even_mfu,
                                  flips_below=None if tie else kind == "upgrade"))
    return out
