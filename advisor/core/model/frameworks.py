"""What runs the workload: a training framework or a serving engine, decided by one rule.

The framework sets what the projection charges besides the GPU's own work (the
per-step host time of an eager stack, Megatron's CUDA graphs, a serving engine's
per-request scheduling) and what a re-tune may change (DeepSpeed as Hugging Face runs
it has ZeRO and offload but no TP/PP). Every part of the decision reads the framework
from `framework_of`, so the verdict, the sweep and the report cannot name different ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from advisor.core.model.stack import Stack

Framework = Literal["auto", "megatron", "fsdp", "deepspeed", "vllm", "sglang", "trtllm"]
TRAINING_FRAMEWORKS: tuple[str, ...] = ("megatron", "fsdp", "deepspeed")
SERVING_ENGINES: tuple[str, ...] = ("vllm", "sglang", "trtllm")
NAMES: dict[str, str] = {
    "megatron": "Megatron-LM / NeMo", "fsdp": "PyTorch FSDP", "deepspeed": "DeepSpeed",
    "vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM",
}
# PyTorch FSDP shards parameters, gradients and optimizer state unless told otherwise: its
# default ShardingStrategy is FULL_SHARD (https://docs.pytorch.org/docs/stable/fsdp.html),
# ZeRO-3 in these terms. A workload that names FSDP and no stage runs that.
FSDP_DEFAULT_STAGE = 3
# pip distributions that name a framework when a stack declares them, in priority order
_TRAINING_PACKAGES: tuple[tuple[str, str], ...] = (
    ("deepspeed", "deepspeed"), ("megatron-core", "megatron"), ("nemo-toolkit", "megatron"),
)
_SERVING_PACKAGES: tuple[tuple[str, str], ...] = (
    ("tensorrt-llm", "trtllm"), ("sglang", "sglang"), ("vllm", "vllm"),
)


def framework_of(framework: str, training: bool, zero_stage: int = 0,
                 stack: Stack | None = None) -> tuple[str, str]:
    """(framework, why): the one stated, else read off the stack, else the layout's default.

    Training without a stated framework: DeepSpeed or Megatron when the stack declares
    them, plain PyTorch (FSDP) when it declares neither; with no stack, FSDP for a
    ZeRO-2/3 layout (FSDP shards gradients or everything), else Megatron. Serving: the
    engine the stack declares, else vLLM, the engine that runs on every vendor's GPUs.
    """
    if framework != "auto":
        return framework, "as you gave it"
    packages = _TRAINING_PACKAGES if training else _SERVING_PACKAGES
    if stack is not None:
        for package, name in packages:
            if stack.version_of(package):
                return name, f"{package} is in your stack"
    if not training:
        return "vllm", "no serving engine declared: vLLM assumed"
    if stack is not None and stack.packages:
        return "fsdp", "neither Megatron nor DeepSpeed in your stack: PyTorch FSDP assumed"
    if zero_stage >= 2:
        return "fsdp", f"ZeRO-{zero_stage} layout with no framework declared: FSDP assumed"
    return "megatron", "no framework declared: Megatron assumed"


def name_of(framework: str) -> str:
    return NAMES.get(framework, framework)
