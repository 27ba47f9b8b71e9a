"""Parsing what people type into the workload form ("4k, 32k", "1.5T") and turning
the form into the engine's `Workload`.

No widgets here: the inputs' validators and the tests share these definitions.
Each raises ValueError with the message the form shows inline.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from advisor.core.model.presets import PRESETS
from advisor.core.model.stack import Stack
from advisor.core.model.transformer import ModelSpec
from advisor.core.model.workload import TRAINING_MODES, Workload

CUSTOM = "custom"
DIM_KEYS = ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab")
FORM_DEFAULTS: dict[str, Any] = {
    "mode": "pretrain", "preset": "llama-3.1-8b", "layers": 32, "hidden": 4096, "heads": 32,
    "kv_heads": 8, "ffn": 14336, "vocab": 128256, "seq_lens": (4096, 8192),
    "micro_batch": 1, "packing": False, "doc_len": 1024, "precision": "bf16", "zero_stage": 3,
    "tp": 1, "checkpointing": False, "gpus": 8, "token_budget": 100 * 10**9,
}

_SUFFIX = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "g": 10**9, "t": 10**12}


def parse_count(text: str, *, binary_k: bool = False) -> int:
    """ "8192", "8k", "1.5B", "2T" -> an int; k means 1024 when `binary_k` (sequence lengths)."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kmbgt]?)\s*", text.lower().replace(",", "")
                     .replace("_", ""))
    if m is None:
        raise ValueError(f"{text.strip() or 'blank'}: expected e.g. 8k or 1.5B")
    scale = 1024 if binary_k and m[2] == "k" else _SUFFIX[m[2]]
    value = float(m[1]) * scale
    if value != int(value):
        raise ValueError(f"{text.strip()}: not a whole number")
    return int(value)


def _parse_list(text: str, item: Callable[[str], int], low: int, high: int, what: str,
                example: str) -> tuple[int, ...]:
    """A comma/space separated list of whole numbers, sorted and de-duplicated."""
    parts = [p for p in re.split(r"[,\s]+", text.strip()) if p]
    if not parts:
        raise ValueError(f"give at least one {what}, e.g. {example}")
    values = sorted({item(p) for p in parts})
    for v in values:
        if not low <= v <= high:
            raise ValueError(f"{v}: {what}s run from {low} to {high:,}")
    return tuple(values)


def parse_seq_lens(text: str, low: int = 16, high: int = 4 * 1024 * 1024) -> tuple[int, ...]:
    return _parse_list(text, lambda p: parse_count(p, binary_k=True), low, high,
                       "sequence length", "4k, 32k")


def parse_gpu_counts(text: str) -> tuple[int, ...]:
    """The GPU counts the configurations step sweeps: "1, 2, 4, 8"."""
    return _parse_list(text, parse_count, 1, 100_000, "GPU count", "1, 2, 4, 8")


def parse_budget(text: str) -> int | None:
    """A token budget, or None when blank: without one there is no job cost or sweep."""
    return parse_count(text) if text.strip() else None


def format_count(value: float | None) -> str:
    """The inverse for display: 10_000_000_000 -> "10B"; None (no value) -> blank."""
    if value is None:
        return ""
    for suffix, scale in (("T", 10**12), ("B", 10**9), ("M", 10**6), ("k", 10**3)):
        if value >= scale and (value / scale) == round(value / scale, 2):
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"


def format_seq_lens(values: tuple[int, ...]) -> str:
    return ", ".join(f"{v // 1024}k" if v % 1024 == 0 and v >= 1024 else str(v) for v in values)


def packs(mode: str) -> bool:
    """Decode emits one token per step: there is nothing to pack."""
    return mode != "decode"


def preset_of(model: ModelSpec) -> str:
    """The preset a model is, or CUSTOM when its dimensions are its own."""
    return model.name if PRESETS.get(model.name) == model else CUSTOM


