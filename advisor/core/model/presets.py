"""Published model configurations, so a workload can say `llama-3.1-8b` instead of eight numbers.

Every preset copies the dimensions of the model's own `config.json` (Hugging
Face hub, the `source` URL on each entry; the one `advisor.core.model.hf_config`
reads) or, for GPT-3, Table 2.1 of its paper. Multi-token-prediction layers
(DeepSeek-V3/R1, GLM-4.5) and vision towers (Llama 4, Gemma 3 from 4B) are not
included: they are not part of the language model a training or serving run
multiplies through on every token. So a count checked against a model card
(tests/unit/test_presets.py) is its language model's, as the card states it.
"""

from __future__ import annotations

import re
from typing import Any

from advisor.core.errors import FieldError
from advisor.core.model.transformer import MlaSpec, ModelSpec

_HF = "https://huggingface.co/{}/blob/main/config.json"


def _llama(name: str, repo: str, layers: int, hidden: int, heads: int, kv: int, ffn: int,
           vocab: int, context: int, tie: bool = False, head_dim: int | None = None,
           **more: Any) -> ModelSpec:
    return ModelSpec(name=name, source=_HF.format(repo), layers=layers, hidden=hidden,
                     heads=heads, kv_heads=kv, ffn=ffn, vocab=vocab, tie_embeddings=tie,
                     head_dim=head_dim, max_context=context, **more)


def _qwen2(name: str, repo: str, *dims: Any, **more: Any) -> ModelSpec:
    """Qwen2's Q, K and V projections always carry a bias."""
    return _llama(name, repo, *dims, qkv_bias=True, **more)


def _gpt_oss(name: str, layers: int, experts: int) -> ModelSpec:
    """GPT-OSS: 2880 wide, 64 query heads of 64 over 8 KV heads, biased attention with a sink
    per head, 128-token windows on every other layer, experts with biases (openai's config)."""
    return ModelSpec(
        name=name, source=_HF.format(f"openai/{name}"), layers=layers, hidden=2880, heads=64,
        kv_heads=8, head_dim=64, ffn=2880, vocab=201088, experts=experts, active_experts=4,
        qkv_bias=True, out_bias=True, mlp_bias=True, attention_sinks=True, sliding_window=128,
        global_every=2, max_context=K128)


def _llama4(name: str, repo: str, experts: int, every: int, context: int) -> ModelSpec:
    """Llama 4: 48 layers of 5120, routed experts and one shared expert 8192 wide on every
    `every`-th layer, dense layers 16384 wide (intermediate_size_mlp)."""
    return ModelSpec(
        name=name, source=_HF.format(repo), layers=48, hidden=5120, heads=40, kv_heads=8,
        ffn=16384, vocab=202048, experts=experts, active_experts=1,
        shared_experts=1, moe_ffn=8192, moe_every=every, max_context=context)


def _gemma3(name: str, layers: int, hidden: int, heads: int, kv: int, ffn: int, head_dim: int,
            ) -> ModelSpec:
    """Gemma 3 from 4B (the language model of a multimodal config): tied embeddings over
    262,208 tokens, a 1024-token window on five layers of every six, 128K context."""
    return ModelSpec(
        name=name, source=_HF.format(f"google/{name}-pt"), layers=layers, hidden=hidden,
        heads=heads, kv_heads=kv, head_dim=head_dim, ffn=ffn, vocab=262208,
        tie_embeddings=True, sliding_window=1024, global_every=6, max_context=K128)


def _deepseek(name: str, repo: str, heads: int, experts: int, dense: int, vocab: int
              ) -> ModelSpec:
    """DeepSeek-V3's shape (61 layers of 7168, MLA, one shared expert) and its kin."""
    return ModelSpec(
        name=name, source=_HF.format(repo), layers=61, hidden=7168, heads=heads,
        kv_heads=heads, ffn=18432, vocab=vocab, experts=experts, active_experts=8,
        shared_experts=1, moe_ffn=2048, dense_layers=dense, mla=_MLA, max_context=K128)


_MLA = MlaSpec(q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64,
               v_head_dim=128)


