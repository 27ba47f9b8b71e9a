"""The last gate before a verdict: a result no real pair of GPUs can produce is an input
problem, reported as one line naming the input that drives it, never printed as a verdict.

Every input is bounded at load (`model.bounds`), but bounded inputs can still combine
into nonsense: a token budget of 1e18 on eight GPUs is a million-year job, a quote typed
in cents against a catalog price in dollars is a 100x price ratio, a probe record
measured on the wrong part makes a target 10,000x slower. The checks, on the finished
decision, at every projected point:

- speedup per GPU within 1/MAX_SPEEDUP..MAX_SPEEDUP (the widest real pair is ~40x apart);
- the target's price over the current GPU's within 1/MAX_PRICE_RATIO..MAX_PRICE_RATIO
  ($/token is price over tokens per GPU-hour, so with both checks its ratio is bounded by
  the product of the two, and needs no check of its own);
- the job's wall-clock at most MAX_WALL_CLOCK_H (a century);
- no figure above the GPU's peak: an MFU above 1 at any point (as run or re-tuned, in the
  decision, the GPU-count sweep or a pipeline stage the engine projects), or a pipeline
  stage's stated peak above the GPU's highest published one, is a rate no kernel reaches;
- a pipeline's time for its token budget at most MAX_WALL_CLOCK_H too.

The same rules hold on every path (`advisor decide`, `compare`, `configs sweep`, `configs
pipeline`), so no command prints what another would refuse.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from advisor.core.errors import InputError
from advisor.core.model import bounds as B

if TYPE_CHECKING:  # types only: the stages check their own rates here too
    from advisor.core.economics.configs import ConfigSweep
    from advisor.core.economics.cost import PriceQuote
    from advisor.core.economics.stages import PipelineReport
    from advisor.core.model.catalog import Catalog
    from advisor.core.model.options import PipelineSpec
    from advisor.core.result import Decision, GpuResult

YEAR_H = 8766.0  # hours in a mean (Julian) year, for "the job would take N years"


def check_plausible(decision: Decision) -> None:
    """Raise InputError (one line: the input to check, and why) when the decision holds a
    speedup, price ratio, $/token ratio or wall-clock outside what real GPUs produce."""
    current = decision.current
    for side in (current, *decision.targets):
        _within_peak(decision, side)
    for target in decision.targets:
        _speedups(decision, current, target)
        _prices(decision, current, target)
    for side in (current, *decision.targets):
        job = side.job
        if job is not None:
            _within_a_century(job.wall_clock_h, side.label, "workload.token_budget",
                              decision.answers.workload.token_budget)


def check_configs(sweep: ConfigSweep) -> None:
    """The GPU-count sweep's points hold the same rule: none above its GPU's peak."""
    for p in sweep.points:
        if p.mfu > 1:
            raise InputError(
                f"the projection puts {p.gpus}x {p.gpu} at {p.mfu:.0%} of its peak: no kernel "
                "runs above its peak, so an input is off: check the workload's model and "
                "layout", field="workload", value=None)


def check_pipeline(report: PipelineReport, spec: PipelineSpec, catalog: Catalog) -> None:
    """A pipeline's stated peaks are at most its GPUs' own, and its token budget is done
    within a century at the split as given."""
    stated = [(f"stages.{i}", s.gpu, s.peak_tflops) for i, s in enumerate(spec.stages)]
    stated += [(f"alternatives.{i}.stages.{name}", a.gpu, r.peak_tflops)
               for i, a in enumerate(spec.alternatives) for name, r in a.stages.items()]
    for where, gpu, tflops in stated:
        if tflops is None:
            continue
        part = catalog.gpu(gpu.split("@")[0])
        dtype, top = max(part.peak_tflops.items(), key=lambda kv: kv[1])
        if tflops > top:
            raise InputError(
                f"{tflops:,g} TFLOPS is above {part.id}'s highest published peak ({top:,g} "
                f"TFLOPS, {dtype}): no kernel runs above its GPU's peak",
                field=f"pipeline.{where}.peak_tflops", value=tflops)
    eta = report.current.eta_days
    if eta is not None:
        _within_a_century(eta * 24, "the pipeline as split", "pipeline.token_budget",
                          spec.token_budget)


def check_stage_mfu(mfu: float, stage: str, gpu: str) -> None:
    """A stage the engine projects is within its GPU's peak, as a decision's sides are."""
    if mfu > 1:
        raise InputError(f"the projection puts {gpu} at {mfu:.0%} of its peak: no kernel runs "
                         "above its peak, so an input is off: check the stage's workload",
                         entry=stage, field="workload")


def _within_a_century(hours: float, what: str, field: str, value: Any) -> None:
    if hours > B.MAX_WALL_CLOCK_H:
        raise InputError(
            f"the job would take {hours / YEAR_H:,.0f} years on {what}, longer than any job "
            f"is planned ({B.MAX_WALL_CLOCK_H / YEAR_H:,.0f} years): check the token budget "
            "against the GPU count", field=field, value=value)


def _within_peak(decision: Decision, side: GpuResult) -> None:
    """No point of a side, as run or re-tuned, is above its GPU's peak (MFU above 1)."""
    for p in (*side.sweep, *side.as_run):
        if p.mfu is None or p.mfu <= 1:
            continue
        what, field, value = ("the measured run (measured)", "measured",
                              decision.answers.measured.what) \
            if decision.answers.measured is not None else _driver(decision, side)
        raise InputError(
            f"the projection puts {side.gpu} at {p.mfu:.0%} of its peak at {p.seq_len:,} "
            f"tokens ({p.binding or 'nothing'} bound); no kernel runs above its peak, so an "
            f"input is off: check {what}", field=field, value=value)


