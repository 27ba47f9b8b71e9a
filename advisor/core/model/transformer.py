"""The model's shape: a decoder-only transformer, dense or mixture-of-experts.

Shape arithmetic (parameter counts, KV bytes per token, the keys a query attends to)
lives here, next to the dimensions it reads, so the performance and memory models agree
on it. Where a context length goes in (sliding-window attention), the methods take a
number or a numpy array of them, so the engine can call them on its grids.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ConfigDict, Field, ValidationError, model_validator

from advisor.core.errors import FieldError
from advisor.core.formats import validation_error
from advisor.core.model import bounds as B
from advisor.core.model.numeric import Amount, Whole
from advisor.core.model.printable import PrintableModel
from advisor.core.model.strict import StrictInput

if TYPE_CHECKING:
    import numpy as np

Tokens = TypeVar("Tokens", float, "np.ndarray")
"""A context length: one number, or a numpy array of them (the engine's grids)."""

SHAPE_CHECK = 0.10
"""How far the shape's parameter count may be from the one the user stated before the
decision says they disagree (issue 28: "more than 10%"): a model card's rounded size
("7B" for 6.74B) is within it, a shape that is missing its MoE layout is not."""


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
                                  description="expert (and shared-expert) intermediate size; "
                                              "default ffn")
    dense_layers: Whole = Field(default=0, ge=0, le=B.MAX_LAYERS,
                                description="leading layers with a dense MLP")
    moe_every: Whole = Field(
        default=1, ge=1, le=B.MAX_LAYERS,
        description="after the dense layers, layer i (from 0) has experts when (i + 1) is a "
                    "multiple of this; the others a dense MLP (Llama-4 Maverick: 2)")
    qkv_bias: bool = Field(default=False, description="biases on the Q, K and V projections "
                                                      "(Qwen2, GLM-4.5, GPT-OSS)")
    out_bias: bool = Field(default=False,
                           description="a bias on the attention output projection (GPT-OSS)")
    mlp_bias: bool = Field(default=False, description="biases on the MLP matrices and the "
                                                      "router (GPT-OSS's experts)")
    attention_sinks: bool = Field(
        default=False, description="a learned sink logit per head and layer (GPT-OSS)")
    sliding_window: Whole | None = Field(
        default=None, ge=1, le=B.MAX_SEQ_LEN,
        description="local attention: a sliding layer attends to (and caches) at most this "
                    "many tokens; none: every layer attends to the whole context")
    global_every: Whole | None = Field(
        default=None, ge=2, le=B.MAX_LAYERS,
        description="with a sliding window, layer i (from 0) attends globally when (i + 1) "
                    "is a multiple of this (Gemma 3: 6, GPT-OSS: 2); none: every layer slides")
    mla: MlaSpec | None = None
    max_context: Whole | None = Field(
        default=None, ge=1, le=B.MAX_SEQ_LEN,
        description="the longest context the model supports (a serving input cannot be longer)")
    declared_params: Amount | None = Field(
        default=None, ge=B.MIN_PARAMS, le=B.MAX_PARAMS,
        description="the parameter count the user gave, for a shape check")

    @model_validator(mode="after")
    def _consistent(self) -> ModelSpec:
        """The rules across dimensions, each blamed on the field to fix (so a flag, a
        config.json key or an answers path can name it, not just the model as a whole)."""
        if self.heads % self.kv_heads:
            raise FieldError(f"heads {self.heads} is not a multiple of kv_heads "
                             f"{self.kv_heads}", field="kv_heads", value=self.kv_heads)
        if self.head_dim is None and self.hidden < self.heads:  # hidden // heads = 0
            raise FieldError(f"hidden {self.hidden} over {self.heads} heads leaves each head "
                             "no width: give head_dim, or fewer heads", field="heads",
                             value=self.heads)
        if self.experts:
            if not 1 <= self.active_experts <= self.experts:
                raise FieldError(f"active_experts {self.active_experts} must be 1..experts "
                                 f"({self.experts})", field="active_experts",
                                 value=self.active_experts)
            if self.moe_layers < 1:  # the blame goes to the field past the depth
                field = "dense_layers" if self.dense_layers >= self.layers else "moe_every"
                raise FieldError(f"leaves no MoE layer in {self.layers} (dense_layers "
                                 f"{self.dense_layers}, moe_every {self.moe_every})",
                                 field=field, value=getattr(self, field))
        elif self.active_experts or self.shared_experts or self.moe_ffn:
            raise FieldError("active_experts, shared_experts and moe_ffn need experts > 0",
                             field="experts", value=self.experts)
        elif self.dense_layers or self.moe_every > 1:
            raise FieldError("dense_layers and moe_every place MoE layers: they need "
                             "experts > 0", field="experts", value=self.experts)
        if self.global_every is not None and self.sliding_window is None:
            raise FieldError("global_every needs a sliding_window", field="global_every",
                             value=self.global_every)
        if self.mla and (self.qkv_bias or self.out_bias):
            field = "qkv_bias" if self.qkv_bias else "out_bias"
            raise FieldError("attention biases are counted for multi-head and grouped-query "
                             "attention, not MLA", field=field, value=True)
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
        """Layers with experts: past the dense ones, every `moe_every`-th."""
        if not self.experts:
            return 0
        return self.layers // self.moe_every - self.dense_layers // self.moe_every

    @property
    def sliding_layers(self) -> int:
        """Layers that attend to the sliding window only; the rest attend globally."""
        if self.sliding_window is None:
            return 0
        return self.layers - (self.layers // self.global_every if self.global_every else 0)

    @property
    def expert_ffn(self) -> int:
        return self.moe_ffn or self.ffn

    @property
    def active_ffn(self) -> float:
        """Mean MLP width a token passes through, over all layers (for activation sizes)."""
        if not self.experts:
            return float(self.ffn)
        moe = (self.active_experts + self.shared_experts) * self.expert_ffn
        return ((self.layers - self.moe_layers) * self.ffn + self.moe_layers * moe) / self.layers

    # --- parameter counts ---------------------------------------------------------------

    @property
    def attn_params_per_layer(self) -> int:
        """Q, K, V and output projections, with their biases and sinks where the model has
        them (norms are not counted, here or anywhere)."""
        h, n = self.hidden, self.heads
        sinks = n if self.attention_sinks else 0
        if self.mla:
            m = self.mla
            q = h * m.q_lora_rank + m.q_lora_rank * n * self.qk_dim
            kv = h * (m.kv_lora_rank + m.qk_rope_head_dim)
            kv += m.kv_lora_rank * n * (m.qk_nope_head_dim + m.v_head_dim)
            return q + kv + n * m.v_head_dim * h + sinks
        d = self.d_head
        qkv_bias = (n + 2 * self.kv_heads) * d if self.qkv_bias else 0
        return h * (2 * n * d + 2 * self.kv_heads * d) + qkv_bias + (
            h if self.out_bias else 0) + sinks

    def _mlp(self, width: int) -> int:
        """One MLP (or expert) of intermediate size `width`, with its biases if any."""
        weights = (3 if self.gated_mlp else 2) * self.hidden * width
        if not self.mlp_bias:
            return weights
        return weights + (2 * width if self.gated_mlp else width) + self.hidden

    @property
    def _router(self) -> int:
        """The routers of every MoE layer."""
        return self.moe_layers * self.experts * (self.hidden + (1 if self.mlp_bias else 0))

    @property
    def expert_params(self) -> int:
        """Routed-expert weights: the part expert parallelism shards."""
        return self.moe_layers * self.experts * self._mlp(self.expert_ffn)

    @property
    def params_total(self) -> int:
        """Every weight, embeddings included (what memory holds)."""
        dense_mlp = (self.layers - self.moe_layers) * self._mlp(self.ffn)
        shared = self.moe_layers * self.shared_experts * self._mlp(self.expert_ffn)
        embed = self.vocab * self.hidden * (1 if self.tie_embeddings else 2)
        body = self.layers * self.attn_params_per_layer + dense_mlp + shared + self._router
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
        return self.layers * self.attn_params_per_layer + dense_mlp + moe + self._router + (
            self.vocab * self.hidden
        )

    @property
    def kv_elems_per_token(self) -> int:
        """Cached elements per token over all layers: 2 L n_kv d, or L (latent + rope) for MLA."""
        if self.mla:
            return self.layers * (self.mla.kv_lora_rank + self.mla.qk_rope_head_dim)
        return 2 * self.layers * self.kv_heads * self.d_head

    # --- context-dependent: sliding-window attention ---------------------------------------

    def cached_tokens(self, context: Tokens) -> Tokens:
        """Tokens of a `context`-token sequence a layer keeps in its KV cache, mean over the
        layers: a global layer keeps them all, a sliding one at most the window. It is also
        the keys the next decoded token's query attends to. Without a window: `context`."""
        if self.sliding_window is None:
            return context
        local = _at_most(context, self.sliding_window)
        return ((self.layers - self.sliding_layers) * context
                + self.sliding_layers * local) / self.layers

    def kv_elems_per_token_at(self, context: Tokens) -> Tokens:
        """Cached KV elements per token of a `context`-token sequence, over all layers:
        `kv_elems_per_token` without a window, less where sliding layers drop old tokens."""
        return self.kv_elems_per_token * self.cached_tokens(context) / context

    def mean_keys(self, seq_len: Tokens) -> Tokens:
        """Keys a query attends to in a causal pass over `seq_len` tokens (training,
        prefill), mean over queries and layers: half the sequence on a global layer; on a
        sliding one c - c^2 / 2s with c = min(s, window) (the first c queries see all before
        them, the rest a full window). Without a window: `seq_len / 2`."""
        if self.sliding_window is None:
            return seq_len / 2
        c = _at_most(seq_len, self.sliding_window)
        local = c - c * c / (2 * seq_len)
        return ((self.layers - self.sliding_layers) * seq_len / 2
                + self.sliding_layers * local) / self.layers

    # --- the count the user stated -----------------------------------------------------

    def params_note(self) -> str | None:
        """The shape's parameter count and the one the user gave, when they disagree by more
        than SHAPE_CHECK: which one the projection uses (the shape's)."""
        if not self.declared_params:
            return None
        ratio = self.params_total / self.declared_params
        if abs(ratio - 1) <= SHAPE_CHECK:
            return None
        return (f"the model's dimensions give {self.params_total / 1e9:.3g}B parameters, "
                f"{ratio - 1:+.0%} off the {self.declared_params / 1e9:.3g}B you gave: the "
                "dimensions are used, not the count (check the MLP kind, gated or not, the "
                "vocabulary and, for a mixture of experts, the experts' FFN width, how often a "
                "layer is MoE, the dense layers and the shared experts)")

    @classmethod
    def from_params(cls, params: float, **dims: Any) -> ModelSpec:
        """A Llama-shaped model of about `params` weights; given dimensions win.

        What is not given follows the Llama-3 family: hidden ~ 128 x layers, head_dim
        128, GQA with 8 KV heads, SwiGLU width 3.5 x hidden (a plain GELU MLP: 4 x
        hidden), vocab 128256; the layer count is solved so the total matches `params`
        (experts and their placement included). The source says which dimensions were
        given and which inferred; when the shape is given, `params_note` says how far its
        count is from `params`.
        """
        if not B.MIN_PARAMS <= params <= B.MAX_PARAMS:
            raise FieldError(f"a model has {B.MIN_PARAMS:g} to {B.MAX_PARAMS:.0e} parameters",
                             field="declared_params", value=params)
        try:
            return cls._from_params(params, **dims)
        except ValidationError as exc:  # e.g. 1e15 parameters in layers of hidden 256
            err = validation_error(exc, "command line",
                                   entry=f"a model of {params:.3g} parameters")
            if err.field in _INFERRED and dims.get(err.field) is None:  # the count's doing
                raise FieldError(f"infers {err.field} {err.value!r} with the dimensions "
                                 f"given ({err.message}): give the {err.field} yourself, or "
                                 "another count", file="command line",
                                 field="declared_params", value=params) from None
            raise err from None

    @classmethod
    def _from_params(cls, params: float, **dims: Any) -> ModelSpec:
        # a dimension given as 0 is given (and refused by the shape's bounds), not inferred
        given = {k: v for k, v in dims.items() if v is not None}
        vocab = int(given["vocab"]) if "vocab" in given else 128256
        hidden = int(given["hidden"]) if "hidden" in given else cls._hidden_for(params, given)
        heads = int(given["heads"]) if "heads" in given else max(1, hidden // 128)
        kv_heads = int(given["kv_heads"]) if "kv_heads" in given else math.gcd(heads, 8)
        gated = bool(given.get("gated_mlp", True))
        ffn = (int(given["ffn"]) if "ffn" in given  # a multiple of 256, at least one
               else max(256, round((3.5 if gated else 4.0) * hidden / 256) * 256))
        shape = {**given, "hidden": hidden, "heads": heads, "kv_heads": kv_heads, "ffn": ffn,
                 "vocab": vocab, "gated_mlp": gated}
        shape["layers"] = (int(given["layers"]) if "layers" in given
                           else cls._layers_for(params, shape))
        inferred = [k for k in _INFERRED if k not in given]
        if not inferred:
            source = "the shape given (the parameter count only checks it)"
        elif len(inferred) == len(_INFERRED):
            source = "shape inferred from the parameter count (Llama-3 proportions)"
        else:
            source = (f"{', '.join(k for k in _INFERRED if k in given)} as given; "
                      f"{', '.join(f'{k} {shape[k]}' for k in inferred)} inferred from the "
                      "parameter count (Llama-3 proportions)")
        return cls(name=f"custom-{params / 1e9:.3g}B", source=source, declared_params=params,
                   **shape)

    @staticmethod
    def _hidden_for(params: float, given: dict[str, Any]) -> int:
        """hidden = 128 L with a layer of ~12 h^2 weights (a SwiGLU MLP of 3.5 h is 10.5
        h^2 of them); a mixture of experts has that many MLPs more per MoE layer."""
        dense = (params * 128 / 12) ** (1 / 3)
        copies = 1.0
        if given.get("experts"):
            experts = given["experts"] + given.get("shared_experts", 0)
            width = given["moe_ffn"] / (3.5 * dense) if given.get("moe_ffn") else 1.0
            every = given.get("moe_every", 1)
            copies = (every - 1 + experts * width) / every
        guess = (params * 128 / (1.5 + 10.5 * copies)) ** (1 / 3)
        return max(256, round(guess / 128) * 128)

    @classmethod
    def _layers_for(cls, params: float, shape: dict[str, Any]) -> int:
        """The layer count whose total is nearest `params`: the total grows by the same
        amount with every `moe_every` layers past the dense ones."""
        step, dense = int(shape.get("moe_every", 1)), int(shape.get("dense_layers", 0))
        first = dense + step
        lo = cls(**{**shape, "layers": first}).params_total
        hi = cls(**{**shape, "layers": first + step}).params_total
        return max(first, first + round((params - lo) / (hi - lo) * step))


_INFERRED = ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab")
"""The dimensions `from_params` fills in when they are not given."""


def _at_most(context: Tokens, cap: int) -> Tokens:
    """min(context, cap), elementwise for a numpy array (this module imports no numpy)."""
    if isinstance(context, int | float):
        return min(context, cap)
    return context.clip(max=cap)
