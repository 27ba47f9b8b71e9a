"""Scoring: each case's error, and the accuracy of held-out, in-sample and input cases apart."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable

import numpy as np

from advisor.core.model.catalog import Catalog
from advisor.core.projection.calibration import CAL, Z90, Calibration
from advisor.core.validation.cases import (
    RATIO_KINDS,
    Accuracy,
    Basis,
    CaseResult,
    CaseSpec,
    Summary,
)
from advisor.core.validation.predict import naive, need, predict


def fitted_groups(cal: Calibration = CAL) -> set[str]:
    groups = {g for note in cal.notes().values() for g in note.fitted_to}
    return groups | {g for curve in cal.attention.values() for g in curve.fitted_to}


def _looked_at(cal: Calibration) -> set[str]:
    """Case groups some constant was chosen after looking at."""
    return {g for note in cal.notes().values() for g in note.chosen_after}


def _basis(case: CaseSpec, groups: set[str]) -> Basis:
    if case.basis == "input":
        return "input"
    return "in-sample" if case.group in groups else "held-out"


def evaluate(case: CaseSpec, catalog: Catalog, groups: set[str], cal: Calibration = CAL
             ) -> CaseResult:
    predicted, low, high = predict(case, catalog, cal)
    basis = _basis(case, groups)
    formats = {v.precision for v in case.layouts.values() if v.precision}
    switch = case.workload is not None and bool(formats - {case.workload.precision})
    common = dict(id=case.id, title=case.title, kind=case.kind, basis=basis,
                  category=case.category, group=case.group, source=case.source, switch=switch)
    if case.measured is None:
        expected = need(case.expected, case, "expected")
        return CaseResult(**common, predicted=predicted, measured=expected, error=None,
                          low=None, high=None, naive=None, naive_error=None, tolerance=0.0,
                          passed=predicted == expected)
    value = float(predicted)
    error = (value - case.measured) / case.measured
    spec = naive(case, catalog) if case.kind in RATIO_KINDS else None
    naive_error = (spec - case.measured) / case.measured if spec is not None else None
    return CaseResult(**common, predicted=value, measured=case.measured, error=error, low=low,
                      high=high, naive=spec, naive_error=naive_error, tolerance=case.tolerance,
                      passed=abs(error) <= case.tolerance)


def _median_abs(values: list[float | None]) -> float:
    present = [abs(v) for v in values if v is not None and math.isfinite(v)]
    return statistics.median(present) if present else float("nan")


def _group_weighted(results: list[CaseResult], key: Callable[[CaseResult], float | None]
                    ) -> float:
    """The median over groups of each group's median |error|: one source counts once."""
    groups: dict[str, list[float | None]] = {}
    for r in results:
        groups.setdefault(r.group or r.id, []).append(key(r))
    per = [_median_abs(v) for v in groups.values()]
    per = [p for p in per if math.isfinite(p)]
    return statistics.median(per) if per else float("nan")


def _accuracy(results: list[CaseResult]) -> Accuracy:
    banded = [r for r in results if r.low is not None and r.high is not None]
    inside = [r for r in banded if r.low <= float(r.measured) <= r.high]  # type: ignore[operator]
    return Accuracy(
        cases=len(results), median=_median_abs([r.error for r in results]),
        group_weighted=_group_weighted(results, lambda r: r.error),
        naive_median=_median_abs([r.naive_error for r in results]),
        naive_group_weighted=_group_weighted(results, lambda r: r.naive_error),
        coverage=len(inside) / len(banded) if banded else None)


def _suggested_sigma(results: list[CaseResult], cal: Calibration) -> float:
    """The model sigma whose band, added to each case's rate spread, holds 90% of them."""
    need = []
    for r in results:
        if r.low is None or r.high is None or r.error is None:
            continue
        total = math.log(r.high / float(r.predicted)) / Z90
        rates = math.sqrt(max(total**2 - cal.model_sigma**2, 0.0))
        miss = abs(math.log(float(r.predicted) / float(r.measured))) / Z90
        need.append(math.sqrt(max(miss**2 - rates**2, 0.0)))
    if not need:
        return cal.model_sigma
    return float(np.quantile(need, 0.9))


def validate(catalog: Catalog, cases: list[CaseSpec], cal: Calibration = CAL) -> Summary:
    groups = fitted_groups(cal)
    results = [evaluate(c, catalog, groups, cal) for c in cases]
    numeric = [r for r in results if r.error is not None]
    speedups = [r for r in numeric if r.kind == "speedup"]
    held = [r for r in speedups if r.basis == "held-out"]
    return Summary(
        results=results, held_out=_accuracy(held),
        held_out_training=_accuracy([r for r in held if r.category == "training"]),
        held_out_inference=_accuracy([r for r in held if r.category == "inference"]),
        held_out_switch=_accuracy([r for r in held if r.switch]),
        held_out_unseen=_accuracy([r for r in held if r.group not in _looked_at(cal)]),
        in_sample=_accuracy([r for r in speedups if r.basis == "in-sample"]),
        median_abs_error_held_out=_median_abs([r.error for r in numeric
                                               if r.basis == "held-out"]),
        suggested_model_sigma=_suggested_sigma(held, cal),
    )


