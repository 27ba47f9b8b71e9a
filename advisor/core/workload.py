"""What the user runs: the model's shape and how it is trained or served.

These are the inputs every projection starts from. They are plain pydantic
models so a workload round-trips through answers.toml and reports unchanged.
Shape arithmetic (parameter counts, KV bytes per token) lives here, next to
the dimensions it reads, so the performance and memory models agree on it.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Mode = Literal["pretrain", "finetune", "lora", "prefill", "decode"]
Precision = Literal["bf16", "fp16", "fp8", "fp4", "nvfp4"]
Optimizer = Literal["adamw", "adamw8bit", "sgd"]
AttentionKernel = Literal["auto", "fa2", "fa3", "fa4"]

TRAINING_MODES: frozenset[str] = frozenset({"pretrain", "finetune", "lora"})

# Bytes per weight element when the recipe stores weights in that format (inference),
# with block scales amortised: nvfp4 carries one fp8 scale per 16 elements.
WEIGHT_BYTES: dict[str, float] = {
    "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp4": 0.53, "nvfp4": 0.5625,
}


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MlaSpec(_Frozen):
    """DeepSeek multi-head latent attention: low-rank Q and a compressed, cached KV latent."""

    q_lora_rank: int = Field(ge=1)
    kv_lora_rank: int = Field(ge=1)
    qk_nope_head_dim: int = Field(ge=1)
    qk_rope_head_dim: int = Field(ge=1)
    v_head_dim: int = Field(ge=1)


class ModelSpec(_Frozen):
    """A decoder-only transformer, dense or mixture-of-experts."""

    name: str = "custom"
    source: str = Field(default="", description="where the dimensions come from")
    layers: int = Field(ge=1)
    hidden: int = Field(ge=1)
    heads: int = Field(ge=1)
    kv_heads: int = Field(ge=1)
    head_dim: int | None = Field(default=None, ge=1, description="default hidden / heads")
    ffn: int = Field(ge=1, description="MLP intermediate size (dense layers)")
    vocab: int = Field(ge=1)
    gated_mlp: bool = Field(default=True, description="SwiGLU (3 matrices) vs GELU MLP (2)")
    tie_embeddings: bool = False
    experts: int = Field(default=0, ge=0, description="routed experts; 0 for a dense model")
    active_experts: int = Field(default=0, ge=0, description="routed experts per token")
    shared_experts: int = Field(default=0, ge=0)
    moe_ffn: int | None = Field(default=None, ge=1, description="expert intermediate size")
    dense_layers: int = Field(default=0, ge=0, description="leading layers with a dense MLP")
    mla: MlaSpec | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ModelSpec:
        if self.heads % self.kv_heads:
            raise ValueError(f"heads {self.heads} is not a multiple of kv_heads {self.kv_heads}")
        if self.experts:
            if not 1 <= self.active_experts <= self.experts:
                raise ValueError(
                    f"active_experts {self.active_experts} must be 1..experts ({self.experts})"
                )
            if self.dense_layers >= self.layers:
                raise ValueError("dense_layers must leave at least one MoE layer")
        elif self.active_experts or self.shared_experts:
            raise ValueError("active_experts/shared_experts need experts > 0")
        return self

    # --- dimensions -------------------------------------------------------------------

    @property
    def d_head(self) -> int:
        return self.head_dim or self.hidden // self.heads

    @property
    def qk_dim(self) -> int:
        """Per-head width of the attention scores' dot product."""
        if self.mla:
            return self.mla.qk_nope_head_dim + self.mla.qk_rope_head_dim
        return self.d_head

    @property
    def v_dim(self) -> int:
        return self.mla.v_head_dim if self.mla else self.d_head

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.experts else 0

    @property
    def expert_ffn(self) -> int:
        return self.moe_ffn or self.ffn

    @property
    def active_ffn(self) -> float:
        """Mean MLP width a token passes through, over all layers (for activation sizes)."""
        if not self.experts:
            return float(self.ffn)
        moe = (self.active_experts + self.shared_experts) * self.expert_ffn
        return (self.dense_layers * self.ffn + self.moe_layers * moe) / self.layers

    # --- parameter counts ---------------------------------------------------------------

    @property
    def attn_params_per_layer(self) -> int:
        h, n = self.hidden, self.heads
        if self.mla:
            m = self.mla
            q = h * m.q_lora_rank + m.q_lora_rank * n * self.qk_dim
            kv = h * (m.kv_lora_rank + m.qk_rope_head_dim)
            kv += m.kv_lora_rank * n * (m.qk_nope_head_dim + m.v_head_dim)
            return q + kv + n * m.v_head_dim * h
        d = self.d_head
        return h * (2 * n * d + 2 * self.kv_heads * d)

    def _mlp(self, width: int) -> int:
        return (3 if self.gated_mlp else 2) * self.hidden * width

    @property
    def expert_params(self) -> int:
        """Routed-expert weights: the part expert parallelism shards."""
        return self.moe_layers * self.experts * self._mlp(self.expert_ffn)

    @property
    def params_total(self) -> int:
        """Every weight, embeddings included (what memory holds)."""
        dense_mlp = (self.layers - self.moe_layers) * self._mlp(self.ffn)
        shared = self.moe_layers * self.shared_experts * self._mlp(self.expert_ffn)
        router = self.moe_layers * self.hidden * self.experts
        embed = self.vocab * self.hidden * (1 if self.tie_embeddings else 2)
        body = self.layers * self.attn_params_per_layer + dense_mlp + shared + router
        return body + self.expert_params + embed

    @property
    def params_active(self) -> int:
        """Weights one token multiplies through: the dense_N of the FLOP convention.

        The LM head is counted once and the embedding lookup not at all, as in
        the H200->B200 guide's `dense_N = L(3hi + h(2 n d + 2 n_kv d)) + V h`.
        """
        dense_mlp = (self.layers - self.moe_layers) * self._mlp(self.ffn)
        per_token_experts = self.active_experts + self.shared_experts
        moe = self.moe_layers * (per_token_experts * self._mlp(self.expert_ffn))
        router = self.moe_layers * self.hidden * self.experts
        return self.layers * self.attn_params_per_layer + dense_mlp + moe + router + (
            self.vocab * self.hidden
        )

    @property
    def kv_elems_per_token(self) -> int:
        """Cached elements per token over all layers: 2 L n_kv d, or L (latent + rope) for MLA."""
        if self.mla:
            return self.layers * (self.mla.kv_lora_rank + self.mla.qk_rope_head_dim)
        return 2 * self.layers * self.kv_heads * self.d_head

    @classmethod
    def from_params(cls, params: float, **dims: Any) -> ModelSpec:
        """A Llama-shaped model of about `params` weights; given dimensions win.

        The shape follows the Llama-3 family: hidden ~ 128 x layers, head_dim
        128, GQA with 8 KV heads, SwiGLU width 3.5 x hidden, vocab 128256. The
        layer count is then solved so the total matches `params`.
        """
        vocab = int(dims.get("vocab") or 128256)
        guess = round((params * 128 / 12) ** (1 / 3) / 128) * 128  # 12 L h^2 with h = 128 L
        hidden = int(dims.get("hidden") or max(256, guess))
        heads = int(dims.get("heads") or max(1, hidden // 128))
        kv_heads = int(dims.get("kv_heads") or math.gcd(heads, 8))
        ffn = int(dims.get("ffn") or round(3.5 * hidden / 256) * 256)
        probe = cls(layers=1, hidden=hidden, heads=heads, kv_heads=kv_heads, ffn=ffn, vocab=vocab)
        per_layer = probe.attn_params_per_layer + probe._mlp(ffn)
        layers = int(dims.get("layers") or max(1, round((params - 2 * vocab * hidden) / per_layer)))
        extra = {k: v for k, v in dims.items() if v is not None and k not in
                 {"vocab", "hidden", "heads", "kv_heads", "ffn", "layers"}}
        return cls(
            name=f"custom-{params / 1e9:.3g}B",
            source="shape inferred from the parameter count (Llama-3 proportions)",
            layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads, ffn=ffn, vocab=vocab,
            **extra,
        )


class Workload(_Frozen):
    """How the model is run: mode, sequence lengths, batch, precision and parallelism."""

    mode: Mode = "pretrain"
    model: ModelSpec
    seq_lens: list[int] = Field(min_length=1, description="the sweep; the first is the primary")
    micro_batch: int = Field(default=1, ge=1, description="sequences per GPU per micro-step")
    global_batch: int | None = Field(
        default=None, ge=1,
        description="sequences per optimizer step; default one micro-batch per DP rank",
    )
    packed_doc_len: int | None = Field(
        default=None, ge=1,
        description="mean document length when sequences are packed with a doc mask",
    )
    precision: Precision = "bf16"
    optimizer: Optimizer = "adamw"
    zero_stage: int = Field(default=0, ge=0, le=3, description="ZeRO / FSDP sharding stage")
    checkpointing: bool = False
    offload_optimizer: bool = False
    fused_kernels: bool = Field(
        default=False, description="fused norm/SwiGLU/RoPE and chunked cross-entropy (e.g. Liger)"
    )
    attention_kernel: AttentionKernel = "auto"
    tp: int = Field(default=1, ge=1)
    pp: int = Field(default=1, ge=1)
    cp: int = Field(default=1, ge=1)
    ep: int = Field(default=1, ge=1)
    gpus: int = Field(default=8, ge=1)
    nodes: int = Field(default=1, ge=1)
    nic_gbit: float = Field(
        default=400.0, gt=0, description="scale-out NIC line rate per GPU, Gbit/s"
    )
    token_budget: float | None = Field(default=None, gt=0, description="tokens to train or serve")

    @model_validator(mode="before")
    @classmethod
    def _resolve_model(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("model"), str):
            from advisor.core.presets import resolve_preset

            data = {**data, "model": resolve_preset(data["model"])}
        return data

    @model_validator(mode="after")
    def _layout(self) -> Workload:
        if any(s < 1 for s in self.seq_lens):
            raise ValueError("sequence lengths must be positive")
        if len(set(self.seq_lens)) != len(self.seq_lens):
            raise ValueError("sequence lengths repeat")
        group = self.tp * self.pp * self.cp
        if self.gpus % group:
            raise ValueError(f"gpus {self.gpus} is not a multiple of tp*pp*cp = {group}")
        if self.gpus % self.nodes:
            raise ValueError(f"gpus {self.gpus} do not split evenly over {self.nodes} nodes")
        if self.dp % self.ep:
            raise ValueError(f"ep {self.ep} must divide the data-parallel size {self.dp}")
        if self.ep > 1 and not self.model.experts:
            raise ValueError("ep > 1 needs a mixture-of-experts model")
        if self.model.experts and self.model.experts % self.ep:
            raise ValueError(f"ep {self.ep} must divide the {self.model.experts} experts")
        if self.global_batch is not None and self.global_batch % (self.micro_batch * self.dp):
            raise ValueError(
                f"global_batch {self.global_batch} is not a multiple of micro_batch x dp "
                f"= {self.micro_batch * self.dp}"
            )
        if self.packed_doc_len is not None and self.packed_doc_len > min(self.seq_lens):
            raise ValueError("packed_doc_len is longer than the shortest sequence")
        if not self.training and (self.zero_stage or self.offload_optimizer or self.checkpointing):
            raise ValueError("zero_stage, offload_optimizer and checkpointing are training options")
        if self.mode == "decode" and self.packed_doc_len is not None:
            raise ValueError("packing does not apply to decode")
        return self

    @property
    def training(self) -> bool:
        return self.mode in TRAINING_MODES

    @property
    def dp(self) -> int:
        return self.gpus // (self.tp * self.pp * self.cp)

    @property
    def gpus_per_node(self) -> int:
        return self.gpus // self.nodes

    @property
    def accumulation(self) -> int:
        """Micro-batches per optimizer step on each data-parallel rank."""
        gb = self.global_batch or self.micro_batch * self.dp
        return gb // (self.micro_batch * self.dp)

    @property
    def sequences_per_step(self) -> int:
        return self.global_batch or self.micro_batch * self.dp
