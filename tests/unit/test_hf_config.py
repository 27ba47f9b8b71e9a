"""The Hugging Face config parser: each family's keys as its transformers config class reads
them, the configs in tests/data against the presets, one-line errors for anything else, and
property tests: a valid config of any family gives a consistent shape, a malformed one an
InputError and nothing else."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.core.errors import InputError
from advisor.core.model.hf_config import model_from_config
from advisor.core.model.presets import PRESETS

DATA = Path(__file__).parents[1] / "data"
SAME_SHAPE = {"qwen2.5-7b", "qwen3-8b", "qwen3-30b-a3b", "mixtral-8x7b", "deepseek-r1",
              "kimi-k2", "glm-4.5", "gpt-oss-120b", "gemma-3-27b", "llama-4-maverick",
              "llama-2-7b", "llama-3.1-8b"}


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / name / "config.json").read_text())
    return data


def shape(spec: Any) -> dict[str, Any]:
    """The dimensions, without the name, source and context (a card's YaRN context can be
    longer than the config's max_position_embeddings); the head width as used."""
    dims = spec.model_dump(exclude={"name", "source", "max_context", "declared_params"})
    return {**dims, "head_dim": spec.d_head}


@pytest.mark.parametrize("name", sorted(SAME_SHAPE))
def test_each_config_in_tests_data_reads_as_its_preset(name: str) -> None:
    spec = model_from_config(load(name), f"{name}/config.json", name)
    assert shape(spec) == shape(PRESETS[name])
    assert spec.name == name and spec.source.startswith(f"{name}/config.json")


def test_what_is_not_counted_is_said_in_the_source() -> None:
    r1 = model_from_config(load("deepseek-r1"), "r1.json")
    assert "not counted: multi-token-prediction layers" in r1.source
    gemma = model_from_config(load("gemma-3-27b"), "g.json")
    assert "not counted: the vision tower" in gemma.source
    assert "not counted" not in model_from_config(load("kimi-k2"), "k.json").source


def test_gemma3s_text_config_takes_its_class_defaults() -> None:
    """The published multimodal config names no vocabulary, window pattern or tying: they
    are Gemma3TextConfig's defaults (262,208 tokens, 5 local to 1 global, tied)."""
    spec = model_from_config(load("gemma-3-27b"), "g.json")
    assert (spec.vocab, spec.global_every, spec.tie_embeddings) == (262208, 6, True)
    assert spec.sliding_layers == 62 - 10 and spec.head_dim == 128


def test_layer_types_and_the_window_pattern_say_the_same() -> None:
    text = load("gemma-3-27b")["text_config"]
    types = ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(62)]
    newer = {**text, "layer_types": types}
    assert model_from_config({"model_type": "gemma3_text", **newer}, "n.json") == \
        model_from_config({"model_type": "gemma3_text", **text}, "n.json")


def test_gpt_oss_without_layer_types_alternates_from_a_sliding_layer() -> None:
    cfg = load("gpt-oss-120b")
    del cfg["layer_types"]
    assert shape(model_from_config(cfg, "o.json")) == shape(PRESETS["gpt-oss-120b"])


def test_the_architecture_names_the_family_without_a_model_type() -> None:
    cfg = load("llama-3.1-8b")
    del cfg["model_type"]
    assert shape(model_from_config(cfg, "l.json")) == shape(PRESETS["llama-3.1-8b"])


def test_qwen3_moe_dense_layers_from_mlp_only_layers() -> None:
    cfg = {**load("qwen3-30b-a3b"), "mlp_only_layers": [0, 1]}
    spec = model_from_config(cfg, "q.json")
    assert spec.dense_layers == 2 and spec.moe_layers == 46
    spec = model_from_config({**cfg, "mlp_only_layers": [], "decoder_sparse_step": 2}, "q")
    assert spec.moe_layers == 24


def test_qwen_sliding_window_on_every_layer_or_none() -> None:
    cfg = {**load("qwen3-8b"), "use_sliding_window": True, "sliding_window": 4096}
    assert model_from_config({**cfg, "max_window_layers": 0}, "q").sliding_layers == 36
    assert model_from_config({**cfg, "max_window_layers": 36}, "q").sliding_window is None