def build_workload(form: Mapping[str, Any], base: Workload | None = None) -> Workload:
    """The engine's Workload from the form's fields; ValueError carries the first problem.

    `base` is a resumed report's Workload: fields the form has no control for
    (pp, global batch, optimizer, nodes, a custom model's experts…) are kept from
    it, so editing one answer never silently drops the others. Cross-field rules
    (GPUs a multiple of tp, ZeRO only when training, packing shorter than the
    shortest sequence) are the Workload model's own, so the form shows exactly
    what a headless run would reject.
    """
    form = {**FORM_DEFAULTS, **form}
    kept: dict[str, Any] = base.model_dump() if base is not None else {}
    if form["preset"] != CUSTOM:
        model: ModelSpec | dict[str, Any] = PRESETS[form["preset"]]
    elif base is not None and preset_of(base.model) == CUSTOM:
        model = {**kept["model"], **{k: form[k] for k in DIM_KEYS}}
    else:
        model = {k: form[k] for k in DIM_KEYS}
    training = form["mode"] in TRAINING_MODES  # serving has no optimizer to shard
    try:
        return Workload.model_validate({
            **kept,
            "mode": form["mode"], "model": model, "seq_lens": list(form["seq_lens"]),
            "micro_batch": form["micro_batch"],
            "packed_doc_len": form["doc_len"] if form["packing"] and packs(form["mode"])
            else None,
            "precision": form["precision"], "zero_stage": form["zero_stage"] if training else 0,
            "offload_optimizer": kept.get("offload_optimizer", False) and training,
            "tp": form["tp"], "checkpointing": form["checkpointing"] and training,
            "gpus": form["gpus"], "token_budget": form["token_budget"],
        })
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ValueError(str(err["msg"]).removeprefix("Value error, ")) from None


def form_from_workload(w: Workload) -> dict[str, Any]:
    """The form's fields for a saved Workload (resume); the rest stays in the Workload, which
    the state keeps as the base `build_workload` starts from."""
    defaults = FORM_DEFAULTS
    form = dict(defaults)
    form.update({k: getattr(w.model, k) for k in DIM_KEYS})
    form.update(
        mode=w.mode, preset=preset_of(w.model), seq_lens=tuple(w.seq_lens),
        micro_batch=w.micro_batch, packing=w.packed_doc_len is not None,
        doc_len=w.packed_doc_len or defaults["doc_len"], precision=w.precision,
        zero_stage=w.zero_stage, tp=w.tp, checkpointing=w.checkpointing, gpus=w.gpus,
        token_budget=None if w.token_budget is None else int(w.token_budget))
    return form


HIDDEN_FIELDS = ("global_batch", "optimizer", "offload_optimizer", "fused_kernels",
                 "attention_kernel", "pp", "cp", "ep", "nodes", "nic_gbit")
"""Workload fields the form has no control for: a resumed report's values are kept."""


def _phrase(name: str, value: object) -> str:
    label = name.replace("_", " ")
    if isinstance(value, bool):
        return label if value else f"no {label}"
    return f"{label} {value:g}" if isinstance(value, float) else (
        f"{label} {value}" if isinstance(value, int | str) else label)


def hidden_settings(w: Workload) -> list[str]:
    """What a resumed Workload sets beyond the form's fields (non-default values only), as
    short phrases, so the form can say what it keeps: "pp 2", "fused kernels"."""
    out = [_phrase(k, getattr(w, k)) for k in HIDDEN_FIELDS
           if getattr(w, k) != Workload.model_fields[k].default]
    if preset_of(w.model) == CUSTOM:
        spec = ModelSpec.model_fields
        out += [_phrase(k, getattr(w.model, k)) for k in spec
                if k not in (*DIM_KEYS, "name", "source")
                and getattr(w.model, k) != spec[k].default]
    return out


def parse_stack(text: str) -> Stack:
    """ "torch==2.7.1+cu128 flash-attn==2.8.3" -> a declared Stack (what the job runs on)."""
    packages: dict[str, str] = {}
    for item in re.split(r"[,\s]+", text.strip()):
        if not item:
            continue
        name, sep, version = item.partition("==") if "==" in item else item.partition("=")
        if not sep or not name or not version:
            raise ValueError(f"{item}: write package==version, e.g. torch==2.7.1+cu128")
        packages[name] = version
    if "torch" not in packages:
        raise ValueError("name the torch build, e.g. torch==2.7.1+cu128")
    try:
        return Stack(source="declared", packages=packages)
    except ValidationError as exc:
        raise ValueError(str(exc.errors()[0]["msg"]).removeprefix("Value error, ")) from None


def format_stack(stack: Stack) -> str:
    return " ".join(f"{name}=={version}" for name, version in stack.packages.items())
