"""Validation of the transfer: anchor the current side on each case's published figure for it
and compare the predicted absolute figure on the target with the published one.

This checks the part of anchoring that matters to a user: what carries from their measured
run to the other GPU. Each case gives the absolute error of the target's figure without
anchoring (the model alone) and with it, and the speedup's error both ways; anchoring must
not make the ratio worse.
"""

from __future__ import annotations

import statistics
from typing import Literal

from pydantic import BaseModel, ConfigDict

from advisor.core.comparison import decide
from advisor.core.errors import InputError
from advisor.core.model.catalog import Catalog
from advisor.core.model.measured import MeasuredRun
from advisor.core.projection.calibration import CAL, Calibration
from advisor.core.result import SweepPoint
from advisor.core.validation.cases import CaseSpec
from advisor.core.validation.predict import answers_for, at_primary


class AnchoredRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    group: str
    category: str
    unit: Literal["tokens/s per GPU", "ms per output token"]
    measured_to: float
    modelled_to: float | None  # the target's figure, the model alone
    anchored_to: float | None  # ... anchored on the published current figure
    ratio_error: float | None  # the speedup's error, the model alone
    anchored_ratio_error: float | None
    note: str = ""


class AnchoredGroup(BaseModel):
    model_config = ConfigDict(frozen=True)

    group: str
    cases: int
    absolute: float  # median |error| of the target's figure, the model alone
    anchored: float  # ... anchored
    ratio: float  # median |error| of the speedup, the model alone
    anchored_ratio: float


def _figure(p: SweepPoint, tpot: bool) -> float | None:
    return p.tpot_ms if tpot else p.tokens_per_s_per_gpu


def anchored_row(case: CaseSpec, catalog: Catalog, cal: Calibration = CAL) -> AnchoredRow:
    assert case.value_from is not None and case.value_to is not None
    tpot = case.measure == "tpot"
    answers = answers_for(case, at_primary(case))
    plain = decide(answers, catalog, cal=cal)
    measured = (MeasuredRun(tpot_ms=case.value_from, concurrency=answers.workload.micro_batch,
                            note=case.id) if tpot else
                MeasuredRun(tokens_per_s_per_gpu=case.value_from, note=case.id))
    note = ""
    try:
        anchored = decide(answers.model_copy(update={"measured": measured}), catalog, cal=cal)
    except InputError as exc:
        anchored, note = None, exc.message
    measured_ratio = case.value_to / case.value_from
    if tpot:
        measured_ratio = 1 / measured_ratio

    def ratio_error(d: object) -> float | None:
        from advisor.core.result import Decision

        if not isinstance(d, Decision):
            return None
        s = d.targets[0].sweep[0].speedup
        return s / measured_ratio - 1 if s else None

    def target(d: object) -> float | None:
        from advisor.core.result import Decision

        return _figure(d.targets[0].sweep[0], tpot) if isinstance(d, Decision) else None

    return AnchoredRow(
        id=case.id, group=case.group or case.id, category=case.category,
        unit="ms per output token" if tpot else "tokens/s per GPU", measured_to=case.value_to,
        modelled_to=target(plain), anchored_to=target(anchored),
        ratio_error=ratio_error(plain), anchored_ratio_error=ratio_error(anchored), note=note)


def _median_abs(values: list[float]) -> float:
    return statistics.median(abs(v) for v in values) if values else float("nan")


def anchored_groups(rows: list[AnchoredRow]) -> list[AnchoredGroup]:
    """Per source group: the median |error| of the target's figure and of the speedup, the
    model alone and anchored (a group counts once however many rows it has)."""
    out = []
    for group in dict.fromkeys(r.group for r in rows):
        mine = [r for r in rows if r.group == group and r.modelled_to and r.anchored_to]
        if not mine:
            continue
        out.append(AnchoredGroup(
            group=group, cases=len(mine),
            absolute=_median_abs([r.modelled_to / r.measured_to - 1  # type: ignore[operator]
                                  for r in mine]),
            anchored=_median_abs([r.anchored_to / r.measured_to - 1  # type: ignore[operator]
                                  for r in mine]),
            ratio=_median_abs([r.ratio_error for r in mine if r.ratio_error is not None]),
            anchored_ratio=_median_abs([r.anchored_ratio_error for r in mine
                                        if r.anchored_ratio_error is not None])))
    return out


def validate_anchored(catalog: Catalog, cases: list[CaseSpec], cal: Calibration = CAL
                      ) -> list[AnchoredRow]:
    """Every held-out speedup case that publishes both absolute figures."""
    return [anchored_row(c, catalog, cal) for c in cases
            if c.kind == "speedup" and c.value_from is not None and c.value_to is not None]
