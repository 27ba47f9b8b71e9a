"""The workload probe's inputs: a model shape with explicit dimensions and how it is run.

Stdlib only, so a rented box can read a shape from flags or from a small shape file
without advisor (which resolves presets and answers files, then hands over the same
explicit shape). A shape file is JSON or TOML with these keys (the record's
`workload.shape` has the same form, so a record's shape can be fed back in):

    name = "llama-3.1-8b"   # a label, optional
    hidden = 4096
    layers = 32             # the whole model's; the probe builds fewer, see `layers_run`
    heads = 32
    kv_heads = 8            # GQA; equal to heads for multi-head attention
    head_dim = 128          # optional: hidden / heads
    ffn = 14336             # MLP intermediate size
    vocab = 128256
    mlp = "swiglu"          # or "gelu" (two matrices)
    tie_embeddings = false
    experts = 0             # mixture of experts: routed experts (0 = dense) ...
    active_experts = 0      # ... routed experts per token ...
    expert_ffn = 768        # ... each expert's intermediate size (default ffn) ...
    shared_experts = 0      # ... and always-on shared experts

A bad value is one line naming the file (or flag), the field and the value.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .record import parse_json_text, read_capped_text

MLPS = ("swiglu", "gelu")
# The probe's modes; advisor's pretrain and finetune both train every weight.
MODES = ("train", "lora", "prefill", "decode", "serve")
MODE_ALIASES = {"pretrain": "train", "finetune": "train"}
# advisor's recipe formats (its vocabulary; a test holds them equal): the probe runs bf16,
# fp16 and fp8 itself and measures the others at bf16, saying so.
PRECISIONS = ("bf16", "fp16", "fp8", "mxfp8", "mxfp6", "fp4", "nvfp4")
RECOMPUTE = ("none", "selective", "full")
# "auto" and "sdpa" let torch's SDPA dispatcher choose; the others pin one kernel.
ATTENTION_KERNELS = (
    "auto", "sdpa", "sdpa-flash", "sdpa-efficient", "sdpa-cudnn", "sdpa-math",
    "flash-attn-2", "flash-attn-2-ck", "flash-attn-3", "flash-attn-4",
)

# Generous bounds, as advisor's: they refuse typos, never a real model.
_MAX = {"layers": 4096, "width": 2**20, "heads": 2**14, "vocab": 2**24, "experts": 2**16,
        "seq_len": 2**26, "micro_batch": 2**16}
MAX_SHAPE_FILE_BYTES = 1 << 20


class ShapeError(ValueError):
    """One line: where the value came from, the field and the value."""


def _fail(source: str, field: str, value: Any, why: str) -> ShapeError:
    shown = repr(value) if not isinstance(value, dict | list) else type(value).__name__
    return ShapeError(f"{source}: field {field!r}, value {shown}: {why}")


def _int(data: Mapping[str, Any], key: str, source: str, *, low: int, high: int,
         default: int | None = None) -> int:
    value = data.get(key, default)
    if value is None:
        raise _fail(source, key, None, "is required")
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(source, key, value, "must be an integer")
    if not low <= value <= high:
        raise _fail(source, key, value, f"must be {low} to {high:,}")
    return value


@dataclass(frozen=True)
class ModelShape:
    """A decoder-only transformer, dense or mixture-of-experts, every dimension explicit."""

    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    vocab: int
    mlp: str = "swiglu"
    tie_embeddings: bool = False
    experts: int = 0
    active_experts: int = 0
    expert_ffn: int = 0  # 0 for a dense model
    shared_experts: int = 0
    name: str = "custom"

    @property
    def moe(self) -> bool:
        return self.experts > 0

    @property
    def gqa_ratio(self) -> int:
        return self.heads // self.kv_heads

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def layer_params(self) -> int:
        """Weights of one layer (norms left out): attention, then the MLP or the experts."""
        attn = self.hidden * self.head_dim * (2 * self.heads + 2 * self.kv_heads)
        mats = 3 if self.mlp == "swiglu" else 2
        if not self.moe:
            return attn + mats * self.hidden * self.ffn
        experts = (self.experts + self.shared_experts) * mats * self.hidden * self.expert_ffn
        return attn + experts + self.hidden * self.experts

    def embedding_params(self) -> int:
        return self.vocab * self.hidden * (1 if self.tie_embeddings else 2)


_SHAPE_KEYS = {f.name for f in dataclasses.fields(ModelShape)}


def shape_from_mapping(data: Mapping[str, Any], source: str) -> ModelShape:
    """A shape from a decoded file or from flags; ShapeError names the field and value."""
    if not isinstance(data, Mapping):
        raise ShapeError(f"{source}: a model shape must be a table of dimensions")
    unknown = sorted(set(data) - _SHAPE_KEYS)
    if unknown:
        raise _fail(source, unknown[0], data[unknown[0]],
                    f"not a shape field; use {', '.join(sorted(_SHAPE_KEYS))}")
    width, heads_max = _MAX["width"], _MAX["heads"]
    hidden = _int(data, "hidden", source, low=1, high=width)
    layers = _int(data, "layers", source, low=1, high=_MAX["layers"])
    heads = _int(data, "heads", source, low=1, high=heads_max)
    kv_heads = _int(data, "kv_heads", source, low=1, high=heads_max, default=heads)
    if heads % kv_heads:
        raise _fail(source, "kv_heads", kv_heads, f"must divide heads ({heads})")
    if data.get("head_dim") is None and hidden % heads:
        raise _fail(source, "head_dim", None,
                    f"is required when hidden ({hidden}) is not a multiple of heads ({heads})")
    head_dim = _int(data, "head_dim", source, low=1, high=width, default=hidden // heads)
    ffn = _int(data, "ffn", source, low=1, high=width)
    vocab = _int(data, "vocab", source, low=1, high=_MAX["vocab"])
    mlp = data.get("mlp", "swiglu")
    if mlp not in MLPS:
        raise _fail(source, "mlp", mlp, f"must be one of {', '.join(MLPS)}")
    tie = data.get("tie_embeddings", False)
    if not isinstance(tie, bool):
        raise _fail(source, "tie_embeddings", tie, "must be true or false")
    experts = _int(data, "experts", source, low=0, high=_MAX["experts"], default=0)
    active = _int(data, "active_experts", source, low=0, high=_MAX["experts"], default=0)
    shared = _int(data, "shared_experts", source, low=0, high=_MAX["experts"], default=0)
    expert_ffn = _int(data, "expert_ffn", source, low=0, high=width,
                      default=ffn if experts else 0)
    if experts:
        if not 1 <= active <= experts:
            raise _fail(source, "active_experts", active, f"must be 1 to experts ({experts})")
        if expert_ffn < 1:
            raise _fail(source, "expert_ffn", expert_ffn, "must be positive for experts")
    elif active or shared or expert_ffn:
        field = "active_experts" if active else "shared_experts" if shared else "expert_ffn"
        raise _fail(source, field, data.get(field), "needs experts > 0")
    name = data.get("name", "custom")
    if not isinstance(name, str) or not name.isprintable() or len(name) > 200:
        raise _fail(source, "name", name, "must be a printable label of at most 200 characters")
    return ModelShape(hidden=hidden, layers=layers, heads=heads, kv_heads=kv_heads,
                      head_dim=head_dim, ffn=ffn, vocab=vocab, mlp=mlp, tie_embeddings=tie,
                      experts=experts, active_experts=active, expert_ffn=expert_ffn,
                      shared_experts=shared, name=name)


def load_shape_file(path: str) -> ModelShape:
    """A shape from a JSON or TOML file (by its suffix; JSON otherwise)."""
    return shape_from_mapping(read_shape_file(path), path)


def read_shape_file(path: str) -> dict[str, Any]:
    """A shape file's table, decoded but not yet checked (flags may still override it)."""
    text = read_capped_text(path, MAX_SHAPE_FILE_BYTES, "a shape file", ShapeError)
    if Path(path).suffix.lower() == ".toml":
        try:
            data: Any = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError) as exc:
            first = (str(exc).splitlines() or [""])[0]
            raise ShapeError(f"{path}: not valid TOML ({first})") from None
    else:
        data = parse_json_text(text, path, "a shape file", ShapeError)
    if not isinstance(data, dict):
        raise ShapeError(f"{path}: a model shape must be a table of dimensions")
    return data


