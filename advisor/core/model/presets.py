"""Published model configurations, so a workload can say `llama-3.1-8b` instead of eight numbers.

Every preset copies the dimensions of the model's own `config.json` (Hugging
Face hub, the `source` URL on each entry) or, for GPT-3, Table 2.1 of its paper.
Multi-token-prediction heads (DeepSeek-V3) and vision towers are not included:
they are not part of the language model a training or serving run multiplies
through on every token.
"""

from __future__ import annotations

import difflib
import re

from advisor.core.errors import InputError
from advisor.core.model.transformer import MlaSpec, ModelSpec

_HF = "https://huggingface.co/{}/blob/main/config.json"


def _llama(name: str, repo: str, layers: int, hidden: int, heads: int, kv: int, ffn: int,
           vocab: int, context: int, tie: bool = False, head_dim: int | None = None
           ) -> ModelSpec:
    return ModelSpec(name=name, source=_HF.format(repo), layers=layers, hidden=hidden,
                     heads=heads, kv_heads=kv, ffn=ffn, vocab=vocab, tie_embeddings=tie,
                     head_dim=head_dim, max_context=context)


# Context lengths: Llama 3.1/3.3 128K, Llama 3 8K and Llama 2 4K (max_position_embeddings);
# Qwen2.5 7B and up and every Qwen3 from 4B: 131,072 with YaRN as their model cards state
# (32,768 native for Qwen3); the small Qwen2.5/Qwen3 models 32,768; Mixtral 32K;
# DeepSeek-V3 128K (its model card); GPT-3 2,048 (its paper).
K128, K32 = 131072, 32768


_PRESETS: tuple[ModelSpec, ...] = (
    _llama("llama-3.1-8b", "meta-llama/Llama-3.1-8B", 32, 4096, 32, 8, 14336, 128256, K128),
    _llama("llama-3.1-70b", "meta-llama/Llama-3.1-70B", 80, 8192, 64, 8, 28672, 128256, K128),
    _llama("llama-3.1-405b", "meta-llama/Llama-3.1-405B", 126, 16384, 128, 8, 53248, 128256, K128),
    _llama("llama-3.3-70b", "meta-llama/Llama-3.3-70B-Instruct",
           80, 8192, 64, 8, 28672, 128256, K128),
    _llama("llama-3-70b", "meta-llama/Meta-Llama-3-70B", 80, 8192, 64, 8, 28672, 128256, 8192),
    _llama("llama-3-8b", "meta-llama/Meta-Llama-3-8B", 32, 4096, 32, 8, 14336, 128256, 8192),
    _llama("llama-2-70b", "meta-llama/Llama-2-70b-hf", 80, 8192, 64, 8, 28672, 32000, 4096),
    _llama("llama-2-7b", "meta-llama/Llama-2-7b-hf", 32, 4096, 32, 32, 11008, 32000, 4096),
    _llama("qwen2.5-0.5b", "Qwen/Qwen2.5-0.5B", 24, 896, 14, 2, 4864, 151936, K32, tie=True),
    _llama("qwen2.5-1.5b", "Qwen/Qwen2.5-1.5B", 28, 1536, 12, 2, 8960, 151936, K32, tie=True),
    _llama("qwen2.5-3b", "Qwen/Qwen2.5-3B", 36, 2048, 16, 2, 11008, 151936, K32, tie=True),
    _llama("qwen2.5-7b", "Qwen/Qwen2.5-7B", 28, 3584, 28, 4, 18944, 152064, K128),
    _llama("qwen2.5-14b", "Qwen/Qwen2.5-14B", 48, 5120, 40, 8, 13824, 152064, K128),
    _llama("qwen2.5-32b", "Qwen/Qwen2.5-32B", 64, 5120, 40, 8, 27648, 152064, K128),
    _llama("qwen2.5-72b", "Qwen/Qwen2.5-72B", 80, 8192, 64, 8, 29568, 152064, K128),
    _llama("qwen3-0.6b", "Qwen/Qwen3-0.6B",
           28, 1024, 16, 8, 3072, 151936, K32, tie=True, head_dim=128),
    _llama("qwen3-1.7b", "Qwen/Qwen3-1.7B",
           28, 2048, 16, 8, 6144, 151936, K32, tie=True, head_dim=128),
    _llama("qwen3-4b", "Qwen/Qwen3-4B",
           36, 2560, 32, 8, 9728, 151936, K128, tie=True, head_dim=128),
    _llama("qwen3-8b", "Qwen/Qwen3-8B", 36, 4096, 32, 8, 12288, 151936, K128, head_dim=128),
    _llama("qwen3-14b", "Qwen/Qwen3-14B", 40, 5120, 40, 8, 17408, 151936, K128, head_dim=128),
    _llama("qwen3-32b", "Qwen/Qwen3-32B", 64, 5120, 64, 8, 25600, 151936, K128, head_dim=128),
    ModelSpec(
        name="qwen3-30b-a3b", source=_HF.format("Qwen/Qwen3-30B-A3B"),
        layers=48, hidden=2048, heads=32, kv_heads=4, head_dim=128, ffn=6144, vocab=151936,
        experts=128, active_experts=8, moe_ffn=768, max_context=K128,
    ),
    ModelSpec(
        name="qwen3-235b-a22b", source=_HF.format("Qwen/Qwen3-235B-A22B"),
        layers=94, hidden=4096, heads=64, kv_heads=4, head_dim=128, ffn=12288, vocab=151936,
        experts=128, active_experts=8, moe_ffn=1536, max_context=K128,
    ),
    ModelSpec(
        name="mixtral-8x7b", source=_HF.format("mistralai/Mixtral-8x7B-v0.1"),
        layers=32, hidden=4096, heads=32, kv_heads=8, ffn=14336, vocab=32000,
        experts=8, active_experts=2, max_context=K32,
    ),
    ModelSpec(
        name="deepseek-v3", source=_HF.format("deepseek-ai/DeepSeek-V3"),
        layers=61, hidden=7168, heads=128, kv_heads=128, ffn=18432, vocab=129280,
        experts=256, active_experts=8, shared_experts=1, moe_ffn=2048, dense_layers=3,
        mla=MlaSpec(q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128,
                    qk_rope_head_dim=64, v_head_dim=128), max_context=K128,
    ),
    ModelSpec(
        name="gpt-3-175b",
        source="https://arxiv.org/abs/2005.14165 Table 2.1 (96 layers, d_model 12288, 96 heads "
               "of 128); GELU MLP of 4 d_model; GPT-2 BPE vocab 50257; tied embeddings",
        layers=96, hidden=12288, heads=96, kv_heads=96, ffn=49152, vocab=50257,
        gated_mlp=False, tie_embeddings=True, max_context=2048,
    ),
)

PRESETS: dict[str, ModelSpec] = {m.name: m for m in _PRESETS}


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9.]", "", text.lower())


def resolve_preset(name: str) -> ModelSpec:
    """A preset by name, forgiving case and separators (`Llama-3.1-8B`, `llama3.1_8b`)."""
    wanted = _key(name)
    for key, spec in PRESETS.items():
        if _key(key) == wanted:
            return spec
    close = difflib.get_close_matches(name.lower(), list(PRESETS), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(PRESETS)}"
    raise InputError(f"unknown model preset{hint}", field="model", value=name)
