"""The workload probe on the CPU at toy size: structure and consistency, never timings.

Every run here is the real probe (torch model, timed steps, profiler) on a toy shape with
a budget of a second or two; the assertions are about what the record must say whatever
the machine's speed: the shares add up, tokens/s is tokens over the step time, the split
is carved out of the median step, the per-layer arithmetic holds, and the validating
mirror in advisor accepts the record.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import signal
import threading

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from advisor.core.model.probe_record import parse_probe_record
from probes.device import Device
from probes.kernel_split import RULES, classify, split
from probes.kernel_split import Sample as KernelSample
from probes.workload import plan_workload, run_workload
from probes.workload_model import Fp8Format, _Fp8Matmul
from probes.workload_record import WORKLOAD_TOY_NOTE, finish_run, new_run, summarize_phase
from probes.workload_shape import (
    ModelShape,
    ShapeError,
    WorkloadConfig,
    load_shape_file,
    shape_from_mapping,
    toy_shape,
)

CPU = Device("cpu", "test CPU", 1)
LLAMA_8B = ModelShape(hidden=4096, layers=32, heads=32, kv_heads=8, head_dim=128, ffn=14336,
                      vocab=128256, name="llama-3.1-8b")
QWEN_MOE = ModelShape(hidden=2048, layers=48, heads=32, kv_heads=4, head_dim=128, ffn=6144,
                      vocab=151936, experts=128, active_experts=8, expert_ffn=768,
                      name="qwen3-30b-a3b")


def config(**kw) -> WorkloadConfig:
    base = {"shape": LLAMA_8B, "seq_len": 4096, "device": "cpu", "budget_s": 2.0}
    return WorkloadConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def trained() -> tuple[dict, list[dict], list]:
    events: list = []
    checkpoints: list[dict] = []
    record = run_workload(config(budget_s=4.0), progress=events.append,
                          checkpoint=lambda r: checkpoints.append(json.loads(json.dumps(r))))
    return record, checkpoints, events


def shares_add_up(split_: dict) -> None:
    assert math.isclose(split_["attention_share"] + split_["gemm_share"]
                        + split_["other_share"], 1.0, abs_tol=1e-4)


def test_a_toy_training_run_writes_an_honest_consistent_record(trained):
    record, checkpoints, events = trained
    parsed = parse_probe_record(record, "workload run")  # the engine's mirror accepts it
    w = parsed.measured_workload()
    assert w is not None and w is parsed.workload and w.status == "ok"
    assert record["complete"] and not record["interrupted"]
    assert w.toy_sizes and w.device == "cpu" and w.cpu_threads == 1
    assert WORKLOAD_TOY_NOTE in record["notes"] and WORKLOAD_TOY_NOTE in w.notes
    assert w.shape.hidden == 4096 and w.shape_run.hidden == 128  # asked, and what was built
    assert w.shape_run.heads // w.shape_run.kv_heads == 4  # the GQA ratio survives shrinking
    assert (w.seq_len, w.seq_len_run, w.micro_batch_run) == (4096, 256, 1)
    assert w.layers_run == [1, 4] and w.layers_total == 32
    assert w.precision == "bf16" and w.attention_kernel == "sdpa" and w.mode == "train"
    assert w.attention_ops and all("scaled_dot_product" in op for op in w.attention_ops)
    assert w.classification == RULES
    assert [s.name for s in parsed.stages] == ["workload 1 layer", "workload 4 layers"]
    assert parsed.stages_finished == ["workload 1 layer", "workload 4 layers"]
    phase = w.primary
    assert phase is not None and phase.phase == "train" and phase.tokens_per_step == 256
    for run in phase.runs:
        assert run.status == "ok" and run.steps_timed == len(run.steps_ms) >= 1
        assert run.step_ms_median is not None and run.tokens_per_s is not None
        assert math.isclose(run.tokens_per_s, 256 / (run.step_ms_median / 1e3), rel_tol=1e-4)
        assert run.step_ms_min <= run.step_ms_median <= run.step_ms_max  # type: ignore[operator]
        assert run.split is not None and run.split.profiled_steps >= 1
        shares_add_up(run.split.model_dump())
        parts = run.split.attention_ms + run.split.gemm_ms + run.split.other_ms
        assert math.isclose(parts, run.step_ms_median, rel_tol=1e-3)  # carved from the step
        assert run.split.attention_share > 0 and run.split.gemm_share > 0
        assert run.peak_memory_gib and run.memory_source
    shallow, deep = phase.runs
    assert deep.peak_memory_gib > shallow.peak_memory_gib  # type: ignore[operator]
    if phase.per_layer is not None:  # resolved unless noise swamped one layer
        assert phase.full_model is not None and phase.full_model.extrapolated
        assert phase.outside_layers is not None
        assert math.isclose(phase.full_model.step_ms, phase.outside_layers.step_ms
                            + 32 * phase.per_layer.step_ms, rel_tol=1e-3)
    else:
        assert phase.reason
    # a checkpoint after each depth, each one a consistent record on its own
    assert len(checkpoints) == 2
    first = parse_probe_record(checkpoints[0], "checkpoint").workload
    assert first is not None and [len(p.runs) for p in first.phases] == [1]
    assert events[0].stage == "plan" and "toy sizes" in events[0].message
    assert "layers 1 and 4 of 32" in events[0].message and "about" in events[0].message
    assert events[-1].stage == "done"


def test_the_record_survives_json_and_the_summary_reads_it(trained):
    from probes.cli import format_summary

    record = json.loads(json.dumps(trained[0]))
    assert parse_probe_record(record, "r").workload == parse_probe_record(trained[0],
                                                                          "r").workload
    text = format_summary(record)
    assert text.startswith(f"NOTE: {WORKLOAD_TOY_NOTE}")
    assert "workload llama-3.1-8b train at toy size (not GPU figures): ok" in text
    assert "train 4 layers:" in text and "tok/s" in text and "attention" in text


@pytest.mark.parametrize(
    ("kw", "phases"),
    [
        ({"mode": "serve", "osl": 64, "micro_batch": 3}, ["prefill", "decode"]),
        ({"shape": QWEN_MOE, "mode": "lora", "lora_rank": 4}, ["train"]),
        ({"shape": dataclasses.replace(LLAMA_8B, mlp="gelu", tie_embeddings=True),
          "precision": "fp16", "recompute": "full"}, ["train"]),
    ],
    ids=["serve", "moe-lora", "gelu-fp16-recompute"],
)
def test_every_mode_runs_and_validates(kw, phases):
    record = run_workload(config(budget_s=1.0, **kw))
    w = parse_probe_record(record, "run").measured_workload()
    assert w is not None and [p.phase for p in w.phases] == phases
    for p in w.phases:
        assert p.runs and all(r.step_ms_median for r in p.runs)
        tokens = w.micro_batch_run if p.phase == "decode" else w.micro_batch_run * w.seq_len_run
        assert p.tokens_per_step == tokens
    if "osl" in kw:
        assert w.decode_context == 256 + 64 // 2 and w.micro_batch_run == 2
        assert w.optimizer is None
    if kw.get("mode") == "lora":
        assert w.lora_rank == 4 and w.shape_run.experts == 8 and w.shape_run.active_experts == 8
        assert any("per-expert loop" in n for n in w.notes)
    if kw.get("precision") == "fp16":
        assert w.precision == "fp16" and w.recompute == "full"
        assert w.shape_run.mlp == "gelu" and w.shape_run.tie_embeddings


def test_stop_flag_keeps_the_measured_depth_and_says_so():
    stop = threading.Event()

    def progress(event):
        if event.stage == "workload 4 layers" and "warm-up step 1" in event.message:
            stop.set()

    record = run_workload(config(), progress=progress, stop=stop)
    assert record["interrupted"] and not record["complete"]
    assert [s["status"] for s in record["stages"]] == ["done", "stopped"]
    w = parse_probe_record(record, "partial").workload
    assert w is not None and w.status == "partial"
    first, second = w.phases[0].runs
    assert first.status == "ok" and first.step_ms_median
    assert second.status == "stopped" and "stopped early" in (second.reason or "")
    assert second.warmup_steps == 1 and second.steps_timed == 0
    assert w.phases[0].per_layer is None and w.phases[0].reason


def test_a_second_ctrl_c_keeps_the_steps_already_timed():
    sent = []

    def progress(event):
        if "2 steps timed" in event.message and not sent:
            sent.append(1)
            os.kill(os.getpid(), signal.SIGINT)  # asks to stop after this step
            os.kill(os.getpid(), signal.SIGINT)  # stops at once

    record = run_workload(config(budget_s=60.0), progress=progress)  # cut short anyway
    assert sent and record["interrupted"] and not record["complete"]
    assert [s["status"] for s in record["stages"]] == ["stopped", "not run"]
    w = parse_probe_record(record, "partial").workload
    assert w is not None and w.status == "partial"
    [run] = w.phases[0].runs
    assert run.status == "stopped" and run.steps_timed == 2 and run.step_ms_median
    assert run.split is None and "not profiled" in (run.reason or "")


def test_the_cpu_plan_is_toy_sized_and_says_what_it_cannot_run():
    plan = plan_workload(config(precision="fp8"), CPU)
    assert plan.toy and plan.depths == (1, 4) and plan.precision == "bf16"
    assert any(n.startswith("fp8 skipped: no fp8 matrix units on CPU") for n in plan.notes)
    plan = plan_workload(config(precision="nvfp4", recompute="selective", depth=1), CPU)
    assert plan.depths == (1,) and not plan.recompute
    assert any("nvfp4 skipped" in n for n in plan.notes)
    assert any("recompute selective" in n for n in plan.notes)
    small = dataclasses.replace(LLAMA_8B, layers=2)
    assert plan_workload(config(shape=small), CPU).depths == (1, 2)
    assert plan_workload(config(mode="pretrain"), CPU).config.mode == "train"
    serve = plan_workload(config(mode="serve", osl=1000, seq_len=100), CPU)
    assert serve.decode_context == 100 + 100 // 2  # osl shrunk with the prompt on a CPU
    assert serve.estimate_s() > serve.budget_s  # overheads on top of the steps


def test_the_gpu_plan_fits_its_memory_and_budget():
    h200 = Device("cuda", "NVIDIA H200", 1)
    plan = plan_workload(config(budget_s=None, seq_len=8192), h200,
                         {"capability": "9.0", "gcn_arch": None})
    assert not plan.toy and plan.shape_run == LLAMA_8B and plan.seq_len == 8192
    assert plan.depths == (1, 4)  # no GPU memory to ask about here: the default depth
    assert plan.estimate_s() <= 60
    fp8 = plan_workload(config(precision="fp8"), h200, {"capability": "9.0"})
    assert fp8.precision == "fp8" and fp8.fp8_dtype == "float8_e4m3fn"
    old = plan_workload(config(precision="fp8"), h200, {"capability": "8.0"})
    assert old.precision == "bf16" and any("8.9 or newer" in n for n in old.notes)
    odd = plan_workload(config(precision="fp8", seq_len=1000), h200, {"capability": "9.0"})
    assert odd.precision == "bf16" and any("multiple of 16" in n for n in odd.notes)


@pytest.mark.parametrize(
    ("name", "ancestors", "bucket"),
    [
        ("flash_fwd_kernel<Flash_fwd_kernel_traits<128>>", ("aten::_flash_attention_forward",),
         "attention"),
        ("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm>", ("aten::mm",), "gemm"),
        ("sm90_xmma_gemm_bf16bf16_bf16f32", ("aten::addmm", "aten::linear"), "gemm"),
        ("nvjet_tst_128x256_64x4", (), "gemm"),
        ("cudnn_generated_fort_native_sdpa_sm90_flash_fprop", (), "attention"),
        ("fmha_cutlassB_bf16_aligned_64x64_k128_sm80",
         ("ScaledDotProductEfficientAttentionBackward0",), "attention"),
        # GEMMs inside attention count as attention (the math kernel, flash's own GEMMs)
        ("ampere_bf16_s16816gemm", ("aten::bmm", "aten::_scaled_dot_product_attention_math"),
         "attention"),
        ("aten::bmm", ("workload.attention",), "attention"),
        ("void at::native::vectorized_elementwise_kernel<4, silu>", ("aten::silu",), "other"),
        ("Memcpy DtoD (Device -> Device)", (), "other"),
        ("aten::mm", ("AddmmBackward0",), "gemm"),
        ("aten::_fused_adamw_", ("Optimizer.step#AdamW.step",), "other"),
        ("aten::_scaled_mm", (), "gemm"),
    ],
)
def test_kernel_classification_rules(name, ancestors, bucket):
    assert classify(name, ancestors) == bucket


def test_the_split_sums_and_names_the_attention_ops():
    parts = split([
        KernelSample("flash_fwd", 30.0, ("aten::_flash_attention_forward",
                                         "aten::scaled_dot_product_attention")),
        KernelSample("gemm", 50.0, ("aten::mm",)),
        KernelSample("elementwise", 20.0, ("aten::mul",)),
    ])
    assert parts.us == {"attention": 30.0, "gemm": 50.0, "other": 20.0}
    assert parts.shares() == {"attention": 0.3, "gemm": 0.5, "other": 0.2}
    assert parts.attention_ops == ["aten::_flash_attention_forward"]  # not the dispatcher
    assert split([]).shares() is None


def run(layers: int, step: float, split_ms: tuple[float, float, float], memory: float) -> dict:
    entry = new_run(layers)
    entry["steps_ms"] = [step * 0.9, step, step * 1.3]
    entry["status"] = "ok"
    entry["peak_memory_gib"] = memory
    entry["split_us"] = {"attention": split_ms[0] * 1e3, "gemm": split_ms[1] * 1e3,
                         "other": split_ms[2] * 1e3, "steps": 2, "samples": 10}
    finish_run(entry, 8192, stopped=False)
    return entry


def test_finish_run_carves_the_split_out_of_the_median_step():
    entry = run(2, 100.0, (10.0, 60.0, 30.0), 20.0)  # kernel time 100 ms over 2 steps
    assert entry["step_ms_median"] == 100.0 and entry["spread_pct"] == 40.0
    assert entry["tokens_per_s"] == 81920.0
    assert entry["split"]["attention_share"] == 0.1 and entry["split"]["gemm_ms"] == 60.0
    assert entry["split"]["kernel_ms_per_step"] == 50.0 and entry["split"]["busy_share"] == 0.5
    assert "split_us" not in entry  # the raw sums stay out of the record
    again = dict(entry)
    finish_run(again, 8192, stopped=True)  # idempotent; an ok run stays ok
    assert again == entry


def test_per_layer_figures_and_the_whole_model_extrapolation():
    phase = {"phase": "train", "tokens_per_step": 8192,
             "runs": [run(1, 30.0, (2.0, 18.0, 10.0), 20.0), run(4, 90.0, (8.0, 60.0, 22.0), 29.0)]}
    summarize_phase(phase, 32)
    assert phase["per_layer"] == {"step_ms": 20.0, "peak_memory_gib": 3.0, "attention_ms": 2.0,
                                  "gemm_ms": 14.0, "other_ms": 4.0}
    assert phase["outside_layers"] == {"step_ms": 10.0, "peak_memory_gib": 17.0,
                                       "attention_ms": 0.0, "gemm_ms": 4.0, "other_ms": 6.0}
    whole = phase["full_model"]
    assert whole["extrapolated"] and whole["layers"] == 32 and whole["step_ms"] == 650.0
    assert whole["peak_memory_gib"] == 113.0
    assert math.isclose(whole["tokens_per_s"], 8192 / 0.65, rel_tol=1e-6)
    assert (whole["attention_share"], whole["gemm_share"], whole["other_share"]) == (
        round(64 / 650, 5), round(452 / 650, 5), round(134 / 650, 5))
    assert phase["reason"] is None


def test_noise_is_said_not_hidden():
    # outside-the-layers attention a hair below zero: shown as 0, and said
    phase = {"phase": "train", "tokens_per_step": 1,
             "runs": [run(1, 30.0, (1.9, 18.0, 10.1), 1.0), run(4, 90.0, (8.0, 60.0, 22.0), 2.0)]}
    summarize_phase(phase, 32)
    assert phase["outside_layers"]["attention_ms"] == 0.0
    assert "attention_ms" in phase["reason"] and "noise" in phase["reason"]
    # a bucket that shrank with depth: the buckets are left out, the step time is kept
    phase["runs"] = [run(1, 30.0, (2.0, 18.0, 10.0), 1.0), run(4, 90.0, (8.0, 60.0, 8.0), 2.0)]
    summarize_phase(phase, 32)
    assert phase["per_layer"]["other_ms"] is None and phase["per_layer"]["step_ms"] == 20.0
    assert phase["full_model"]["attention_share"] is None and "other_ms" in phase["reason"]
    # the deeper run no slower: no per-layer figure at all
    phase["runs"] = [run(1, 30.0, (2.0, 18.0, 10.0), 1.0), run(4, 29.0, (8.0, 11.0, 10.0), 2.0)]
    summarize_phase(phase, 32)
    assert phase["per_layer"] is None and phase["full_model"] is None
    assert "not slower" in phase["reason"]


def test_a_whole_model_that_ran_is_measured_not_extrapolated():
    phase = {"phase": "decode", "tokens_per_step": 4,
             "runs": [run(1, 3.0, (1.0, 1.0, 1.0), 1.0), run(2, 5.0, (2.0, 2.0, 1.0), 2.0)]}
    summarize_phase(phase, 2)
    whole = phase["full_model"]
    assert not whole["extrapolated"] and whole["step_ms"] == 5.0 and whole["layers"] == 2
    assert whole["attention_share"] == 0.4 and phase["per_layer"]["step_ms"] == 2.0


def test_fp8_matmul_forward_and_backward_follow_the_bf16_ones():
    """torch._scaled_mm runs (emulated) on a CPU: the operand layouts and scales of the fp8
    path are checked here, its speed only on a GPU."""
    def off(a: torch.Tensor, b: torch.Tensor) -> float:  # fp8 keeps 3 (e4m3) or 2 (e5m2)
        return float((a.detach().float() - b).norm() / b.norm())  # mantissa bits: a few % off

    torch.manual_seed(0)
    x = torch.randn(32, 64, requires_grad=True)
    w = torch.randn(48, 64, requires_grad=True)
    y = _Fp8Matmul.apply(x, w, Fp8Format("float8_e4m3fn"))
    assert y.shape == (32, 48) and y.dtype == torch.bfloat16
    assert off(y, x.detach() @ w.detach().t()) < 0.08  # a swapped or unscaled operand: ~1
    grad = torch.randn(32, 48)
    y.backward(grad)
    assert x.grad is not None and w.grad is not None
    assert off(x.grad, grad @ w.detach()) < 0.15
    assert off(w.grad, grad.t() @ x.detach()) < 0.15
    frozen = torch.randn(48, 64)  # a LoRA base weight: no gradient asked, none computed
    x.grad = None
    _Fp8Matmul.apply(x, frozen, Fp8Format("float8_e4m3fn")).backward(grad)
    assert x.grad is not None and off(x.grad, grad @ frozen) < 0.15


@given(st.builds(
    ModelShape,
    hidden=st.integers(1, 2**20), layers=st.integers(1, 4096), heads=st.just(8),
    kv_heads=st.sampled_from([1, 2, 4, 8]), head_dim=st.integers(1, 2**20),
    ffn=st.integers(1, 2**20), vocab=st.integers(1, 2**24),
    mlp=st.sampled_from(["swiglu", "gelu"]), tie_embeddings=st.booleans(),
    name=st.text(st.characters(codec="utf-8", categories=("L", "N", "P")), max_size=40),
))
def test_a_shape_round_trips_through_a_shape_file_form(shape):
    assert shape_from_mapping(json.loads(json.dumps(shape.to_dict())), "x") == shape


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"hidden": 0}, "field 'hidden', value 0: must be 1 to"),
        ({"heads": 7}, "field 'kv_heads', value 8: must divide heads (7)"),
        ({"vocab": 1.5}, "field 'vocab', value 1.5: must be an integer"),
        ({"mlp": "relu"}, "field 'mlp', value 'relu': must be one of swiglu, gelu"),
        ({"experts": 8}, "field 'active_experts', value 0: must be 1 to experts (8)"),
        ({"active_experts": 2}, "field 'active_experts', value 2: needs experts > 0"),
        ({"colour": "red"}, "field 'colour', value 'red': not a shape field"),
        ({"layers": None}, "field 'layers', value None: is required"),
        ({"tie_embeddings": "yes"}, "field 'tie_embeddings', value 'yes': must be true or false"),
    ],
)
def test_a_bad_shape_is_one_line_naming_the_field_and_value(data, message):
    good = LLAMA_8B.to_dict()
    with pytest.raises(ShapeError) as info:
        shape_from_mapping({**good, **data}, "shape.toml")
    text = str(info.value)
    assert text.startswith("shape.toml: ") and message in text and "\n" not in text


def test_shape_files_in_toml_and_json(tmp_path):
    toml = tmp_path / "m.toml"
    toml.write_text('name = "m"\nhidden = 256\nlayers = 4\nheads = 4\nkv_heads = 2\n'
                    'ffn = 512\nvocab = 1000\n')
    shape = load_shape_file(str(toml))
    assert shape.head_dim == 64 and shape.kv_heads == 2 and shape.mlp == "swiglu"
    js = tmp_path / "m.json"
    js.write_text(json.dumps(shape.to_dict()))
    assert load_shape_file(str(js)) == shape
    for text, message in (("{", "not valid JSON"), ("[1]", "a table of dimensions"),
                          ('{"hidden": NaN}', "not valid JSON")):
        js.write_text(text)
        with pytest.raises(ShapeError, match=message):
            load_shape_file(str(js))
    with pytest.raises(ShapeError, match="cannot read"):
        load_shape_file(str(tmp_path / "missing.json"))


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"mode": "serve"}, "field 'osl', value None: is required"),
        ({"osl": 5}, "field 'osl', value 5: applies to mode serve only"),
        ({"mode": "decode", "recompute": "full"}, "is a training option"),
        ({"seq_len": 0}, "field 'seq_len', value 0"),
        ({"attention": "fa9"}, "field 'attention', value 'fa9'"),
        ({"depth": 33}, "field 'depth', value 33: must be 1 to 32"),
        ({"budget_s": float("nan")}, "field 'budget_s'"),
    ],
)
def test_bad_run_settings_fail_before_anything_runs(kw, message):
    with pytest.raises(ShapeError, match=message):
        config(**kw).checked()


def test_toy_shapes_keep_the_structure():
    toy = toy_shape(QWEN_MOE)
    assert (toy.heads, toy.kv_heads, toy.head_dim, toy.hidden) == (4, 1, 32, 128)
    assert (toy.experts, toy.active_experts) == (8, 8) and toy.expert_ffn == 48
    assert toy.ffn == round(6144 * 128 / 2048 / 8) * 8 and toy.vocab == 2048
    mha = toy_shape(dataclasses.replace(LLAMA_8B, kv_heads=32))
    assert mha.heads == mha.kv_heads == 4
