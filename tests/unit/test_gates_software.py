"""The software gate against a small in-test catalog that mirrors support-matrix.toml,
plus the same questions asked of the shipped catalog."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from advisor.core.errors import InputError
from advisor.core.gates.software import SoftwareGate, check_software, gate_all
from advisor.core.model.catalog import Catalog, build_catalog
from advisor.core.model.stack import Stack
from advisor.io.catalog_store import load_catalog

SRC = 'source = ["test"]\nretrieved = 2026-08-22'


def _arch(aid: str, vendor: str, formats: str, cc: str = "") -> str:
    cc_line = f'compute_capability = "{cc}"' if cc else ""
    return f"""
[[arch]]
id = "{aid}"
vendor = "{vendor}"
family = "{aid}"
{cc_line}
formats = [{formats}]
{SRC}
"""


def _gpu(gid: str, name: str, arch: str, vendor: str = "NVIDIA") -> str:
    return f"""
[[gpu]]
id = "{gid}"
name = "{name}"
vendor = "{vendor}"
form_factor = "SXM"
arch = "{arch}"
family = "{arch}"
[gpu.peak_tflops]
bf16 = 100.0
{SRC}
"""


def _pkg(pid: str, kind: str = "kernel", pip: str | None = None) -> str:
    pip_line = f'pip_name = "{pip or pid}"' if pip != "" else ""
    return f"""
[[package]]
id = "{pid}"
name = "{pid}"
kind = "{kind}"
{pip_line}
"""


def _row(package: str, arch: str, min_version: str, status: str, **extra: str) -> str:
    lines = "\n".join(f'{k} = "{v}"' for k, v in extra.items())
    return f"""
