"""The user's model, built with plain torch at the depth the workload probe runs.

A decoder-only transformer as the common open implementations write it (Llama,
Qwen, Mixtral): token embedding, then per layer RMSNorm, attention with a fused
QKV projection, rotary embeddings and grouped KV heads, RMSNorm and a SwiGLU (or
GELU) MLP or a routed mixture of experts; a final RMSNorm, the LM head and a
cross-entropy loss in fp32. What it is not, so the figures are read fairly:

- no fused kernels (Liger, Transformer Engine, Apex): norms, RoPE and the MLP's
  activation run as eager torch ops;
- the mixture of experts loops over experts (index, two GEMMs, scatter-add), as
  Hugging Face's reference MoE does, not with a grouped-GEMM kernel;
- fp8 is per-tensor dynamic scaling through `torch._scaled_mm` on the attention and
  dense-MLP projections (e4m3 forward, e5m2 gradients, as torchao's tensorwise
  recipe); the LM head, the router and the experts stay in bf16.

The attention call runs inside a profiler range named `workload.attention`, so the
kernels it launches are counted as attention whatever they are called.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
import torch.utils.checkpoint
from torch import nn
from torch.profiler import record_function

from .workload_shape import ModelShape

ATTENTION_RANGE = "workload.attention"

# q, k, v in (batch, seq, heads, head_dim); returns (batch, seq, heads, head_dim).
AttentionFn = Callable[[Any, Any, Any, bool], Any]


# The gradients' fp8 format for each values' format (OCP, and AMD's fnuz on MI300).
FP8_GRADIENTS = {"float8_e4m3fn": "float8_e5m2", "float8_e4m3fnuz": "float8_e5m2fnuz"}


class Fp8Format:
    """The fp8 dtypes of one device family: e4m3 for values, e5m2 for gradients."""

    def __init__(self, value_dtype: str) -> None:
        self.value = getattr(torch, value_dtype)
        self.grad = getattr(torch, FP8_GRADIENTS[value_dtype])


def _quantize(x: Any, dtype: Any) -> tuple[Any, Any]:
    """Per-tensor dynamic scaling: the tensor's amax maps to the format's largest value.
    Returns the fp8 tensor and the fp32 scale that turns it back (amax / max)."""
    top = torch.finfo(dtype).max
    amax = x.detach().abs().max().float().clamp(min=1e-12)
    scale = top / amax
    q = (x.float() * scale).clamp(-top, top).to(dtype)
    return q, scale.reciprocal()


class _Fp8Matmul(torch.autograd.Function):
    """y = x @ w.T with both operands in fp8; the backward's two GEMMs in fp8 too."""

    @staticmethod
    def forward(ctx: Any, x: Any, weight: Any, fmt: Fp8Format) -> Any:
        flat = x.reshape(-1, x.shape[-1])
        xq, xs = _quantize(flat, fmt.value)
        wq, ws = _quantize(weight, fmt.value)
        y = torch._scaled_mm(xq, wq.t(), scale_a=xs, scale_b=ws, out_dtype=torch.bfloat16)
        ctx.save_for_backward(xq, xs, wq, ws)
        ctx.fmt, ctx.x_shape, ctx.x_dtype, ctx.w_dtype = fmt, x.shape, x.dtype, weight.dtype
        return y.reshape(*x.shape[:-1], weight.shape[0])

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        xq, xs, wq, ws = ctx.saved_tensors
        gq, gs = _quantize(grad.reshape(-1, grad.shape[-1]), ctx.fmt.grad)
        # _scaled_mm takes its first operand row-major and its second column-major.
        gx = torch._scaled_mm(gq, wq.t().contiguous().t(), scale_a=gs, scale_b=ws,
                              out_dtype=torch.bfloat16)
        gw = None
        if ctx.needs_input_grad[1]:  # a frozen (LoRA) base weight needs no gradient
            gw = torch._scaled_mm(gq.t().contiguous(), xq.t().contiguous().t(), scale_a=gs,
                                  scale_b=xs, out_dtype=torch.bfloat16).to(ctx.w_dtype)
        return gx.reshape(ctx.x_shape).to(ctx.x_dtype), gw, None


