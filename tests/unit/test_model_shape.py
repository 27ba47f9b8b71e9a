"""The model's shape arithmetic: MoE placement, biases and sinks, sliding-window attention,
and a custom model built from a parameter count and the dimensions the user gave."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from advisor.core.model.transformer import ModelSpec

SMALL = {"layers": 12, "hidden": 256, "heads": 4, "kv_heads": 2, "ffn": 512, "vocab": 1000}


def spec(**kw: object) -> ModelSpec:
    return ModelSpec(**{**SMALL, **kw})


# --- where the experts are ---------------------------------------------------------------


@pytest.mark.parametrize(("layers", "dense", "every", "moe"), [
    (48, 0, 1, 48),  # Llama-4 Scout, Qwen3-MoE: every layer
    (48, 0, 2, 24),  # Llama-4 Maverick: layers 1, 3, ..., 47
    (61, 3, 1, 58),  # DeepSeek-V3: three dense layers first
    (10, 3, 2, 4),  # layers 3, 5, 7, 9
    (10, 4, 3, 2),  # layers 5, 8
])
def test_moe_layers_counts_the_layers_that_have_experts(layers: int, dense: int, every: int,
                                                        moe: int) -> None:
    m = spec(layers=layers, experts=8, active_experts=2, dense_layers=dense, moe_every=every)
    assert m.moe_layers == moe == sum(1 for i in range(dense, layers) if (i + 1) % every == 0)


def test_interleaved_layers_carry_a_dense_mlp_of_their_own_width() -> None:
    """Every other layer of an interleaved MoE is dense at `ffn`; experts (and the shared
    one) are `moe_ffn` wide: the count is layer by layer."""
    m = spec(layers=4, experts=4, active_experts=1, shared_experts=1, moe_ffn=64,
             moe_every=2)
    h, attn = 256, m.attn_params_per_layer
    dense, expert = 3 * h * 512, 3 * h * 64
    layers = 4 * attn + 2 * dense + 2 * (4 + 1) * expert + 2 * h * 4
    assert m.params_total == layers + 2 * 1000 * h
    assert m.params_active == 4 * attn + 2 * dense + 2 * 2 * expert + 2 * h * 4 + 1000 * h
    assert m.active_ffn == (2 * 512 + 2 * 2 * 64) / 4


@pytest.mark.parametrize(("kw", "message"), [
    ({"dense_layers": 2}, "need experts > 0"),
    ({"moe_every": 2}, "need experts > 0"),
    ({"moe_ffn": 64}, "need experts > 0"),
    ({"experts": 4, "active_experts": 1, "dense_layers": 12}, "leaves no MoE layer"),
    # past the depth: read as -18 MoE layers, and negative step times, before (fuzz_typed)
    ({"experts": 4, "active_experts": 1, "dense_layers": 30}, "leaves no MoE layer"),
    ({"experts": 4, "active_experts": 1, "moe_every": 13}, "leaves no MoE layer"),
    ({"global_every": 2}, "needs a sliding_window"),
    ({"sliding_window": 64, "global_every": 1}, "greater than or equal to 2"),
])
def test_inconsistent_shapes_are_refused(kw: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        spec(**kw)


# --- biases and sinks --------------------------------------------------------------------


def test_attention_biases_and_sinks_are_counted() -> None:
    plain = spec()
    d = 256 // 4
    assert spec(qkv_bias=True).attn_params_per_layer - plain.attn_params_per_layer == (
        (4 + 2 * 2) * d)
    assert spec(out_bias=True).attn_params_per_layer - plain.attn_params_per_layer == 256
    assert spec(attention_sinks=True).attn_params_per_layer - plain.attn_params_per_layer == 4
    moe = spec(experts=4, active_experts=2)
    biased = spec(experts=4, active_experts=2, mlp_bias=True)
    per_expert = 2 * 512 + 256  # gate and up, then down
    assert biased.params_total - moe.params_total == 12 * (4 * per_expert + 4)
    assert biased.params_active - moe.params_active == 12 * (2 * per_expert + 4)


def test_mla_takes_no_attention_bias() -> None:
    from advisor.core.model.presets import PRESETS

    with pytest.raises(ValidationError, match="not MLA"):
        ModelSpec.model_validate({**PRESETS["deepseek-v3"].model_dump(), "qkv_bias": True})


# --- sliding-window attention ------------------------------------------------------------


GEMMA_LIKE = {"sliding_window": 64, "global_every": 6}


def test_without_a_window_the_context_methods_are_the_plain_ones() -> None:
    m = spec()
    ctx = np.array([1.0, 100.0, 131072.0, 2.0**26])
    assert np.array_equal(m.cached_tokens(ctx), ctx)
    assert np.array_equal(m.mean_keys(ctx), ctx / 2)
    assert np.all(m.kv_elems_per_token_at(ctx) == m.kv_elems_per_token)  # exactly
    assert m.sliding_layers == 0


def test_sliding_layers_cache_and_attend_to_at_most_the_window() -> None:
    m = spec(**GEMMA_LIKE)  # 12 layers: 2 global (5, 11), 10 sliding
    assert m.sliding_layers == 10
    assert m.cached_tokens(1000) == pytest.approx((2 * 1000 + 10 * 64) / 12)
    assert m.cached_tokens(50) == 50  # shorter than the window: every layer keeps it all
    assert m.kv_elems_per_token_at(1000) == pytest.approx(
        m.kv_elems_per_token * (2 * 1000 + 10 * 64) / 12 / 1000)
    # a causal pass over 1000 tokens: 500 keys on a global layer; 64 - 64^2/2000 on a local
    assert m.mean_keys(1000) == pytest.approx((2 * 500 + 10 * (64 - 64**2 / 2000)) / 12)
    every = spec(sliding_window=64)  # no global layer (Mistral-7B v0.1)
    assert every.sliding_layers == 12 and every.cached_tokens(1000) == 64


def test_mean_keys_is_the_mean_over_queries_of_a_causal_window() -> None:
    """Query i of a causal pass sees min(i, window) keys: the closed form is that mean (with
    the engine's half-the-sequence convention for a global layer)."""
    m = spec(sliding_window=64)
    s = 4096
    exact = sum(min(i, 64) for i in range(s)) / s
    assert m.mean_keys(s) == pytest.approx(exact, rel=0.01)


@given(st.lists(st.floats(1, 2**26), min_size=1, max_size=8), st.integers(1, 2**16),
       st.integers(2, 12))
def test_context_methods_are_elementwise_and_bounded(ctx: list[float], window: int,
                                                     every: int) -> None:
    m = spec(sliding_window=window, global_every=every)
    arr = np.array(ctx)
    cached, keys = m.cached_tokens(arr), m.mean_keys(arr)
    for i, c in enumerate(ctx):
        assert cached[i] == pytest.approx(m.cached_tokens(c))
        assert keys[i] == pytest.approx(m.mean_keys(c))
        assert min(c, window) - 1e-9 <= m.cached_tokens(c) <= c + 1e-9
        assert m.mean_keys(c) <= c / 2 + 1e-9
        assert m.kv_elems_per_token_at(c) <= m.kv_elems_per_token * (1 + 1e-12)


# --- a custom model from a count and some dimensions --------------------------------------


def test_the_issues_reproduction_says_the_shape_was_given_and_that_it_disagrees() -> None:
    """`--params 400e9 --layers 48 --hidden 5120 --experts 128 --active-experts 1 --ffn 8192`
    (issue 28): the dimensions given are used, the source says which were given and which
    inferred, and the note says the count they give is far from the one stated."""
    m = ModelSpec.from_params(400e9, layers=48, hidden=5120, experts=128, active_experts=1,
                              ffn=8192)
    assert m.layers == 48 and m.hidden == 5120 and m.ffn == 8192
    assert m.source.startswith("layers, hidden, ffn as given; heads 40, kv_heads 8, vocab "
                               "128256 inferred")
    note = m.params_note()
    assert note is not None and "off the 400B you gave: the dimensions are used" in note


def test_every_dimension_given_is_the_shape_given() -> None:
    """Llama-4 Maverick's shape in full (its config.json) matches its card's 400B: the
    source says the shape was given and there is nothing to note."""
    m = ModelSpec.from_params(400e9, layers=48, hidden=5120, heads=40, kv_heads=8, ffn=16384,
                              vocab=202048, experts=128, active_experts=1, shared_experts=1,
                              moe_ffn=8192, moe_every=2)
    assert m.source == "the shape given (the parameter count only checks it)"
    assert m.params_total == pytest.approx(400e9, rel=0.02) and m.params_note() is None


@pytest.mark.parametrize("off", [0.09, 0.11])
def test_the_shape_check_is_ten_percent(off: float) -> None:
    m = ModelSpec.from_params(1.0, **SMALL)
    stated = m.params_total / (1 + off)
    note = ModelSpec.from_params(stated, **SMALL).params_note()
    assert (note is None) == (off < 0.10)


@pytest.mark.parametrize("kw", [{}, {"experts": 16, "active_experts": 2},
                                {"experts": 64, "active_experts": 4, "dense_layers": 3,
                                 "moe_ffn": 1024, "moe_every": 2}])
def test_the_layer_count_is_solved_with_the_experts_in_it(kw: dict[str, int]) -> None:
    m = ModelSpec.from_params(30e9, **kw)
    assert m.params_total == pytest.approx(30e9, rel=0.05), m.layers
    assert m.params_note() is None


def test_answers_name_the_moe_dimensions_as_the_flags_do() -> None:
    """`--shared-experts`, `--moe-ffn`, `--dense-layers` and `--moe-every` are the answers'
    `shared_experts`, `moe_ffn`, `dense_layers` and `moe_every`."""
    from advisor.core.model.presets import PRESETS
    from advisor.core.report.answers_toml import parse_answers_toml

    text = """current = "h100-sxm"
targets = ["b200-sxm"]
[workload]
seq_lens = [4096]
[workload.model]
layers = 48
hidden = 5120
heads = 40
kv_heads = 8
ffn = 16384
vocab = 202048
experts = 128
active_experts = 1
shared_experts = 1
moe_ffn = 8192
moe_every = 2
dense_layers = 0
"""
    model = parse_answers_toml(text, "a.toml").workload.model
    assert model.params_total == PRESETS["llama-4-maverick"].params_total


# --- shapes each valid alone, not together (benchmarks/fuzz_schema.py) -------------------


def test_more_heads_than_hidden_width_needs_a_head_dim() -> None:
    """hidden 8 over 16 heads left each head hidden // heads = 0 wide: attention with no
    parameters, no KV cache and no FLOPs, projected as if it were a model (fuzz_schema's
    consistency answers). Refused on the heads, unless head_dim gives the width."""
    with pytest.raises(ValidationError, match="leaves each head no width"):
        spec(hidden=8, heads=16, kv_heads=16)
    assert spec(hidden=8, heads=16, kv_heads=16, head_dim=64).d_head == 64


def test_a_narrow_custom_model_infers_an_mlp_it_can_have() -> None:
    """`--params 1 --hidden 8`: the inferred MLP width round(3.5 x 8 / 256) x 256 was 0, and
    the line blamed `--ffn`, value 0, a flag nobody gave (fuzz_schema flags). The inferred
    width is at least one multiple of 256, as the inferred hidden size is."""
    m = ModelSpec.from_params(1, hidden=8)
    assert m.ffn == 256 and "ffn 256" in m.source


def test_a_declared_parameter_count_is_bounded() -> None:
    """A stated count of 5e-324 made the shape check's note '+inf% off the 0B you gave'."""
    with pytest.raises(ValidationError, match="declared_params"):
        spec(declared_params=5e-324)
    assert spec(declared_params=1.0).params_note() is not None
