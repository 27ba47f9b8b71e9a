"""The LoRA/QLoRA memory model against published fit tables, within 10%.

Each figure is a measurement someone published for a stated recipe; the model is given the
same recipe (model, rank, targets, base format, optimizer, micro-batch, sequence length,
recompute) and its peak memory must land within 10% of the figure. Where a table gives the
longest sequence a card holds, the model's memory at that length is compared to the card's
usable memory. Left out, and why:

- Unsloth's "absolute minimum" VRAM table (unsloth.ai/docs, Unsloth Requirements: 8B QLoRA
  6 GB) is below the published 4-bit checkpoint of Llama-3.1-8B itself (5.7 GB on the hub),
  with no sequence length or optimizer: a floor, not a measurement.
- Unsloth's Hugging Face + FA2 Llama-3.1-8B row (28,000 tokens on 80 GB): at that length
  three quarters of the memory is the unfused loss's logits, so it measures transformers'
  loss implementation of the day, not QLoRA's overheads; the model is 15% under it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from advisor.core import Workload
from advisor.core.projection.engine import memory_training, usable_gib
from advisor.core.projection.layout import as_run

LLAMA_FACTORY = ("https://github.com/hiyouga/LLaMA-Factory/wiki/Performance-comparison "
                 "(edited 2024-04-15): LLaMA2-7B, 4-bit, LoRA rank 8 on all modules, batch 1, "
                 "one A100 40GB, FlashAttention2 row")
UNSLOTH_33 = ("https://unsloth.ai/blog/llama3-3: Llama 3.3 (70B) Instruct on an 80GB A100, "
              "4-bit QLoRA on q, k, v, o, gate, up and down with rank 32, batch size 1")
QLORA = ("https://arxiv.org/abs/2305.14314 (abstract: 'finetune a 65B parameter model on a "
         "single 48GB GPU'); the recipe of github.com/artidoro/qlora scripts/"
         "finetune_guanaco_65b.sh: r 64 on all linear layers, double quant, nf4, bf16, "
         "gradient checkpointing, 4 x (16 + 512) tokens, qlora.py's paged_adamw_32bit")
LLAMA_65B = {"name": "llama-65b", "layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 64,
             "ffn": 22016, "vocab": 32000}
"""LLaMA-65B's published shape (Touvron et al. 2023, Table 2)."""


def gib(model: Any, seq: int, **recipe: Any) -> float:
    """Peak GiB of one GPU running a LoRA of `model` as `recipe` says (full recompute,
    gradient checkpointing as every table here ran it)."""
    w = Workload.model_validate({"mode": "lora", "model": model, "seq_lens": [seq], "gpus": 1,
                                 "recompute": "full", **recipe})
    return float(memory_training(w, as_run(w), np.asarray([[float(seq)]]))[0, 0])


@pytest.mark.parametrize(("seq", "published_gb"), [
    (1024, 6), (2048, 7), (4096, 9), (8192, 12), (16384, 19), (32768, 32)])
def test_llama_factory_qlora_7b_by_length(seq, published_gb):
    model = gib("llama-2-7b", seq, base_format="nf4", lora_rank=8, optimizer="adamw")
    assert model == pytest.approx(published_gb, rel=0.10), LLAMA_FACTORY


def test_unsloth_70b_qlora_longest_context_on_80gb_hugging_face():
    # Hugging Face + FA2 fits 6,916 tokens and no more: its peak there is the usable memory
    # (the optimizer is not stated: the Trainer's default AdamW)
    model = gib("llama-3.3-70b", 6916, base_format="nf4", lora_rank=32, optimizer="adamw")
    assert model == pytest.approx(usable_gib(80), rel=0.10), UNSLOTH_33


def test_unsloth_70b_qlora_fits_in_41_gb():
    # "Llama 3.3 (70B) finetuning fits in 41GB": Unsloth's fused loss, 8-bit AdamW (its
    # notebooks'), a short sequence (the blog states none)
    model = gib("llama-3.3-70b", 512, base_format="nf4", lora_rank=32, optimizer="adamw8bit",
                fused_kernels=True)
    assert model == pytest.approx(41, rel=0.10), UNSLOTH_33


def test_qlora_65b_fits_one_48_gb_gpu_with_its_paged_optimizer():
    recipe = {"base_format": "nf4", "lora_rank": 64, "micro_batch": 4}
    paged = gib(LLAMA_65B, 528, optimizer="paged_adamw", **recipe)
    unpaged = gib(LLAMA_65B, 528, optimizer="adamw", **recipe)
    assert paged < usable_gib(48), QLORA
    # Figure 6's caption: some models "do not quite fit" without paging
    assert unpaged > usable_gib(48) > paged


def test_double_quantization_saves_its_published_bits():
    # 0.5 bits per weight of fp32 absmax without it, 0.127 with it (QLoRA, section 3)
    on = gib("llama-2-7b", 1024, base_format="nf4")
    off = gib("llama-2-7b", 1024, base_format="nf4", double_quant=False)
    w = Workload.model_validate({"model": "llama-2-7b", "seq_lens": [1024]})
    linear = w.model.params_total - 2 * w.model.vocab * w.model.hidden
    assert (off - on) * 2**30 == pytest.approx(linear * (0.5 - 0.127) / 8, rel=0.01)
