"""The dtype gate: native formats per arch, from in-test archs and from the shipped archs.toml."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from advisor.core.errors import InputError
from advisor.core.gates.dtype import (
    PRECISIONS,
    SCALED_MM_ERROR,
    check_dtype,
    required_formats,
)
from advisor.core.model.catalog import Arch, Catalog, Gpu, Peaks
from advisor.io.catalog_store import load_catalog

ALL_FORMATS = sorted({f for groups in PRECISIONS.values() for g in groups for f in g})


def arch(aid: str, formats: list[str], vendor: str = "NVIDIA") -> Arch:
    return Arch.model_validate(
        {
            "id": aid,
            "vendor": vendor,
            "family": aid,
            "formats": formats,
            "source": ["test"],
            "retrieved": date(2026, 8, 22),
        }
    )


def gpu(gid: str, name: str, arch_id: str, vendor: str = "NVIDIA") -> Gpu:
    return Gpu(
        id=gid,
        name=name,
        vendor=vendor,
        form_factor="SXM",
        arch=arch_id,
        family=arch_id,  # type: ignore[arg-type]
        peak_tflops=Peaks(bf16=100.0, source=["test"], retrieved=date(2026, 8, 22)),
    )


SM90 = arch("sm_90", ["fp64", "tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "int8"])
H100 = gpu("h100-sxm", "H100 SXM", "sm_90")
GFX942 = arch("gfx942", ["bf16", "fp16", "fp8_e4m3fnuz", "fp8_e5m2fnuz", "int8"], "AMD")
MI300X = gpu("mi300x", "MI300X", "gfx942", "AMD")


class TestRequiredFormats:
    def test_fp8_accepts_ocp_or_fnuz(self) -> None:
        assert required_formats("fp8") == [("fp8_e4m3", "fp8_e4m3fnuz")]

    def test_fp4_is_the_ocp_path_and_nvfp4_its_own(self) -> None:
        assert required_formats("fp4") == [("fp4_e2m1", "mxfp4")]
        assert required_formats("nvfp4") == [("nvfp4",)]
        assert required_formats("mxfp4") == [("mxfp4",)]

    def test_fp32_needs_no_matrix_format(self) -> None:
        assert required_formats("fp32") == []

    @pytest.mark.parametrize(
        ("alias", "canonical"),
        [
            ("bfloat16", "bf16"),
            ("BF16", "bf16"),
            ("float16", "fp16"),
            ("float8_e4m3fn", "fp8"),
            (" fp8 ", "fp8"),
        ],
    )
    def test_aliases(self, alias: str, canonical: str) -> None:
        assert required_formats(alias) == required_formats(canonical)

    def test_every_peak_dtype_is_a_precision(self) -> None:
        from advisor.core.model.catalog import PEAK_DTYPES

        assert set(PEAK_DTYPES) <= set(PRECISIONS)

    def test_unknown_precision_is_an_input_error_listing_known_ones(self) -> None:
        with pytest.raises(InputError) as err:
            required_formats("fp7")
        assert err.value.field == "precision"
        assert err.value.value == "fp7"
        assert "bf16" in err.value.message and "nvfp4" in err.value.message


class TestCheckDtype:
    def test_hopper_passes_bf16_and_fp8(self) -> None:
        for p in ("bf16", "fp8"):
            g = check_dtype(H100, SM90, p)
            assert g.passed and g.missing == [] and g.caveats == []
        assert (
            check_dtype(H100, SM90, "bf16").reason == "H100 SXM (sm_90) executes bf16 in hardware"
        )

    @pytest.mark.parametrize("p", ["nvfp4", "fp4", "mxfp4", "mxfp8", "fp6"])
    def test_hopper_fails_blackwell_formats(self, p: str) -> None:
        g = check_dtype(H100, SM90, p)
        assert not g.passed
        assert g.missing == g.required
        assert "cannot run there at any speed" in g.reason

    def test_nvfp4_reason_reads_cleanly(self) -> None:
        assert check_dtype(H100, SM90, "nvfp4").reason == (
            "H100 SXM (sm_90) has no hardware nvfp4: this recipe cannot run there at any speed"
        )

    def test_ampere_fails_fp8_naming_the_formats_and_torch_error(self) -> None:
        a = arch("sm_80", ["fp64", "tf32", "bf16", "fp16", "int8"])
        g = check_dtype(gpu("a100", "A100 SXM", "sm_80"), a, "fp8")
        assert not g.passed
        assert g.missing == ["fp8_e4m3", "fp8_e4m3fnuz"]
        assert "fp8_e4m3" in g.reason and SCALED_MM_ERROR in g.reason

    def test_turing_fails_bf16(self) -> None:
        g = check_dtype(gpu("t4", "T4", "sm_75"), arch("sm_75", ["fp16", "int8"]), "bfloat16")
        assert (g.precision, g.passed, g.missing) == ("bf16", False, ["bf16"])

    def test_mi300_passes_fp8_with_fnuz_caveat(self) -> None:
        g = check_dtype(MI300X, GFX942, "fp8")
        assert g.passed
        assert len(g.caveats) == 1 and "FNUZ" in g.caveats[0] and "OCP e4m3" in g.caveats[0]

    def test_ocp_fp8_gets_no_caveat(self) -> None:
        assert check_dtype(H100, SM90, "fp8").caveats == []

    def test_nvfp4_on_an_mxfp4_arch_suggests_requantizing(self) -> None:
        a = arch("gfx950", ["bf16", "fp8_e4m3", "fp4_e2m1", "mxfp4"], "AMD")
        g = check_dtype(gpu("mi355x", "MI355X", "gfx950", "AMD"), a, "nvfp4")
        assert not g.passed and "MXFP4 re-quantization" in g.reason
        ok = check_dtype(gpu("mi355x", "MI355X", "gfx950", "AMD"), a, "mxfp4")
        assert ok.passed and "no NVFP4" in ok.caveats[0]

    def test_fp32_passes_anywhere(self) -> None:
        tpu = arch("tpu-v5e", ["bf16", "int8"], "Google")
        assert check_dtype(gpu("tpu-v5e", "TPU v5e", "tpu-v5e", "Google"), tpu, "fp32").passed

    def test_gpu_of_another_arch_is_a_bug(self) -> None:
        with pytest.raises(ValueError, match="not gfx942"):
            check_dtype(H100, GFX942, "bf16")

    @given(
        formats=st.lists(st.sampled_from(ALL_FORMATS), min_size=1, unique=True),
        precision=st.sampled_from(sorted(PRECISIONS)),
    )
    def test_pass_iff_every_group_is_met(self, formats: list[str], precision: str) -> None:
        a = arch("x", formats)
        g = check_dtype(gpu("x", "X", "x"), a, precision)
        expected = all(set(group) & set(formats) for group in PRECISIONS[precision])
        assert g.passed is expected
        assert g.passed is (g.missing == [])
        assert set(g.missing) <= set(g.required)
        assert not set(g.missing) & set(formats)


# ---- the shipped catalog

@pytest.fixture(scope="module")
def shipped() -> Catalog:
    return load_catalog()


def shipped_gate(cat: Catalog, gpu_id: str, precision: str):  # type: ignore[no-untyped-def]
    g = cat.gpu(gpu_id)
    return check_dtype(g, cat.arch_of(g), precision)


class TestShippedArchs:
    @pytest.mark.parametrize(
        ("gpu_id", "precision", "passed"),
        [
            ("h100-sxm", "bf16", True),
            ("h100-sxm", "fp8", True),
            ("h100-sxm", "nvfp4", False),
            ("h100-sxm", "fp4", False),
            ("h200-sxm", "mxfp8", False),
            ("a100-sxm", "fp8", False),
            ("a100-sxm", "bf16", True),
            ("t4", "bf16", False),
            ("t4", "fp16", True),
            ("l40s", "fp8", True),
            ("b200-sxm", "nvfp4", True),
            ("b200-sxm", "fp4", True),
            ("b200-sxm", "fp6", True),
            ("mi250", "fp8", False),
            ("mi300x", "fp8", True),
            ("mi300x", "mxfp4", False),
            ("mi355x", "fp8", True),
            ("mi355x", "mxfp4", True),
            ("mi355x", "nvfp4", False),
        ],
    )
    def test_formats(self, shipped: Catalog, gpu_id: str, precision: str, passed: bool) -> None:
        assert shipped_gate(shipped, gpu_id, precision).passed is passed

    def test_mi300x_fp8_carries_the_fnuz_caveat_and_mi355x_not(self, shipped: Catalog) -> None:
        assert any("FNUZ" in c for c in shipped_gate(shipped, "mi300x", "fp8").caveats)
        assert shipped_gate(shipped, "mi355x", "fp8").caveats == []

    def test_sm120_is_not_sm100(self, shipped: Catalog) -> None:
        """Same narrow formats, but sm_120 FP64 is low-rate and unlisted (support-matrix §1a)."""
        for p in ("nvfp4", "mxfp8", "fp4", "fp8"):
            assert shipped_gate(shipped, "rtx-5090", p).passed
            assert shipped_gate(shipped, "b200-sxm", p).passed
        assert shipped_gate(shipped, "b200-sxm", "fp64").passed
        assert not shipped_gate(shipped, "rtx-5090", "fp64").passed

    def test_b300_drops_int8_and_fp64(self, shipped: Catalog) -> None:
        for p in ("int8", "fp64"):
            assert shipped_gate(shipped, "b200-sxm", p).passed
            assert not shipped_gate(shipped, "b300-sxm", p).passed

    def test_gfx90a_fp8_fails_despite_capability_9(self, shipped: Catalog) -> None:
        g = shipped_gate(shipped, "mi250", "fp8")
        assert not g.passed and SCALED_MM_ERROR in g.reason
