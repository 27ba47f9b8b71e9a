"""The one projection engine: counted against published conventions and physical properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.core.model.stack import Stack
from advisor.core.model.transformer import ModelSpec
from advisor.core.model.workload import Workload
from advisor.core.projection.calibration import CAL
from advisor.core.projection.engine import (
    GIB,
    attention_flops_per_token,
    local_params,
    memory_training,
    project,
)
from advisor.core.projection.layout import (
    as_run,
    grid_of,
    row_of,
    serving_batches,
    serving_candidates,
    serving_layouts,
    training_candidates,
)
from advisor.core.projection.rates import GpuRates, resolve_rates
from advisor.core.projection.retune import project_side
from advisor.io.catalog_store import load_catalog


def rates(catalog, gpu: str, w: Workload, **kw) -> GpuRates:
    return resolve_rates(catalog.gpu(gpu), w, catalog_gpus=catalog.gpus, **kw)


def w8b(**kw) -> Workload:
    return Workload(model="llama-3.1-8b", seq_lens=kw.pop("seq_lens", [8192]), **kw)


# --- the guide's FLOP conventions --------------------------------------------------------------


def test_dense_n_is_the_guides_count() -> None:
    # UPG: dense_N = L(3hi + h(2 n d + 2 n_kv d)) + V h = 7.505e9 for Llama-3.1-8B
    assert ModelSpec.model_validate(w8b().model.model_dump()).params_active == pytest.approx(
        7.505e9, rel=1e-3)


@pytest.mark.parametrize(("seq", "share"), [(8192, 0.125), (262144, 0.82)])
def test_attention_share_of_model_flops_matches_the_guide(seq: int, share: float) -> None:
    w = w8b(seq_lens=[seq])
    attn = 3 * float(attention_flops_per_token(w, np.asarray([[seq / 2]]))[0, 0])
    dense = 6 * w.model.params_active
    assert attn / (attn + dense) == pytest.approx(share, abs=0.01)


def test_a_plain_mlp_model_from_a_count_has_that_count() -> None:
    m = ModelSpec.from_params(6.7e9, gated_mlp=False)
    assert not m.gated_mlp and m.params_total == pytest.approx(6.7e9, rel=0.05)
    assert m.params_note() is None


def test_a_shape_that_disagrees_with_the_count_is_flagged() -> None:
    m = ModelSpec.from_params(6.7e9, layers=32, hidden=4096, heads=32, kv_heads=32, ffn=16384,
                              vocab=50432)
    note = m.params_note()
    assert note is not None and "off the 6.7B you gave" in note


# --- memory ----------------------------------------------------------------------------------


def _mem(w: Workload, s: float = 0.0) -> float:
    return float(memory_training(w, as_run(w), np.asarray([[s]]))[0, 0])


def test_zero_stage_0_holds_16_bytes_per_parameter_in_deepspeed() -> None:
    w = w8b(framework="deepspeed", gpus=1)
    states = (_mem(w) - CAL.framework_floor_gib) * GIB
    p = float(local_params(w, as_run(w))[0, 0])
    assert states / p == pytest.approx(16.0, rel=0.01)  # [ZeRO]: 2 + 2 + 12


def test_each_zero_stage_shards_one_more_part() -> None:
    sizes = [_mem(w8b(framework="deepspeed", zero_stage=z)) for z in range(4)]
    assert sizes[0] > sizes[1] > sizes[2] > sizes[3]


def test_offload_and_recompute_save_memory_and_lora_holds_no_optimizer() -> None:
    base = _mem(w8b(zero_stage=1, framework="deepspeed"), 8192)
    assert _mem(w8b(zero_stage=1, framework="deepspeed", offload_optimizer=True), 8192) < base
    assert _mem(w8b(zero_stage=1, framework="deepspeed", recompute="full"), 8192) < base
    assert _mem(w8b(mode="lora", framework="deepspeed"), 8192) < base


def test_sequence_parallel_and_cp_shard_activations() -> None:
    flat = _mem(w8b(framework="megatron"), 65536) - _mem(w8b(framework="megatron"))
    sharded = _mem(w8b(framework="megatron", cp=4), 65536) - _mem(w8b(framework="megatron",
                                                                         cp=4))
    assert sharded == pytest.approx(flat / 4, rel=0.02)


def test_kv_cache_is_2_layers_kvheads_dhead_bytes_per_token(catalog) -> None:
    w = Workload(mode="decode", model="llama-3.1-8b", seq_lens=[1], gpus=1)
    from advisor.core.projection.engine import _kv_per_token_gpu

    assert float(_kv_per_token_gpu(w, as_run(w))[0, 0]) == 2 * 32 * 8 * 128 * 2


# --- physical properties --------------------------------------------------------------------


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seq=st.sampled_from([2048, 8192, 32768]), mbs=st.sampled_from([1, 2, 4]),
       zero=st.integers(0, 3), recompute=st.sampled_from(["none", "selective", "full"]),
       scale=st.floats(1.05, 4.0), resource=st.sampled_from(["gemm", "hbm", "link"]))
def test_more_bandwidth_or_flops_never_slows_a_step(seq, mbs, zero, recompute, scale,
                                                    resource) -> None:
    cat = load_catalog()
    w = w8b(seq_lens=[seq], micro_batch=mbs, zero_stage=zero, recompute=recompute,
            framework="deepspeed")
    r = rates(cat, "h200-sxm", w)
    field = {"gemm": ("gemm_tflops", "gemm_bf16_tflops", "attn_fb_tflops", "attn_f_tflops"),
             "hbm": ("hbm_gbps",), "link": ("link_gbps", "nic_gbps")}[resource]
    faster = r.model_copy(update={k: getattr(r, k) * scale for k in field})
    g = as_run(w)
    assert project(w, faster, g, [seq]).step_s[0, 0] <= project(w, r, g, [seq]).step_s[0, 0]


def test_retuned_is_never_slower_than_as_run_when_it_fits(catalog) -> None:
    w = w8b(seq_lens=[8192, 32768], zero_stage=3, recompute="full", global_batch=16)
    side = project_side(w, rates(catalog, "h200-sxm", w), w.seq_lens)
    for c in range(2):
        assert side.retuned.fits[c]
        assert (side.retuned.proj.tokens_per_s[0, c]
                >= side.as_run.proj.tokens_per_s[0, c] * (1 - 1e-9))


def test_a_layout_that_does_not_fit_gets_the_smallest_change(catalog) -> None:
    # 30B dense, FSDP-style ZeRO-3 as written but without checkpointing, on 8 x A100-80GB
    m = ModelSpec.from_params(30e9)
    w = Workload(model=m, seq_lens=[4096], zero_stage=0, gpus=8, global_batch=64,
                 framework="fsdp")
    side = project_side(w, rates(catalog, "a100-sxm", w), w.seq_lens)
    assert not side.as_run.fits[0] and side.retuned.fits[0]
    assert side.fit_change[0] and "ZeRO stage 0 -> " in side.fit_change[0]


def test_more_memory_buys_a_lighter_layout(catalog) -> None:
    # the same long-context job: B300's 288 GB needs less recompute or sharding than B200's 180
    w = Workload(model="llama-3.1-70b", seq_lens=[32768], gpus=8, global_batch=8,
                 framework="megatron", precision="fp8")
    b200 = project_side(w, rates(catalog, "b200-sxm", w), w.seq_lens).retuned.layouts[0]
    b300 = project_side(w, rates(catalog, "b300-sxm", w), w.seq_lens).retuned.layouts[0]
    heavy = {"none": 0, "selective": 1, "full": 2}
    assert (heavy[b300.recompute], b300.tp * b300.pp * b300.cp) <= (
        heavy[b200.recompute], b200.tp * b200.pp * b200.cp)


def test_the_search_is_bounded_whatever_the_input() -> None:
    m = ModelSpec.from_params(70e9)
    w = Workload(model=m, seq_lens=[131072], gpus=4096, nodes=512, global_batch=4096)
    assert len(training_candidates(w, 4096, 8, 8)) <= 20_000
    s = Workload(mode="serve", model=m, seq_lens=[1000], osl=1000, gpus=8, tp=8)
    layouts = serving_layouts(s, 8, 8)
    assert len(serving_candidates(s, 8, 8, layouts, serving_batches(s, False))) <= 20_000


def test_a_reported_layout_goes_back_into_a_grid_unchanged() -> None:
    w = Workload(model="llama-3.1-70b", seq_lens=[8192], gpus=64, nodes=8, global_batch=256)
    g = training_candidates(w, 64, 8, 8)
    assert len(g) > 100
    again = grid_of([row_of(g.choice(i), 8) for i in range(len(g))])
    for name in ("gpus", "tp", "pp", "cp", "ep", "vp", "mb", "acc", "zero", "recompute",
                 "offload", "fused"):
        assert np.array_equal(getattr(again, name), getattr(g, name)), name
    changed = grid_of([row_of(g.choice(0), 8, gpus=128, mb=3, acc=5)])
    assert (changed.gpus[0, 0], changed.mb[0, 0], changed.acc[0, 0]) == (128, 3, 5)


def test_a_framework_left_to_auto_is_projected_as_the_one_it_resolves_to(catalog) -> None:
    """Every charge reads the framework by the one rule: "auto" with no ZeRO and no stack is
    Megatron, so its projection is Megatron's to the last figure (fused traffic included)."""
    auto = Workload(model="llama-3.1-8b", seq_lens=[4096, 8192], gpus=8)
    said = Workload(model="llama-3.1-8b", seq_lens=[4096, 8192], gpus=8, framework="megatron")
    assert auto.framework == "auto"
    r = rates(catalog, "h100-sxm", said)
    grid = as_run(said)
    assert grid.fused[0, 0] == 0, "unfused kernels: the framework decides the traffic"
    a = project(auto, r, grid, auto.seq_lens, CAL)
    b = project(said, r, grid, said.seq_lens, CAL)
    for bucket, t in b.times.items():
        assert np.array_equal(a.times[bucket], t), bucket