@dataclass(frozen=True)
class WorkloadConfig:
    """What the caller asked for; the workload plan turns it into what runs on the device."""

    shape: ModelShape
    mode: str = "train"
    seq_len: int = 4096
    micro_batch: int = 1
    precision: str = "bf16"
    attention: str = "auto"
    recompute: str = "none"
    osl: int | None = None  # serve: output tokens per request
    lora_rank: int = 16
    depth: int | None = None  # the deeper of the two depths run; None: chosen to fit
    budget_s: float | None = None  # the measurement's time cap; None: the device's default
    device: str | None = None
    catalog_id: str | None = None
    source: str | None = None  # where the shape came from (a file, flags, an answers file)
    notes: tuple[str, ...] = ()  # what the caller could not hand over (said in the record)

    def checked(self, source: str = "workload") -> WorkloadConfig:
        """The same config with aliases resolved; ShapeError on a bad setting."""
        mode = MODE_ALIASES.get(self.mode, self.mode)
        if mode not in MODES:
            raise _fail(source, "mode", self.mode, f"must be one of {', '.join(MODES)}")
        for field, allowed in (("precision", PRECISIONS), ("attention", ATTENTION_KERNELS),
                               ("recompute", RECOMPUTE)):
            if getattr(self, field) not in allowed:
                raise _fail(source, field, getattr(self, field),
                            f"must be one of {', '.join(allowed)}")
        for field, high in (("seq_len", _MAX["seq_len"]), ("micro_batch", _MAX["micro_batch"]),
                            ("lora_rank", _MAX["width"])):
            _int({field: getattr(self, field)}, field, source, low=1, high=high)
        if self.depth is not None:
            _int({"depth": self.depth}, "depth", source, low=1, high=self.shape.layers)
        if mode == "serve":
            _int({"osl": self.osl}, "osl", source, low=1, high=_MAX["seq_len"])
        elif self.osl is not None:
            raise _fail(source, "osl", self.osl, "applies to mode serve only")
        if mode not in ("train", "lora") and self.recompute != "none":
            raise _fail(source, "recompute", self.recompute, "is a training option")
        if self.budget_s is not None and not (
            math.isfinite(self.budget_s) and 0 < self.budget_s <= 86400
        ):
            raise _fail(source, "budget_s", self.budget_s, "must be seconds, 0 to 86400")
        return dataclasses.replace(self, mode=mode)


