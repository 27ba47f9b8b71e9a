"""LoRA in the engine: the adapters train, the frozen base is held as the answers (or a re-tune
they allowed) say, and every choice shows up where it costs: memory, step time, the verdict."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from advisor.core.model.lora import adapters
from advisor.core.model.workload import Workload
from advisor.core.projection.engine import memory_training, project
from advisor.core.projection.layout import as_run
from advisor.core.projection.rates import GpuRates, resolve_rates
from advisor.core.projection.retune import SideProjection, project_side


def lora(model: str = "qwen2.5-14b", seq: int = 4096, **kw: Any) -> Workload:
    return Workload.model_validate({"mode": "lora", "model": model, "seq_lens": [seq],
                                    "gpus": 1, **kw})


def rates(catalog, gpu: str, w: Workload) -> GpuRates:
    return resolve_rates(catalog.gpu(gpu), w, catalog_gpus=catalog.gpus)


def side(catalog, gpu: str, w: Workload) -> SideProjection:
    return project_side(w, rates(catalog, gpu, w), list(w.seq_lens))


def step(catalog, gpu: str, w: Workload) -> Any:
    return project(w, rates(catalog, gpu, w), as_run(w), np.asarray(w.seq_lens, float))


# --- the adapters ----------------------------------------------------------------------------


@pytest.mark.parametrize(("model", "rank", "targets", "printed"), [
    # PEFT's print_trainable_parameters(), as meta-llama/llama-recipes' LoRA (r 8 on q_proj,
    # v_proj) and Unsloth's notebooks (r 16 on all seven projections) print it
    ("llama-2-7b", 8, ("q_proj", "v_proj"), 4_194_304),
    ("llama-3.1-8b", 16, ("all-linear",), 41_943_040),
])
def test_trainable_weights_are_peft_s(model, rank, targets, printed):
    w = lora(model)
    assert adapters(w.model, rank, targets).trainable == printed


def test_adapters_carry_state_gradients_and_optimizer_traffic(catalog):
    small, big = lora(lora_rank=8), lora(lora_rank=64)
    more = adapters(big.model, 64, big.lora_targets).trainable - adapters(
        small.model, 8, small.lora_targets).trainable
    s = np.asarray([[4096.0]])
    grown = float(memory_training(big, as_run(big), s)[0, 0]
                  - memory_training(small, as_run(small), s)[0, 0])
    # bf16 weights, fp32 gradients (Megatron's), fp32 master and two moments
    assert grown * 2**30 == pytest.approx(more * (2 + 4 + 12), rel=0.01)
    p = step(catalog, "h100-sxm", big)
    assert float(p.times["optimizer"][0, 0]) > 0 and float(p.bytes["optimizer"][0, 0]) > 0


def test_fused_qkv_is_one_adapter():
    w = lora("llama-2-70b")
    fused = adapters(w.model, 16, ("qkv_proj", "o_proj"))
    split = adapters(w.model, 16, ("q_proj", "k_proj", "v_proj", "o_proj"))
    assert fused.modules == 2 and split.modules == 4 and fused.trainable < split.trainable


# --- the frozen base -------------------------------------------------------------------------


def test_a_dequantised_base_costs_hbm_traffic_and_kernels_every_pass(catalog):
    bf16, nf4 = step(catalog, "rtx-4090", lora()), step(catalog, "rtx-4090", lora(
        base_format="nf4"))
    assert float(bf16.parts["dequant"][0, 0]) == 0
    dq = float(nf4.parts["dequant"][0, 0])
    assert dq > 0
    # inside the elementwise bucket, which grows by it (and by nothing else)
    grown = float(nf4.times["elementwise"][0, 0] - bf16.times["elementwise"][0, 0])
    assert grown == pytest.approx(dq, rel=1e-6)
    # a recompute pass dequantises again
    full = step(catalog, "rtx-4090", lora(base_format="nf4", recompute="full"))
    assert float(full.parts["dequant"][0, 0]) == pytest.approx(dq * 3 / 2, rel=1e-6)


def test_an_fp8_base_is_read_as_it_is_by_fp8_gemms(catalog):
    assert float(step(catalog, "h100-sxm", lora(base_format="fp8", precision="fp8"))
                 .parts["dequant"][0, 0]) == 0
    assert float(step(catalog, "h100-sxm", lora(base_format="fp8")).parts["dequant"][0, 0]) > 0


def test_offloaded_frozen_weights_leave_the_gpu_and_cross_the_host_link(catalog):
    s = np.asarray([[4096.0]])
    held, off = lora(), lora(offload_frozen_weights=True)
    assert float(memory_training(off, as_run(off), s)[0, 0]) < float(
        memory_training(held, as_run(held), s)[0, 0]) - 20
    # on an H100 one sequence per micro-step computes in less time than the base takes to
    # stream over PCIe: the rest is exposed, as host time
    p = step(catalog, "h100-sxm", off)
    assert float(p.parts["stream"][0, 0]) > 0
    assert float(p.parts["stream"][0, 0]) <= float(p.times["overhead"][0, 0])


def test_a_paged_optimizer_pages_only_when_it_does_not_fit(catalog):
    s = np.asarray([[4096.0]])
    plain, paged = lora(lora_rank=256), lora(lora_rank=256, optimizer="paged_adamw")
    assert float(memory_training(paged, as_run(paged), s)[0, 0]) < float(
        memory_training(plain, as_run(plain), s)[0, 0])
    # the 14B base fills a B200 nowhere near: the state stays on the GPU, no host time
    assert step(catalog, "b200-sxm", paged).binding["optimizer"][0, 0] != 3
    assert float(step(catalog, "b200-sxm", paged).times["optimizer"][0, 0]) == pytest.approx(
        float(step(catalog, "b200-sxm", plain).times["optimizer"][0, 0]))
    # on a 24 GB card with the base at 4 bits it fits only paged: the state pages each step
    tight = lora(lora_rank=256, optimizer="paged_adamw", base_format="nf4", micro_batch=2)
    loose = lora(lora_rank=256, optimizer="adamw", base_format="nf4", micro_batch=2)
    p_tight, p_loose = step(catalog, "rtx-4090", tight), step(catalog, "rtx-4090", loose)
    assert float(p_tight.times["optimizer"][0, 0]) > 10 * float(p_loose.times["optimizer"][0, 0])


# --- answers ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("data", "words"), [
    ({"mode": "pretrain", "base_format": "nf4"}, "base_format applies to mode = lora"),
    ({"mode": "finetune", "lora_rank": 8}, "lora_rank applies to mode = lora"),
    ({"base_format": "nf4", "precision": "fp8"}, "base_format nf4 is dequantised"),
    ({"lora_targets": "all-linear,q_proj"}, "all-linear already names every layer"),
    ({"lora_targets": ["qkv_proj", "q_proj"]}, "qkv_proj is the fused"),
    ({"lora_targets": "q_proj,q_proj"}, "repeat"),
    ({"lora_targets": "attention"}, "lora_targets"),
    ({"lora_rank": 100_000}, "lora_rank"),
])
def test_lora_answers_are_checked(data, words):
    with pytest.raises(ValidationError, match=words):
        Workload.model_validate({"mode": "lora", "model": "llama-3.1-8b", "seq_lens": [4096],
                                 **data})


def test_targets_read_as_peft_names():
    assert lora(lora_targets="q_proj, v_proj").lora_targets == ("q_proj", "v_proj")


# --- the re-tune and what fits ---------------------------------------------------------------


def test_14b_lora_on_24_gb_fits_only_with_its_base_held_otherwise(catalog):
    plain = side(catalog, "rtx-4090", lora())
    assert not plain.retuned.fits[0] and plain.retuned.layouts[0].base_format == "bf16"
    ways = {(o.base_format, o.offload_frozen_weights) for o in plain.base_options[0]}
    assert ways == {("nf4", False), ("bf16", True)}
    assert not any(o.chosen for o in plain.base_options[0])
    assert "base format bf16 -> nf4" in (plain.fit_change[0] or "") or \
        "frozen-weight offload off -> on" in (plain.fit_change[0] or "")
    allowed = side(catalog, "rtx-4090", lora(allow_quantized_base=True))
    chosen = allowed.retuned.layouts[0]
    assert allowed.retuned.fits[0]
    assert (chosen.base_format, chosen.offload_frozen_weights) != ("bf16", False)
    assert allowed.base_options[0][0].chosen
    qlora = side(catalog, "rtx-4090", lora(base_format="nf4"))
    assert qlora.retuned.fits[0] and qlora.retuned.layouts[0].base_format == "nf4"


def test_the_base_is_changed_only_where_it_must_be(catalog):
    s = side(catalog, "h100-sxm", lora(allow_quantized_base=True))
    assert s.retuned.fits[0] and s.retuned.layouts[0].base_format == "bf16"
    assert not (s.base_options or [()])[0]


def test_an_8b_qlora_at_8k_fits_a_16_gb_card(catalog):
    # a free Colab T4 (16 GB, fp16): Unsloth's and the QLoRA notebooks' card
    assert side(catalog, "t4", lora("llama-3.1-8b", 8192, base_format="nf4",
                                    precision="fp16")).retuned.fits[0]


def test_a_70b_qlora_fits_one_80_gb_card_and_a_full_fine_tune_does_not(catalog):
    assert side(catalog, "a100-sxm", lora("llama-3.1-70b", 4096, base_format="nf4")
                ).retuned.fits[0]
    full = Workload.model_validate({"mode": "finetune", "model": "llama-3.1-70b",
                                    "seq_lens": [4096], "gpus": 1})
    s = side(catalog, "a100-sxm", full)
    assert not s.retuned.fits[0] and s.max_seq_retuned is None
    assert s.base_options is None or not s.base_options[0]  # no base to quantize