[[support]]
package = "{package}"
arch = "{arch}"
min_version = "{min_version}"
status = "{status}"
{lines}
{SRC}
"""


FA2_TURING = "FlashAttention only supports Ampere GPUs or newer."
TE_MXFP8_SM120 = "MXFP8 (for all gemm layouts) is not supported on 12.0+ architectures yet."

ARCHS = "".join(
    [
        _arch("sm_70", "NVIDIA", '"fp16"', "7.0"),
        _arch("sm_75", "NVIDIA", '"fp16", "int8", "int4"', "7.5"),
        _arch("sm_80", "NVIDIA", '"tf32", "bf16", "fp16", "int8"', "8.0"),
        _arch("sm_90", "NVIDIA", '"tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "int8"', "9.0"),
        _arch("sm_100", "NVIDIA", '"bf16", "fp8_e4m3", "mxfp8", "mxfp4", "nvfp4"', "10.0"),
        _arch("sm_103", "NVIDIA", '"bf16", "fp8_e4m3", "mxfp8", "mxfp4", "nvfp4"', "10.3"),
        _arch("sm_120", "NVIDIA", '"bf16", "fp8_e4m3", "mxfp8", "mxfp4", "nvfp4"', "12.0"),
        _arch("gfx942", "AMD", '"bf16", "fp8_e4m3fnuz"'),
        _arch("gfx950", "AMD", '"bf16", "fp8_e4m3", "mxfp4"'),
        _arch("gaudi2", "Intel", '"bf16", "fp8_e4m3"'),
    ]
)
GPUS = "".join(
    [
        _gpu("v100", "NVIDIA V100", "sm_70"),
        _gpu("t4", "NVIDIA T4", "sm_75"),
        _gpu("a100", "NVIDIA A100", "sm_80"),
        _gpu("h100", "NVIDIA H100 SXM", "sm_90"),
        _gpu("b200", "NVIDIA B200", "sm_100"),
        _gpu("b300", "NVIDIA B300", "sm_103"),
        _gpu("rtx-5090", "NVIDIA GeForce RTX 5090", "sm_120"),
        _gpu("mi300x", "AMD Instinct MI300X", "gfx942", "AMD"),
        _gpu("mi355x", "AMD Instinct MI355X", "gfx950", "AMD"),
        _gpu("gaudi2", "Intel Gaudi 2", "gaudi2", "Intel"),
    ]
)
PACKAGES = "".join(
    [
        _pkg("torch", "framework"),
        _pkg("cuda-toolkit", "toolkit", pip=""),
        _pkg("rocm", "runtime", pip=""),
        _pkg("flash-attn"),
        _pkg("flash-attn-3"),
        _pkg("flash-attn-4"),
        _pkg("torch-sdpa-cudnn", pip=""),
        _pkg("transformer-engine", "library"),
        _pkg("liger-kernel", "library"),
    ]
)
ROWS = "".join(
    [
        _row("cuda-toolkit", "sm_90", "11.8", "ga"),
        _row("cuda-toolkit", "sm_100", "12.8", "ga"),
        _row("cuda-toolkit", "sm_103", "12.9", "ga"),
        _row("cuda-toolkit", "sm_120", "12.8", "ga"),
        _row("cuda-toolkit", "sm_70", "", "unsupported", last_version="12.9"),
        _row("torch", "sm_70", "", "ga"),
        _row("torch", "sm_90", "2.0", "ga", build="cu118+"),
        _row("torch", "sm_100", "2.7", "beta", build="cu128"),
        _row("torch", "sm_100", "2.9", "ga", build="cu128 / cu130"),
        _row("torch", "sm_103", "2.7", "beta", build="cu128+"),
        _row("torch", "sm_120", "2.7", "beta", build="cu128"),
        _row("torch", "sm_120", "2.9", "ga", build="cu128 / cu130 (12.0+PTX)"),
        _row("torch", "gfx942", "2.3", "ga", build="rocm6.0+"),
        _row("torch", "gfx950", "2.10", "ga", build="rocm7.1"),
        _row("rocm", "gfx950", "7.0.0", "ga"),
        _row("torch", "gaudi2", "", "ga", variant="hpu"),
        _row("flash-attn", "sm_75", "", "unsupported", error=FA2_TURING),
        _row("flash-attn", "sm_90", "2.0.0", "ga"),
        _row("flash-attn", "sm_100", "2.7.4", "beta"),
        _row("flash-attn", "gfx942", "", "ga", variant="rocm"),
        _row("flash-attn-3", "sm_90", "source build (hopper/)", "beta"),
        _row(
            "flash-attn-3", "sm_100", "", "unsupported", notes="Hopper only; use FA4 on Blackwell"
        ),
        _row("flash-attn-4", "sm_100", "4.0.0b0", "beta"),
        _row("flash-attn-4", "sm_120", "4.0.0b5", "beta"),
        _row("torch-sdpa-cudnn", "sm_100", "2.7", "ga"),
        _row("transformer-engine", "sm_100", "2.0", "ga", variant="fp8+mxfp8"),
        _row("transformer-engine", "sm_100", "2.8", "ga", variant="nvfp4"),
        _row("transformer-engine", "sm_120", "2.0", "ga", variant="fp8"),
        _row(
            "transformer-engine", "sm_120", "", "unsupported", variant="mxfp8", error=TE_MXFP8_SM120
        ),
        _row("transformer-engine", "sm_120", "2.8", "beta", variant="nvfp4"),
    ]
)
PRICES = """
[[price]]
gpu = "h100"
usd_per_hour = 2.5
label = "test price"
default = true
source = ["test"]
retrieved = 2026-08-22
"""


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return build_catalog(
        {
            "archs.toml": ARCHS,
            "gpus.toml": GPUS,
            "software.toml": PACKAGES + ROWS,
            "prices.toml": PRICES,
        }
    )


def stack(torch: str = "2.9.0+cu128", needs: list[str] | None = None, **pkgs: str) -> Stack:
    packages = {"torch": torch, **{k.replace("_", "-"): v for k, v in pkgs.items()}}
    data: dict[str, object] = {"source": "declared", "packages": packages}
    if needs is not None:
        data["needs"] = needs
    return Stack.model_validate(data)


def gate(cat: Catalog, s: Stack, gpu: str, precision: str | None = None) -> SoftwareGate:
    return check_software(s, cat.gpu(gpu), cat, precision=precision)


def finding(g: SoftwareGate, package: str):  # type: ignore[no-untyped-def]
    return next(f for f in g.findings if f.package == package)


class TestTorchOnBlackwell:
    def test_cu126_torch_26_needs_an_upgrade_to_a_cu128_build(self, cat: Catalog) -> None:
        g = gate(cat, stack("2.6.0+cu126"), "b200")
        t = finding(g, "torch")
        assert (g.status, g.fixable, t.status, t.required) == ("blocked", True, "upgrade", "2.7")
        assert t.action.startswith(
            "upgrade torch 2.6.0+cu126 → ≥2.7 with a CUDA 12.8 build (cu128)"
        )
        assert (
            "pip install 'torch>=2.7' --index-url https://download.pytorch.org/whl/cu128"
            in t.action
        )
        assert "sm_100 is not compatible with the current PyTorch installation" in t.message
        assert "no kernel image is available" in t.message
        assert "GA from 2.9" in t.message
        assert g.summary == "needs newer torch on NVIDIA B200 (sm_100)"

    def test_torch_27_cu128_is_beta_until_29(self, cat: Catalog) -> None:
        g = gate(cat, stack("2.7.1+cu128"), "b200")
        t = finding(g, "torch")
        assert (g.status, t.status, t.action) == ("beta", "beta", "")
        assert "GA from 2.9" in t.message

    def test_torch_29_cu128_is_ga(self, cat: Catalog) -> None:
        g = gate(cat, stack("2.9.0+cu128"), "b200")
        assert (g.status, g.fixable, g.actions) == ("ok", True, [])
        assert g.summary == "supported on NVIDIA B200 (sm_100): torch 2.9.0+cu128"

    def test_right_version_wrong_build_is_a_reinstall(self, cat: Catalog) -> None:
        t = finding(gate(cat, stack("2.7.1+cu126"), "b200"), "torch")
        assert t.status == "upgrade"
        assert t.action.startswith("reinstall torch 2.7.1+cu126 → ≥2.7.1 with a CUDA 12.8 build")

    def test_torch_212_plus_has_no_cu128_so_cu130_and_its_driver(self, cat: Catalog) -> None:
        t = finding(gate(cat, stack("2.13.0+cu126"), "b200"), "torch")
        assert "(cu130)" in t.action and "whl/cu130" in t.action and "R580" in t.action

    def test_ngc_prerelease_is_named(self, cat: Catalog) -> None:
        t = finding(gate(cat, stack("2.7.0a0+7c8ec84dab.nv25.03"), "b200"), "torch")
        assert t.status == "upgrade" and "pre-release of 2.7" in t.message

    def test_build_not_stated_passes_with_a_note(self, cat: Catalog) -> None:
        t = finding(gate(cat, stack("2.9.0"), "b200"), "torch")
        assert t.status == "ok" and "needs a CUDA 12.8+ build" in t.message

    def test_sm103_runs_the_wheels_sm100_cubins(self, cat: Catalog) -> None:
        """cuda-toolkit says 12.9 for nvcc, but the torch row's cu128 is what the wheel needs."""
        assert finding(gate(cat, stack("2.7.1+cu128"), "b300"), "torch").status == "beta"


