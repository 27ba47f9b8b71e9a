"""The words a workload is stated in, each defined once: modes, optimizers, recompute,
attention kernels, LoRA's base formats and targets, and the number formats a recipe may name
and a KV cache may hold.

Every layer reads a format's facts from here: the bytes a weight takes (the memory model
and the decode traffic), the catalog rate it runs at (the projection), the matrix-unit
formats a GPU must execute for it (the dtype gate), how narrow it is (what a switch between
two formats costs) and the recipe that trains in it. The CLI's and the wizard's choice
lists and the probes' are derived from it or checked against it (tests/unit/
test_vocabulary.py). Adding a format is one entry here, the architectures that execute
it in catalog/archs.toml, and, where its GEMMs run at a rate of their own, the catalog's
peak and the calibration's large-shape fraction for that rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from advisor.core.model.frameworks import Framework

Mode = Literal["pretrain", "finetune", "lora", "prefill", "decode", "serve"]
Optimizer = Literal["adamw", "adamw8bit", "paged_adamw", "paged_adamw8bit", "sgd"]
Recompute = Literal["none", "selective", "full"]
AttentionKernel = Literal["auto", "fa2", "fa3", "fa4", "cudnn", "sdpa", "ck", "vendor"]
"""The attention kernel a workload names; 'auto' lets the engine's rule choose."""

BaseFormat = Literal["bf16", "fp8", "int8", "nf4", "int4"]
BASE_FORMATS: tuple[str, ...] = get_args(BaseFormat)
"""LoRA's frozen base: as the checkpoint (16 bits), FP8, or quantized: bitsandbytes' LLM.int8
and NF4 (QLoRA), GPTQ/AWQ group-wise int4. A layout's base is an index into this tuple."""
DEQUANTISED: frozenset[str] = frozenset({"int8", "nf4", "int4"})
"""Formats no GEMM reads: each weight is dequantised to 16 bits before its GEMM, so the
recipe's precision must be a 16-bit one."""
LoraTarget = Literal["q_proj", "k_proj", "v_proj", "qkv_proj", "o_proj", "gate_proj", "up_proj",
                     "down_proj", "all-linear"]
"""PEFT's module names (`LoraConfig(target_modules=...)`) and its 'all-linear'; qkv_proj is one
adapter on a fused QKV projection (Megatron's linear_qkv, the MLPerf Llama-2-70B checkpoint)."""
ALL_LINEAR: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                               "down_proj")
TRAINING_MODES: frozenset[str] = frozenset({"pretrain", "finetune", "lora"})
SERVING_MODES: frozenset[str] = frozenset({"prefill", "decode", "serve"})

Precision = Literal["bf16", "fp16", "fp8", "mxfp8", "mxfp6", "fp4", "nvfp4"]
"""A recipe's format: the names of RECIPE_FORMATS, in its order (a test holds them equal)."""
KvDtype = Literal["auto", "bf16", "fp8", "fp4"]
"""A KV cache's format: 'auto' or a name of KV_BYTES."""
BatchCap = Literal["kv-capacity", "tpot", "ttft", "engine cap", "your concurrency",
                   "throughput peak"]
"""What set a serving batch: the KV cache, a latency limit, the engine's cap, your
concurrency, or the throughput peak past which a larger batch is slower."""
Basis = Literal["retuned", "as_run"]
"""What a comparison runs on each GPU: each re-tuned for it, or the layouts as you run them."""
Ask = Literal["price", "stack"]
"""An input a result asks the user for. Core names it by what it is; each front end says
where to give it in its own dialect (a flag, an answers key, a wizard field)."""

SIXTEEN_BIT = 4
"""The width of bf16 and fp16; below it a format is low precision."""

FP8_RECIPE = ("an FP8 scaling recipe (Transformer Engine or torchao, delayed or block "
              "scaling)")
MX_RECIPE = ("an MX recipe (OCP Microscaling: one E8M0 scale per 32 elements; Transformer "
             "Engine's MXFP8BlockScaling or torchao's MX training, Blackwell or MI350 only)")