def test_deepspeed_retunes_no_tp_but_megatron_does(catalog) -> None:
    for framework, parallel in (("deepspeed", False), ("megatron", True)):
        w = Workload(model="llama-3.1-70b", seq_lens=[8192], gpus=8, framework=framework)
        g = training_candidates(w, 8, 8, 8)
        assert bool((g.tp > 1).any()) is parallel


# --- serving ----------------------------------------------------------------------------------


def _serve(catalog, gpu: str, isl: int, osl: int, **kw) -> float:
    w = Workload(mode="serve", model="llama-3.1-8b", seq_lens=[isl], osl=osl, precision="fp8",
                 gpus=1, **kw)
    side = project_side(w, rates(catalog, gpu, w), w.seq_lens)
    assert side.retuned.fits[0]
    return float(side.retuned.proj.tokens_per_s[0, 0])


def test_more_kv_memory_pays_most_on_long_contexts(catalog) -> None:
    short = _serve(catalog, "h200-sxm", 128, 128) / _serve(catalog, "h100-sxm", 128, 128)
    long = _serve(catalog, "h200-sxm", 20000, 2000) / _serve(catalog, "h100-sxm", 20000, 2000)
    assert long > short


def test_a_tpot_limit_costs_throughput(catalog) -> None:
    free = _serve(catalog, "h100-sxm", 2048, 2048)
    assert _serve(catalog, "h100-sxm", 2048, 2048, tpot_ms=15.0) < free


