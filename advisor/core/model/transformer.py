"""The model's shape: a decoder-only transformer, dense or mixture-of-experts.

Shape arithmetic (parameter counts, KV bytes per token) lives here, next to the
dimensions it reads, so the performance and memory models agree on it.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import ConfigDict, Field, ValidationError, model_validator

from advisor.core.formats import validation_error
from advisor.core.model import bounds as B
from advisor.core.model.numeric import Amount, Whole
from advisor.core.model.printable import PrintableModel
from advisor.core.model.strict import StrictInput


class _Frozen(StrictInput):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class MlaSpec(_Frozen):
    """DeepSeek multi-head latent attention: low-rank Q and a compressed, cached KV latent."""

    q_lora_rank: int = Field(ge=1, le=B.MAX_WIDTH)
    kv_lora_rank: int = Field(ge=1, le=B.MAX_WIDTH)
    qk_nope_head_dim: int = Field(ge=1, le=B.MAX_WIDTH)
    qk_rope_head_dim: int = Field(ge=1, le=B.MAX_WIDTH)
    v_head_dim: int = Field(ge=1, le=B.MAX_WIDTH)


class ModelSpec(_Frozen, PrintableModel):
    """A decoder-only transformer, dense or mixture-of-experts."""

    name: str = Field(default="custom", max_length=B.MAX_NAME_CHARS)
    source: str = Field(default="", description="where the dimensions come from")
    layers: Whole = Field(ge=1, le=B.MAX_LAYERS)
    hidden: Whole = Field(ge=1, le=B.MAX_WIDTH)
    heads: Whole = Field(ge=1, le=B.MAX_HEADS)
    kv_heads: Whole = Field(ge=1, le=B.MAX_HEADS)
    head_dim: Whole | None = Field(default=None, ge=1, le=B.MAX_WIDTH,
                                   description="default hidden / heads")
    ffn: Whole = Field(ge=1, le=B.MAX_WIDTH, description="MLP intermediate size (dense layers)")
    vocab: Whole = Field(ge=1, le=B.MAX_VOCAB)
    gated_mlp: bool = Field(default=True, description="SwiGLU (3 matrices) vs GELU MLP (2)")
    tie_embeddings: bool = False
    experts: Whole = Field(default=0, ge=0, le=B.MAX_EXPERTS,
                           description="routed experts; 0 for a dense model")
    active_experts: Whole = Field(default=0, ge=0, le=B.MAX_EXPERTS,
                                  description="routed experts per token")
    shared_experts: Whole = Field(default=0, ge=0, le=B.MAX_EXPERTS)
    moe_ffn: Whole | None = Field(default=None, ge=1, le=B.MAX_WIDTH,
                                  description="expert intermediate size")
    dense_layers: Whole = Field(default=0, ge=0, le=B.MAX_LAYERS,
                                description="leading layers with a dense MLP")
    mla: MlaSpec | None = None
    max_context: Whole | None = Field(
        default=None, ge=1, le=B.MAX_SEQ_LEN,
        description="the longest context the model supports (a serving input cannot be longer)")
    declared_params: Amount | None = Field(
        default=None, gt=0, description="the parameter count the user gave, for a shape check")

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

    def params_note(self) -> str | None:
        """A warning when the shape's parameter count and the one the user gave disagree."""
        if not self.declared_params:
            return None
        ratio = self.params_total / self.declared_params
        if abs(ratio - 1) <= 0.05:
            return None
        return (f"the model's dimensions give {self.params_total / 1e9:.2f}B parameters, "
                f"{ratio - 1:+.0%} off the {self.declared_params / 1e9:.3g}B you gave: the "
                "dimensions are used (check the MLP kind, gated or not, and the vocabulary)")

    @classmethod
    def from_params(cls, params: float, **dims: Any) -> ModelSpec:
        """A Llama-shaped model of about `params` weights; given dimensions win.

        The shape follows the Llama-3 family: hidden ~ 128 x layers, head_dim
        128, GQA with 8 KV heads, SwiGLU width 3.5 x hidden (a plain GELU MLP:
        4 x hidden), vocab 128256. The layer count is then solved so the total
        matches `params`; when every dimension is given, the shape wins and
        `params_note` says how far it is from `params`.
        """
        try:
            return cls._from_params(params, **dims)
        except ValidationError as exc:  # e.g. 1e30 parameters: a hidden size past its bound
            raise validation_error(exc, "command line",
                                   entry=f"a model of {params:.3g} parameters") from None

    @classmethod
    def _from_params(cls, params: float, **dims: Any) -> ModelSpec:
        vocab = int(dims.get("vocab") or 128256)
        guess = round((params * 128 / 12) ** (1 / 3) / 128) * 128  # 12 L h^2 with h = 128 L
        hidden = int(dims.get("hidden") or max(256, guess))
        heads = int(dims.get("heads") or max(1, hidden // 128))
        kv_heads = int(dims.get("kv_heads") or math.gcd(heads, 8))
        gated = bool(dims.get("gated_mlp", True))
        ffn = int(dims.get("ffn") or round((3.5 if gated else 4.0) * hidden / 256) * 256)
        probe = cls(layers=1, hidden=hidden, heads=heads, kv_heads=kv_heads, ffn=ffn, vocab=vocab,
                    gated_mlp=gated)
        per_layer = probe.attn_params_per_layer + probe._mlp(ffn)
        layers = int(dims.get("layers") or max(1, round((params - 2 * vocab * hidden) / per_layer)))
        extra = {k: v for k, v in dims.items() if v is not None and k not in
                 {"vocab", "hidden", "heads", "kv_heads", "ffn", "layers"}}
        return cls(
            name=f"custom-{params / 1e9:.3g}B",
            source="shape inferred from the parameter count (Llama-3 proportions)",
            layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads, ffn=ffn, vocab=vocab,
            declared_params=params, **extra,
        )