BAD: list[tuple[str, Any, str]] = [
    ("model_type", "mamba", "field 'model_type', value 'mamba': not a model family"),
    ("hidden_size", "4096", "field 'hidden_size', value '4096': must be a whole number"),
    ("num_hidden_layers", None, "field 'num_hidden_layers': missing"),
    ("num_hidden_layers", 10**9, "field 'num_hidden_layers', value 1000000000: must be a whole "
                                 "number, 1 to 4,096"),
    ("num_key_value_heads", 7, "heads 32 is not a multiple of kv_heads 7"),
    ("tie_word_embeddings", "no", "field 'tie_word_embeddings', value 'no': must be true"),
]


@pytest.mark.parametrize(("key", "value", "message"), BAD)
def test_a_bad_key_is_one_line_naming_the_file_key_and_value(key: str, value: Any,
                                                             message: str) -> None:
    cfg = {**load("llama-3.1-8b"), key: value}
    with pytest.raises(InputError) as err:
        model_from_config(cfg, "my/config.json")
    line = err.value.one_line()
    assert line.startswith("my/config.json") and message in line and "\n" not in line


@pytest.mark.parametrize(("name", "edit", "message"), [
    ("qwen3-30b-a3b", {"mlp_only_layers": [3, 10]}, "field 'mlp_only_layers'"),
    ("qwen3-30b-a3b", {"mlp_only_layers": [99]}, "layer indices, 0 to 47"),
    ("qwen3-8b", {"use_sliding_window": True, "sliding_window": 4096,
                  "max_window_layers": 20}, "field 'max_window_layers', value 20"),
    ("gpt-oss-120b", {"layer_types": ["full_attention"] * 35 + ["sliding_attention"]},
     "global attention as every n-th layer"),
    ("gpt-oss-120b", {"layer_types": ["sliding_attention"]}, "must list 36 layers"),
    ("deepseek-r1", {"moe_layer_freq": 2}, "field 'moe_layer_freq', value 2"),
    ("deepseek-r1", {"q_lora_rank": None}, "field 'q_lora_rank': missing"),
    ("llama-4-maverick", {"text_config": None}, "field 'text_config': missing"),
    ("gemma-3-27b", {"text_config": {"model_type": "llama"}},
     "field 'text_config.model_type', value 'llama'"),
])
def test_what_the_shape_cannot_hold_is_refused(name: str, edit: dict[str, Any],
                                               message: str) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(")):
        model_from_config({**load(name), **edit}, "c.json")


@pytest.mark.parametrize("name", sorted(SAME_SHAPE))
def test_a_layer_count_past_any_model_is_refused_before_a_layer_is_built(name: str) -> None:
    """`num_hidden_layers` = 2^63 (a fuzzed config): the families that place layers (which
    slide, which are MoE) built a set of every layer index first; Gemma 3's took 226 s and
    4.7 GB before it failed. The count is refused first, naming its key."""
    cfg = load(name)
    where = cfg["text_config"] if "num_hidden_layers" in cfg.get("text_config", {}) else cfg
    where["num_hidden_layers"] = 2**63
    with pytest.raises(InputError, match=r"num_hidden_layers', value 9223372036854775808: "
                                         r"must be a whole number, 1 to 4,096"):
        model_from_config(cfg, "c.json")


def test_a_nested_key_is_named_with_its_table() -> None:
    cfg = load("llama-4-maverick")
    cfg["text_config"]["interleave_moe_layer_step"] = 0
    with pytest.raises(InputError, match=r"field 'text_config\.interleave_moe_layer_step'"):
        model_from_config(cfg, "c.json")


@pytest.mark.parametrize("data", [[], "x", None, {}, {"architectures": "Llama"},
                                  {"architectures": []}, {"model_type": ["llama"]}])
def test_not_a_config_is_refused(data: Any) -> None:
    with pytest.raises(InputError):
        model_from_config(data, "c.json")


# --- property tests ------------------------------------------------------------------------

DIMS = st.fixed_dictionaries({
    "layers": st.integers(1, 64), "kv": st.integers(1, 8), "group": st.integers(1, 8),
    "head_dim": st.sampled_from([32, 64, 128]), "hidden": st.integers(1, 64).map(lambda n: 64 * n),
    "ffn": st.integers(1, 64).map(lambda n: 128 * n), "vocab": st.integers(100, 300000),
})


@st.composite
def configs(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, int]]:
    """A valid config of a random family, and what transformers' own rules say of it: how
    many layers have experts, and how many attend globally."""
    d = draw(DIMS)
    layers, heads = d["layers"], d["kv"] * d["group"]
    base = {"num_hidden_layers": layers, "hidden_size": d["hidden"], "num_attention_heads": heads,
            "num_key_value_heads": d["kv"], "head_dim": d["head_dim"],
            "intermediate_size": d["ffn"], "vocab_size": d["vocab"]}
    kind = draw(st.sampled_from(["llama", "qwen3_moe", "llama4_text", "gpt_oss", "gemma3_text",
                                 "glm4_moe"]))
    experts = draw(st.integers(1, 64))
    top = draw(st.integers(1, experts))
    moe, full = 0, layers
    if kind == "qwen3_moe":
        step = draw(st.integers(1, 4))
        dense = draw(st.integers(0, layers - 1))
        moe = sum(1 for i in range(layers) if i >= dense and (i + 1) % step == 0)
        if not moe:
            step, moe = 1, layers - dense
        base |= {"num_experts": experts, "num_experts_per_tok": top, "decoder_sparse_step": step,
                 "mlp_only_layers": list(range(dense)), "moe_intermediate_size": d["ffn"] // 2}
    elif kind == "llama4_text":
        step = draw(st.integers(1, max(1, min(4, layers))))
        moe = layers // step
        base |= {"num_local_experts": experts, "num_experts_per_tok": top,
                 "interleave_moe_layer_step": step, "intermediate_size_mlp": 2 * d["ffn"]}
    elif kind == "glm4_moe":
        dense = draw(st.integers(0, layers - 1))
        moe = layers - dense
        base |= {"n_routed_experts": experts, "num_experts_per_tok": top, "n_shared_experts": 1,
                 "first_k_dense_replace": dense, "moe_intermediate_size": d["ffn"] // 2,
                 "attention_bias": True}
    elif kind == "gpt_oss":
        moe, full = layers, layers // 2
        base |= {"num_local_experts": experts, "num_experts_per_tok": top,
                 "sliding_window": 128}
    elif kind == "gemma3_text":
        pattern = draw(st.integers(2, 8))
        full = layers // pattern
        base |= {"sliding_window": 512, "sliding_window_pattern": pattern}
    return {"model_type": kind, **base}, {"moe": moe, "full": full}


@settings(max_examples=200, deadline=None)
@given(configs())
def test_a_valid_config_gives_a_consistent_shape(drawn: tuple[dict[str, Any], dict[str, int]]
                                                 ) -> None:
    cfg, expect = drawn
    spec = model_from_config(cfg, "c.json")
    assert spec.layers == cfg["num_hidden_layers"] and spec.hidden == cfg["hidden_size"]
    assert spec.moe_layers == expect["moe"]
    assert spec.layers - spec.sliding_layers == expect["full"]
    assert 0 < spec.params_active <= spec.params_total + spec.vocab * spec.hidden
    if spec.experts:
        assert spec.expert_params < spec.params_total
    assert json.loads(json.dumps(spec.model_dump())) == spec.model_dump()


JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(
    allow_nan=False) | st.text(max_size=8), lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=8)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs(), st.data())
def test_a_malformed_config_is_an_input_error_and_nothing_else(
        drawn: tuple[dict[str, Any], dict[str, int]], data: st.DataObject) -> None:
    cfg = copy.deepcopy(drawn[0])
    for _ in range(data.draw(st.integers(1, 3))):
        key = data.draw(st.sampled_from(sorted(cfg)))
        if data.draw(st.booleans()):
            del cfg[key]
        else:
            cfg[key] = data.draw(JSON)
        if not cfg:
            break
    try:
        model_from_config(cfg, "c.json")
    except InputError as exc:
        assert "\n" not in exc.one_line()