# Toy sizes for a CPU: the same structure (GQA ratio, MLP kind, experts) at widths a
# laptop core runs in milliseconds. The figures check the probe, not the model.
TOY_HEAD_DIM = 32
TOY_HEADS = 4
TOY_VOCAB = 2048
TOY_SEQ_LEN = 256
TOY_MICRO_BATCH = 2
TOY_EXPERTS = 8


def _round8(x: float) -> int:
    return max(8, round(x / 8) * 8)


def toy_shape(shape: ModelShape) -> ModelShape:
    """The shape shrunk for a CPU, keeping the GQA ratio (where 4 heads allow), the MLP's
    width ratio to hidden, the MLP kind and the expert routing."""
    heads = min(shape.heads, TOY_HEADS)
    ratio = min(shape.gqa_ratio, heads)
    while heads % ratio:
        ratio -= 1
    head_dim = min(shape.head_dim, TOY_HEAD_DIM)
    hidden = heads * head_dim
    scale = hidden / shape.hidden
    experts = min(shape.experts, TOY_EXPERTS)
    return dataclasses.replace(
        shape,
        hidden=hidden,
        heads=heads,
        kv_heads=heads // ratio,
        head_dim=head_dim,
        ffn=_round8(shape.ffn * scale),
        vocab=min(shape.vocab, TOY_VOCAB),
        experts=experts,
        active_experts=min(shape.active_experts, experts),
        expert_ffn=_round8(shape.expert_ffn * scale) if experts else 0,
        shared_experts=min(shape.shared_experts, 1),
    )
