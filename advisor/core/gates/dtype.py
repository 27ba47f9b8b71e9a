"""The dtype gate: can this GPU's matrix units execute the recipe's number formats?

A missing format makes a GPU incapable, not slow: an nvfp4 recipe has no
speed at all on Hopper. The arch's `formats` list in the catalog holds only
native matrix-unit formats, so an emulated or dequantized path counts as
missing.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from advisor.core.errors import InputError
from advisor.core.model.catalog import Arch, Gpu
from advisor.core.model.vocabulary import RECIPE_FORMATS, SIXTEEN_BIT

# Each precision needs every group; a group is satisfied by any one of its formats.
#  - fp32 runs on the plain FP32 units of every GPU, so it needs no matrix format.
#  - fp8 accepts AMD's FNUZ encodings (gfx942 has only those), with a caveat.
#  - fp4/fp6 mean e2m1/e2m3/e3m2 elements on the OCP path (unscaled or MX block
#    scaled), which is what the catalog's `fp4`/`fp6` peaks measure. NVFP4 (ue4m3
#    scale per 16) is its own precision: only NVIDIA Blackwell executes it.
#  A recipe's formats are the registry's (number_formats); the rest are formats a probe or a
#  support row may name.
PRECISIONS: dict[str, list[tuple[str, ...]]] = {
    "fp64": [("fp64",)],
    "fp32": [],
    "tf32": [("tf32",)],
    **{name: list(f.needs) for name, f in RECIPE_FORMATS.items()},
    "fp6": [("fp6_e2m3", "fp6_e3m2", "mxfp6")],
    "mxfp4": [("mxfp4",)],
    "int8": [("int8",)],
    "int4": [("int4",)],
}

# What torch says when fp8 matmul meets a GPU without fp8 units (aten Blas.cpp).
SCALED_MM_ERROR = (
    "torch._scaled_mm is only supported on CUDA devices with compute capability >= 9.0 or 8.9, "
    "or ROCm MI300+"
)

# torch dtype names people type for the same thing.
ALIASES: dict[str, str] = {
    "float64": "fp64",
    "float32": "fp32",
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "float8": "fp8",
    "float8_e4m3fn": "fp8",
    "fp8_e4m3": "fp8",
}


class DtypeGate(BaseModel):
    """Whether one GPU executes one precision natively; `caveats` may qualify a pass."""

    model_config = ConfigDict(frozen=True)

    gpu: str
    arch: str
    precision: str
    passed: bool
    required: list[str]
    missing: list[str]
    reason: str
    caveats: list[str] = []


def canonical_precision(precision: str) -> str:
    """ "BFloat16" -> "bf16"; an unknown name is an InputError listing the known ones."""
    p = precision.strip().lower().replace("-", "_")
    p = ALIASES.get(p, p)
    if p not in PRECISIONS:
        known = ", ".join(PRECISIONS)
        raise InputError(f"unknown precision; known: {known}", field="precision", value=precision)
    return p


def required_formats(precision: str) -> list[tuple[str, ...]]:
    """The hardware formats a precision needs: each tuple lists acceptable alternatives."""
    return list(PRECISIONS[canonical_precision(precision)])


def _label(gpu: Gpu, arch: Arch) -> str:
    return f"{gpu.name} ({arch.id})"


def _caveats(gpu: Gpu, arch: Arch, precision: str) -> list[str]:
    """Encoding mismatches that let a recipe run but not load a checkpoint as-is."""
    have = set(arch.formats)
    out = []
    if precision == "fp8" and "fp8_e4m3" not in have:
        out.append(
            f"{_label(gpu, arch)} executes fp8 only in the FNUZ encodings (e4m3fnuz, max 240 "
            "rather than 448); OCP e4m3 checkpoints need conversion"
        )
    if precision in ("fp4", "mxfp4") and "nvfp4" not in have:
        out.append(f"{_label(gpu, arch)} has no NVFP4: NVFP4 checkpoints need re-quantizing")
    return out


def _missing_reason(gpu: Gpu, arch: Arch, precision: str, missing: list[tuple[str, ...]]) -> str:
    names = " / ".join(f for group in missing for f in group)
    what = precision if names == precision else f"{precision} ({names})"
    reason = f"{_label(gpu, arch)} has no hardware {what}: "
    reason += "this recipe cannot run there at any speed"
    if precision == "fp8":
        reason += f"; torch refuses it with '{SCALED_MM_ERROR}'"
    if precision == "nvfp4" and "mxfp4" in arch.formats:
        reason += "; it does execute mxfp4, so an MXFP4 re-quantization could run"
    return reason


def check_dtype(gpu: Gpu, arch: Arch, precision: str) -> DtypeGate:
    """Pass when every required group has at least one format the arch executes."""
    if gpu.arch != arch.id:
        raise ValueError(f"{gpu.id} is {gpu.arch}, not {arch.id}")
    p = canonical_precision(precision)
    groups = PRECISIONS[p]
    missing = [g for g in groups if not set(g) & set(arch.formats)]
    if missing:
        reason = _missing_reason(gpu, arch, p, missing)
        caveats: list[str] = []
    else:
        reason = f"{_label(gpu, arch)} executes {p} in hardware"
        if not groups:
            reason = f"{_label(gpu, arch)} runs {p} on its general-purpose units"
        caveats = _caveats(gpu, arch, p)
    return DtypeGate(
        gpu=gpu.id,
        arch=arch.id,
        precision=p,
        passed=not missing,
        required=[f for g in groups for f in g],
        missing=[f for g in missing for f in g],
        reason=reason,
        caveats=caveats,
    )


# Narrowest last: a switch down this order trades numerical range for speed.
WIDTH: dict[str, int] = {"fp32": 6, "tf32": 5, "fp6": 2,
                         **{name: f.width for name, f in RECIPE_FORMATS.items()}}


def format_switch(current: str, target: str, training: bool, current_gpu: str,
                  target_gpu: str) -> str | None:
    """What moving from `current`'s number format to `target`'s costs besides speed, or None
    when both sides run the same format. The speedup of such a comparison includes the
    format, so the verdict says so."""
    a, b = canonical_precision(current), canonical_precision(target)
    if a == b:
        return None
    both = f"{target_gpu} runs {b} against {a} on {current_gpu}"
    if WIDTH.get(b, 0) == WIDTH.get(a, 0) == SIXTEEN_BIT:
        return (f"{both}: the same width, different encodings; fp16 needs loss scaling in "
                "training and has less range than bf16")
    if WIDTH.get(b, 0) > WIDTH.get(a, 0):
        return (f"{both}: no quantization risk on {target_gpu}, but part of the difference is "
                f"the format: {current_gpu} in {b} would be slower than shown")
    if training:
        recipe = RECIPE_FORMATS[b].training_recipe
        return (f"{both}: training in {b} needs {recipe} and a loss-curve check against your "
                f"{a} baseline; part of the speedup is the format, not the GPU")
    return (f"{both}: {b} weights need a quantized checkpoint (post-training quantization "
            "with calibration data, e.g. TensorRT Model Optimizer or llm-compressor, or QAT) "
            "and an accuracy check on your own evals before the speedup counts; part of the "
            "speedup is the format, not the GPU")
