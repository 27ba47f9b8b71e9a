"""The shipped catalog loads, and every kind of corruption is rejected with one precise line."""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from advisor.core.errors import InputError
from advisor.core.model.catalog import CATALOG_FILES, build_catalog
from advisor.io.catalog_store import load_catalog, read_shipped_texts

REFERENCE_IDS = [
    "a100-sxm", "a100-pcie", "h100-sxm", "h100-pcie", "h100-nvl", "h200-sxm", "gh200-144g",
    "gh200-96g", "b200-sxm", "b300-sxm", "gb200", "gb300", "rtx-pro-6000-bw-server", "l40s", "l4",
    "mi250", "mi250x", "mi300x", "mi325x", "mi355x", "gaudi2", "gaudi3", "tpu-v4", "tpu-v5e",
    "tpu-v5p", "tpu-v6e", "tpu-v7x", "trainium2",
]
EXTRA_IDS = ["rtx-4090", "rtx-5090", "rtx-6000-ada", "l40", "a10", "a10g", "rtx-a6000", "t4"]


def test_every_required_accelerator_is_present(catalog):
    ids = {g.id for g in catalog.gpus}
    assert len(ids) >= 37
    missing = [i for i in REFERENCE_IDS + EXTRA_IDS if i not in ids]
    assert not missing
    assert any(i.startswith("v100") for i in ids)


def test_every_figure_group_has_a_source_and_date(catalog):
    for g in catalog.gpus:
        groups = [g.memory, g.interconnect, g.power, g.peak_tflops, *g.mamf.values()]
        for grp in groups:
            if grp is None:
                continue
            assert grp.source and all(s.strip() for s in grp.source), g.id
            assert grp.retrieved.year >= 2020, g.id


def test_peaks_are_dense_and_ordered(catalog):
    for g in catalog.gpus:
        p = g.peak_tflops
        if p.bf16 and p.fp8:
            assert p.fp8 >= p.bf16, g.id
        if p.fp8 and p.fp4:
            assert p.fp4 >= p.fp8, g.id
        for dtype, m in g.mamf.items():
            peak = p.get(dtype)
            assert peak is None or m.tflops <= peak, (g.id, dtype)


def test_published_reference_figures_survive(catalog):
    """Spot-check figures quoted in the public H200->B200 upgrade guide."""
    h200, b200 = catalog.gpu("h200-sxm"), catalog.gpu("b200-sxm")
    assert h200.peak_tflops.bf16 == 989.0 and b200.peak_tflops.bf16 == 2250.0
    assert h200.mamf["bf16"].tflops == 794.5 and b200.mamf["bf16"].tflops == 1745.0
    assert h200.mamf["fp8"].tflops == 1453.4 and b200.mamf["fp8"].tflops == 3432.5
    assert b200.mamf["bf16"].tflops / h200.mamf["bf16"].tflops == pytest.approx(2.20, abs=0.005)
    assert h200.memory and b200.memory
    assert b200.memory.bandwidth_tbps / h200.memory.bandwidth_tbps == pytest.approx(1.667, 0.01)


def test_every_gpu_arch_defines_formats(catalog):
    for g in catalog.gpus:
        arch = catalog.arch_of(g)
        assert arch.formats, g.id
    assert "fp8_e4m3fnuz" in catalog.archs["gfx942"].formats
    assert "fp8_e4m3" not in catalog.archs["gfx942"].formats
    assert "fp8_e4m3" in catalog.archs["gfx950"].formats
    assert "nvfp4" in catalog.archs["sm_100"].formats
    assert "fp8_e4m3" not in catalog.archs["sm_80"].formats


