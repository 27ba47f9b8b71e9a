"""Parsing what people type into the workload form ("4k, 32k", "1.5T") and turning
the form into the engine's `Workload`.

No widgets here: the inputs' validators and the tests share these definitions.
Each raises ValueError with the message the form shows inline.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from advisor.core.presets import PRESETS
from advisor.core.stack import Stack
from advisor.core.workload import TRAINING_MODES, ModelSpec, Workload

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


def parse_seq_lens(text: str, low: int = 16, high: int = 4 * 1024 * 1024) -> tuple[int, ...]:
    """A comma/space separated list of sequence lengths, sorted and de-duplicated."""
    parts = [p for p in re.split(r"[,\s]+", text.strip()) if p]
    if not parts:
        raise ValueError("give at least one sequence length, e.g. 4k, 32k")
    values = sorted({parse_count(p, binary_k=True) for p in parts})
    for v in values:
        if not low <= v <= high:
            raise ValueError(f"{v}: sequence lengths run from {low} to {high:,}")
    return tuple(values)


def format_count(value: float) -> str:
    """The inverse for display: 10_000_000_000 -> "10B"."""
    for suffix, scale in (("T", 10**12), ("B", 10**9), ("M", 10**6), ("k", 10**3)):
        if value >= scale and (value / scale) == round(value / scale, 2):
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"


def format_seq_lens(values: tuple[int, ...]) -> str:
    return ", ".join(f"{v // 1024}k" if v % 1024 == 0 and v >= 1024 else str(v) for v in values)


def packs(mode: str) -> bool:
    """Decode emits one token per step: there is nothing to pack."""
    return mode != "decode"


def build_workload(form: Mapping[str, Any]) -> Workload:
    """The engine's Workload from the form's fields; ValueError carries the first problem.

    Cross-field rules (GPUs a multiple of tp, ZeRO only when training, packing
    shorter than the shortest sequence) are the Workload model's own, so the
    form shows exactly what a headless run would reject.
    """
    form = {**FORM_DEFAULTS, **form}
    if form["preset"] == CUSTOM:
        model = ModelSpec(**{k: form[k] for k in DIM_KEYS})
    else:
        model = PRESETS[form["preset"]]
    training = form["mode"] in TRAINING_MODES  # serving has no optimizer to shard
    try:
        return Workload(
            mode=form["mode"], model=model, seq_lens=list(form["seq_lens"]),
            micro_batch=form["micro_batch"],
            packed_doc_len=form["doc_len"] if form["packing"] and packs(form["mode"]) else None,
            precision=form["precision"], zero_stage=form["zero_stage"] if training else 0,
            tp=form["tp"], checkpointing=form["checkpointing"] and training, gpus=form["gpus"],
            token_budget=form["token_budget"],
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ValueError(str(err["msg"]).removeprefix("Value error, ")) from None


def form_from_workload(w: Workload) -> dict[str, Any]:
    """The form's fields for a saved Workload (resume); fields the form lacks keep defaults."""
    preset = w.model.name if PRESETS.get(w.model.name) == w.model else CUSTOM
    defaults = FORM_DEFAULTS
    form = dict(defaults)
    form.update({k: getattr(w.model, k) for k in DIM_KEYS})
    form.update(
        mode=w.mode, preset=preset, seq_lens=tuple(w.seq_lens), micro_batch=w.micro_batch,
        packing=w.packed_doc_len is not None, doc_len=w.packed_doc_len or defaults["doc_len"],
        precision=w.precision, zero_stage=w.zero_stage, tp=w.tp, checkpointing=w.checkpointing,
        gpus=w.gpus, token_budget=int(w.token_budget or defaults["token_budget"]))
    return form


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