class Projection(nn.Module):
    """A bias-free linear layer: plain, fp8, or frozen with a LoRA adapter."""

    def __init__(self, inp: int, out: int, fp8: Fp8Format | None = None,
                 lora_rank: int = 0) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out, inp))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        self.fp8 = fp8
        self.lora_a = self.lora_b = None
        if lora_rank:
            self.weight.requires_grad_(False)
            self.lora_a = nn.Parameter(torch.empty(lora_rank, inp))
            nn.init.kaiming_uniform_(self.lora_a, a=math.sqrt(5))
            self.lora_b = nn.Parameter(torch.zeros(out, lora_rank))
        self._frozen_fp8: tuple[Any, Any] | None = None  # serving: the weight quantized once

    def forward(self, x: Any) -> Any:
        if self.fp8 is None:
            y = F.linear(x, self.weight)
        elif torch.is_grad_enabled():
            y = _Fp8Matmul.apply(x, self.weight, self.fp8)
        else:
            y = self._fp8_frozen(x)
        if self.lora_a is not None and self.lora_b is not None:
            y = y + F.linear(F.linear(x, self.lora_a), self.lora_b)
        return y

    def _fp8_frozen(self, x: Any) -> Any:
        assert self.fp8 is not None
        if self._frozen_fp8 is None:
            with torch.no_grad():
                self._frozen_fp8 = _quantize(self.weight, self.fp8.value)
        wq, ws = self._frozen_fp8
        flat = x.reshape(-1, x.shape[-1])
        xq, xs = _quantize(flat, self.fp8.value)
        y = torch._scaled_mm(xq, wq.t(), scale_a=xs, scale_b=ws, out_dtype=torch.bfloat16)
        return y.reshape(*x.shape[:-1], self.weight.shape[0])


def rope_tables(positions: int, head_dim: int, device: Any, base: float = 500000.0) -> Any:
    """cos and sin of the rotary angles, (positions, head_dim), Llama 3's base."""
    half = head_dim // 2
    inv = 1.0 / (base ** (torch.arange(0, half, device=device, dtype=torch.float32) / half))
    angles = torch.outer(torch.arange(positions, device=device, dtype=torch.float32), inv)
    angles = torch.cat((angles, angles), dim=-1)
    return torch.stack((angles.cos(), angles.sin()))


def _rotate(x: Any, cos: Any, sin: Any) -> Any:
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin


class KVCache:
    """Preallocated keys and values per layer, (batch, length, kv_heads, head_dim)."""

    def __init__(self, layers: int, batch: int, length: int, kv_heads: int, head_dim: int,
                 dtype: Any, device: Any) -> None:
        shape = (batch, length, kv_heads, head_dim)
        self.k = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(layers)]
        self.v = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(layers)]

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (*self.k, *self.v))


class Attention(nn.Module):
    def __init__(self, shape: ModelShape, attend: AttentionFn, fp8: Fp8Format | None,
                 lora_rank: int) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = shape.heads, shape.kv_heads, shape.head_dim
        width = (shape.heads + 2 * shape.kv_heads) * shape.head_dim
        self.qkv = Projection(shape.hidden, width, fp8, lora_rank)
        self.out = Projection(shape.heads * shape.head_dim, shape.hidden, fp8, lora_rank)
        self.attend = attend

    def forward(self, x: Any, rope: Any, start: int, cache: tuple[Any, Any] | None) -> Any:
        b, s, _ = x.shape
        qkv = self.qkv(x).view(b, s, self.heads + 2 * self.kv_heads, self.head_dim)
        q, k, v = qkv.split((self.heads, self.kv_heads, self.kv_heads), dim=2)
        cos, sin = (t[start : start + s].unsqueeze(1).to(q.dtype) for t in rope)
        q, k = _rotate(q, cos, sin), _rotate(k, cos, sin)
        causal = True
        if cache is not None:  # serving: write this step's keys and values, read them all
            ck, cv = cache
            ck[:, start : start + s] = k
            cv[:, start : start + s] = v
            k, v = ck[:, : start + s], cv[:, : start + s]
            causal = s > 1  # one new token attends to every cached one
        with record_function(ATTENTION_RANGE):
            o = self.attend(q, k, v, causal)
        return self.out(o.reshape(b, s, self.heads * self.head_dim))


class Mlp(nn.Module):
    def __init__(self, hidden: int, width: int, kind: str, fp8: Fp8Format | None = None,
                 lora_rank: int = 0) -> None:
        super().__init__()
        self.kind = kind
        self.up = Projection(hidden, width * (2 if kind == "swiglu" else 1), fp8, lora_rank)
        self.down = Projection(width, hidden, fp8, lora_rank)

    def forward(self, x: Any) -> Any:
        h = self.up(x)
        if self.kind == "swiglu":
            gate, up = h.chunk(2, dim=-1)
            h = F.silu(gate) * up
        else:
            h = F.gelu(h, approximate="tanh")
        return self.down(h)


