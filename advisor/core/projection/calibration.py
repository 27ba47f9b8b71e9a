"""Every constant the projection leans on, with its value, its uncertainty and where it came from.

Three kinds live here, and `kind` tells them apart:

- derived: counted, or copied from a kernel-level measurement (a MAMF table, an
  attention-kernel sweep, a bandwidth or bus-bandwidth figure); `source` says which;
- assumed: a rule of thumb with a stated spread;
- fitted: solved from the seed H200->B200 guide's kernel-level decomposition
  (`fitted_to` names the guide's case ids). `advisor validate` marks those cases
  in-sample and `advisor validate --refit` solves them again.

No constant is fitted to an end-to-end system benchmark (MLPerf, vendor or
framework performance tables): those are held-out validation cases only, and the
error `advisor validate` prints on them is what the band is sized from.
`sigma` is a relative one-standard-deviation uncertainty.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

UPG = "https://github.com/stas00/ml-engineering/blob/master/insights/when-to-upgrade-gpus/README.md"
ACC = "https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md"
NET = "https://github.com/stas00/ml-engineering/blob/master/network/benchmarks/README.md"
SIZ = "https://github.com/jman4162/Sizing-AI-Training-by-Cost-per-Memory-Bandwidth"
FA = "https://github.com/Dao-AILab/flash-attention"
ZERO = "https://arxiv.org/abs/1910.02054 (ZeRO, 16 bytes/param for mixed-precision Adam)"
KORTH = "https://arxiv.org/abs/2205.05198 (Korthikanti et al., activation memory per layer)"
AIC = ("https://github.com/ai-dynamo/aiconfigurator (095f58a, aic-core/src/aiconfigurator_core/"
       "systems/data/*/gemm and */context_attention)")
BNB = ("https://github.com/bitsandbytes-foundation/bitsandbytes (012c660, bitsandbytes/"
       "functional.py quantize_4bit, autograd/_functions.py MatMul4Bit)")
QLORA = "https://arxiv.org/abs/2305.14314 (Dettmers et al. 2023, QLoRA)"
AITER = ("https://github.com/ROCm/aiter/blob/e4048607a535ace3a2b51ded31b1c8c2d45c0879/op_tests/"
         "cpp/mha/README.md")

Kind = Literal["fitted", "derived", "assumption", "tuned-on-cases"]


@dataclass(frozen=True)
class Note:
    """Provenance of one constant."""

    kind: Kind
    unit: str
    sigma: float
    source: str
    fitted_to: tuple[str, ...] = ()
    chosen_after: tuple[str, ...] = ()  # held-out case groups looked at when choosing it


# The held-out groups in the published cases when the band's model sigma and the serving
# per-request cost were chosen: `validate` reports the band's coverage apart on the others.
FIRST_HELD_OUT: tuple[str, ...] = (
    "mlperf-v5.0-dell-h200-b200", "mlperf-v5.0-dell-h200-variants", "mlperf-crossround",
    "mlperf-v5.1-lora-64gpu", "mlperf-v5.1-nvidia-gb200-gb300", "nemo-llama3-70b-sft",
    "nemo-qwen3-30b", "trtllm-perf-overview", "torchtitan",
)


@dataclass(frozen=True)
class AttentionCurve:
    """Throughput of one attention kernel on one MMA class, as fractions of the bf16 peak.

    In the FlashAttention convention (forward 4*s^2*d*h/2 causal, fwd+bwd 3.5x that)
    a kernel runs at `e * peak * s / (s + s_half)`: it saturates with the sequence
    span `s`, as the published sweeps do. `e_fb` is fwd+bwd, `e_f` forward alone.
    """

    e_fb: float
    e_f: float
    s_half: float
    sigma: float
    source: str
    fitted_to: tuple[str, ...] = ()


ATTENTION_CURVES: dict[tuple[str, str], AttentionCurve] = {
    ("fa2", "ampere"): AttentionCurve(
        0.742, 0.834, 473.0, 0.12,
        f"{FA} README, FA2 causal hdim128 on A100: fwd+bwd 99..189 TFLOPS for 512..16k "
        "(least-squares fit of e*rate*s/(s+s_half)) over A100's sustained bf16 GEMM 262; "
        f"sm_120 agrees: vLLM FA2 prefill on RTX PRO 6000 304 TFLOPS at 16k ({AIC})",
    ),
    ("fa2", "hopper"): AttentionCurve(
        0.44, 0.475, 546.0, 0.12,
        f"{FA} README, FA2 causal hdim128 on H100: fwd+bwd 163..328 TFLOPS for 512..16k, "
        "over H100's sustained bf16 GEMM 771",
    ),
    ("fa2", "blackwell"): AttentionCurve(
        0.229, 0.245, 500.0, 0.3,
        f"{FA} issue #1589: FA2 on B200 forward ~307-381 TFLOPS (hdim64), ~15% of peak",
    ),
    ("fa3", "hopper"): AttentionCurve(
        0.715, 0.825, 500.0, 0.10,
        f"{UPG}: FA3 in-step 447 TFLOPS (model convention; 521 in FA convention) on H200 at 8k "
        f"from the step decomposition; forward 602 TFLOPS at 8k on H100 ({FA} FA3 sweep); "
        "over the sustained bf16 GEMM rate 774",
        fitted_to=("upg-8k-decomposition",),
    ),
    ("fa4", "blackwell"): AttentionCurve(
        0.738, 0.92, 944.0, 0.12,
        f"{UPG}: FA4 in-step 834 TFLOPS (model convention) on B200 at 8k; s_half solved so "
        "FA4/FA3 grows from 1.88x at 8k to 1.95x at 32k as the isolated fwd+bwd kernel "
        "benchmark measured; forward 1237 TFLOPS sustained at 4x8k (flashinfer PR #2899, "
        "clocks throttled 1965->1580 MHz); over B200's sustained bf16 GEMM 1471",
        fitted_to=("upg-8k-decomposition", "upg-fa4-vs-fa3-isolated"),
    ),
    ("fa4", "blackwell-ultra"): AttentionCurve(
        0.886, 1.10, 944.0, 0.15,
        f"{AIC}: prefill attention B300/B200 x1.18-1.28 (bf16, 16k) while median GEMM is "
        "x1.01: the doubled SFU exponent rate (FA4 drops its exp2 emulation on sm_103, "
        f"{FA} commit 8e0b5d75); the B200 curve x1.2",
    ),
    ("ck", "cdna3"): AttentionCurve(
        0.87, 0.98, 700.0, 0.15,
        f"{AITER}: aiter asm FMHA on MI300X, causal hdim128 GQA: fwd 542, bwd 458 TFLOPS at 16k "
        "(fwd+bwd 479 in FA convention), over MI300X's sustained bf16 GEMM (MAMF 668 x 86%)",
    ),
    ("ck", "cdna4"): AttentionCurve(
        0.945, 1.08, 700.0, 0.15,
        f"{AITER}: aiter asm FMHA on MI355X, causal hdim128 GQA: fwd 1392, bwd 1163 TFLOPS at "
        "16k, over MI355X's sustained bf16 GEMM (MAMF 1565 x 86%)",
    ),
}
# cuDNN's fused attention, the serving engines' own kernels (TensorRT-LLM's FMHA, FlashInfer)
# track the FlashAttention generation of each MMA class; torch SDPA's flash backend is FA2.
for _mma, _gen in (("ampere", "fa2"), ("hopper", "fa3"), ("blackwell", "fa4"),
                   ("blackwell-ultra", "fa4")):
    for _kernel in ("cudnn", "trtllm", "flashinfer"):
        ATTENTION_CURVES[(_kernel, _mma)] = ATTENTION_CURVES[(_gen, _mma)]
for _mma in ("ampere", "hopper", "blackwell"):
    ATTENTION_CURVES[("sdpa", _mma)] = ATTENTION_CURVES[("fa2", _mma)]
ATTENTION_CURVES[("fa2", "blackwell-ultra")] = ATTENTION_CURVES[("fa2", "blackwell")]
ATTENTION_CURVES[("sdpa", "blackwell-ultra")] = ATTENTION_CURVES[("fa2", "blackwell")]
ATTENTION_CURVES[("ck", "cdna2")] = ATTENTION_CURVES[("ck", "cdna3")]
for _mma in ("cdna2", "cdna3", "cdna4"):
    ATTENTION_CURVES[("sdpa", _mma)] = ATTENTION_CURVES[("ck", _mma)]


@dataclass(frozen=True)
class Calibration:
    """The numbers. `notes()` gives each one's provenance; tests keep the two in step."""

    gemm_efficiency: dict[str, float] = field(default_factory=lambda: {
        "megatron": 0.757, "fsdp": 0.757, "deepspeed": 0.757})
    serve_gemm_efficiency: float = 1.0
    gemm_m_half_s: float = 0.8e-13
    large_shape_fraction: dict[str, float] = field(default_factory=lambda: {
        "bf16": 0.86, "fp16": 0.86, "tf32": 0.86, "fp32": 0.86, "fp8": 0.78, "fp6": 0.75,
        "fp4": 0.75, "nvfp4": 0.75, "int8": 0.78})
    kernel_s: float = 3.0e-6
    framework_floor_gib: float = 9.85
    recompute_floor_gib: float = 3.9
    checkpoint_forward_factor: float = 1.53
    usable_memory_fraction: float = 0.922
    generic_attn_of_matmul: float = 0.55
    generic_attn_s_half: float = 1000.0
    hbm_efficiency: float = 0.845
    collective_efficiency: float = 0.80
    link_latency_s: float = 1.5e-5
    nic_latency_s: float = 3.0e-5
    nic_efficiency: float = 0.80
    pcie_efficiency: float = 0.88
    comm_overlap: float = 0.80
    tp_overlap: float = 0.5
    serve_tp_overlap: float = 0.0
    ep_overlap: float = 0.3
    fleet_mamf_efficiency: float = 0.78
    fused_traffic: float = 0.6
    logit_traffic_bytes: float = 34.0
    logit_traffic_bytes_fused: float = 6.0
    logit_memory_bytes: float = 12.0
    logit_memory_bytes_fused: float = 0.1
    attn_fwd_bwd_flops: float = 3.5
    attn_fwd_over_fwd_bwd: float = 1.2
    other_shape_fraction: float = 0.8
    elementwise_h_tensors: float = 10.0
    elementwise_kernels_per_layer: dict[str, float] = field(default_factory=lambda: {
        "fused": 14.0, "eager": 36.0})
    cast_bytes: float = 4.0
    moe_dispatch_passes: float = 4.0
    train_flops_per_param: float = 6.0
    lora_flops_per_param: float = 4.0
    base_bytes: dict[str, float] = field(default_factory=lambda: {
        "fp8": 1.0, "int8": 1.0, "nf4": 0.5 + 4 / 64, "nf4-double-quant": 0.5 + 1 / 64
        + 4 / (64 * 256), "int4": 0.5 + (2 + 0.5) / 128})
    lora_floor_gib: float = 1.0
    frozen_stream_overlap: float = 1.0
    decode_kernels_per_layer: float = 8.0
    decode_logit_bytes: float = 6.0
    serve_workspace_bytes: dict[str, float] = field(default_factory=lambda: {
        "hidden": 12.0, "ffn": 6.0})
    grad_bytes: dict[str, float] = field(default_factory=lambda: {
        "megatron": 4.0, "fsdp": 4.0, "deepspeed": 2.0})
    cpu_adam_params_per_s: float = 4.161e9
    inference_floor_gib: float = 3.5
    kv_overhead: dict[str, float] = field(default_factory=lambda: {
        "trtllm": 1.11, "vllm": 1.0, "sglang": 1.0})
    serve_memory_fraction: dict[str, float] = field(default_factory=lambda: {
        "vllm": 0.92, "sglang": 0.88})
    serve_max_tokens: float = 8192.0
    serve_step_s: float = 5.0e-4
    serve_request_s: float = 4.0e-6
    prefill_dispatch_s_per_layer: dict[str, float] = field(default_factory=lambda: {
        "vllm": 0.8e-3, "sglang": 0.0, "trtllm": 0.0})
    decode_attn_bw: float = 1.0
    decode_attn_compute: float = 0.5
    power_exponent: float = 0.6
    idle_power_fraction: float = 0.10
    host_power_fraction: float = 0.80
    host_power_fraction_rack: float = 0.39
    model_sigma: float = 0.13
    memory_sigma: float = 0.04
    capacity_binding_gain: float = 0.25
    lead_tie: float = 0.02
    stack_efficiency: float = 1.0
    anchor_min_efficiency: float = 0.2
    anchor_max_efficiency: float = 3.0
    anchor_quiet: float = 0.02
    anchor_transfer_sigma: float = 0.10
    step_fixed_s: dict[str, float] = field(default_factory=lambda: {
        "megatron": 0.005, "fsdp": 0.010, "deepspeed": 0.010})
    host_s_per_param: dict[str, float] = field(default_factory=lambda: {
        "megatron": 0.0, "fsdp": 2.6e-12, "deepspeed": 1.298e-11})
    launch_s: dict[str, float] = field(default_factory=lambda: {
        "megatron": 1.0e-6, "fsdp": 4.0e-6, "deepspeed": 5.0e-6})
    attention: dict[tuple[str, str], AttentionCurve] = field(
        default_factory=lambda: dict(ATTENTION_CURVES)
    )

    @staticmethod
    def notes() -> dict[str, Note]:
        return NOTES


