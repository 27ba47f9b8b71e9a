"""Which attention kernel a stack runs on a GPU, and how a probe names the kernels it timed.

The kernel is chosen per GPU, so an FA2-only stack is projected with FA2 on a B200
(where it runs at a fraction of the tensor-core peak) rather than with FA4. With
no stack declared, each GPU gets the production kernel its vendor ships for it
(FA3 or cuDNN on Hopper, FA4 or cuDNN on Blackwell, FA2 on Ampere/Ada/sm_120, CK
on AMD), and the projection says that it assumed so.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.core.model.stack import Stack

# Architecture id -> MMA class: the code path a kernel needs to reach that arch's peak.
MMA_CLASS: dict[str, str] = {
    "sm_80": "ampere", "sm_86": "ampere", "sm_89": "ampere", "sm_120": "ampere",
    "sm_121": "ampere", "sm_90": "hopper", "sm_100": "blackwell", "sm_103": "blackwell-ultra",
    "gfx90a": "cdna2", "gfx942": "cdna3", "gfx950": "cdna4",
}
# Best production kernel per MMA class when the stack says nothing.
VENDOR_DEFAULT: dict[str, str] = {
    "ampere": "fa2", "hopper": "fa3", "blackwell": "fa4", "blackwell-ultra": "fa4",
    "cdna2": "ck", "cdna3": "ck", "cdna4": "ck",
}
KERNEL_NAMES: dict[str, str] = {
    "fa2": "FlashAttention-2", "fa3": "FlashAttention-3", "fa4": "FlashAttention-4 (CuTe DSL)",
    "cudnn": "cuDNN fused attention", "sdpa": "PyTorch SDPA (flash backend, FA2-class)",
    "ck": "AMD CK/aiter flash attention", "vendor": "the vendor's attention kernel",
    "math": "unfused SDPA math", "flashinfer": "FlashInfer",
    "trtllm": "TensorRT-LLM fused attention (FMHA/XQA)",
}
# What a serving engine runs on each MMA class (its default backend): TensorRT-LLM its own
# FMHA/XQA kernels; vLLM FlashAttention (FA3 on Hopper) and FlashInfer on Blackwell; SGLang
# FlashInfer (FA3 on Hopper); AMD's builds of vLLM and SGLang the aiter kernels.
SERVING_KERNELS: dict[str, dict[str, str]] = {
    "trtllm": {"ampere": "trtllm", "hopper": "trtllm", "blackwell": "trtllm",
               "blackwell-ultra": "trtllm"},
    "vllm": {"ampere": "fa2", "hopper": "fa3", "blackwell": "flashinfer",
             "blackwell-ultra": "flashinfer", "cdna2": "ck", "cdna3": "ck", "cdna4": "ck"},
    "sglang": {"ampere": "flashinfer", "hopper": "fa3", "blackwell": "flashinfer",
               "blackwell-ultra": "flashinfer", "cdna2": "ck", "cdna3": "ck", "cdna4": "ck"},
}
# The FlashAttention generation written for an MMA class, and the package that ships it.
NEWEST: dict[str, tuple[str, str]] = {
    "hopper": ("flash-attn-3", "fa3"), "blackwell": ("flash-attn-4", "fa4"),
    "blackwell-ultra": ("flash-attn-4", "fa4"),
}
# Kernels that run on each MMA class (fa3 is Hopper-only; fa4 is Blackwell datacenter).
RUNS_ON: dict[str, frozenset[str]] = {
    "fa2": frozenset({"ampere", "hopper", "blackwell", "blackwell-ultra"}),
    "fa3": frozenset({"hopper"}),
    "fa4": frozenset({"blackwell", "blackwell-ultra"}),
    "cudnn": frozenset({"ampere", "hopper", "blackwell", "blackwell-ultra"}),
    "sdpa": frozenset({"ampere", "hopper", "blackwell", "blackwell-ultra", "cdna2", "cdna3",
                       "cdna4"}),
    "ck": frozenset({"cdna2", "cdna3", "cdna4"}),
    "flashinfer": frozenset({"ampere", "hopper", "blackwell", "blackwell-ultra"}),
    "trtllm": frozenset({"ampere", "hopper", "blackwell", "blackwell-ultra"}),
}


@dataclass(frozen=True)
class KernelChoice:
    kernel: str
    mma: str
    why: str

    @property
    def name(self) -> str:
        return KERNEL_NAMES.get(self.kernel, self.kernel)


def choose_attention(arch: str, requested: str, stack: Stack | None,
                     framework: str) -> KernelChoice:
    """The attention kernel this stack runs on `arch`, and why."""
    mma = MMA_CLASS.get(arch, "other")
    default = VENDOR_DEFAULT.get(mma, "vendor")
    engine = SERVING_KERNELS.get(framework, {})
    if requested in ("auto", "vendor") and mma in engine:
        return KernelChoice(engine[mma], mma, f"the {framework} engine's kernel on {arch}")
    if requested not in ("auto", "vendor"):
        if mma in RUNS_ON.get(requested, frozenset()):
            return KernelChoice(requested, mma, "as requested")
        return KernelChoice(default, mma, f"{KERNEL_NAMES.get(requested, requested)} does not "
                                          f"run on {arch}; {KERNEL_NAMES.get(default, default)} "
                                          "assumed")
    if stack is None or not stack.packages:
        return KernelChoice(default, mma, "no stack declared: the vendor's production kernel")
    has = {p for p in ("flash-attn-4", "flash-attn-3", "flash-attn") if stack.version_of(p)}
    te = stack.version_of("transformer-engine") is not None or framework == "megatron"
    if mma in NEWEST:
        package, kernel = NEWEST[mma]
        if package in has:
            return KernelChoice(kernel, mma, f"{package} declared")
        if te:
            return KernelChoice("cudnn", mma, "Transformer Engine / Megatron: cuDNN attention")
        if "flash-attn" in has:
            return KernelChoice("fa2", mma, f"only flash-attn 2 declared: FA2 on {arch}")
        return KernelChoice("sdpa", mma, "no flash-attn declared: PyTorch SDPA")
    if mma == "ampere":
        if "flash-attn" in has or te:
            return KernelChoice("fa2", mma, "flash-attn 2 class kernel")
        return KernelChoice("sdpa", mma, "no flash-attn declared: PyTorch SDPA")
    return KernelChoice(default, mma, "the vendor's kernel for this architecture")


def probe_kernel(backend: str) -> str:
    """A probe record's backend label as one of the kernel ids above."""
    b = backend.lower()
    for needle, kernel in (("cudnn", "cudnn"), ("flash-attn-4", "fa4"), ("fa4", "fa4"),
                           ("cute", "fa4"), ("flash-attn-3", "fa3"), ("fa3", "fa3"),
                           ("aiter", "ck"), ("ck", "ck"), ("math", "math"),
                           ("efficient", "sdpa-efficient"), ("flash-attn", "fa2"),
                           ("fa2", "fa2"), ("flash", "sdpa")):
        if needle in b:
            return kernel
    return b