class Experts(nn.Module):
    """Top-k routing over the experts, each token's outputs weighted and summed."""

    def __init__(self, shape: ModelShape) -> None:
        super().__init__()
        self.k = shape.active_experts
        self.router = nn.Linear(shape.hidden, shape.experts, bias=False)
        self.experts = nn.ModuleList(
            Mlp(shape.hidden, shape.expert_ffn, shape.mlp) for _ in range(shape.experts)
        )
        self.shared = (
            Mlp(shape.hidden, shape.expert_ffn * shape.shared_experts, shape.mlp)
            if shape.shared_experts else None
        )

    def forward(self, x: Any) -> Any:
        tokens = x.reshape(-1, x.shape[-1])
        probs = F.softmax(self.router(tokens).float(), dim=-1)
        weights, chosen = probs.topk(self.k, dim=-1)
        weights = (weights / weights.sum(dim=-1, keepdim=True)).to(x.dtype)
        flat = chosen.reshape(-1)
        order = flat.argsort()
        counts = torch.bincount(flat, minlength=len(self.experts)).tolist()
        token_of = order // self.k
        routed = tokens[token_of]
        scale = weights.reshape(-1)[order].unsqueeze(-1)
        outs, start = [], 0
        for expert, count in zip(self.experts, counts, strict=True):
            if count:
                outs.append(expert(routed[start : start + count]))
            start += count
        out = torch.zeros_like(tokens).index_add_(0, token_of, torch.cat(outs) * scale)
        if self.shared is not None:
            out = out + self.shared(tokens)
        return out.reshape(x.shape)


class Layer(nn.Module):
    def __init__(self, shape: ModelShape, attend: AttentionFn, fp8: Fp8Format | None,
                 lora_rank: int) -> None:
        super().__init__()
        self.norm1 = nn.RMSNorm(shape.hidden, eps=1e-5)
        self.attn = Attention(shape, attend, fp8, lora_rank)
        self.norm2 = nn.RMSNorm(shape.hidden, eps=1e-5)
        self.mlp: nn.Module = (
            Experts(shape) if shape.moe
            else Mlp(shape.hidden, shape.ffn, shape.mlp, fp8, lora_rank)
        )

    def forward(self, x: Any, rope: Any, start: int, cache: tuple[Any, Any] | None) -> Any:
        x = x + self.attn(self.norm1(x), rope, start, cache)
        return x + self.mlp(self.norm2(x))


class Transformer(nn.Module):
    """`layers` decoder layers of `shape` between the embedding and the LM head."""

    def __init__(self, shape: ModelShape, layers: int, attend: AttentionFn,
                 max_positions: int, *, fp8: Fp8Format | None = None, lora_rank: int = 0,
                 recompute: bool = False) -> None:
        super().__init__()
        self.embed = nn.Embedding(shape.vocab, shape.hidden)
        self.layers = nn.ModuleList(Layer(shape, attend, fp8, lora_rank) for _ in range(layers))
        self.norm = nn.RMSNorm(shape.hidden, eps=1e-5)
        self.head = nn.Linear(shape.hidden, shape.vocab, bias=False)
        if shape.tie_embeddings:
            self.head.weight = self.embed.weight
        self.recompute = recompute
        self.register_buffer("rope", rope_tables(max_positions, shape.head_dim,
                                                 self.embed.weight.device), persistent=False)
        if lora_rank:  # only the adapters learn
            for name, p in self.named_parameters():
                if "lora_" not in name:
                    p.requires_grad_(False)

    def hidden_states(self, tokens: Any, start: int = 0, cache: KVCache | None = None) -> Any:
        x = self.embed(tokens)
        for i, layer in enumerate(self.layers):
            kv = (cache.k[i], cache.v[i]) if cache is not None else None
            if self.recompute and torch.is_grad_enabled():
                x = torch.utils.checkpoint.checkpoint(layer, x, self.rope, start, kv,
                                                      use_reentrant=False)
            else:
                x = layer(x, self.rope, start, kv)
        return self.norm(x)

    def loss(self, tokens: Any, targets: Any) -> Any:
        logits = self.head(self.hidden_states(tokens))
        return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1))

    def next_token_logits(self, tokens: Any, start: int, cache: KVCache) -> Any:
        """Serving: run the new tokens through the cache; the LM head on the last one only."""
        return self.head(self.hidden_states(tokens, start, cache)[:, -1])