# Context lengths: Llama 3.1/3.3 128K, Llama 3 8K and Llama 2 4K (max_position_embeddings);
# Qwen2.5 7B and up and every Qwen3 from 4B: 131,072 with YaRN as their model cards state
# (32,768 native for Qwen3); the small Qwen2.5/Qwen3 models 32,768; Mixtral 32K;
# DeepSeek-V3/R1, Kimi-K2, GLM-4.5 and GPT-OSS 128K (their model cards); Llama 4 Scout 10M
# and Maverick 1M (theirs); Qwen3-Coder-480B 256K native (its card); Gemma 3 128K, 32K at
# 1B (its technical report); GPT-3 2,048 (its paper).
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
    _qwen2("qwen2.5-0.5b", "Qwen/Qwen2.5-0.5B", 24, 896, 14, 2, 4864, 151936, K32, tie=True),
    _qwen2("qwen2.5-1.5b", "Qwen/Qwen2.5-1.5B", 28, 1536, 12, 2, 8960, 151936, K32, tie=True),
    _qwen2("qwen2.5-3b", "Qwen/Qwen2.5-3B", 36, 2048, 16, 2, 11008, 151936, K32, tie=True),
    _qwen2("qwen2.5-7b", "Qwen/Qwen2.5-7B", 28, 3584, 28, 4, 18944, 152064, K128),
    _qwen2("qwen2.5-14b", "Qwen/Qwen2.5-14B", 48, 5120, 40, 8, 13824, 152064, K128),
    _qwen2("qwen2.5-32b", "Qwen/Qwen2.5-32B", 64, 5120, 40, 8, 27648, 152064, K128),
    _qwen2("qwen2.5-72b", "Qwen/Qwen2.5-72B", 80, 8192, 64, 8, 29568, 152064, K128),
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
    _deepseek("deepseek-v3", "deepseek-ai/DeepSeek-V3", 128, 256, 3, 129280),
    _deepseek("deepseek-r1", "deepseek-ai/DeepSeek-R1", 128, 256, 3, 129280),
    _deepseek("kimi-k2", "moonshotai/Kimi-K2-Base", 64, 384, 1, 163840),
    ModelSpec(
        name="qwen3-coder-480b-a35b", source=_HF.format("Qwen/Qwen3-Coder-480B-A35B-Instruct"),
        layers=62, hidden=6144, heads=96, kv_heads=8, head_dim=128, ffn=8192, vocab=151936,
        experts=160, active_experts=8, moe_ffn=2560, max_context=262144,
    ),
    ModelSpec(
        name="glm-4.5", source=_HF.format("zai-org/GLM-4.5"),
        layers=92, hidden=5120, heads=96, kv_heads=8, head_dim=128, ffn=12288, vocab=151552,
        experts=160, active_experts=8, shared_experts=1, moe_ffn=1536, dense_layers=3,
        qkv_bias=True, max_context=K128,
    ),
    ModelSpec(
        name="glm-4.5-air", source=_HF.format("zai-org/GLM-4.5-Air"),
        layers=46, hidden=4096, heads=96, kv_heads=8, head_dim=128, ffn=10944, vocab=151552,
        experts=128, active_experts=8, shared_experts=1, moe_ffn=1408, dense_layers=1,
        qkv_bias=True, max_context=K128,
    ),
    _gpt_oss("gpt-oss-20b", 24, 32),
    _gpt_oss("gpt-oss-120b", 36, 128),
    _llama4("llama-4-scout", "meta-llama/Llama-4-Scout-17B-16E", 16, 1, 10485760),
    _llama4("llama-4-maverick", "meta-llama/Llama-4-Maverick-17B-128E", 128, 2, 1048576),
    ModelSpec(
        name="gemma-3-1b", source=_HF.format("google/gemma-3-1b-pt"),
        layers=26, hidden=1152, heads=4, kv_heads=1, head_dim=256, ffn=6912, vocab=262144,
        tie_embeddings=True, sliding_window=512, global_every=6, max_context=K32,
    ),
    _gemma3("gemma-3-4b", 34, 2560, 8, 4, 10240, 256),
    _gemma3("gemma-3-12b", 48, 3840, 16, 8, 15360, 256),
    _gemma3("gemma-3-27b", 62, 5376, 32, 16, 21504, 128),
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
    import difflib  # an unknown preset only

    close = difflib.get_close_matches(name.lower(), list(PRESETS), n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(PRESETS)}"
    raise FieldError(f"unknown model preset{hint}", field="model", value=name)
