"""The one wording table: where a user gives each input, in each front end's dialect.

Core names an input by what it is (`Reason.ask = "price"`, a base format the re-tune could
use); it never names a flag. A reader of `advisor compare` gives inputs as flags, a reader
of a report decided from an answers file as its keys, a wizard user as a field on a step.
Everything else core says is shown as it is written, in every front end alike.
"""

from __future__ import annotations

from typing import Literal

Dialect = Literal["flags", "answers", "wizard"]
"""Where the reader gives inputs: compare's flags, an answers file, the wizard's fields."""

ASKS: dict[str, dict[Dialect, str]] = {
    "price": {"flags": "quote one with --price GPU=USD",
              "answers": "quote one under [prices] in the answers file",
              "wizard": "quote one on step 3 (Targets and prices)"},
    "stack": {"flags": "give the job's with --stack 'torch==2.7.1+cu128 ...', or a target's "
                       "own with --target-stack GPU=...",
              "answers": "give the job's as [stack] in the answers file, or a target's own as "
                         "stacks.<id>",
              "wizard": "give the job's on step 5 (Software gate), or a target's own with its "
                        "layout on step 3 (Targets and prices)"},
}
"""What to do to give an input core asks for (`advisor.core.vocabulary.Ask`)."""

BASE_INPUTS: dict[str, dict[Dialect, str]] = {
    "base_format": {"flags": "--base-format {value}", "answers": 'base_format = "{value}"',
                    "wizard": "base format {value}, on step 2 (Workload)"},
    "offload_frozen_weights": {"flags": "--offload-frozen-weights",
                               "answers": "offload_frozen_weights = true",
                               "wizard": "offload frozen base, on step 2 (Workload, Advanced)"},
    "allow_quantized_base": {"flags": "--allow-quantized-base",
                             "answers": "allow_quantized_base = true",
                             "wizard": "may quantize base, on step 2 (Workload)"},
}
"""The inputs that hold a LoRA's frozen base another way (`advisor.present.frozen_base`)."""

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
"""An answers field as the wizard labels it, where its key is not already a word."""


def asked(text: str, ask: str | None, dialect: Dialect) -> str:
    """Core's statement, then what to do about it where it asks for an input:
    "no price for b200-sxm; quote one with --price GPU=USD"."""
    return f"{text}; {ASKS[ask][dialect]}" if ask else text


def base_input(name: str, dialect: Dialect, value: str = "") -> str:
    """How to give one of the frozen-base inputs: "--base-format nf4", 'base_format = "nf4"'."""
    return BASE_INPUTS[name][dialect].format(value=value)


def plural(n: int, word: str) -> str:
    """ "1 GPU", "8 GPUs": a count with its noun."""
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def field_label(name: str) -> str:
    """ "workload.micro_batch" -> "micro-batch"; "prices.b200-sxm" -> "price of b200-sxm"."""
    if name.startswith("prices."):
        return f"price of {name.removeprefix('prices.')}"
    key = name.removeprefix("workload.")
    return NAMES.get(key, key.replace("_", " "))
