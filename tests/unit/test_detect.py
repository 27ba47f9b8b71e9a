"""Detection on this box (without importing torch), canned vendor-tool output, and fake tools."""

from __future__ import annotations

import importlib.metadata as md
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.core.model.catalog import Catalog
from advisor.io.catalog_store import load_catalog
from advisor.io.detect import (
    DetectedGpu,
    detect_gpus,
    detect_stack,
    match_gpu,
    parse_amd_smi,
    parse_nvidia_smi,
    parse_rocm_smi,
)

PROBE = """
import json, sys
from advisor.io.detect import detect_stack, detect_gpus
s = detect_stack()
print(json.dumps({"stack": s.model_dump(), "gpus": [g.model_dump() for g in detect_gpus()],
                  "torch_imported": "torch" in sys.modules}))
"""


@pytest.fixture(scope="module")
def this_box(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """detect_* in a fresh interpreter whose PATH holds no vendor tools."""
    empty = tmp_path_factory.mktemp("no-tools")
    env = {**os.environ, "PATH": str(empty)}
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


class TestThisBox:
    def test_torch_is_never_imported(self, this_box: dict[str, object]) -> None:
        assert this_box["torch_imported"] is False

    def test_torch_version_and_build_come_from_version_py(self, this_box: dict) -> None:  # type: ignore[type-arg]
        stack = this_box["stack"]
        assert stack["source"] == "detected"
        assert stack["packages"]["torch"] == md.version("torch")
        if md.version("torch").endswith("+cpu"):
            assert (stack["torch_build"], stack["cuda"], stack["hip"]) == ("cpu", None, None)
        assert stack["needs"][0] == "torch"

    def test_no_vendor_tools_means_no_gpus(self, this_box: dict[str, object]) -> None:
        assert this_box["gpus"] == []


H100_CSV = (
    "NVIDIA H100 80GB HBM3, GPU-6c1c8e9e-8a3f-4b1a-9b3e-0d2a1f0e7c11, 550.54.15, 81559 MiB, 9.0\n"
    "NVIDIA H100 80GB HBM3, GPU-0a0b0c0d-0000-1111-2222-333344445555, 550.54.15, 81559 MiB, 9.0\n"
)


class TestParsers:
    def test_nvidia_csv_with_units(self) -> None:
        gpus = parse_nvidia_smi(H100_CSV)
        assert len(gpus) == 2
        g = gpus[0]
        assert (g.name, g.driver, g.memory_mib, g.capability) == (
            "NVIDIA H100 80GB HBM3",
            "550.54.15",
            81559,
            "9.0",
        )
        assert g.uuid == "GPU-6c1c8e9e-8a3f-4b1a-9b3e-0d2a1f0e7c11" and g.vendor == "NVIDIA"

    def test_nvidia_csv_nounits_na_and_no_compute_cap(self) -> None:
        g = parse_nvidia_smi("NVIDIA B200, [N/A], 570.86.10, 183359\n\n")[0]
        assert (g.uuid, g.memory_mib, g.capability) == (None, 183359, None)

    def test_nvidia_name_with_comma_is_quoted(self) -> None:
        g = parse_nvidia_smi('"Odd, GPU", GPU-1, 580.1, 1024, 12.0\n')[0]
        assert (g.name, g.capability) == ("Odd, GPU", "12.0")

    def test_amd_smi_both_shapes(self) -> None:
        card = {
            "gpu": 0,
            "asic": {"market_name": "AMD Instinct MI300X", "target_graphics_version": "gfx942"},
            "vram": {"size": {"value": 196592, "unit": "MB"}},
            "driver": {"name": "amdgpu", "version": "6.10.5"},
        }
        for text in (json.dumps([card]), json.dumps({"gpu_data": [card]})):
            g = parse_amd_smi(text)[0]
            assert (g.vendor, g.name, g.gcn_arch, g.memory_mib, g.driver) == (
                "AMD",
                "AMD Instinct MI300X",
                "gfx942",
                196592,
                "6.10.5",
            )
        assert parse_amd_smi("not json") == []

    def test_rocm_smi_separate_tables(self) -> None:
        product = json.dumps(
            {
                "card0": {
                    "Card Series": "AMD INSTINCT MI250 (MCM) OAM AC MBA",
                    "GFX Version": "gfx9010",
                },
                "system": {},
            }
        )
        memory = json.dumps({"card0": {"VRAM Total Memory (B)": "68702699520"}})
        unique = json.dumps({"card0": {"Unique ID": "0x1234abcd"}})
        driver = json.dumps({"system": {"Driver version": "6.2.4"}})
        g = parse_rocm_smi(product, memory, unique, driver)[0]
        assert (g.gcn_arch, g.memory_mib, g.uuid, g.driver) == (
            "gfx90a",
            65520,
            "0x1234abcd",
            "6.2.4",
        )

    def test_rocm_smi_without_extras(self) -> None:
        g = parse_rocm_smi(json.dumps({"card0": {"Card Series": "X", "GFX Version": "gfx942"}}))[0]
        assert (g.gcn_arch, g.memory_mib, g.uuid, g.driver) == ("gfx942", None, None, None)


@pytest.fixture(scope="module")
def gpus_catalog() -> Catalog:
    return load_catalog()


class TestMatch:
    @pytest.mark.parametrize(
        ("name", "cap", "gfx", "mib", "expected"),
        [
            ("NVIDIA H100 80GB HBM3", "9.0", None, 81559, "h100-sxm"),
            ("NVIDIA H100 PCIe", "9.0", None, 81559, "h100-pcie"),
            ("NVIDIA H100 NVL", "9.0", None, 95830, "h100-nvl"),
            ("NVIDIA H200", "9.0", None, 143771, "h200-sxm"),
            ("NVIDIA B200", "10.0", None, 183359, "b200-sxm"),
            ("NVIDIA GeForce RTX 5090", "12.0", None, 32607, "rtx-5090"),
            ("NVIDIA A100-SXM4-80GB", "8.0", None, 81920, "a100-sxm"),
            ("Tesla T4", "7.5", None, 15360, "t4"),
            ("AMD Instinct MI300X", None, "gfx942", 196592, "mi300x"),
            ("AMD Instinct MI355X", None, "gfx950", 294896, "mi355x"),
        ],
    )
    def test_known_boards(
        self,
        gpus_catalog: Catalog,
        name: str,
        cap: str | None,
        gfx: str | None,
        mib: int,
        expected: str,
    ) -> None:
        vendor = "AMD" if gfx else "NVIDIA"
        g = DetectedGpu(vendor=vendor, name=name, capability=cap, gcn_arch=gfx, memory_mib=mib)
        assert match_gpu(gpus_catalog, g)[0] == expected

    def test_unknown_board_says_so(self, gpus_catalog: Catalog) -> None:
        gid, note = match_gpu(
            gpus_catalog, DetectedGpu(vendor="NVIDIA", name="NVIDIA Z9", capability="9.0")
        )
        assert gid is None and "no catalog GPU matches" in note

    def test_memory_picks_between_same_named_boards(self, gpus_catalog: Catalog) -> None:
        for mib, expected in ((97871, "gh200-96g"), (146831, "gh200-144g")):
            g = DetectedGpu(
                vendor="NVIDIA", name="NVIDIA GH200 480GB", capability="9.0", memory_mib=mib
            )
            assert match_gpu(gpus_catalog, g)[0] == expected

    def test_ambiguous_board_lists_candidates(self, gpus_catalog: Catalog) -> None:
        g = DetectedGpu(
            vendor="NVIDIA", name="NVIDIA GH200 Grace Hopper Superchip", capability="9.0"
        )
        gid, note = match_gpu(gpus_catalog, g)
        assert gid is None and "gh200-144g" in note and "gh200-96g" in note


def fake_tool(bindir: Path, name: str, script: str) -> None:
    path = bindir / name
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


class TestFakeTools:
    def test_nvidia_smi_rows_get_catalog_ids(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gpus_catalog: Catalog
    ) -> None:
        (tmp_path / "rows.csv").write_text(H100_CSV)
        fake_tool(
            tmp_path,
            "nvidia-smi",
            f'while IFS= read -r l; do echo "$l"; done < {tmp_path}/rows.csv',
        )
        monkeypatch.setenv("PATH", str(tmp_path))
        gpus = detect_gpus(gpus_catalog)
        assert [g.catalog_id for g in gpus] == ["h100-sxm", "h100-sxm"]
        assert detect_stack(gpus=gpus).driver == "550.54.15"

    def test_old_driver_without_compute_cap_falls_back(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        fake_tool(
            tmp_path,
            "nvidia-smi",
            """case "$*" in
  *compute_cap*) echo 'Field "compute_cap" is not a valid field to query.'; exit 2;;
  *) echo 'Tesla T4, GPU-1, 470.82.01, 15109 MiB';;
esac""",
        )
        monkeypatch.setenv("PATH", str(tmp_path))
        [g] = detect_gpus()
        assert (g.name, g.capability, g.memory_mib) == ("Tesla T4", None, 15109)

    def test_a_hanging_tool_times_out_to_nothing(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        fake_tool(tmp_path, "nvidia-smi", "exec sleep 30")
        monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
        assert detect_gpus(timeout=0.5) == []

    def test_rocm_smi_when_amd_smi_is_absent(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        product = json.dumps(
            {"card0": {"Card Series": "AMD Instinct MI300X", "GFX Version": "gfx942"}}
        )
        fake_tool(
            tmp_path,
            "rocm-smi",
            f"""case "$*" in
  *showproductname*) echo '{product}';;
  *) exit 1;;
esac""",
        )
        monkeypatch.setenv("PATH", str(tmp_path))
        [g] = detect_gpus()
        assert (g.vendor, g.gcn_arch, g.memory_mib) == ("AMD", "gfx942", None)


class FakeNvml:
    """nvidia-ml-py's calls, answering for two H100s (or failing to start)."""

    class NVMLError(Exception):
        pass

    def __init__(self, starts: bool = True) -> None:
        self.starts = starts
        self.shut = False

    def nvmlInit(self) -> None:
        if not self.starts:
            raise self.NVMLError("Driver Not Loaded")

    def nvmlShutdown(self) -> None:
        self.shut = True

    def nvmlSystemGetDriverVersion(self) -> bytes:
        return b"550.54.15"

    def nvmlDeviceGetCount(self) -> int:
        return 2

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:
        return i

    def nvmlDeviceGetName(self, h: int) -> str:
        return "NVIDIA H100 80GB HBM3"

    def nvmlDeviceGetUUID(self, h: int) -> str:
        return f"GPU-{h}"

    def nvmlDeviceGetCudaComputeCapability(self, h: int) -> tuple[int, int]:
        return 9, 0

    def nvmlDeviceGetMemoryInfo(self, h: int) -> object:
        return type("Memory", (), {"total": 81559 * 2**20})()


class TestNvml:
    def test_nvml_is_asked_before_nvidia_smi(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gpus_catalog: Catalog
    ) -> None:
        fake = FakeNvml()
        monkeypatch.setitem(sys.modules, "pynvml", fake)
        fake_tool(tmp_path, "nvidia-smi", "echo 'Tesla T4, GPU-9, 470.82.01, 15109 MiB'")
        monkeypatch.setenv("PATH", str(tmp_path))
        gpus = detect_gpus(gpus_catalog)
        assert [(g.name, g.uuid, g.driver, g.memory_mib, g.capability, g.catalog_id)
                for g in gpus] == [
            ("NVIDIA H100 80GB HBM3", f"GPU-{i}", "550.54.15", 81559, "9.0", "h100-sxm")
            for i in range(2)]
        assert fake.shut

    def test_nvml_that_will_not_start_falls_back_to_the_tool(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setitem(sys.modules, "pynvml", FakeNvml(starts=False))
        fake_tool(tmp_path, "nvidia-smi", "echo 'Tesla T4, GPU-9, 470.82.01, 15109 MiB'")
        monkeypatch.setenv("PATH", str(tmp_path))
        [g] = detect_gpus()
        assert (g.name, g.driver) == ("Tesla T4", "470.82.01")

    def test_no_nvml_module_means_the_tool(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from advisor.io.detect import nvml_gpus

        monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails
        assert nvml_gpus() is None
