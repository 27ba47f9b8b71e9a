"""Catalog lookup (stdlib-only), conservative device matching, and the plausibility verdict."""

from __future__ import annotations

import pytest

from probes.device import Device
from probes.figures import CatalogGpu, load_catalog, match_device, match_name, parse_gpus
from probes.matmul import verdict

DOC = {
    "gpu": [
        {
            "id": "h100-sxm",
            "name": "NVIDIA H100 SXM 80GB",
            "compute_capability": "9.0",
            "aliases": ["H100 80GB HBM3"],
            "peak_tflops": {"bf16": 989.0, "fp8": 1979.0},
            "mamf": {"bf16": {"tflops": 794.5, "shape": "2048x2048x13312"}},
            "memory": {"gib": 80, "bandwidth_tbps": 3.35},
            "interconnect": {"gbps": 900, "direction": "bidirectional"},
        },
        {
            "id": "h100-pcie",
            "name": "NVIDIA H100 PCIe 80GB",
            "compute_capability": "9.0",
            "memory": {"gib": 80, "bandwidth_tbps": 2.0},
        },
        {
            "id": "h100-nvl",
            "name": "NVIDIA H100 NVL 94GB",
            "compute_capability": "9.0",
            "memory": {"gib": 94},
        },
        {
            "id": "a100-sxm",
            "name": "NVIDIA A100 SXM 80GB",
            "compute_capability": "8.0",
            "memory": {"gib": 80},
        },
        {"id": "gh200-144g", "name": "NVIDIA GH200 (HBM3e)", "compute_capability": "9.0"},
        {"id": "gh200-96g", "name": "NVIDIA GH200 (HBM3)", "compute_capability": "9.0"},
        {"id": "mi300x", "name": "AMD Instinct MI300X", "peak_tflops": {"bf16": "not a number"}},
        {"name": "no id: dropped"},
    ]
}
GPUS = parse_gpus(DOC)


def test_parse_keeps_figures_and_drops_malformed_ones():
    assert [g.id for g in GPUS][-1] == "mi300x"  # the entry without an id is dropped
    h100 = GPUS[0]
    assert h100.peak_tflops == {"bf16": 989.0, "fp8": 1979.0}
    assert h100.mamf_tflops == {"bf16": 794.5}
    assert h100.memory_gbps == pytest.approx(3350.0)
    assert h100.link_unidirectional_gbps == 450.0
    assert GPUS[-1].peak_tflops == {}


@pytest.mark.parametrize(
    ("name", "cc", "mem", "expected"),
    [
        ("NVIDIA H100 80GB HBM3", "9.0", 79.6, "h100-sxm"),
        ("NVIDIA H100 PCIe", "9.0", 79.6, "h100-pcie"),
        ("NVIDIA H100 NVL", "9.0", 93.1, "h100-nvl"),
        ("NVIDIA A100-SXM4-80GB", "8.0", 79.2, "a100-sxm"),
        ("NVIDIA A100-SXM4-40GB", "8.0", 39.4, None),  # a different SKU: memory disagrees
        ("NVIDIA H100 80GB HBM3", "8.0", None, None),  # capability disagrees
        ("NVIDIA GH200 480GB", "9.0", None, None),  # two GH200 entries: ambiguous
        ("AMD Instinct MI300X", None, 192.0, "mi300x"),
        ("Some Future GPU", "11.0", 200.0, None),
    ],
)
def test_matching_is_conservative(name, cc, mem, expected):
    match = match_name(name, cc, GPUS, mem)
    assert (match.gpu.id if match.gpu else None) == expected
    assert match.note
    if expected is None:
        assert "--catalog-id" in match.note


def test_cpu_and_mps_never_get_catalog_figures():
    catalog = (GPUS, None)
    assert (
        match_device(Device("cpu", "x", 1), None, catalog=catalog).note
        == "no catalog figure for CPU"
    )
    assert match_device(Device("mps", "x", 1), None, catalog=catalog).gpu is None


def test_override_and_missing_catalog():
    gpu = Device("cuda", "Weird Name", 1)
    chosen = match_device(gpu, "9.0", None, "H100-SXM", catalog=(GPUS, None))
    assert chosen.gpu is not None and chosen.gpu.id == "h100-sxm"
    with pytest.raises(ValueError, match="unknown --catalog-id"):
        match_device(gpu, "9.0", None, "h999", catalog=(GPUS, None))
    missing = match_device(gpu, "9.0", catalog=([], "no catalog figure: not installed"))
    assert missing.gpu is None and missing.note.startswith("no catalog figure")


def test_shipped_catalog_reads_with_the_stdlib():
    gpus, reason = load_catalog()
    assert reason is None and gpus
    assert any(g.mamf_tflops.get("bf16") for g in gpus)


H100 = GPUS[0]
CUDA = Device("cuda", "NVIDIA H100 80GB HBM3", 8)


def test_verdict_flags_a_slow_box():
    text = verdict(0.88 * 794.5, "bf16", H100, CUDA, None)
    assert text.startswith("12% below the published NVIDIA H100 SXM 80GB MAMF")
    assert "check clocks, thermals and power cap" in text
    rocm = verdict(0.5 * 794.5, "bf16", H100, Device("rocm", "x", 1), None)
    assert "PYTORCH_TUNABLEOP_ENABLED=1" in rocm


def test_verdict_consistent_above_and_implausible():
    assert verdict(800.0, "bf16", H100, CUDA, None).startswith("consistent with")
    assert "above the published" in verdict(950.0, "bf16", H100, CUDA, None)
    assert "above the catalog peak" in verdict(1200.0, "bf16", H100, CUDA, None)
    assert "no published fp8 MAMF" in verdict(1500.0, "fp8", H100, CUDA, None)
    assert verdict(1.0, "bf16", None, Device("cpu", "x", 1), "no catalog figure for CPU") == (
        "no catalog figure for CPU"
    )


def test_catalog_gpu_defaults():
    g = CatalogGpu(id="x", name="X")
    assert g.peak_tflops == {} and g.memory_gbps is None
