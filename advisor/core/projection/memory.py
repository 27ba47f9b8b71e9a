"""Memory fit: what one GPU must hold, and the longest sequence that fits.

Memory is a fixed part (weights, gradients, optimizer state at the chosen
ZeRO/FSDP stage, framework buffers) plus a part linear in the sequence length
(activations, logits, KV cache; FlashAttention keeps attention itself linear).
So the largest sequence that fits has a closed form, and "cannot fit at any
sequence length" is simply a fixed part larger than the GPU.

Activations are counted tensor by tensor for a pre-norm decoder block (after
Korthikanti et al., adapted to SwiGLU and GQA): what autograd saves without
checkpointing, or the layer inputs plus one layer's working set with it.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from advisor.core.model.catalog import Gpu
from advisor.core.model.workload import WEIGHT_BYTES, Workload
from advisor.core.projection.calibration import CAL, OPT_STATE_BYTES, Calibration

GIB = float(2**30)
SEQ_GRANULE = 256  # max_seq_len is reported rounded down to this


class MemoryModel(BaseModel):
    """Per-GPU memory of a workload: `fixed_gib + per_token_gib * seq_len`."""

    model_config = ConfigDict(frozen=True)

    weights_gib: float
    grads_gib: float
    optimizer_gib: float
    framework_gib: float
    per_token_gib: float  # activations, logits and KV per token of sequence length
    activation_note: str

    @property
    def fixed_gib(self) -> float:
        return self.weights_gib + self.grads_gib + self.optimizer_gib + self.framework_gib

    def total_gib(self, seq_len: float) -> float:
        return self.fixed_gib + self.per_token_gib * seq_len


class MemoryFit(BaseModel):
    """One GPU against one workload."""

    model_config = ConfigDict(frozen=True)

    gpu: str
    capacity_gib: float
    usable_gib: float
    fixed_gib: float
    per_token_gib: float
    max_seq_len: int | None  # None: does not fit at any sequence length
    total_gib: list[float]  # at each swept sequence length
    fits: list[bool]


def _layer_widths(w: Workload) -> tuple[float, float]:
    """(elements saved per token per layer, elements of one layer's transient gradients)."""
    m = w.model
    h, f = m.hidden, m.active_ffn
    attn = m.heads * m.qk_dim + m.kv_heads * (m.qk_dim + m.v_dim) + m.heads * m.v_dim
    if m.mla:
        attn += m.mla.q_lora_rank + m.mla.kv_lora_rank + m.mla.qk_rope_head_dim
    mlp = (3 if m.gated_mlp else 2) * f  # gate, up, product (or fc1 out, activation)
    saved = 4 * h + attn + mlp  # norm inputs and outputs around attention and MLP
    if not w.fused_kernels:
        # eager: fp32 copies inside both RMSNorms, the separate SiLU output, pre-RoPE q and k
        saved += 4 * h + (f if m.gated_mlp else 0) + (m.heads + m.kv_heads) * m.qk_dim
    transient = (2 if m.gated_mlp else 1) * f + h  # grads alive together in a layer's backward
    return saved, transient


def memory_model(w: Workload, cal: Calibration = CAL) -> MemoryModel:
    """The fixed and per-token parts for this workload on any one GPU."""
    m = w.model
    experts = m.expert_params
    local = (m.params_total - experts) / (w.tp * w.pp) + experts / (w.tp * w.pp * w.ep)
    dp = w.dp
    kv_bytes = 1.0 if w.precision in ("fp8", "fp4", "nvfp4") else 2.0
    per_seq = w.micro_batch / (w.tp * w.cp)
    if not w.training:
        weights = local * WEIGHT_BYTES[w.precision]
        kv = m.kv_elems_per_token * kv_bytes * cal.kv_overhead * w.micro_batch / (w.tp * w.pp)
        working = 0.0
        if w.mode == "prefill":
            saved, _ = _layer_widths(w)
            working = 2.0 * saved * per_seq
        return MemoryModel(
            weights_gib=weights / GIB, grads_gib=0.0, optimizer_gib=0.0,
            framework_gib=cal.inference_floor_gib, per_token_gib=(kv + working) / GIB,
            activation_note=f"KV cache x{cal.kv_overhead:g} overhead"
            + (", one layer's prefill working set" if working else ""),
        )
    lora = w.mode == "lora"
    low = w.precision in ("fp8", "fp4", "nvfp4")
    weights = local * (2.0 + (1.0 if low else 0.0)) / (dp if w.zero_stage == 3 else 1)
    grads = 0.0 if lora else 2.0 * local / (dp if w.zero_stage >= 2 else 1)
    optimizer = 0.0
    if not (lora or w.offload_optimizer):
        optimizer = OPT_STATE_BYTES[w.optimizer] * local / (dp if w.zero_stage >= 1 else 1)
    saved, transient = _layer_widths(w)
    if w.checkpointing:
        per_token = 2.0 * (m.hidden * m.layers + saved + transient)
        note = "checkpointed: layer inputs + one layer's activations and gradients"
    else:
        per_token = 2.0 * saved * m.layers
        note = "all layers' saved activations"
    logits = 0.0 if w.fused_kernels else 12.0 * m.vocab / w.tp
    note += "; chunked loss, no full logits" if w.fused_kernels else "; fp32 logits and their grads"
    return MemoryModel(
        weights_gib=weights / GIB, grads_gib=grads / GIB, optimizer_gib=optimizer / GIB,
        framework_gib=cal.framework_floor_gib,
        per_token_gib=(per_token + logits) * per_seq / GIB, activation_note=note,
    )


def usable_gib(gpu: Gpu, cal: Calibration = CAL) -> float:
    """Labelled capacity less what the driver, context and allocator keep."""
    return gpu.memory.gib * cal.usable_memory_fraction if gpu.memory else 0.0


def fit(model: MemoryModel, gpu: Gpu, seq_lens: Sequence[int], cal: Calibration = CAL) -> MemoryFit:
    usable = usable_gib(gpu, cal)
    room = usable - model.fixed_gib
    if room <= 0:
        max_seq = None
    elif model.per_token_gib <= 0:
        max_seq = 1 << 30
    else:
        max_seq = int(room / model.per_token_gib) // SEQ_GRANULE * SEQ_GRANULE or None
    totals = [model.total_gib(s) for s in seq_lens]
    return MemoryFit(
        gpu=gpu.id, capacity_gib=gpu.memory.gib if gpu.memory else 0.0, usable_gib=usable,
        fixed_gib=model.fixed_gib, per_token_gib=model.per_token_gib, max_seq_len=max_seq,
        total_gib=totals, fits=[t <= usable for t in totals],
    )