class TestBuildFlavour:
    def test_cuda_build_on_amd_switches_to_rocm(self, cat: Catalog) -> None:
        t = finding(gate(cat, stack("2.9.0+cu128"), "mi355x"), "torch")
        assert t.status == "upgrade"
        assert "is a CUDA build: it cannot drive AMD Instinct MI355X" in t.message
        assert (
            "pip install 'torch>=2.10' --index-url https://download.pytorch.org/whl/rocm7.1"
            in t.action
        )

    def test_rocm_too_old_for_gfx950(self, cat: Catalog) -> None:
        t = finding(gate(cat, stack("2.9.0+rocm6.4"), "mi355x"), "torch")
        assert t.status == "upgrade" and "ROCm 7.1+" in t.message and "(rocm7.1)" in t.action
        assert gate(cat, stack("2.10.0+rocm7.1"), "mi355x").status == "ok"

    def test_rocm_build_on_nvidia_switches_to_cuda(self, cat: Catalog) -> None:
        t = finding(gate(cat, stack("2.9.0+rocm6.4"), "h100"), "torch")
        assert t.status == "upgrade" and "is a ROCm build" in t.message and "whl/cu" in t.action

    def test_cpu_build_cannot_use_the_gpu(self, cat: Catalog) -> None:
        g = gate(cat, stack("2.13.0+cpu"), "h100")
        t = finding(g, "torch")
        assert (g.status, g.fixable) == ("blocked", True)
        assert "CPU-only" in t.message and "whl/cu126" in t.action

    def test_gaudi_needs_intels_torch(self, cat: Catalog) -> None:
        t = finding(gate(cat, stack("2.9.0+cu128"), "gaudi2"), "torch")
        assert t.status == "upgrade" and "cannot drive Intel Gaudi 2" in t.message
        assert "Intel Gaudi software stack" in t.action
        assert gate(cat, stack("2.6.0+hpu_1.21.2-76.gitabf798b"), "gaudi2").status == "ok"

    def test_cuda_13_dropped_volta(self, cat: Catalog) -> None:
        t = finding(gate(cat, stack("2.9.0+cu130"), "v100"), "torch")
        assert t.status == "upgrade" and "dropped sm_70" in t.message
        assert t.action == "reinstall torch 2.9.0+cu130 with a CUDA ≤12.9 build"
        assert gate(cat, stack("2.9.0+cu126"), "v100").status == "ok"


