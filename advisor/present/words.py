"""The one wording table: where a user gives each input, in each front end's dialect.

Core names an input by what it is (`Reason.ask = "price"`, a base format the re-tune could
use); it never names a flag. A reader of `advisor compare` gives inputs as flags, a reader
of a report decided from an answers file as its keys, a wizard user as a field on a step.
Everything else core says is shown as it is written, in every front end alike.
"""

from __future__ import annotations

from typing import Literal

from advisor.core import SERVING_MODES

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
    "packed_doc_len": "packed doc length",
    "zero_stage": "sharding",
    "offload_optimizer": "offload optimizer",
    "fused_kernels": "fused kernels",
    "attention_kernel": "attention kernel",
    "token_budget": "token budget",
    "kv_dtype": "KV cache format",
    "ttft_ms": "TTFT limit (ms)",
    "tpot_ms": "TPOT limit (ms)",
    "min_tokens_per_user": "min tokens/s per user",
    "max_batch": "max batch",
    "nic_gbit": "NIC Gbit/s",
    "electricity_usd_per_kwh": "electricity $/kWh",
    "power_cap_kw": "power cap",
    "time_premium": "time premium",
    "osl": "output tokens (OSL)",
    "kv_heads": "KV heads",
    "base_format": "base format",
    "lora_rank": "LoRA rank",
    "lora_targets": "LoRA targets",
    "offload_frozen_weights": "offload frozen base",
    "allow_quantized_base": "may quantize base",
    "double_quant": "double quantization",
    "gpus": "GPUs",
    "tp": "tensor parallel",
    "pp": "pipeline parallel",
    "cp": "context parallel",
    "ep": "expert parallel",
    "vp": "virtual stages",
}
"""An answers field as the wizard's form labels it, where its key is not already a word."""
SERVING_NAMES: dict[str, str] = {"micro_batch": "requests in flight",
                                 "framework": "serving engine"}
"""The fields a serving workload's form labels otherwise (prefill, decode, serve)."""
MODE_NAMES: dict[tuple[str, str], str] = {("serve", "seq_lens"): "input tokens (ISL)"}
"""The fields one mode's form labels otherwise."""
VALUE_WORDS = {"True": "yes", "False": "no"}
"""A default's value as core lists it, where that is a Python word rather than one a user
reads."""


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


def field_label(name: str, mode: str = "pretrain") -> str:
    """ "workload.micro_batch" -> "micro-batch" ("requests in flight" when serving);
    "prices.b200-sxm" -> "price of b200-sxm": the field as the wizard's form labels it."""
    if name.startswith("prices."):
        return f"price of {name.removeprefix('prices.')}"
    key = name.removeprefix("workload.")
    if (mode, key) in MODE_NAMES:
        return MODE_NAMES[mode, key]
    if mode in SERVING_MODES and key in SERVING_NAMES:
        return SERVING_NAMES[key]
    return NAMES.get(key, key.replace("_", " "))


def input_name(name: str, dialect: Dialect, mode: str = "pretrain") -> str:
    """Where an answers field is given: its key (`micro_batch`, `prices.b200-sxm`) for a
    reader of an answers file or of compare's flags (which follow the keys), the form's
    label (`micro-batch`) in the wizard."""
    return field_label(name, mode) if dialect == "wizard" else name.removeprefix("workload.")


def default_line(name: str, value: str, source: str, dialect: Dialect,
                 mode: str = "pretrain") -> str:
    """One default a decision used, worded alike in every output but for where it is given:
    "micro_batch: 1 (advisor's default)", in the wizard "micro-batch: 1 (advisor's
    default)"; yes and no for a switch, ZeRO-1 for a sharding stage."""
    shown = VALUE_WORDS.get(value, value)
    if name == "workload.zero_stage" and value.isdigit():
        shown = f"ZeRO-{value}"
    return f"{input_name(name, dialect, mode)}: {shown} ({source})"
