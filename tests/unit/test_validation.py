"""The published cases: each within its stated tolerance, and the accuracy claim kept honest."""

from __future__ import annotations

from dataclasses import fields

import pytest

from advisor.core.projection.calibration import CAL, Calibration
from advisor.core.validation import evaluate, fitted_groups, refit, validate
from advisor.io.cases import load_cases
from advisor.io.catalog_store import load_catalog

CASES = load_cases()


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def summary(catalog):
    return validate(catalog, CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_within_tolerance(case, catalog) -> None:
    result = evaluate(case, catalog, fitted_groups())
    assert result.passed, (
        f"{case.id}: predicted {result.predicted}, measured {result.measured} "
        f"({case.source})"
    )


def test_every_case_cites_a_source() -> None:
    assert all(c.source.strip() for c in CASES)


def test_we_beat_the_naive_peak_ratio_by_a_wide_margin(summary) -> None:
    assert summary.median_abs_error_speedups_held_out * 3 < (
        summary.median_abs_naive_error_speedups_held_out)
    assert summary.median_abs_naive_error_speedups > 0.15  # the published 16-24% miss


def test_the_stated_model_error_covers_the_held_out_error(summary) -> None:
    assert CAL.model_sigma >= summary.median_abs_error_speedups_held_out
    assert CAL.model_sigma >= summary.median_abs_error_held_out


def test_held_out_cases_exist_for_every_kind_of_claim(summary) -> None:
    held = {r.kind for r in summary.results if r.basis == "held-out"}
    assert {"speedup", "tflops", "memory", "max-seq", "busbw", "verdict", "binding"} <= held


def test_every_fitted_group_names_real_cases() -> None:
    groups = {c.group for c in CASES if c.group}
    assert fitted_groups() <= groups


def test_refit_reproduces_the_shipped_constants(catalog) -> None:
    for row in refit(catalog, CASES):
        assert abs(row.drift) < 0.01, f"{row.name}: shipped {row.shipped}, refit {row.refit}"


def test_refit_moves_when_a_measurement_moves(catalog) -> None:
    moved = [c.model_copy(update={"measured": 400.0}) if c.id == "upg-8k-h200-attn-tflops"
             else c for c in CASES]
    row = next(r for r in refit(catalog, moved) if r.name.startswith("attention fa3"))
    assert row.refit == pytest.approx(CAL.attention[("fa3", "hopper")].e_max * 400 / 447, rel=1e-3)


def test_every_constant_has_a_provenance_note() -> None:
    names = {f.name for f in fields(Calibration)} - {"attention"}
    assert names == set(CAL.notes())
    assert all(n.source for n in CAL.notes().values())