NOTES: dict[str, Note] = {
    "gemm_efficiency": Note(
        "fitted", "fraction of the large-shape GEMM rate", 0.06,
        f"{UPG}: the eager Hugging Face + DeepSpeed stack's 'everything else' bucket at 8k, "
        "ZeRO-2, mbs=1 (463 TFLOPS on H200, 771 on B200), solved together with DeepSpeed's "
        "per-parameter step time; the two GPUs share one value. A training step's GEMMs "
        "(forward, input and weight gradients, transposed layouts) in any framework are the same "
        "cuBLAS/CUTLASS kernels, so Megatron and FSDP share the value; only their host "
        "overheads differ",
        ("upg-8k-decomposition",),
    ),
    "serve_gemm_efficiency": Note(
        "derived", "fraction of the large-shape GEMM rate", 0.05,
        "the catalog's large-shape rates are TensorRT-LLM Linear layers timed by AIConfigurator: "
        "a serving engine's own GEMMs",
    ),
    "gemm_m_half_s": Note(
        "derived", "tokens per (FLOP/s)", 0.3,
        "AIConfigurator's skinny-GEMM tables (N=K=8192), where compute-bound: a GEMM of M rows "
        "runs at rate x M/(M + M_half) with M_half ~ 0.8e-13 x the GPU's large-shape rate "
        "(0.55-1.06e-13 over H100/H200/B200/RTX PRO 6000 in bf16, fp8 and nvfp4): faster "
        "GPUs need more rows to fill",
    ),
    "large_shape_fraction": Note(
        "derived", "large-shape median / best shape", 0.05,
        "AIConfigurator GEMM tables, median over m,n,k >= 4096 over the best shape: bf16 0.79-0.91 "
        "(median 0.86), fp8 0.72-0.83 (0.78), nvfp4 0.71-0.82 (0.75) on A100..GB300 and "
        "RTX PRO 6000; used where only a best-shape MAMF is published",
    ),
    "kernel_s": Note(
        "derived", "s per kernel", 0.5,
        "a kernel's fixed cost on the GPU (launch-to-first-wave ramp and the tail wave), "
        "which a faster GPU does not shrink: AIConfigurator's mem_empirical_constant_latency, "
        "3 us on every shipped system",
    ),
    "framework_floor_gib": Note(
        "fitted", "GiB", 0.25,
        f"{UPG}: the peak-memory table (8k-256k, ZeRO-3, full recompute, Liger, max_memory_"
        "reserved) is not affine in the length (the guide's own 12.6 + 0.00043 GiB/token fit is "
        "8% off at 64k): it is the larger of two phases. This is the forward phase's floor "
        "beyond the ZeRO shards (parameter gathers, buckets, the fused loss's fp32 weight "
        "gradient, allocator slack), solved with the two below over the table (max residual "
        "0.9%); it is also every non-recompute layout's floor",
        ("upg-peak-memory",),
    ),
    "recompute_floor_gib": Note(
        "fitted", "GiB", 0.3,
        f"{UPG}: the backward phase's floor under full recompute (buffers freed, one layer "
        "re-materialised), from the long-sequence end of the same table",
        ("upg-peak-memory",),
    ),
    "checkpoint_forward_factor": Note(
        "fitted", "x the checkpointed inputs", 0.1,
        f"{UPG}: the forward phase holds every layer's checkpointed input plus the last "
        "layer's working set and the loss chunk, 1.53x the checkpointed bytes over the table's "
        "short-sequence end",
        ("upg-peak-memory",),
    ),
    "usable_memory_fraction": Note(
        "fitted", "of the labelled capacity", 0.03,
        f"{UPG}: 'H200's usable budget is ~130 GiB' of its 141 GB label",
        ("upg-peak-memory",),
    ),
    "generic_attn_of_matmul": Note(
        "assumption", "attention rate / matmul MAMF", 0.25,
        "median of the published kernels' saturated fwd+bwd rate over the same GPU's MAMF: "
        "FA2/A100 0.72, FA3/H200 0.62, FA4/B200 0.55; used where no curve is published",
    ),
    "generic_attn_s_half": Note(
        "assumption", "tokens", 0.5, "between the FA3 (500) and FA4 (944) curves' half points",
    ),
    "hbm_efficiency": Note(
        "derived", "achievable / peak HBM bandwidth", 0.05,
        "median of the measured streaming fractions in the catalog (decode-attention KV reads "
        "and large-weight GEMV in AIConfigurator and aiter tables: 0.75-0.88 of spec on A100, "
        "H100, H200, B200, B300, GB200, GB300, L40S, RTX PRO 6000, MI355X); used where the "
        "catalog has no measured figure for the GPU",
    ),
    "collective_efficiency": Note(
        "derived", "all-reduce busbw / unidirectional link", 0.15,
        f"{NET}: 'expect ~80% of the unidirectional spec' (A100 78%, H200 ring 82%)",
    ),
    "link_latency_s": Note(
        "assumption", "s per collective inside a node", 0.5,
        "NCCL small-message all-reduce latency over NVLink, tens of microseconds in nccl-tests",
    ),
    "nic_latency_s": Note(
        "assumption", "s per collective across nodes", 0.5,
        "NCCL small-message latency over InfiniBand/RoCE",
    ),
    "nic_efficiency": Note(
        "assumption", "achievable / NIC line rate", 0.2,
        f"{NET} rule of thumb; its 4-node B200 sweep implies 73% per GPU",
    ),
    "pcie_efficiency": Note(
        "derived", "achievable / PCIe spec", 0.05, f"{NET}: PCIe5 H2D 55.43 of 63 GB/s (88%)",
    ),
    "comm_overlap": Note(
        "assumption", "fraction of the overlap window usable", 0.2,
        "gradient reduction and parameter gathers hide behind compute; NCCL kernels steal "
        "some SMs and bandwidth, so not all of the window is usable",
    ),
    "tp_overlap": Note(
        "assumption", "fraction of TP traffic hidden behind GEMMs", 0.5,
        "Transformer Engine userbuffer overlap hides most of it; eager stacks hide little",
    ),
    "serve_tp_overlap": Note(
        "derived", "fraction of a prefill's TP all-reduce hidden behind its GEMMs", 0.3,
        "serving engines run each TP all-reduce between the layer's GEMMs on the compute stream "
        "(TensorRT-LLM's fused all-reduce + norm kernels, vLLM's custom all-reduce, SGLang): "
        "none overlaps it with a GEMM by default, so the prefill waits for it",
    ),
    "ep_overlap": Note(
        "assumption", "fraction of EP all-to-all hidden", 0.5,
        "dispatch/combine overlap is partial",
    ),
    "fleet_mamf_efficiency": Note(
        "derived", "MAMF / peak", 0.12, f"{ACC}: median of the published bf16 MAMF efficiencies",
    ),
    "logit_memory_bytes": Note(
        "derived", "bytes per vocabulary entry per token", 0.2,
        "unfused cross-entropy holds the bf16 logits, their fp32 upcast and its gradient "
        "(2 + 4 + 4 bytes) plus the bf16 gradient handed back (2)",
    ),
    "logit_memory_bytes_fused": Note(
        "assumption", "bytes per vocabulary entry per token", 0.5,
        "a chunked fused loss (Liger, Megatron's fused CE) keeps about a twentieth of the bf16 "
        "logits alive at once: 2 bytes x 0.05",
    ),
    "attn_fwd_bwd_flops": Note(
        "derived", "x the forward attention FLOPs", 0.0,
        f"{FA} benchmark convention: backward is 2.5x the forward's matmul work, fwd+bwd 3.5x",
    ),
    "attn_fwd_over_fwd_bwd": Note(
        "assumption", "forward rate / fwd+bwd rate", 0.1,
        "for kernels without a published forward curve: the published curves put the "
        "forward 1.1-1.3x faster than fwd+bwd (FA2/A100 0.834/0.742, FA3 and FA4 similar)",
    ),
    "other_shape_fraction": Note(
        "assumption", "of MAMF", 0.1,
        "large-shape fraction for a dtype not in large_shape_fraction: between the bf16 (0.86) "
        "and fp8 (0.78) figures",
    ),
    "elementwise_h_tensors": Note(
        "derived", "hidden-sized bf16 tensors per token per layer", 0.3,
        "counted: two norms (read + write each), two residual adds (two reads + a write "
        "each) and the rotary read/write of the block input: ~10 passes over h",
    ),
    "elementwise_kernels_per_layer": Note(
        "assumption", "kernels per layer per forward pass", 0.4,
        "eager PyTorch launches ~36 small kernels per transformer layer (norms, rotary, "
        "activation, residuals, casts, views that copy); fused stacks (Liger, Megatron with "
        "TE, CUDA graphs) ~14",
    ),
    "cast_bytes": Note(
        "derived", "bytes per element cast", 0.3,
        "low-precision GEMMs quantise each input and its transpose: read 2 bytes, write 1, "
        "plus the amax pass (about 1 more)",
    ),
    "moe_dispatch_passes": Note(
        "derived", "passes per routed token copy", 0.3,
        "permute, scatter, gather and unpermute each read or write every routed copy once",
    ),
    "train_flops_per_param": Note(
        "derived", "FLOPs per parameter per token", 0.0,
        "2 forward + 4 backward (weight and input gradients) per multiply-add",
    ),
    "lora_flops_per_param": Note(
        "derived", "FLOPs per frozen parameter per token", 0.0,
        "frozen weights need no weight gradient: 2 forward + 2 backward",
    ),
    "base_bytes": Note(
        "derived", "bytes per frozen weight as held, scales included", 0.02,
        f"fp8: one byte, a per-tensor scale. int8: bitsandbytes LLM.int8 keeps int8 weights and "
        f"one fp32 scale per row (negligible). nf4: {BNB}: 4-bit codes in blocks of 64 with an "
        f"fp32 absmax each (0.5 bits per weight); with double quantization the absmax are "
        f"8-bit in blocks of 256 with an fp32 constant each, 8/64 + 32/(64 x 256) = 0.127 bits "
        f"({QLORA}, section 3). int4: GPTQ/AWQ checkpoints (qweight 4 bits, an fp16 scale and a "
        "4-bit zero per group of 128 inputs per output). Embeddings and the LM head stay 16-bit "
        "(bitsandbytes quantizes linear layers only, and transformers keeps the head)",
    ),
    "lora_floor_gib": Note(
        "assumption", "GiB", 0.5,
        "a LoRA run's memory beyond weights, adapters' state and activations: cuBLAS and "
        "bitsandbytes workspaces and allocator slack. The fitted framework floor of a full "
        "fine-tune (ZeRO gathers and buckets, the fused loss's fp32 LM-head weight gradient) "
        "does not apply to a frozen base. Chosen with the published LoRA/QLoRA fit tables in "
        "view (tests/unit/test_lora_memory.py), so those check it rather than validate it",
    ),
    "frozen_stream_overlap": Note(
        "assumption", "share of a micro-step's GPU time that hides the host-to-GPU copy", 0.3,
        "https://arxiv.org/abs/2104.07857 (ZeRO-Infinity): an offloaded layer's weights are "
        "prefetched over the host link while the previous layer computes; the copy engines "
        "move them without taking SMs, so the slower of the two sets the pace",
    ),
    "decode_kernels_per_layer": Note(
        "assumption", "kernels per layer per decode step", 0.5,
        "fused serving engines (TensorRT-LLM, vLLM with CUDA graphs) run ~8 non-GEMM kernels "
        "per layer: two norms with residual, rotary/KV write, activation, quantise",
    ),
    "decode_logit_bytes": Note(
        "derived", "bytes per vocabulary entry per decoded token", 0.3,
        "the logits written in fp32 and read back by the sampler (4 + 2 rounded)",
    ),
    "serve_workspace_bytes": Note(
        "assumption", "bytes per token of the prefill budget", 0.5,
        "activation workspace of one chunked-prefill batch: ~6 hidden-sized bf16 buffers "
        "(12 bytes per hidden unit) and the gated MLP's intermediate (6 per FFN unit, split by TP)",
    ),
    "fused_traffic": Note(
        "assumption", "fused / unfused elementwise HBM traffic", 0.2,
        "fused norm, SwiGLU and RoPE kernels (Liger, Transformer Engine) read and write each "
        "activation about 40% less often than eager PyTorch",
    ),
    "logit_traffic_bytes": Note(
        "derived", "bytes per vocab entry per token", 0.3,
        "counted: bf16 logits, fp32 upcast, log-softmax and their backward, unfused",
    ),
    "logit_traffic_bytes_fused": Note(
        "derived", "bytes per vocab entry per token", 0.5,
        "counted: chunked fused linear cross-entropy writes each logit chunk once, reads it "
        "back once",
    ),
    "grad_bytes": Note(
        "derived", "bytes per gradient element", 0.0,
        "Megatron accumulates and reduces gradients in fp32 main-grad buffers for bf16 training "
        "(--accumulate-allreduce-grads-in-fp32); FSDP2 reduces in fp32 (torchtitan's default "
        "reduce_dtype); DeepSpeed keeps bf16 gradient buckets"),
    "cpu_adam_params_per_s": Note(
        "fitted", "parameters/s per node", 0.3,
        f"{UPG}: the 8k point of the ZeRO-3 + CPU AdamW offload sweep (141 vs 167 TFLOPS, 1.19x): "
        "the host-side optimizer step both GPUs wait for",
        ("upg-sweep-8k",),
    ),
    "inference_floor_gib": Note(
        "derived", "GiB", 0.3,
        "AIConfigurator memory.py: other_mem 3.5 GB (CUDA graphs, workspaces, NCCL buffers) "
        "besides weights and activations",
    ),
    "kv_overhead": Note(
        "derived", "x KV bytes", 0.05,
        "TensorRT-LLM gives the KV cache 90% of the memory left after weights and workspace "
        "(kv_cache_free_gpu_memory_fraction 0.9; AIConfigurator sdk/backends/trtllm_backend.py): "
        "1/0.9; vLLM and SGLang size the cache from a share of the whole card instead "
        "(serve_memory_fraction), so their KV bytes carry no factor",
    ),
    "serve_memory_fraction": Note(
        "derived", "of the labelled capacity", 0.03,
        f"{AIC} sdk/backends: vLLM's gpu_memory_utilization 0.92 (v0.22 on; 0.9 before) and "
        "SGLang's mem_fraction_static fallback 0.88 are the share of the card the engine takes "
        "for weights, workspace and KV together; TensorRT-LLM takes the usable memory and "
        "leaves a tenth of what is free (kv_overhead)",
    ),
    "serve_max_tokens": Note(
        "assumption", "tokens", 0.3,
        "a serving engine's per-iteration token budget (max_num_tokens), sizing its workspace",
    ),
    "serve_step_s": Note(
        "assumption", "s per decode iteration", 0.5,
        "host-side scheduling and sampling per serving iteration that a faster GPU does not "
        "shrink (CUDA graphs and overlap schedulers hide most of it)",
    ),
    "serve_request_s": Note(
        "tuned-on-cases", "s per request in flight per decode iteration", 0.5,
        "host-side work per sequence per iteration (scheduling, sampling, stop checks) in a "
        "Python-driven serving engine; it caps tokens/s for small models whatever the GPU. "
        "Its size was chosen after looking at the TensorRT-LLM perf-overview cases",
        chosen_after=("trtllm-perf-overview",),
    ),
    "prefill_dispatch_s_per_layer": Note(
        "assumption", "s per layer per request's first token", 0.5,
        f"{AIC}: vLLM's CPU-side dispatch before a prefill, ~0.8 ms per layer, which "
        "AIConfigurator adds to TTFT for vLLM (sdk/backends/vllm_backend.py, calibrated there "
        "on its own silicon corpus); none for TensorRT-LLM and SGLang, whose TTFT it models "
        "without one. TTFT only: throughput is unchanged",
    ),
    "decode_attn_bw": Note(
        "derived", "of the catalog's measured streaming bandwidth", 0.05,
        "the catalog's measured figure is the decode-attention KV read itself (AIConfigurator "
        "generation-attention tables: 84-88% of spec on H100..GB300)",
    ),
    "decode_attn_compute": Note(
        "assumption", "of the forward attention rate", 0.3,
        "decode attention's FLOPs run far below the prefill kernel's rate",
    ),
    "power_exponent": Note(
        "assumption", "d ln(throughput) / d ln(power cap)", 0.3,
        "in the DVFS range power grows faster than clock (P ~ f V^2), so a compute-bound "
        "GPU capped to a fraction p of its limit keeps about p^0.6 of its throughput",
    ),
    "idle_power_fraction": Note(
        "assumption", "idle / TDP", 0.5,
        "the DFlash write-up: ~30-60 W idle on a 600 W RTX PRO 6000; used when the catalog has no "
        "idle figure",
    ),
    "host_power_fraction": Note(
        "derived", "a node's draw besides its GPUs / the GPUs' TDP", 0.15,
        "NVIDIA's maximum system power for its 8-GPU systems against the boards inside: DGX "
        "B200 14.3 kW max for 8 x 1,000 W B200 (https://docs.nvidia.com/dgx/dgxb200-user-guide/"
        "introduction-to-dgxb200.html, Power Specifications), 0.79; DGX H100/H200 10.2 kW max "
        "for 8 x 700 W (https://docs.nvidia.com/dgx/dgxh100-user-guide/, Power Specifications), "
        "0.82 (DGX A100's 6.5 kW for 8 x 400 W gives 1.03). The hosts' CPUs, memory, NICs, "
        "NVSwitches, drives, fans and conversion losses, which a rack's power budget counts; "
        "applied to every board system per node slot, at the GPUs' TDP",
    ),
    "host_power_fraction_rack": Note(
        "derived", "a rack's draw besides its GPUs / the GPUs' TDP", 0.15,
        "GB200 NVL72 (72 GPUs at 1,200 W in the catalog, 36 Grace CPUs, 9 NVLink switch trays) "
        "draws about 120 kW a rack (ServeTheHome's GTC 2024 report, as carried by "
        "https://nybreaking.com/this-is-what-nvidias-exaflop-supercomputer-in-a-rack-looks-like"
        "-the-dgx-gb200-nvl72-tower-most-likely-uses-48v-2-5ka-to-deliver-a-whopping-1440-"
        "petaflops-which-could-cost-millions): (120 - 86.4) / 86.4 = 0.39. Used for scale-up "
        "domains past 8 GPUs, where a rack shares its CPUs, power shelves and switches",
    ),
    "model_sigma": Note(
        "tuned-on-cases", "relative", 0.0,
        "the model's own structural error, chosen after looking at the spread of `advisor "
        "validate`'s held-out speedup errors so that the 90% band holds about 90% of them; "
        "validate reports the band's coverage apart on the cases added since",
        chosen_after=FIRST_HELD_OUT,
    ),
    "memory_sigma": Note(
        "fitted", "relative, one sigma", 0.0,
        f"{UPG}: the spread of the memory model's residuals over the guide's peak-memory "
        "table (8k-256k, max_memory_reserved) and its ZeRO-2 8k points; a fit within "
        "1.645 sigma of the usable budget is reported as borderline, not as fits or OOM",
        ("upg-peak-memory",),
    ),
    "capacity_binding_gain": Note(
        "assumption", "relative throughput", 0.5,
        "serving: the KV cache is named the binding resource when a cache that held every "
        "request the latency limits and the engine allow would serve this much more per GPU; "
        "below it the batch is KV-capped but the step is bound by compute or bandwidth",
    ),
    "lead_tie": Note(
        "assumption", "relative tokens/s per user", 0.5,
        "a GPU leading over less than 2% of interactivity is a tie: the curves' points lie a "
        "serving batch step apart, and near one request in flight every layout's TPOT is the "
        "same within that",
    ),
    "stack_efficiency": Note(
        "derived", "share of the modelled rate", 0.0,
        "1.0: the model as calibrated; an anchor on the user's measured run sets it for their "
        "stack (every bucket's time over it), and carries it to the targets",
    ),
    "anchor_min_efficiency": Note(
        "assumption", "x the modelled rate", 0.0,
        "the slowest stack an anchor accepts: a run slower than a fifth of the model for its "
        "layout is more likely a different layout, or a cluster figure given per GPU",
    ),
    "anchor_max_efficiency": Note(
        "assumption", "x the modelled rate", 0.0,
        "the fastest: past three times the model a measurement is refused with the reason",
    ),
    "anchor_quiet": Note(
        "assumption", "relative", 0.0,
        "a knob moved by less than this is reported as not moved",
    ),
    "anchor_transfer_sigma": Note(
        "assumption", "relative, one sigma", 0.5,
        "how well the software efficiency measured on one GPU carries to another: kernels "
        "tuned for the current architecture may be more or less mature on the target (the "
        "upgrade guide saw +16% from a torch bump alone)",
    ),
    "step_fixed_s": Note(
        "assumption", "s per optimizer step", 0.5,
        "per-step host work a faster GPU does not shrink (optimizer launch, grad-norm, syncs): "
        "milliseconds in Megatron with CUDA graphs, more in eager stacks",
    ),
    "host_s_per_param": Note(
        "fitted", "s per local parameter per optimizer step", 0.3,
        f"{UPG}: same solve as gemm_efficiency, for DeepSpeed ZeRO-2 (gradient bucketing, "
        "clipping, ZeRO bookkeeping that does not shrink on a faster GPU); FSDP assumed a fifth "
        "of it; Megatron's distributed optimizer none",
        ("upg-8k-decomposition",),
    ),
    "launch_s": Note(
        "assumption", "host s per kernel launch", 0.5,
        "eager PyTorch launches a kernel every ~5 us; CUDA graphs (Megatron, NeMo) ~1 us",
    ),
}