MIXED_RECIPE = "mixed precision (fp32 master weights and optimizer state)"
NVFP4_RECIPE = ("NVIDIA's NVFP4 recipe (block scales, stochastic rounding, some layers kept "
                "in higher precision)")


@dataclass(frozen=True)
class NumberFormat:
    """One recipe format. `needs` lists groups of matrix-unit formats (the catalog's
    archs.toml names), each met by any one of its members; `rates` the catalog peak and GEMM
    keys its GEMMs run at, first found first."""

    name: str
    meaning: str
    weight_bytes: float
    width: int
    rates: tuple[str, ...]
    needs: tuple[tuple[str, ...], ...]
    training_recipe: str

    @property
    def low_precision(self) -> bool:
        return self.width < SIXTEEN_BIT


RECIPE_FORMATS: dict[str, NumberFormat] = {f.name: f for f in (
    NumberFormat("bf16", "bfloat16: 8 exponent bits, fp32's range", 2.0, SIXTEEN_BIT,
                 ("bf16",), (("bf16",),), MIXED_RECIPE),
    NumberFormat("fp16", "IEEE half: 5 exponent bits; training needs loss scaling", 2.0,
                 SIXTEEN_BIT, ("fp16", "bf16"), (("fp16",),), MIXED_RECIPE + " and loss scaling"),
    NumberFormat("fp8", "FP8 E4M3 with a scale per tensor or per block (AMD's gfx942 runs its "
                        "FNUZ encoding)", 1.0, 3, ("fp8",), (("fp8_e4m3", "fp8_e4m3fnuz"),),
                 FP8_RECIPE),
    NumberFormat("mxfp8", "OCP MXFP8: E4M3 elements, one E8M0 scale per 32 (1 + 1/32 bytes); "
                          "runs on the FP8 tensor cores", 1.0 + 1 / 32, 3, ("fp8",),
                 (("mxfp8",),), MX_RECIPE),
    NumberFormat("mxfp6", "OCP MXFP6: E2M3 or E3M2 elements, one E8M0 scale per 32 (6/8 + 1/32 "
                          "bytes); at the FP6 peak (NVIDIA Blackwell: the FP8 rate, AMD MI355X: "
                          "the FP4 rate)", 0.75 + 1 / 32, 2, ("fp6", "fp8"), (("mxfp6",),),
                 MX_RECIPE),
    NumberFormat("fp4", "FP4 E2M1 on the OCP path (MXFP4: one E8M0 scale per 32)", 0.53, 1,
                 ("fp4", "nvfp4"), (("fp4_e2m1", "mxfp4"),), NVFP4_RECIPE),
    NumberFormat("nvfp4", "NVIDIA NVFP4: E2M1 elements, one FP8 E4M3 scale per 16 and one FP32 "
                          "per tensor (0.5 + 1/16 bytes); NVIDIA Blackwell only", 0.5625, 1,
                 ("nvfp4", "fp4"), (("nvfp4",),), NVFP4_RECIPE),
)}
"""Bytes per weight element have the block scales amortised."""

KV_BYTES: dict[str, float] = {"bf16": 2.0, "fp8": 1.0, "fp4": 0.5625}
"""Bytes per cached K or V element (an FP4 cache carries NVFP4's scales)."""

LOW_PRECISION: frozenset[str] = frozenset(n for n, f in RECIPE_FORMATS.items()
                                          if f.low_precision)
WEIGHT_BYTES: dict[str, float] = {n: f.weight_bytes for n, f in RECIPE_FORMATS.items()}

MODES: tuple[str, ...] = get_args(Mode)
OPTIMIZERS: tuple[str, ...] = get_args(Optimizer)
RECOMPUTES: tuple[str, ...] = get_args(Recompute)
ATTENTION_KERNEL_NAMES: tuple[str, ...] = get_args(AttentionKernel)
KV_DTYPES: tuple[str, ...] = get_args(KvDtype)
PRECISIONS: tuple[str, ...] = get_args(Precision)
FRAMEWORKS: tuple[str, ...] = get_args(Framework)
"""The choice lists every front end offers, in the order it offers them."""
