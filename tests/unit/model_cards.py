"""Model cards' (and papers') stated parameter counts, each with where it is stated: what the
shapes advisor counts (presets, and the configs in tests/data) are checked against.

Each is the total with the embeddings unless noted, of the language model only: the presets
module leaves out multi-token-prediction layers and vision towers, as these statements
mostly do.
"""

from __future__ import annotations

QWEN_CARD = "its Hugging Face model card, 'Number of Parameters'"
STATED: dict[str, tuple[float, str]] = {
    # Meta's model cards state the size in the name (total, embeddings included)
    "llama-3.1-8b": (8e9, "Llama 3.1 model card: 8B"),
    "llama-3.1-70b": (70e9, "Llama 3.1 model card: 70B"),
    "llama-3.1-405b": (405e9, "Llama 3.1 model card: 405B"),
    "llama-3.3-70b": (70e9, "Llama 3.3 model card: 70B"),
    "llama-3-70b": (70e9, "Meta Llama 3 model card: 70B"),
    "llama-3-8b": (8e9, "Meta Llama 3 model card: 8B"),
    "llama-2-70b": (70e9, "Llama 2 model card: 70B"),
    # the Llama 2 card rounds to 7B; Llama 2 keeps the LLaMA 7B shape (arXiv 2307.09288
    # section 2.2), whose paper states 6.7B (arXiv 2302.13971, Table 2)
    "llama-2-7b": (6.7e9, "LLaMA paper Table 2: 6.7B for the 4096 x 32-layer shape"),
    "qwen2.5-0.5b": (0.49e9, QWEN_CARD), "qwen2.5-1.5b": (1.54e9, QWEN_CARD),
    "qwen2.5-3b": (3.09e9, QWEN_CARD), "qwen2.5-7b": (7.61e9, QWEN_CARD),
    "qwen2.5-14b": (14.7e9, QWEN_CARD), "qwen2.5-32b": (32.5e9, QWEN_CARD),
    "qwen2.5-72b": (72.7e9, QWEN_CARD),
    "qwen3-0.6b": (0.6e9, QWEN_CARD), "qwen3-1.7b": (1.7e9, QWEN_CARD),
    "qwen3-4b": (4.0e9, QWEN_CARD), "qwen3-8b": (8.2e9, QWEN_CARD),
    "qwen3-14b": (14.8e9, QWEN_CARD), "qwen3-32b": (32.8e9, QWEN_CARD),
    "qwen3-30b-a3b": (30.5e9, QWEN_CARD), "qwen3-235b-a22b": (235e9, QWEN_CARD),
    "qwen3-coder-480b-a35b": (480e9, "Qwen3-Coder model card: 480B total"),
    "mixtral-8x7b": (46.7e9, "Mistral AI's Mixtral announcement: 46.7B total"),
    # DeepSeek's cards: 671B for the main model; the 14B MTP module is counted apart
    "deepseek-v3": (671e9, "DeepSeek-V3 model card: 671B total (main model, MTP apart)"),
    "deepseek-r1": (671e9, "DeepSeek-R1 model card: 671B total"),
    # the card rounds to 1T; the technical report's comparison with DeepSeek-V3 (arXiv
    # 2507.20534) states 1.04T
    "kimi-k2": (1.04e12, "Kimi K2 technical report: 1.04T total"),
    "glm-4.5": (355e9, "GLM-4.5 model card: 355B total"),
    "glm-4.5-air": (106e9, "GLM-4.5 model card: 106B total for GLM-4.5-Air"),
    "gpt-oss-20b": (20.91e9, "gpt-oss model card (arXiv 2508.10925) Table 1: 20.91B total"),
    "gpt-oss-120b": (116.83e9, "gpt-oss model card Table 1: 116.83B total"),
    "llama-4-scout": (109e9, "Llama 4 model card: 109B total"),
    "llama-4-maverick": (400e9, "Llama 4 model card: 400B total"),
    # the Gemma 3 technical report (arXiv 2503.19786) Table 1: embedding + non-embedding
    # parameters, the vision encoder (417M) apart
    "gemma-3-1b": (302e6 + 698e6, "Gemma 3 report Table 1: 302M + 698M"),
    "gemma-3-4b": (675e6 + 3209e6, "Gemma 3 report Table 1: 675M + 3,209M"),
    "gemma-3-12b": (1012e6 + 10759e6, "Gemma 3 report Table 1: 1,012M + 10,759M"),
    "gemma-3-27b": (1416e6 + 25600e6, "Gemma 3 report Table 1: 1,416M + 25,600M"),
    "gpt-3-175b": (175e9, "GPT-3 paper (arXiv 2005.14165) Table 2.1: 175.0B"),
}
