"""Fine-tuning on the card you own (issue 28): a 14B LoRA at 4k on one 24 GB card, through the
CLI as a user types it. With a 4-bit base it fits, QLoRA and its dequantisation cost are named
and every target is projected; with the 16-bit base it does not, and what would is named."""

from __future__ import annotations

import json

LORA_14B = ("compare", "--current", "rtx-4090@1", "--target", "h100-sxm@1", "--target",
            "b200-sxm@1", "--model", "qwen2.5-14b", "--mode", "lora", "--seq-len", "4k")
ZERO3 = ("--framework", "deepspeed", "--zero", "3", "--offload-optimizer", "--checkpointing")


def test_a_4_bit_base_fits_names_qlora_and_projects_every_target(advisor_cli) -> None:
    r = advisor_cli(*LORA_14B, "--base-format", "nf4")
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert "rtx-4090 holds a 4-bit NF4 (QLoRA) base, as given: dequantising it takes" in text
    assert "HBM traffic and kernels" in text and "accuracy risk low" in text
    assert "cannot run" not in text
    out = json.loads(advisor_cli(*LORA_14B, "--base-format", "nf4", "--json").stdout)
    assert out["current"]["fits"] and out["current"]["frozen_base"]["dequant_s"] > 0
    assert all(t["tokens_per_s_per_gpu"] and t["speedup"] for t in out["targets"])


def test_a_16_bit_base_does_not_fit_and_names_what_would(advisor_cli) -> None:
    for extra in ((), ZERO3):  # the reproduction, ZeRO-3 and offload included
        r = advisor_cli(*LORA_14B, *extra)
        assert r.returncode == 0, r.stderr
        text = " ".join(r.stdout.split())
        assert ("rtx-4090 does not fit 4,096 tokens with a 16-bit base in any layout; it does "
                "with") in text, extra
        assert "a 4-bit NF4 (QLoRA) base (--base-format nf4)" in text, extra
        assert "(--offload-frozen-weights)" in text and "--allow-quantized-base" in text
        out = json.loads(advisor_cli(*LORA_14B, *extra, "--json").stdout)
        assert not out["current"]["fits"]
        assert {o["base_format"] for o in out["current"]["base_options"]} >= {"nf4"}


def test_allowed_the_re_tune_holds_the_base_otherwise_and_says_so(advisor_cli) -> None:
    out = json.loads(advisor_cli(*LORA_14B, "--allow-quantized-base", "--json").stdout)
    base = out["current"]["frozen_base"]
    assert out["current"]["fits"] and base["chosen"]
    assert base["base_format"] == "nf4" or base["offload_frozen_weights"]
    assert all(t["speedup"] for t in out["targets"])


def test_lora_flags_refuse_bad_input_in_one_line(advisor_cli) -> None:
    for bad, words in ((("--lora-targets", "attention"), "--lora-targets"),
                       (("--base-format", "nf4", "--precision", "fp8"), "base_format nf4"),
                       (("--lora-rank", "0"), "--lora-rank")):
        r = advisor_cli(*LORA_14B, *bad)
        assert r.returncode == 2, (bad, r.stderr)
        assert r.stderr.count("\n") == 1 and words in r.stderr, r.stderr
    r = advisor_cli(*LORA_14B[:-4], "--seq-len", "4k", "--base-format", "nf4")
    assert r.returncode == 2 and "base_format applies to mode = lora" in r.stderr
