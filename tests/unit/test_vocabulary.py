"""The vocabulary is defined once: every choice list a front end offers is the registry's, and
a format added to it (MXFP8, MXFP6) runs end to end: gate, rate, bytes, flags and wizard."""

from __future__ import annotations

import argparse
from typing import get_args

import pytest

from advisor.cli import build_parser
from advisor.core.comparison import decide
from advisor.core.gates.dtype import PRECISIONS as GATE_PRECISIONS
from advisor.core.gates.dtype import WIDTH, check_dtype, format_switch
from advisor.core.model import vocabulary as V
from advisor.core.model.answers import parse_answers
from advisor.core.model.catalog import HwFormat
from advisor.core.model.workload import Workload
from advisor.core.projection.rates import PEAK_KEYS, resolve_rates
from advisor.tui import fields
from probes import workload_shape


def _choices(command: str) -> dict[str, tuple[str, ...]]:
    parser = build_parser([command])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {a.dest: tuple(a.choices) for a in sub.choices[command]._actions
            if a.choices is not None and not isinstance(a.choices, range)}


def _values(options: tuple[tuple[str, object], ...]) -> tuple[object, ...]:
    return tuple(value for _, value in options)


def test_the_literals_are_the_registry() -> None:
    assert get_args(V.Precision) == tuple(V.RECIPE_FORMATS)
    assert ("auto", *V.KV_BYTES) == V.KV_DTYPES
    assert set(V.LOW_PRECISION) == {"fp8", "mxfp8", "mxfp6", "fp4", "nvfp4"}


def test_compare_offers_the_vocabulary() -> None:
    c = _choices("compare")
    assert c["precision"] == c["current_precision"] == c["target_precision"] == V.PRECISIONS
    assert c["kv_dtype"] == V.KV_DTYPES and c["mode"] == V.MODES
    assert c["optimizer"] == V.OPTIMIZERS and c["recompute"] == V.RECOMPUTES
    assert c["attention_kernel"] == V.ATTENTION_KERNEL_NAMES  # 'vendor' too, as answers take
    assert c["framework"] == V.FRAMEWORKS and c["base_format"] == V.BASE_FORMATS


def test_the_wizard_offers_the_vocabulary() -> None:
    assert _values(fields.PRECISIONS) == V.PRECISIONS and _values(fields.KV) == V.KV_DTYPES
    assert set(_values(fields.MODES)) == set(V.MODES)
    assert _values(fields.OPTIMIZERS) == V.OPTIMIZERS
    assert _values(fields.RECOMPUTE) == V.RECOMPUTES
    assert _values(fields.KERNELS) == V.ATTENTION_KERNEL_NAMES
    assert _values(fields.BASES) == V.BASE_FORMATS
    assert {*_values(fields.FRAMEWORKS), *_values(fields.ENGINES)} == set(V.FRAMEWORKS)


def test_the_probes_take_the_same_words() -> None:
    """probes/ imports nothing from advisor, so its copy is held equal here."""
    assert workload_shape.PRECISIONS == V.PRECISIONS
    assert workload_shape.RECOMPUTE == V.RECOMPUTES


def test_every_format_is_known_to_the_gate_the_rates_and_the_catalog() -> None:
    hardware = set(get_args(HwFormat))
    for name, f in V.RECIPE_FORMATS.items():
        assert GATE_PRECISIONS[name] == list(f.needs) and WIDTH[name] == f.width
        assert PEAK_KEYS[name] == f.rates
        assert {h for group in f.needs for h in group} <= hardware, name


def _workload(precision: str) -> Workload:
    return Workload(model="llama-3.1-8b", seq_lens=[4096], precision=precision)


@pytest.mark.parametrize(("gpu", "precision", "runs"), [
    ("b200-sxm", "mxfp8", True), ("h100-sxm", "mxfp8", False),
    ("mi355x", "mxfp6", True), ("mi300x", "mxfp6", False), ("b200-sxm", "mxfp6", True)])
def test_the_gate_reads_the_mx_formats_off_the_architectures(catalog, gpu, precision, runs):
    g = catalog.gpu(gpu)
    gate = check_dtype(g, catalog.arch_of(g), precision)
    assert gate.passed is runs, gate.reason


@pytest.mark.parametrize(("gpu", "precision", "key"), [
    ("b200-sxm", "mxfp8", "fp8"), ("mi355x", "mxfp6", "fp6"), ("b200-sxm", "mxfp6", "fp6")])
def test_an_mx_format_runs_at_its_element_rate(catalog, gpu, precision, key):
    g = catalog.gpu(gpu)
    r = resolve_rates(g, _workload(precision), catalog_gpus=catalog.gpus)
    assert r.peak_tflops == g.peak_tflops.get(key)
    gemm = next(e for e in r.evidence if e.quantity.startswith("matmul") and key in e.quantity)
    assert f"{precision} at the {key} rate" in gemm.detail


def test_an_mx_format_weighs_its_block_scales() -> None:
    assert V.WEIGHT_BYTES["mxfp8"] == pytest.approx(1 + 1 / 32)
    assert V.WEIGHT_BYTES["mxfp6"] == pytest.approx(6 / 8 + 1 / 32)


def test_mxfp8_training_end_to_end(catalog) -> None:
    """H100 FP8 against B200 MXFP8: both run, the switch is named with the MX recipe, and an
    H100 asked for MXFP8 is blocked by its hardware, not projected slower."""
    a = parse_answers({"current": "h100-sxm@8", "targets": ["b200-sxm@8"],
                       "workload": {"model": "llama-3.1-8b", "seq_lens": [4096],
                                    "precision": "fp8"},
                       "layouts": {"b200-sxm": {"precision": "mxfp8"}}})
    r = decide(a, catalog)
    speedup = r.targets[0].sweep[0].speedup
    assert r.targets[0].dtype_gate.passed and speedup is not None and speedup > 1.0
    switch = format_switch("fp8", "mxfp8", True, "h100-sxm", "b200-sxm")
    assert switch is not None and "MX recipe" in switch
    blocked = decide(parse_answers({"current": "b200-sxm@8", "targets": ["h100-sxm@8"],
                                    "workload": {"model": "llama-3.1-8b", "seq_lens": [4096],
                                                 "precision": "mxfp8"}}), catalog)
    assert not blocked.targets[0].dtype_gate.passed
