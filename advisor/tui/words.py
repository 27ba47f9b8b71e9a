"""User words for the engine's identifiers.

Core's messages sometimes name a field as the code spells it ("zero_stage",
"--price GPU=USD" for the CLI). The wizard shows the same message
with those names spelt as its own labels; the message itself is unchanged.
"""

from __future__ import annotations

import re

PHRASES: dict[str, str] = {
    "TP x PP x CP": "TP × PP × CP",
    "quote one with --price GPU=USD": "quote one on step 3 (Targets and prices)",
    "--price GPU=USD": "a price on step 3 (Targets and prices)",
    "+-": "±",
    "serve needs osl, the output tokens per request":
        "serving needs the output tokens per request (OSL)",
    "--allow-quantized-base": "may quantize base, on step 2 (Workload)",
    "--offload-frozen-weights": "offload frozen base, on step 2 (Workload, Advanced)",
    **{f"--base-format {f}": f"base format {f}, on step 2 (Workload)"
       for f in ("fp8", "int8", "nf4", "int4")},
}
NAMES: dict[str, str] = {
    "buy_back": "buying back the speed",
    "seq_lens": "sequence lengths",
    "micro_batch": "micro-batch",
    "global_batch": "global batch",
    "packed_doc_len": "packed document length",
    "zero_stage": "sharding (ZeRO stage)",
    "offload_optimizer": "optimizer offload",
    "fused_kernels": "fused kernels",
    "attention_kernel": "attention kernel",
    "token_budget": "token budget",
    "kv_dtype": "KV cache dtype",
    "ttft_ms": "TTFT limit",
    "tpot_ms": "TPOT limit",
    "max_batch": "max batch",
    "nic_gbit": "NIC Gbit/s",
    "electricity_usd_per_kwh": "electricity $/kWh",
    "power_cap_kw": "power cap",
    "time_premium": "time premium",
    "osl": "output tokens",
    "kv_heads": "KV heads",
    "base_format": "base format",
    "lora_rank": "LoRA rank",
    "lora_targets": "LoRA targets",
    "offload_frozen_weights": "frozen-weight offload",
    "allow_quantized_base": "may quantize base",
    "double_quant": "double quantization",
}
_NAME = re.compile(r"\b(?:workload\.)?(" + "|".join(map(re.escape, NAMES)) + r")\b")
_FIELD_PREFIX = re.compile(r"\b(?:workload|answers)\.(?=[a-z])")
_DEGREE = re.compile(r"\b(tp|pp|cp|ep|vp) (\d+) -> (\d+)")
_ARROW = re.compile(r"(\w) -> (\w)")
_GPUS = re.compile(r"\bgpus (\d+)\b")


_ONE = re.compile(r"\b1 (request|GPU|node|stage|replica|expert|layer|sequence|token)s\b")


def plural(n: int, word: str) -> str:
    """ "1 GPU", "8 GPUs": a count with its noun."""
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def humanize(text: str) -> str:
    for phrase, words in PHRASES.items():
        text = text.replace(phrase, words)
    text = _NAME.sub(lambda m: NAMES[m[1]], text)
    text = _DEGREE.sub(lambda m: f"{m[1].upper()} {m[2]} -> {m[3]}", text)
    text = text.replace("zero stage ", "ZeRO stage ")
    text = _GPUS.sub(r"\1 GPUs", text)
    text = _ARROW.sub(r"\1 → \2", text)
    text = _ONE.sub(r"1 \1", text)
    return _FIELD_PREFIX.sub("", text)


def field_label(name: str) -> str:
    """ "workload.micro_batch" -> "micro-batch"; "prices.b200-sxm" -> "price of b200-sxm"."""
    if name.startswith("prices."):
        return f"price of {name.removeprefix('prices.')}"
    key = name.removeprefix("workload.")
    return NAMES.get(key, key.replace("_", " "))