def test_moe_decode_reads_only_the_experts_a_batch_touches(catalog) -> None:
    from advisor.core.projection.engine import _decode_step

    w = Workload(mode="decode", model="qwen3-30b-a3b", seq_lens=[1024], gpus=1)
    r = rates(catalog, "h100-sxm", w)
    one = _decode_step(w, r, as_run(w), np.asarray([[1024.0]]), np.asarray([[1.0]]), CAL)
    many = _decode_step(w, r, as_run(w), np.asarray([[1024.0]]), np.asarray([[512.0]]), CAL)
    expert_bytes = w.model.expert_params * 2.0
    assert float(one["_wbytes"][0, 0]) < 0.2 * expert_bytes
    assert float(many["_wbytes"][0, 0]) > 0.9 * expert_bytes


# --- rates --------------------------------------------------------------------------------------


def test_a_power_cap_lowers_compute_by_the_stated_exponent(catalog) -> None:
    w = w8b()
    full, capped = rates(catalog, "h100-sxm", w), rates(catalog, "h100-sxm", w,
                                                        gpu_power_cap_w=500.0)
    assert capped.gemm_tflops / full.gemm_tflops == pytest.approx(
        (500 / 700) ** CAL.power_exponent)
    assert capped.hbm_gbps == full.hbm_gbps


