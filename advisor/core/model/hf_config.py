"""A Hugging Face `config.json` as a ModelSpec, for the model families advisor knows.

Each family names its dimensions its own way (Qwen3-MoE's `decoder_sparse_step`,
DeepSeek's `first_k_dense_replace`, Llama-4's `interleave_moe_layer_step` and its two
MLP widths, GPT-OSS's `layer_types`), and a multimodal config nests the language model
in `text_config`. This module reads those keys, as transformers' config class of each
family reads them, into the one shape the engine projects. Where a published config
leaves a key to its class's default (Gemma 3's `text_config` names no vocabulary or head
count), the default here is that class's. Multi-token-prediction layers and vision
towers are not read: no training or serving step multiplies through them per token.

Pure: `advisor.io.model_config` reads the file or fetches it from the hub. Anything
this cannot read is one InputError naming the file, the key and its value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from advisor.core.errors import InputError
from advisor.core.formats import validation_error
from advisor.core.model import bounds as B
from advisor.core.model.transformer import MlaSpec, ModelSpec
from advisor.core.text import clean

_MISSING = object()


class _Keys:
    """One config (or its `text_config`), read key by key. A JSON null is an absent key,
    as transformers reads it; `fields` remembers which key each ModelSpec field came from,
    so an error the shape raises names the key the user can fix."""

    def __init__(self, data: Mapping[str, Any], file: str, prefix: str,
                 defaults: Mapping[str, Any]) -> None:
        self.data, self.file, self.prefix, self.defaults = data, file, prefix, defaults
        self.fields: dict[str, str] = {}

    def error(self, key: str, value: Any, why: str) -> InputError:
        return InputError(why, file=self.file, field=self.prefix + key, value=value,
                          has_value=True)

    def get(self, key: str, default: Any = _MISSING) -> Any:
        value = self.data.get(key)
        if value is None:
            value = self.defaults.get(key, default)
        if value is _MISSING:
            raise InputError("missing: this family's config names it", file=self.file,
                             field=self.prefix + key)
        return value

    def whole(self, key: str, field: str | None = None, *, default: Any = _MISSING,
              low: int = 1, high: int | None = None) -> int:
        value = self.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise self.error(key, value, f"must be a whole number, at least {low}")
        if high is not None and value > high:  # before anything is built per layer
            raise self.error(key, value, f"must be a whole number, {low} to {high:,}")
        if field:
            self.fields[field] = self.prefix + key
        return value

    def optional(self, key: str, field: str | None = None) -> int | None:
        return self.whole(key, field) if self.get(key, None) is not None else None

    def flag(self, key: str, default: bool) -> bool:
        value = self.get(key, default)
        if not isinstance(value, bool):
            raise self.error(key, value, "must be true or false")
        return value

    def layer_set(self, key: str, layers: int) -> set[int] | None:
        """A list of layer indices (Qwen3-MoE's `mlp_only_layers`), each below `layers`."""
        value = self.get(key, None)
        if value is None:
            return None
        if not isinstance(value, list) or not all(
                isinstance(i, int) and not isinstance(i, bool) and 0 <= i < layers
                for i in value):
            raise self.error(key, value, f"must be a list of layer indices, 0 to {layers - 1}")
        return set(value)

    def layer_types(self, layers: int) -> set[int] | None:
        """The global layers of `layer_types` (GPT-OSS, newer Gemma 3 configs), if given."""
        value = self.get("layer_types", None)
        if value is None:
            return None
        kinds = {"full_attention", "sliding_attention"}
        if not isinstance(value, list) or len(value) != layers or not all(
                isinstance(t, str) and t in kinds for t in value):
            raise self.error("layer_types", value, f"must list {layers} layers, each "
                             "full_attention or sliding_attention")
        return {i for i, t in enumerate(value) if t == "full_attention"}


def _every(keys: _Keys, key: str, moe: set[int], value: Any, layers: int) -> tuple[int, int]:
    """(dense_layers, moe_every) with `moe` = {i >= dense_layers : (i + 1) % moe_every == 0},
    how ModelSpec places MoE layers; another placement is refused with the key that gave
    it."""
    if not moe:
        raise keys.error(key, value, "leaves no layer with experts")
    ordered = sorted(moe)
    first = ordered[0]
    every = ordered[1] - first if len(ordered) > 1 else first + 1
    if moe != {i for i in range(first, layers) if (i + 1) % every == 0}:
        raise keys.error(key, value, "advisor models MoE layers as every n-th layer after "
                         "the leading dense ones; this placement is not that")
    return first, every


# --- the shapes every family shares --------------------------------------------------------


def _decoder(k: _Keys) -> dict[str, Any]:
    """Layers, widths, heads, vocabulary and context, as every family here names them."""
    heads = k.whole("num_attention_heads", "heads")
    hidden = k.whole("hidden_size", "hidden")
    out: dict[str, Any] = {
        "layers": k.whole("num_hidden_layers", "layers", high=B.MAX_LAYERS), "hidden": hidden,
        "heads": heads,
        "kv_heads": k.whole("num_key_value_heads", "kv_heads", default=heads),
        "head_dim": k.optional("head_dim", "head_dim"),
        "ffn": k.whole("intermediate_size", "ffn"),
        "vocab": k.whole("vocab_size", "vocab"),
        "tie_embeddings": k.flag("tie_word_embeddings", False),
        "max_context": k.optional("max_position_embeddings", "max_context"),
    }
    return out


def _window(k: _Keys, shape: dict[str, Any], global_layers: set[int], key: str,
            value: Any) -> dict[str, Any]:
    """The sliding window and which layers attend globally (none: every layer slides)."""
    window = k.optional("sliding_window", "sliding_window")
    layers = shape["layers"]
    if window is None or global_layers == set(range(layers)):
        return shape
    if not global_layers:
        return {**shape, "sliding_window": window}
    every = min(global_layers) + 1
    if global_layers != {i for i in range(layers) if (i + 1) % every == 0}:
        raise k.error(key, value, "advisor models global attention as every n-th layer "
                      "(the rest sliding); this placement is not that")
    return {**shape, "sliding_window": window, "global_every": every}


def _qwen_window(k: _Keys, shape: dict[str, Any]) -> dict[str, Any]:
    """Qwen2/3: with `use_sliding_window`, layers from `max_window_layers` on slide."""
    if not k.flag("use_sliding_window", False):
        return shape
    layers = shape["layers"]
    top = k.whole("max_window_layers", default=layers, low=0)
    return _window(k, shape, set(range(min(top, layers))), "max_window_layers", top)


def _attention_bias(k: _Keys, *, out: bool) -> dict[str, bool]:
    """`attention_bias`: on Q, K and V, and on the output projection where `out`."""
    bias = k.flag("attention_bias", False)
    return {"qkv_bias": bias, "out_bias": bias and out}


def _moe(k: _Keys, shape: dict[str, Any], experts_key: str) -> dict[str, Any]:
    return {**shape, "experts": k.whole(experts_key, "experts"),
            "active_experts": k.whole("num_experts_per_tok", "active_experts")}


# --- the families ----------------------------------------------------------------------


def _llama(k: _Keys) -> dict[str, Any]:
    return {**_decoder(k), **_attention_bias(k, out=True), "mlp_bias": k.flag("mlp_bias", False)}


def _mistral(k: _Keys) -> dict[str, Any]:
    return _window(k, _decoder(k), set(), "sliding_window", None)


def _mixtral(k: _Keys) -> dict[str, Any]:
    return _window(k, _moe(k, _decoder(k), "num_local_experts"), set(), "sliding_window", None)


def _qwen2(k: _Keys) -> dict[str, Any]:
    return {**_qwen_window(k, _decoder(k)), "qkv_bias": True}  # Qwen2's Q, K, V always have one


def _qwen3(k: _Keys) -> dict[str, Any]:
    return {**_qwen_window(k, _decoder(k)), **_attention_bias(k, out=True)}


def _qwen3_moe(k: _Keys) -> dict[str, Any]:
    shape = _moe(k, _qwen3(k), "num_experts")
    layers = shape["layers"]
    step = k.whole("decoder_sparse_step", default=1)
    dense = k.layer_set("mlp_only_layers", layers) or set()
    moe = {i for i in range(layers) if i not in dense and (i + 1) % step == 0}
    first, every = _every(k, "mlp_only_layers", moe, sorted(dense), layers)
    return {**shape, "moe_ffn": k.whole("moe_intermediate_size", "moe_ffn"),
            "dense_layers": first, "moe_every": every}


def _first_dense(k: _Keys, shape: dict[str, Any]) -> dict[str, Any]:
    """DeepSeek and GLM-4.5: routed and shared experts after `first_k_dense_replace` dense
    layers (DeepSeek's `moe_layer_freq` is 1 in every published config)."""
    if k.whole("moe_layer_freq", default=1) != 1:
        raise k.error("moe_layer_freq", k.get("moe_layer_freq"),
                      "advisor models an MoE layer in every layer after the dense ones")
    return {**_moe(k, shape, "n_routed_experts"),
            "shared_experts": k.whole("n_shared_experts", "shared_experts", default=0, low=0),
            "moe_ffn": k.whole("moe_intermediate_size", "moe_ffn"),
            # at least one layer past the dense ones has experts
            "dense_layers": k.whole("first_k_dense_replace", "dense_layers", default=0, low=0,
                                    high=shape["layers"] - 1)}


def _deepseek(k: _Keys) -> dict[str, Any]:
    """DeepSeek-V3/R1 and kin (Kimi-K2): multi-head latent attention; the KV heads are the
    query heads (the latent is what is cached)."""
    shape = _first_dense(k, _decoder(k))
    if k.flag("attention_bias", False):
        raise k.error("attention_bias", True, "advisor counts no bias in latent attention")
    mla = {f: k.whole(f, f"mla.{f}") for f in MlaSpec.model_fields}
    return {**shape, "kv_heads": shape["heads"], "head_dim": None, "mla": mla}


def _glm4_moe(k: _Keys) -> dict[str, Any]:
    """GLM-4.5: DeepSeek's MoE layout over grouped-query attention with Q, K, V biases
    (its partial rotary embedding changes no count)."""
    return {**_first_dense(k, _decoder(k)), **_attention_bias(k, out=False)}


def _gpt_oss(k: _Keys) -> dict[str, Any]:
    """GPT-OSS: every layer MoE (experts `intermediate_size` wide, with biases, as is the
    router), biased attention with a sink per head, alternating sliding and full layers."""
    shape = _moe(k, _decoder(k), "num_local_experts")
    layers = shape["layers"]
    full = k.layer_types(layers)
    if full is None:  # GptOssConfig's default: sliding first, then full, alternating
        full = {i for i in range(layers) if i % 2}
    shape = _window(k, shape, full, "layer_types", k.get("layer_types", None))
    return {**shape, **_attention_bias(k, out=True), "mlp_bias": True, "attention_sinks": True}


def _gemma3(k: _Keys) -> dict[str, Any]:
    """Gemma 3: GeGLU MLP, tied embeddings, `head_dim` its own, five local layers to one
    global (`sliding_window_pattern`, or `layer_types` in newer configs)."""
    shape = {**_decoder(k), **_attention_bias(k, out=True)}
    layers = shape["layers"]
    full = k.layer_types(layers)
    key, value = "layer_types", k.get("layer_types", None)
    if full is None:
        key = "sliding_window_pattern"
        value = k.whole(key)
        full = {i for i in range(layers) if (i + 1) % value == 0}
    return _window(k, shape, full, key, value)


def _llama4(k: _Keys) -> dict[str, Any]:
    """Llama 4: routed experts and one shared expert `intermediate_size` wide on every
    `interleave_moe_layer_step`-th layer, dense layers `intermediate_size_mlp` wide."""
    shape = _moe(k, {**_decoder(k), **_attention_bias(k, out=True)}, "num_local_experts")
    return {**shape, "ffn": k.whole("intermediate_size_mlp", "ffn"),
            "moe_ffn": k.whole("intermediate_size", "moe_ffn"), "shared_experts": 1,
            "moe_every": k.whole("interleave_moe_layer_step", "moe_every", default=1)}


Reader = Callable[[_Keys], dict[str, Any]]
FAMILIES: dict[str, tuple[Reader, Mapping[str, Any]]] = {
    "llama": (_llama, {}),
    "mistral": (_mistral, {}),
    "mixtral": (_mixtral, {}),
    "qwen2": (_qwen2, {}),
    "qwen3": (_qwen3, {}),
    "qwen3_moe": (_qwen3_moe, {}),
    "deepseek_v3": (_deepseek, {}),
    "kimi_k2": (_deepseek, {}),
    "glm4_moe": (_glm4_moe, {}),
    "gpt_oss": (_gpt_oss, {"attention_bias": True, "sliding_window": 128}),
    # transformers' Gemma3TextConfig defaults, which the multimodal configs rely on
    "gemma3_text": (_gemma3, {"vocab_size": 262208, "num_attention_heads": 8,
                              "num_key_value_heads": 4, "head_dim": 256,
                              "max_position_embeddings": 131072, "sliding_window": 4096,
                              "sliding_window_pattern": 6, "tie_word_embeddings": True}),
    "llama4_text": (_llama4, {}),
}
"""model_type -> (its reader, the keys its config class defaults)."""
MULTIMODAL = {"gemma3": "gemma3_text", "llama4": "llama4_text"}
"""A multimodal model_type -> its language model's, read from `text_config`."""
ARCHITECTURES = {
    "LlamaForCausalLM": "llama", "MistralForCausalLM": "mistral",
    "MixtralForCausalLM": "mixtral", "Qwen2ForCausalLM": "qwen2", "Qwen3ForCausalLM": "qwen3",
    "Qwen3MoeForCausalLM": "qwen3_moe", "DeepseekV3ForCausalLM": "deepseek_v3",
    "Glm4MoeForCausalLM": "glm4_moe", "GptOssForCausalLM": "gpt_oss",
    "Gemma3ForCausalLM": "gemma3_text", "Gemma3ForConditionalGeneration": "gemma3",
    "Llama4ForCausalLM": "llama4_text", "Llama4ForConditionalGeneration": "llama4",
}
"""For a config without `model_type`: its first `architectures` entry's model_type."""


def _family(data: Mapping[str, Any], file: str) -> tuple[str, Mapping[str, Any], str]:
    """(model_type, the keys to read, their prefix in errors)."""
    kind, field, shown = data.get("model_type"), "model_type", data.get("model_type")
    if kind is None:
        archs = data.get("architectures")
        if archs is None:
            raise InputError("not a Hugging Face model config: it names no model_type or "
                             "architectures", file=file)
        first = archs[0] if isinstance(archs, list) and archs else None
        kind = ARCHITECTURES.get(first) if isinstance(first, str) else None
        field, shown = "architectures", archs
    if isinstance(kind, str) and kind in MULTIMODAL:
        text = data.get("text_config")
        if not isinstance(text, dict):
            raise InputError("missing: a multimodal config holds its language model here",
                             file=file, field="text_config")
        inner = text.get("model_type", MULTIMODAL[kind])
        if inner != MULTIMODAL[kind]:
            raise InputError(f"a {kind} config holds a {MULTIMODAL[kind]} language model",
                             file=file, field="text_config.model_type", value=inner,
                             has_value=True)
        return MULTIMODAL[kind], text, "text_config."
    if not isinstance(kind, str) or kind not in FAMILIES:
        known = ", ".join([*FAMILIES, *MULTIMODAL])
        raise InputError(f"not a model family advisor reads (it reads {known}); give the "
                         "parameter count and the dimensions instead", file=file, field=field,
                         value=shown, has_value=True)
    return kind, data, ""


def model_from_config(data: Any, file: str, name: str = "custom") -> ModelSpec:
    """A decoded config.json as a ModelSpec named `name`, its source the file (and what of
    the checkpoint it does not count)."""
    if not isinstance(data, dict):
        raise InputError("not a Hugging Face model config (a JSON object)", file=file)
    kind, body, prefix = _family(data, file)
    reader, defaults = FAMILIES[kind]
    keys = _Keys(body, file, prefix, defaults)
    shape = reader(keys)
    skipped = [what for what, present in (
        ("multi-token-prediction layers", bool(body.get("num_nextn_predict_layers"))),
        ("the vision tower", "vision_config" in data)) if present]
    source = f"{file} ({kind}{'; not counted: ' + ', '.join(skipped) if skipped else ''})"
    try:
        return ModelSpec(name=clean(name)[:B.MAX_NAME_CHARS], source=clean(source), **shape)
    except ValidationError as exc:
        err = validation_error(exc, file)
        err.field = keys.fields.get(err.field or "", err.field)
        raise err from None
