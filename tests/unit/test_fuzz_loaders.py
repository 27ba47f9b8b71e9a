"""A bounded, derandomized fraction of benchmarks/fuzz_loaders.py: every loader, a fixed set
of generated and mutated inputs, no tracebacks, no unnamed errors, no poisoned store.

The full run (10,000 inputs per loader, plus the CLI) is `python benchmarks/fuzz_loaders.py`.
Here the per-input limit is generous and nothing is timed, so a slow machine cannot fail it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).parents[2] / "benchmarks"


def _load(name: str):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_load("fuzz_inputs")
fuzz = _load("fuzz_loaders")


@pytest.mark.parametrize("loader", fuzz.LOADERS)
def test_a_fixed_fraction_of_the_fuzz_finds_nothing(loader: str, monkeypatch,
                                                    tmp_path) -> None:
    monkeypatch.setenv("ADVISOR_HOME", str(tmp_path / "home"))
    result = fuzz.worker(loader, n=30, seed_value=20260301, limit_s=120.0, cap=None,
                         derandomize=True)
    counts = result["counts"]
    assert result["inputs"] >= 20
    bad = {k: counts[k] for k in ("unnamed", "traceback", "poisoned", "hang", "memory")
           if counts.get(k)}
    assert not bad, (bad, result["samples"])
    assert counts.get("ok", 0) + counts.get("clean", 0) == result["inputs"]


def test_every_scaling_case_builds_a_document_its_loader_reads(tmp_path, monkeypatch) -> None:
    """The N -> 4N check's inputs are real documents: at a small size each loads, or is
    refused in one line (a cap or a rule), never a traceback. (Its timings are the
    benchmark's to judge, not a test's.)"""
    from advisor.core.errors import InputError

    monkeypatch.setenv("ADVISOR_HOME", str(tmp_path / "home"))
    cases = fuzz._scaling_cases(tmp_path)
    fields = {(loader, field) for loader, field, _, _ in cases}
    assert {("answers", "targets"), ("price_csv", "source (one cell, ';'-separated)"),
            ("catalog", "gpu"), ("catalog", "gpu.0.aliases")} <= fields
    loaded = 0
    for loader, field, build, load in cases:
        try:
            load(build(2))
            loaded += 1
        except InputError as exc:
            assert exc.one_line(), (loader, field)
    assert loaded >= len(cases) // 2  # most cases are valid documents at a small size