def test_a_part_with_no_figures_takes_its_twins_scaled_by_power(catalog) -> None:
    w = w8b(precision="fp8")
    nvl, sxm = rates(catalog, "h200-nvl", w), rates(catalog, "h200-sxm", w)
    assert nvl.gemm_tflops / sxm.gemm_tflops == pytest.approx((600 / 700) ** CAL.power_exponent)
    assert any("same die as h200-sxm" in e.detail for e in nvl.evidence)


def test_the_declared_stack_picks_the_attention_kernel(catalog) -> None:
    fa2 = Stack(source="declared", packages={"torch": "2.7.1+cu128", "flash-attn": "2.7.4"})
    w = w8b()
    default = rates(catalog, "b200-sxm", w)
    mine = rates(catalog, "b200-sxm", w, stack=fa2)
    assert default.attention_kernel == "fa4" and mine.attention_kernel == "fa2"
    assert mine.attn_fb_tflops < 0.5 * default.attn_fb_tflops
    assert "flash-attn 2" in mine.attention_why


def test_b300_attention_gains_over_b200_while_gemm_stays(catalog) -> None:
    w = w8b()
    b200, b300 = rates(catalog, "b200-sxm", w), rates(catalog, "b300-sxm", w)
    assert b300.gemm_tflops / b200.gemm_tflops == pytest.approx(1.0, abs=0.05)
    assert b300.attn_fb_tflops / b200.attn_fb_tflops > 1.15


def test_every_rate_has_a_source(catalog) -> None:
    for g in ("h100-sxm", "mi300x", "gb300", "rtx-pro-6000-bw-server", "tpu-v5p"):
        r = rates(catalog, g, w8b())
        assert {e.quantity for e in r.evidence} >= {"attention", "HBM bandwidth"}
        assert all(e.detail and math.isfinite(e.value) and e.value > 0 for e in r.evidence)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(rows=st.lists(st.tuples(st.sampled_from([8, 16]), st.sampled_from([1, 2, 4]),
                               st.sampled_from([1, 2]), st.sampled_from([0, 1, 3]),
                               st.sampled_from([0, 1, 2]), st.sampled_from([0, 1]),
                               st.sampled_from([0, 1]), st.sampled_from([0, 1, 2])),
                     min_size=1, max_size=40),
       mine=st.integers(0, 39), speeds=st.lists(st.sampled_from([1.0, 2.0, 3.0]),
                                                min_size=40, max_size=40))
def test_smallest_change_counts_knobs_as_the_choices_do(rows, mine, speeds) -> None:
    """The re-tune's smallest change, counted on the Grid's columns, is the one comparing
    every fitting layout's LayoutChoice knob by knob finds: fewest knobs, then fastest,
    then first (ties in speed are drawn on purpose)."""
    from advisor.core.model.vocabulary import BASE_FORMATS
    from advisor.core.projection.retune import KNOB_WORDS, _changes, _smallest_change

    grid = grid_of([(gpus, 8, tp, 1, 1, 1, 1, mb, 1, zero, rc, off, fused,
                     base % len(BASE_FORMATS), off)
                    for gpus, tp, mb, zero, rc, off, fused, base in rows])
    mine_choice = grid.choice(mine % len(grid))
    fits = np.arange(len(grid))
    speed = np.asarray(speeds[:len(grid)])
    counts = [(len(_changes(mine_choice, grid.choice(int(i)))), -float(speed[i]), int(i))
              for i in fits]
    assert grid.knobs_changed(mine_choice, KNOB_WORDS).tolist() == [c[0] for c in counts]
    expected = "; ".join(_changes(mine_choice, grid.choice(min(counts)[2]))) or None
    assert _smallest_change(mine_choice, grid, fits, speed) == expected
