"""Nothing non-finite past load: every decision and report built from valid answers is finite.

The answers are generated anywhere inside their bounds (benchmarks/fuzz_inputs.py), with
the edges drawn often: 2**18 GPUs, $1,000/GPU-hour, 1e18 tokens, a 10 GW power cap. The
property is written against the public entry (answers -> decide -> report TOML -> read
back), so it keeps guarding whatever engine sits behind `decide`.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from advisor.core.comparison import decide
from advisor.core.errors import InputError
from advisor.core.formats import NonFiniteError, assert_finite
from advisor.core.model.answers import parse_answers
from advisor.core.report.document import Provenance, build_report, parse_report, report_to_toml
from advisor.io.catalog_store import load_catalog

_spec = importlib.util.spec_from_file_location(
    "fuzz_inputs", Path(__file__).parents[2] / "benchmarks" / "fuzz_inputs.py")
assert _spec and _spec.loader
fuzz_inputs = importlib.util.module_from_spec(_spec)
sys.modules["fuzz_inputs"] = fuzz_inputs
_spec.loader.exec_module(fuzz_inputs)

CATALOG = load_catalog()
PROVENANCE = Provenance(advisor_version="test", catalog_version="test",
                        created=datetime(2026, 1, 1, tzinfo=UTC))


def _decide_and_report(data: dict[str, Any]) -> str | None:
    """The TOML report `advisor decide` would write, or None when the answers are refused."""
    from advisor.core.economics.configs import sweep_configs
    from advisor.core.economics.stages import analyse_pipeline

    try:
        answers = parse_answers(data, "answers.toml")
        decision = decide(answers, CATALOG)
        configs = sweep_configs(answers, CATALOG) if answers.configs else None
        pipeline = analyse_pipeline(answers.pipeline, CATALOG) if answers.pipeline else None
    except InputError as exc:
        line = exc.one_line()
        assert line and "\n" not in line and "nan" not in line.lower().split()
        return None
    report = build_report(decision, CATALOG, {}, PROVENANCE, configs=configs, pipeline=pipeline)
    return report_to_toml(report)


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=fuzz_inputs.answers_data())
def test_decisions_and_reports_from_any_valid_answers_are_finite(data: dict[str, Any]) -> None:
    text = _decide_and_report(data)
    if text is None:
        return
    for word in ("nan", "inf"):
        assert f"= {word}" not in text and f"= -{word}" not in text
    again = parse_report(text, "report.toml")  # reads back: the loader refuses NaN, so this
    assert_finite(again.model_dump(), "report")  # also proves none was written


def test_the_published_repro_prices_are_refused_or_finite() -> None:
    base = {"current": "h200-sxm", "targets": ["b200-sxm"],
            "workload": {"model": "llama-3.1-8b", "seq_lens": [4096], "token_budget": 1e12}}
    for price in (math.inf, 1e308, math.nan, -1.0, 0.0):
        with pytest.raises(InputError):
            parse_answers(base | {"prices": {"h200-sxm": price}})
    with pytest.raises(InputError, match="less than or equal"):
        parse_answers(base | {"power_cap_kw": 1e308})
    with pytest.raises(InputError, match="less than or equal"):
        parse_answers(base | {"workload": base["workload"] | {"gpus": 10**30}})
    # the largest price and power cap allowed still give a finite report
    text = _decide_and_report(base | {"prices": {"h200-sxm": 1000.0}, "power_cap_kw": 1e7})
    assert text is not None and "usd = inf" not in text


def test_a_non_finite_figure_reaching_a_report_is_a_bug_not_bad_input() -> None:
    with pytest.raises(NonFiniteError, match=r"targets\.0\.job\.usd is inf"):
        assert_finite({"targets": [{"job": {"usd": math.inf}}]}, "decision report")
    assert not issubclass(NonFiniteError, InputError)  # a traceback, as bugs get