class TestAttentionKernels:
    def test_fa3_on_blackwell_is_unsupported_with_alternatives(self, cat: Catalog) -> None:
        g = gate(cat, stack(flash_attn_3="3.0.0b1"), "b200")
        f = finding(g, "flash-attn-3")
        assert (g.status, g.fixable, f.status) == ("blocked", False, "unsupported")
        assert "Hopper only" in f.message
        assert "flash-attn-4 ≥4.0.0b0 (beta)" in f.alternatives
        assert "torch-sdpa-cudnn ≥2.7 (ga)" in f.alternatives
        assert f.action.startswith("replace flash-attn-3: use ")
        assert "no supporting version of flash-attn-3" in g.summary

    def test_fa3_on_hopper_is_beta_despite_a_prose_minimum(self, cat: Catalog) -> None:
        f = finding(gate(cat, stack(flash_attn_3="3.0.0b1"), "h100"), "flash-attn-3")
        assert f.status == "beta" and f.required == "source build (hopper/)"

    def test_fa2_on_turing_quotes_the_error(self, cat: Catalog) -> None:
        f = finding(gate(cat, stack("2.6.0+cu124", flash_attn="2.8.3"), "t4"), "flash-attn")
        assert f.status == "unsupported"
        assert FA2_TURING in f.message
        assert f.action == "no flash-attn version supports sm_75"

    def test_fa4_is_beta_on_sm100(self, cat: Catalog) -> None:
        g = gate(cat, stack(flash_attn_4="4.0.0b22"), "b200")
        assert g.status == "beta"
        assert finding(g, "flash-attn-4").message == "flash-attn-4 4.0.0b22 on sm_100 is beta"

    def test_fa4_sm120_arrived_later_than_sm100(self, cat: Catalog) -> None:
        s = stack(flash_attn_4="4.0.0b3")
        assert finding(gate(cat, s, "b200"), "flash-attn-4").status == "beta"
        f = finding(gate(cat, s, "rtx-5090"), "flash-attn-4")
        assert (f.status, f.required) == ("upgrade", "4.0.0b5")
        assert f.action == "upgrade flash-attn-4 → ≥4.0.0b5: pip install 'flash-attn-4>=4.0.0b5'"
        assert "pre-release of" not in f.message

    def test_fa2_on_blackwell_is_beta(self, cat: Catalog) -> None:
        assert finding(gate(cat, stack(flash_attn="2.8.3"), "b200"), "flash-attn").status == "beta"
        assert (
            finding(gate(cat, stack(flash_attn="2.7.3"), "b200"), "flash-attn").status == "upgrade"
        )

    def test_rocm_variant_rows_apply_only_to_rocm_targets(self, cat: Catalog) -> None:
        g = gate(cat, stack("2.9.0+rocm6.4", flash_attn="2.8.3"), "mi300x")
        assert (g.status, finding(g, "flash-attn").status) == ("ok", "ok")


class TestFeatureRows:
    TE: ClassVar[dict[str, Any]] = {"needs": ["transformer-engine"], "transformer_engine": "2.6"}

    def test_te_mxfp8_refused_on_sm120(self, cat: Catalog) -> None:
        g = gate(cat, stack(**self.TE), "rtx-5090", "mxfp8")  # type: ignore[arg-type]
        f = finding(g, "transformer-engine")
        assert (g.status, g.fixable, f.status) == ("blocked", False, "unsupported")
        assert TE_MXFP8_SM120 in f.message and "transformer-engine mxfp8" in f.message

    def test_te_mxfp8_fine_on_sm100_and_fp8_fine_on_sm120(self, cat: Catalog) -> None:
        assert gate(cat, stack(**self.TE), "b200", "mxfp8").status == "ok"  # type: ignore[arg-type]
        assert gate(cat, stack(**self.TE), "rtx-5090", "fp8").status == "ok"  # type: ignore[arg-type]
        assert gate(cat, stack(**self.TE), "rtx-5090").status == "ok"  # type: ignore[arg-type]

    def test_te_nvfp4_needs_28(self, cat: Catalog) -> None:
        f = finding(gate(cat, stack(**self.TE), "b200", "nvfp4"), "transformer-engine")  # type: ignore[arg-type]
        assert (f.status, f.required) == ("upgrade", "2.8")
        nv = finding(gate(cat, stack(**self.TE), "rtx-5090", "nvfp4"), "transformer-engine")  # type: ignore[arg-type]
        assert nv.status == "upgrade" and "beta" in nv.message

    def test_unknown_precision_is_an_input_error(self, cat: Catalog) -> None:
        with pytest.raises(InputError):
            gate(cat, stack(), "b200", "fp7")