def _speedups(decision: Decision, current: GpuResult, target: GpuResult) -> None:
    for p in target.sweep:
        s = p.speedup
        if s is None or 1 / B.MAX_SPEEDUP <= s <= B.MAX_SPEEDUP:
            continue
        slow = target if s < 1 else current
        what, field, value = _driver(decision, slow)
        ratio = f"{1 / s:,.0f}x slower" if s < 1 else f"{s:,.0f}x faster"
        raise InputError(
            f"the projection makes {target.gpu} {ratio} than {current.gpu} per GPU at "
            f"{p.seq_len:,} tokens ({_why(slow)}); no real pair of GPUs is more than "
            f"{B.MAX_SPEEDUP:,.0f}x apart, so an input is off: check {what}",
            field=field, value=value)


def _prices(decision: Decision, current: GpuResult, target: GpuResult) -> None:
    mine, theirs = _price(current), _price(target)
    if mine is None or theirs is None:
        return
    ratio = theirs.usd_per_hour / mine.usd_per_hour
    if 1 / B.MAX_PRICE_RATIO <= ratio <= B.MAX_PRICE_RATIO:
        return
    quoted = decision.answers.prices
    blamed = next((g for g in (target.gpu, current.gpu) if g in quoted), None)
    where = (f"check prices.{blamed}" if blamed else
             f"check the default prices ({mine.label}; {theirs.label})")
    raise InputError(
        f"{target.gpu} at ${theirs.usd_per_hour:g}/GPU-hour is {ratio:,.4g}x the price of "
        f"{current.gpu} (${mine.usd_per_hour:g}); real GPU-hours are never more than "
        f"{B.MAX_PRICE_RATIO:,.0f}x apart: a price in the wrong unit (per node, per minute, "
        f"in cents)? {where}",
        field=f"prices.{blamed}" if blamed else None,
        value=quoted.get(blamed) if blamed else None)


def _price(side: GpuResult) -> PriceQuote | None:
    return side.assumptions.price if side.assumptions is not None else None


def _driver(decision: Decision, side: GpuResult) -> tuple[str, str | None, Any]:
    """(what to check, its field, its value): the input most likely to make `side`
    implausibly slow: its power limit, a layout of its own, the network where that binds,
    the probe record it was projected from, else the workload as a whole."""
    answers = decision.answers
    for key, watts in answers.power_limits_w.items():
        if key.split("@")[0] == side.gpu:
            return f"power_limits_w.{key}", f"power_limits_w.{key}", watts
    if side.gpu in answers.layouts:
        return f"layouts.{side.gpu}", f"layouts.{side.gpu}", None
    point = side.point(decision.primary_seq_len)
    if point is not None and point.binding == "network":
        return "workload.nic_gbit", "workload.nic_gbit", answers.workload.nic_gbit
    if side.assumptions is not None and side.assumptions.probe is not None:
        return (f"the probe record of {side.gpu} ({side.assumptions.probe})",
                f"probes.{side.gpu}", side.assumptions.probe)
    return "the workload's layout and sizes", "workload", None


def _why(side: GpuResult) -> str:
    point = next((p for p in side.sweep if p.mfu is not None), None)
    if point is None or point.mfu is None:
        return f"{side.gpu} projected at an implausible rate"
    return f"{side.gpu} at {point.mfu:.2g} of its peak, bound by {point.binding or 'nothing'}"