def _price_defaults():
    """scripts/price_defaults.py, which reads the shared price reference."""
    import importlib.util
    import sys

    path = Path(__file__).resolve().parents[2] / "scripts" / "price_defaults.py"
    spec = importlib.util.spec_from_file_location("price_defaults", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_each_default_price_is_the_median_of_its_dated_quotes(catalog):
    """Every default is the median of the reference's dated on-demand quotes (one per
    provider), dated by the newest and cited with each; 29 GPUs have one."""
    script = _price_defaults()
    medians = script.medians()
    assert len(medians) == 29
    for m in medians:
        assert m.usd_per_gpu_hour == pytest.approx(m.published, abs=0.001), m.name
        price = catalog.default_price(m.gpu)
        assert price is not None, m.gpu
        assert price.usd_per_hour == pytest.approx(m.usd_per_gpu_hour), m.gpu
        assert price.retrieved == m.newest.dated, m.gpu
        assert len(price.source) == len(m.quotes) + 1, m.gpu  # the reference, then each quote
        assert price.label.startswith(("median of", "the one on-demand quote")), m.gpu
    priced = [g.id for g in catalog.gpus if catalog.default_price(g.id)]
    assert len(priced) == 29 and {m.gpu for m in medians} == set(priced)
    h100_quotes = {p.usd_per_hour for p in catalog.prices_for("h100-sxm")}
    assert {2.79, 3.9, 4.275} <= h100_quotes  # the alternatives stay beside the default


def test_software_matrix_covers_the_required_packages(catalog):
    required = [
        "torch", "cuda-toolkit", "cudnn", "triton", "flash-attn", "flash-attn-3", "flash-attn-4",
        "transformer-engine", "deepspeed", "megatron-core", "vllm", "torchao", "bitsandbytes",
        "liger-kernel", "flash-linear-attention",
    ]
    for pkg in required:
        assert pkg in catalog.packages, pkg
        assert any(s.package == pkg for s in catalog.support), pkg
    statuses = {s.status for s in catalog.support}
    assert statuses == {"ga", "beta", "unsupported"}


def test_loose_match_lists_variants(catalog):
    ids = {g.id for g in catalog.match("h100")}
    assert {"h100-sxm", "h100-pcie", "h100-nvl"} <= ids
    assert catalog.gpu("H100-SXM").id == "h100-sxm"


def test_unknown_id_suggests(catalog):
    with pytest.raises(InputError) as exc:
        catalog.gpu("h1000-sxm")
    assert "did you mean" in str(exc.value) and "h100-sxm" in str(exc.value)


# --- corruption: each file, each check, one precise line -------------------------------

Mutator = Callable[[dict[str, Any]], None]


def _find(items: list[dict[str, Any]], key: str, value: str) -> dict[str, Any]:
    return next(i for i in items if i.get(key) == value)


def _gpu(doc: dict[str, Any], gid: str = "h100-sxm") -> dict[str, Any]:
    return _find(doc["gpu"], "id", gid)


def _dup_gpu(doc: dict[str, Any]) -> None:
    doc["gpu"].append(copy.deepcopy(_gpu(doc)))


def _set(path: str, value: Any, gid: str = "h100-sxm") -> Mutator:
    def mutate(doc: dict[str, Any]) -> None:
        node = _gpu(doc, gid)
        *parents, leaf = path.split(".")
        for p in parents:
            node = node[p]
        node[leaf] = value
    return mutate


def _drop(path: str, gid: str = "h100-sxm") -> Mutator:
    def mutate(doc: dict[str, Any]) -> None:
        node = _gpu(doc, gid)
        *parents, leaf = path.split(".")
        for p in parents:
            node = node[p]
        del node[leaf]
    return mutate


def _first(table: str, field: str, value: Any) -> Mutator:
    def mutate(doc: dict[str, Any]) -> None:
        doc[table][0][field] = value
    return mutate


def _second_default(doc: dict[str, Any]) -> None:
    extra = copy.deepcopy(_find(doc["price"], "gpu", "h100-sxm"))
    extra["default"] = True
    extra["label"] = "another default"
    doc["price"].append(extra)


CASES: list[tuple[str, Mutator, list[str]]] = [
    ("gpus.toml", _set("memory.bandwidth_tbps", -3.35),
     ["gpus.toml", "h100-sxm", "memory.bandwidth_tbps", "-3.35"]),
    ("gpus.toml", _set("peak_tflops.fp8", 500.0),
     ["gpus.toml", "h100-sxm", "peak_tflops", "fp8 peak 500.0 is below bf16"]),
    ("gpus.toml", _set("mamf.bf16.tflops", 5000.0),
     ["gpus.toml", "h100-sxm", "mamf.bf16 5000.0 exceeds peak_tflops.bf16"]),
    ("gpus.toml", _set("arch", "sm_999"), ["gpus.toml", "h100-sxm", "'arch'", "sm_999"]),
    ("gpus.toml", _set("power.tdp_w", 70000), ["gpus.toml", "h100-sxm", "power.tdp_w", "70000"]),
    ("gpus.toml", _drop("peak_tflops.source"),
     ["gpus.toml", "h100-sxm", "peak_tflops.source", "Field required"]),
    ("gpus.toml", _set("peak_tflops.retrieved", "last year"),
     ["gpus.toml", "h100-sxm", "peak_tflops.retrieved", "last year"]),
    ("gpus.toml", _set("vendor", "Nvidia Corp"),
     ["gpus.toml", "h100-sxm", "vendor", "Nvidia Corp"]),
    ("gpus.toml", _set("peak_tflops.fp7", 1.0), ["gpus.toml", "h100-sxm", "peak_tflops.fp7"]),
    ("gpus.toml", _dup_gpu, ["gpus.toml", "duplicate GPU id", "h100-sxm"]),
    ("archs.toml", _first("arch", "formats", ["bf16", "fp7"]), ["archs.toml", "formats.1", "fp7"]),
    ("software.toml", _first("support", "status", "maybe"),
     ["software.toml", "status", "maybe"]),
    ("software.toml", _first("support", "package", "not-a-package"),
     ["software.toml", "package not declared", "not-a-package"]),
    ("software.toml", _first("equivalent", "package", "not-a-package"),
     ["software.toml", "package not declared", "not-a-package"]),
    ("software.toml", _first("support", "arch", "sm_999"),
     ["software.toml", "architecture not defined", "sm_999"]),
    ("prices.toml", _first("price", "usd_per_hour", -1.0),
     ["prices.toml", "usd_per_hour", "-1.0"]),
    ("prices.toml", _first("price", "gpu", "h999"), ["prices.toml", "GPU not defined", "h999"]),
    ("prices.toml", _second_default, ["prices.toml", "h100-sxm", "more than one default"]),
]


@pytest.mark.parametrize(("file", "mutate", "expected"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_corrupted_copy_is_rejected(file: str, mutate: Mutator, expected: list[str]) -> None:
    texts = read_shipped_texts()
    doc = tomllib.loads(texts[file])
    mutate(doc)
    texts[file] = tomlkit.dumps(doc)
    with pytest.raises(InputError) as exc:
        build_catalog(texts)
    line = exc.value.one_line()
    assert "\n" not in line
    for needle in expected:
        assert needle in line, (needle, line)


@pytest.mark.parametrize("file", CATALOG_FILES)
def test_broken_toml_names_file_and_line(file: str) -> None:
    texts = read_shipped_texts()
    texts[file] = texts[file] + "\n[[broken\n"
    with pytest.raises(InputError) as exc:
        build_catalog(texts)
    line = exc.value.one_line()
    assert file in line and "not valid TOML" in line and "line" in line



def test_the_decoded_catalog_is_cached_and_still_validated(tmp_path, monkeypatch) -> None:
    """The second load reads the decoded files from the cache, keyed on their bytes; a
    damaged cache is decoded again; a planted cache is validated like any catalog."""
    import json

    from advisor.io import catalog_store
    from advisor.io.catalog_store import SHIPPED_ORIGIN, shipped_docs

    monkeypatch.setenv("ADVISOR_HOME", str(tmp_path))
    fresh = build_catalog(read_shipped_texts(), SHIPPED_ORIGIN)
    assert load_catalog() == fresh
    [cache] = (tmp_path / "cache").glob("catalog-*.json")
    assert load_catalog() == fresh  # from the cache

    cache.write_text("{not json")
    assert load_catalog() == fresh and json.loads(cache.read_text())  # rebuilt and rewritten

    docs = shipped_docs()
    docs["gpus.toml"]["gpu"][0]["memory"]["gib"] = -5  # a planted, invalid figure
    cache.write_text(json.dumps(docs, default=catalog_store._iso))
    with pytest.raises(InputError, match="gib"):
        load_catalog()

    other = {**read_shipped_texts()}
    other["prices.toml"] += "\n# edited\n"
    shipped_docs(other)  # other bytes: another cache file, not the planted one
    assert len(list((tmp_path / "cache").glob("catalog-*.json"))) == 2