class TestUnknownAndMissing:
    def test_no_rows_is_unknown_not_a_pass(self, cat: Catalog) -> None:
        g = gate(cat, stack(), "a100")
        assert (g.status, g.unverified) == ("unverified", ["torch"])
        assert finding(g, "torch").message == "no support data for torch on sm_80"
        assert g.summary == "not verified on NVIDIA A100 (sm_80): no support data for torch"

    def test_package_outside_the_catalog(self, cat: Catalog) -> None:
        g = gate(cat, stack(needs=["flash-attn5"]), "b200")
        f = finding(g, "flash-attn5")
        assert f.status == "unknown" and "did you mean flash-attn" in f.message

    def test_needed_but_not_installed_is_an_install(self, cat: Catalog) -> None:
        g = gate(cat, stack(needs=["flash-attn-4"]), "b200")
        f = finding(g, "flash-attn-4")
        assert (g.status, g.fixable, f.status, f.installed) == ("blocked", True, "upgrade", None)
        assert f.action == "install flash-attn-4 → ≥4.0.0b0: pip install 'flash-attn-4>=4.0.0b0'"

    def test_non_pip_packages_get_words_not_commands(self, cat: Catalog) -> None:
        g = gate(cat, stack(needs=["cuda-toolkit"], cuda_toolkit="12.6"), "b200")
        assert finding(g, "cuda-toolkit").action == "upgrade cuda-toolkit → ≥12.8"

    def test_past_last_version_is_fixable_by_pinning(self, cat: Catalog) -> None:
        """Support did exist, so this blocks only until you pin: fixable, not "no support"."""
        g = gate(cat, stack(needs=["cuda-toolkit"], cuda_toolkit="13.0"), "v100")
        f = finding(g, "cuda-toolkit")
        assert (g.status, g.fixable, f.status, f.required) == ("blocked", True, "upgrade", "≤12.9")
        assert f.message == "cuda-toolkit dropped sm_70 after 12.9"
        assert f.action == "pin cuda-toolkit to ≤12.9"
        assert (
            finding(
                gate(cat, stack(needs=["cuda-toolkit"], cuda_toolkit="12.9.1"), "v100"),
                "cuda-toolkit",
            ).status
            == "ok"
        )


class TestGateAll:
    def test_every_gpu_gets_a_gate(self, cat: Catalog) -> None:
        gates = gate_all(stack("2.7.1+cu128", flash_attn_3="3.0.0b1"), cat.gpus, cat)
        assert set(gates) == {g.id for g in cat.gpus}
        assert gates["h100"].status == "beta"
        assert gates["b200"].status == "blocked" and not gates["b200"].fixable
        assert gates["mi300x"].status == "blocked" and gates["mi300x"].fixable


# ---- the shipped catalog: these fail, not skip, until catalog/software.toml is in place


@pytest.fixture(scope="module")
def shipped() -> Catalog:
    return load_catalog()


