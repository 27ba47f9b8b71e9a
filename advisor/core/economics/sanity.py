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
pipeline`), so no command prints what another would refuse. The line names the input that
drives the result: the measured run, a power limit, a layout, the network, or the probe
record whose figure the slow part of the step runs at (its file, and the record's section:
matmul, attention, bandwidth or collectives), else the workload.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from advisor.core.errors import InputError
from advisor.core.model import bounds as B

if TYPE_CHECKING:  # types only: the stages check their own rates here too
    from advisor.core.economics.configs import ConfigSweep
    from advisor.core.economics.cost import PriceQuote
    from advisor.core.economics.stages import PipelineReport
    from advisor.core.model.catalog import Catalog
    from advisor.core.model.options import PipelineSpec
    from advisor.core.model.probe_record import ProbeRecord
    from advisor.core.projection.rates import Evidence
    from advisor.core.result import Decision, GpuResult, SweepPoint

YEAR_H = 8766.0  # hours in a mean (Julian) year, for "the job would take N years"


def check_plausible(decision: Decision, probes: Mapping[str, ProbeRecord] | None = None,
                    workload: ProbeRecord | None = None) -> None:
    """Raise InputError (one line: the input to check, and why) when the decision holds a
    speedup, price ratio, $/token ratio or wall-clock outside what real GPUs produce.
    `probes` are the suite records by GPU the decision used and `workload` the workload-probe
    record that anchored it, so a result they drive is blamed on them."""
    used = probes or {}
    current = decision.current
    for side in (current, *decision.targets):
        _within_peak(decision, side, used, workload)
    for target in decision.targets:
        _speedups(decision, current, target, used)
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


@dataclass(frozen=True)
class _Blame:
    """The input an implausible result is blamed on: what to check, in words, and where."""

    what: str
    field: str | None
    value: Any = None
    file: str | None = None

    def error(self, message: str) -> InputError:
        return InputError(f"{message}, so an input is off: check {self.what}", file=self.file,
                          field=self.field, value=self.value)


def _within_peak(decision: Decision, side: GpuResult, probes: Mapping[str, ProbeRecord],
                 workload: ProbeRecord | None) -> None:
    """No point of a side, as run or re-tuned, is above its GPU's peak (MFU above 1)."""
    for p in (*side.sweep, *side.as_run):
        if p.mfu is None or p.mfu <= 1:
            continue
        blame = _anchor(decision, workload) or _driver(decision, side, probes)
        raise blame.error(
            f"the projection puts {side.gpu} at {p.mfu:.0%} of its peak at {p.seq_len:,} "
            f"tokens ({p.binding or 'nothing'} bound); no kernel runs above its peak")


def _speedups(decision: Decision, current: GpuResult, target: GpuResult,
              probes: Mapping[str, ProbeRecord]) -> None:
    for p in target.sweep:
        s = p.speedup
        if s is None or 1 / B.MAX_SPEEDUP <= s <= B.MAX_SPEEDUP:
            continue
        slow = target if s < 1 else current
        ratio = f"{1 / s:,.0f}x slower" if s < 1 else f"{s:,.0f}x faster"
        raise _driver(decision, slow, probes).error(
            f"the projection makes {target.gpu} {ratio} than {current.gpu} per GPU at "
            f"{p.seq_len:,} tokens ({_why(slow)}); no real pair of GPUs is more than "
            f"{B.MAX_SPEEDUP:,.0f}x apart")


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


def _anchor(decision: Decision, workload: ProbeRecord | None) -> _Blame | None:
    """The measurement the decision is anchored on, where it is: the answers' own, or the
    workload-probe record's whole-model throughput."""
    measured = decision.answers.measured
    if measured is not None:
        return _Blame("the measured run (measured)", "measured", measured.what)
    anchor = decision.anchor
    if anchor is None or workload is None or anchor.source.startswith("user"):
        return None
    stamp = workload.stamp
    return _Blame(f"the workload probe record of {decision.current.gpu} ({stamp.hostname} "
                  f"{stamp.date})", workload.workload_field("tokens_per_s"), anchor.measured,
                  workload.origin)


def _driver(decision: Decision, side: GpuResult, probes: Mapping[str, ProbeRecord]) -> _Blame:
    """The input most likely to make `side` implausibly slow: its power limit, a layout of
    its own, the network where that binds, the probe-record figure its slowest part runs
    at, else the workload as a whole."""
    answers = decision.answers
    for key, watts in answers.power_limits_w.items():
        if key.split("@")[0] == side.gpu:
            return _Blame(f"power_limits_w.{key}", f"power_limits_w.{key}", watts)
    if side.gpu in answers.layouts:
        return _Blame(f"layouts.{side.gpu}", f"layouts.{side.gpu}")
    point = side.point(decision.primary_seq_len)
    if point is not None and point.binding == "network":
        return _Blame("workload.nic_gbit", "workload.nic_gbit", answers.workload.nic_gbit)
    record = probes.get(side.gpu)
    measured = _probed_rate(side, point) if record is not None else None
    if record is not None and measured is not None:
        section = next(v for k, v in _SECTION.items() if measured.quantity.startswith(k))
        return _Blame(
            f"the probe record of {side.gpu} ({record.stamp.hostname} {record.stamp.date}): "
            f"its {measured.quantity} of {measured.value:,.4g} {measured.unit}",
            section if record.origin else f"probes.{side.gpu}.{section}", file=record.origin)
    return _Blame("the workload's layout and sizes", "workload")


_SECTION = {"matmul": "matmul", "attention": "attention", "HBM bandwidth": "bandwidth",
            "host link": "bandwidth", "scale-up link": "collectives"}
"""The probe record's section each measured rate comes from."""
_RATE_OF = {"memory": "HBM bandwidth", "network": "scale-up link", "host": "host link"}


def _probed_rate(side: GpuResult, point: SweepPoint | None) -> Evidence | None:
    """The measured rate (from the side's probe record) that the slowest part of its step
    runs at, if that part's rate came from the record."""
    if point is None or not point.bucket_seconds or side.assumptions is None:
        return None
    slowest = max(point.bucket_seconds, key=point.bucket_seconds.__getitem__)
    resource = point.bucket_binding.get(slowest)
    quantity = ("attention" if slowest == "attention" else "matmul") if resource == "compute" \
        else _RATE_OF.get(resource or "")
    return next((e for e in side.assumptions.evidence if e.source == "probe" and quantity
                 and e.quantity.startswith(quantity)), None)


def _why(side: GpuResult) -> str:
    point = next((p for p in side.sweep if p.mfu is not None), None)
    if point is None or point.mfu is None:
        return f"{side.gpu} projected at an implausible rate"
    return f"{side.gpu} at {point.mfu:.2g} of its peak, bound by {point.binding or 'nothing'}"