CAL = Calibration()

# Optimizer traffic per trainable parameter per step (GPU): AdamW reads fp32 master, m, v and
# the bf16 grad, writes master, m, v and the bf16 weight copy. 8-bit Adam keeps m, v in 1 byte.
# A paged optimizer (bitsandbytes' paged_adamw*) moves the same bytes; its state is host-backed
# unified memory that pages in for the update ([QLORA], section 3: paged optimizers).
OPT_TRAFFIC_BYTES: dict[str, float] = {"adamw": 28.0, "adamw8bit": 16.0, "paged_adamw": 28.0,
                                       "paged_adamw8bit": 16.0, "sgd": 20.0}
# Optimizer state held per trainable parameter (fp32 master + moments) [ZERO].
OPT_STATE_BYTES: dict[str, float] = {"adamw": 12.0, "adamw8bit": 6.0, "paged_adamw": 12.0,
                                     "paged_adamw8bit": 6.0, "sgd": 8.0}

# Per-GPU relative uncertainty of a rate, by where it came from.
SOURCE_SIGMA: dict[str, float] = {
    "probe": 0.03,
    "catalog-mamf": 0.05,  # ACC: GPUs in one node differ by 5%+, and software moves MAMF
    "transferred-efficiency": 0.12,
    "catalog-spec": 0.08,
    "catalog-measured": 0.05,
    "published-kernel-curve": 0.10,
    "generic-kernel-ratio": 0.25,
    "link-spec": 0.15,  # a busbw rule of thumb over a link's spec
    "nic-spec": 0.20,  # NIC efficiency varies with topology and congestion
}
# Unidirectional PCIe x16 bandwidth by generation, GB/s ([NET] tables).
PCIE_GBPS: dict[int, float] = {3: 15.75, 4: 31.5, 5: 63.0, 6: 121.0}
BITS_PER_BYTE = 8
DEFAULT_PCIE_GEN = 4  # a host link the catalog does not name: the common server generation
NVLINK_C2C_GBPS = 450.0  # Grace<->GPU, unidirectional (SemiAnalysis figure quoted in [NET])
Z90 = 1.645  # standard-normal quantile: a band of +-Z90 sigma holds 90%
BETA_KERNEL_SIGMA = 0.10  # extra spread when the software gate says the kernel is beta