class TestShippedCatalog:
    def test_cu126_torch_on_b200(self, shipped: Catalog) -> None:
        t = finding(gate(shipped, stack("2.6.0+cu126"), "b200-sxm"), "torch")
        assert t.status == "upgrade" and "cu128" in t.action and t.required == "2.7"

    def test_torch_27_beta_on_b200_ga_from_29(self, shipped: Catalog) -> None:
        assert gate(shipped, stack("2.7.1+cu128"), "b200-sxm").status == "beta"
        assert gate(shipped, stack("2.9.0+cu128"), "b200-sxm").status == "ok"

    def test_fa3_unsupported_on_b200(self, shipped: Catalog) -> None:
        g = gate(shipped, stack("2.9.0+cu128", flash_attn_3="3.0.0b1"), "b200-sxm")
        assert finding(g, "flash-attn-3").status == "unsupported" and not g.fixable

    def test_fa2_on_t4_quotes_the_error(self, shipped: Catalog) -> None:
        f = finding(gate(shipped, stack("2.6.0+cu124", flash_attn="2.8.3"), "t4"), "flash-attn")
        assert f.status == "unsupported" and FA2_TURING in f.message

    def test_fa4_beta_on_sm100(self, shipped: Catalog) -> None:
        g = gate(shipped, stack("2.9.0+cu128", flash_attn_4="4.0.0b22"), "b200-sxm")
        assert finding(g, "flash-attn-4").status == "beta"

    def test_cuda_torch_on_mi355x(self, shipped: Catalog) -> None:
        """A CUDA build on AMD is a change of stack, not an upgrade: the exact ROCm wheel."""
        g = gate(shipped, stack("2.9.0+cu128"), "mi355x")
        t = finding(g, "torch")
        assert t.status == "switch" and "rocm" in t.action and "--index-url" in t.action
        assert (g.status, g.fixable) == ("blocked", False)
        assert g.switch is not None and g.switch.stack_vendor == "NVIDIA"

    CUDA: ClassVar[dict[str, str]] = {"torch": "2.5.1+cu124", "flash-attn": "2.7.4",
                                      "transformer-engine": "1.12.0", "liger-kernel": "0.5.2"}

    @pytest.mark.parametrize(("gpu", "platform", "attention"), [
        ("tpu-v5p", "PyTorch/XLA (torch-xla) or JAX", "Pallas"),
        ("tpu-v7x", "PyTorch/XLA (torch-xla) or JAX", "Pallas"),
        ("trainium2", "the AWS Neuron SDK (TorchNeuron: torch-neuronx)", "NKI"),
        ("gaudi3", "the Intel Gaudi software stack", "FusedSDPA"),
    ])
    def test_a_cuda_stack_is_blocked_with_the_stack_to_install(
            self, shipped: Catalog, gpu: str, platform: str, attention: str) -> None:
        """torch 2.5.1+cu124 with FlashAttention came out 'beta, no support data' on TPUs and
        Trainium (a capability upgrade, tpu-v7x ranked first) and 'upgrade torch' on Gaudi:
        the stack cannot run there at all, so the target is blocked with what to install,
        what does each package's work there and what nothing does."""
        g = check_software(Stack(source="declared", packages=self.CUDA), shipped.gpu(gpu),
                           shipped)
        assert (g.status, g.fixable) == ("blocked", False)
        assert g.switch is not None and g.switch.platform.startswith(platform)
        assert f"install {g.switch.platform}" in g.summary
        assert attention in g.switch.replaced["flash-attn"]
        assert "liger-kernel" in g.switch.missing  # Triton: NVIDIA and AMD only
        torch = finding(g, "torch")
        assert torch.status == "switch" and "upgrade" not in torch.action
        assert all(f.status != "beta" for f in g.findings)
        if gpu != "gaudi3":  # Gaudi has its own Transformer Engine; TPU and Trainium none
            assert "transformer-engine" in g.switch.missing
        else:
            assert "Gaudi Transformer Engine" in g.switch.replaced["transformer-engine"]
            fa = finding(g, "flash-attn")
            assert "does not run on Intel" in fa.message and "no support data" not in fa.message

    @pytest.mark.parametrize(("gpu", "packages"), [
        ("tpu-v5p", {"torch": "2.8.0", "torch-xla": "2.8.0"}),
        ("tpu-v7x", {"jax": "0.7.2"}),
        ("trainium2", {"torch": "2.13.0", "torch-neuronx": "2.13.3.0"}),
        ("gaudi3", {"torch": "2.6.0+hpu_1.21.4"}),
    ])
    def test_their_own_stack_passes(self, shipped: Catalog, gpu: str,
                                    packages: dict[str, str]) -> None:
        g = check_software(Stack(source="declared", packages=packages), shipped.gpu(gpu),
                           shipped)
        assert (g.status, g.switch) == ("ok", None), g.summary

    def test_no_support_data_is_never_a_pass(self, shipped: Catalog) -> None:
        """PyTorch/XLA on TPU7x: Google names JAX only, so there is no row, and the gate
        says it cannot vouch rather than passing it."""
        g = check_software(Stack(source="declared",
                                 packages={"torch": "2.8.0", "torch-xla": "2.8.0"}),
                           shipped.gpu("tpu-v7x"), shipped)
        assert g.status == "unverified" and set(g.unverified) == {"torch", "torch-xla"}

    def test_gate_all_runs_over_every_shipped_gpu(self, shipped: Catalog) -> None:
        gates = gate_all(stack("2.9.0+cu128"), shipped.gpus, shipped)
        assert len(gates) == len(shipped.gpus)
