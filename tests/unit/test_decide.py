"""decide(): gates, evidence, sweep, costs and verdicts, end to end on the shipped catalog."""

from __future__ import annotations

import json
from typing import Any

import pytest

from advisor.core.comparison import Decision, decide
from advisor.core.errors import InputError
from advisor.core.model.answers import Answers, parse_answers
from advisor.core.model.probe_record import ProbeRecord, parse_probe_record
from advisor.core.model.stack import Stack
from advisor.present.verdict import flip_text, reason_text


def answers(**kw: Any) -> Answers:
    base: dict[str, Any] = {
        "current": "h200-sxm", "targets": ["b200-sxm"],
        "workload": {"model": "llama-3.1-8b", "seq_lens": [8192, 32768], "zero_stage": 3,
                     "checkpointing": True, "gpus": 8, "token_budget": 1e10},
    }
    return parse_answers(base | kw)


def probe(gpu: str, mamf: float, torch: str = "2.13.0+cu130") -> ProbeRecord:
    return parse_probe_record({
        "schema": "advisor.probe-record", "version": 1, "complete": True, "interrupted": False,
        "stamp": {"hostname": f"{gpu}-box", "date": "2026-09-01T00:00:00Z",
                  "device": {"kind": "cuda", "name": gpu, "count": 8, "catalog_id": gpu},
                  "versions": {"python": "3.12", "torch": torch}},
        "matmul": [{"status": "ok", "dtype": "bf16", "mode": "quick", "mamf_tflops": mamf,
                    "median_tflops": mamf}],
    }, "test")


def test_decision_serialises_and_carries_its_answers(catalog) -> None:
    d = decide(answers(prices={"b200-sxm": 6.0}), catalog)
    data = d.model_dump(mode="json")
    json.dumps(data)
    again = Decision.model_validate(data)
    assert again.answers == d.answers
    assert d.electricity_source == "default" and d.primary_seq_len == 8192


def test_every_projection_states_its_evidence(catalog) -> None:
    d = decide(answers(prices={"b200-sxm": 6.0}), catalog)
    for r in (d.current, *d.targets):
        a = r.assumptions
        assert a is not None
        assert a.rate_sources["matmul bf16"] == "catalog-measured"
        assert a.rate_sources["attention"] == "published-kernel-curve"
        assert 0 < a.gemm_efficiency <= 1 and 0 < a.overlap <= 1
    assert d.current.assumptions.price.source == "default"  # type: ignore[union-attr]
    assert d.targets[0].assumptions.price.source == "user"  # type: ignore[union-attr]
    assert d.targets[0].assumptions.attention_kernel == "fa4"  # type: ignore[union-attr]


def test_sweep_points_have_speedups_buckets_and_bands(catalog) -> None:
    d = decide(answers(), catalog)
    cur, tgt = d.current.point(32768), d.targets[0].point(32768)
    assert cur.speedup == 1.0 and cur.speedup_low == 1.0
    assert tgt.speedup_low < tgt.speedup < tgt.speedup_high  # type: ignore[operator]
    assert tgt.tokens_per_s_cluster == pytest.approx(tgt.tokens_per_s_per_gpu * 8)  # type: ignore[operator]
    assert tgt.speedup == pytest.approx(tgt.tokens_per_s_per_gpu / cur.tokens_per_s_per_gpu)  # type: ignore[operator]
    assert set(tgt.bucket_seconds) == {"dense", "attention", "elementwise", "optimizer",
                                       "communication", "overhead"}
    assert tgt.bucket_speedup["attention"] > 1.5 and tgt.binding == "compute"
    assert tgt.usd_per_mtok is not None and 0 < tgt.mfu < 1  # type: ignore[operator]


def test_costs_break_even_and_buy_back(catalog) -> None:
    d = decide(answers(prices={"h200-sxm": 4.0, "b200-sxm": 6.0}), catalog)
    t = d.targets[0]
    assert t.job is not None and t.job.usd is not None and t.job.energy_kwh
    speeds = [p.speedup for p in t.sweep if p.speedup]
    geo = (speeds[0] * speeds[1]) ** 0.5
    assert t.break_even_usd_per_hour == pytest.approx(4.0 * geo)
    assert t.buy_back is not None and t.buy_back.gpus is not None and t.buy_back.gpus > 8
    assert t.verdict is not None and t.verdict.kind == "upgrade"


def test_an_incapable_target_is_blocked(catalog) -> None:
    a = answers(current="h100-sxm", targets=["a100-sxm"],
                workload={"model": "llama-3.1-8b", "seq_lens": [4096], "precision": "fp8",
                          "zero_stage": 3, "gpus": 8})
    v = decide(a, catalog).targets[0].verdict
    assert v is not None and v.kind == "blocked-by-gate" and "fp8" in (v.headline.cause or "")


def test_a_format_only_the_target_has_is_capability(catalog) -> None:
    a = answers(current="h100-sxm", targets=["b200-sxm"],
                workload={"model": "llama-3.1-8b", "seq_lens": [4096], "precision": "nvfp4",
                          "mode": "decode", "gpus": 1})
    d = decide(a, catalog)
    assert not d.current.dtype_gate.passed
    assert d.targets[0].verdict.kind == "capability"  # type: ignore[union-attr]


def test_out_of_memory_everywhere_on_the_current_gpu_is_capability(catalog) -> None:
    a = answers(current="h100-sxm", targets=["b200-sxm"],
                workload={"model": "llama-3.1-70b", "seq_lens": [2048], "mode": "decode",
                          "gpus": 1})
    d = decide(a, catalog)
    assert d.current.memory.max_seq_len is None
    assert d.current.point(2048).binding == "capacity"
    assert d.targets[0].verdict.kind == "capability"  # type: ignore[union-attr]


def test_software_gate_blocks_with_the_fix_and_the_outcome(catalog) -> None:
    old = Stack(source="declared", packages={"torch": "2.3.0+cu121"})
    v = decide(answers(stack=old, prices={"b200-sxm": 6.0}), catalog).targets[0].verdict
    assert v is not None and v.kind == "blocked-by-gate"
    assert "upgrade torch" in flip_text(v.flips[0], "")
    assert v.flips[0].then is not None and v.flips[0].then[0].startswith("upgrade")


def test_beta_kernels_are_a_reason(catalog) -> None:
    beta = Stack(source="declared", packages={"torch": "2.13.0+cu130", "flash-attn-4": "4.0.0b22"})
    v = decide(answers(stack=beta), catalog).targets[0].verdict
    assert v is not None
    assert any(r.kind == "software" and "beta" in reason_text(r) for r in v.reasons)


def test_a_catalog_gap_is_reported_not_raised(catalog) -> None:
    d = decide(answers(targets=["b200-sxm", "rtx-6000-ada"]), catalog)
    gap = d.targets[1]
    assert not gap.projectable and gap.verdict.kind == "blocked-by-gate"  # type: ignore[union-attr]
    assert "catalog gap" in (gap.verdict.headline.cause or "")  # type: ignore[union-attr]


def test_probes_take_precedence_and_stack_drift_is_flagged(catalog) -> None:
    probes = {"h200-sxm": probe("h200-sxm", 700.0, "2.12.0+cu130"),
              "b200-sxm": probe("b200-sxm", 1700.0)}
    d = decide(answers(), catalog, probes)
    assert d.current.assumptions.rate_sources["matmul bf16"] == "probe"  # type: ignore[union-attr]
    plain = decide(answers(), catalog)
    assert d.targets[0].point(8192).speedup > plain.targets[0].point(8192).speedup  # type: ignore[operator]
    v = d.targets[0].verdict
    assert v is not None and any("different stacks" in reason_text(r) for r in v.reasons)


def test_power_cap_is_enforced_in_the_reasons(catalog) -> None:
    v = decide(answers(power_cap_kw=4.0), catalog).targets[0].verdict
    assert v is not None
    assert any(r.kind == "power" and "4 kW cap" in reason_text(r) for r in v.reasons)


def test_the_current_gpu_must_be_projectable(catalog) -> None:
    with pytest.raises(InputError, match="cannot project the current GPU"):
        decide(answers(current="rtx-6000-ada"), catalog)


def test_unknown_gpu_is_one_input_error(catalog) -> None:
    with pytest.raises(InputError, match="unknown GPU"):
        decide(answers(targets=["z9000"]), catalog)


def test_a_beta_kernel_widens_the_band(catalog) -> None:
    # no stack: FA4 is assumed with no gate; a declared FA4 beta is the same kernel, less sure
    beta = Stack(source="declared", packages={"torch": "2.13.0+cu130", "flash-attn-3": "3.0.0",
                                              "flash-attn-4": "4.0.0b22"})
    plain = decide(answers(), catalog).targets[0].point(32768)
    wide = decide(answers(stack=beta), catalog).targets[0].point(32768)
    assert wide.speedup == pytest.approx(plain.speedup)  # type: ignore[arg-type]
    assert wide.speedup_high - wide.speedup_low > plain.speedup_high - plain.speedup_low  # type: ignore[operator]


def test_buckets_count_flops_and_bytes_per_token(catalog) -> None:
    p = decide(answers(workload={"model": "llama-3.1-8b", "seq_lens": [8192], "zero_stage": 2,
                                 "gpus": 8}), catalog).current.point(8192)
    n = 7.504658e9  # dense_N: 6N FLOPs per trained token
    assert p.bucket_flops_per_token["dense"] == pytest.approx(6 * n, rel=1e-4)
    assert p.bucket_flops_per_token["attention"] == pytest.approx(6 * 8192 * 128 * 32 * 32)
    assert p.bucket_bytes_per_token["optimizer"] > 0


@pytest.mark.parametrize("target_price", [5.0, 9.0])
def test_break_even_efficiency_agrees_with_the_verdict(catalog, target_price: float) -> None:
    """The efficiency flip is judged on the verdict's own basis (geo-mean over the sweep)."""
    d = decide(answers(prices={"h200-sxm": 4.9, "b200-sxm": target_price}), catalog)
    t = d.targets[0]
    assert t.verdict is not None and t.break_even_efficiency is not None
    cheaper = (t.verdict.cost_ratio or 0) < 1.0
    assert (t.break_even_efficiency < 1.0) == cheaper


def test_a_target_on_fewer_gpus_runs_the_same_global_batch(catalog) -> None:
    """"4 of these or 8 of those": the 4-GPU side accumulates to the 8-GPU side's batch rather
    than taking half as many sequences per optimizer step; a side on more GPUs brings its own
    micro-batch per rank, and a batch the answers give is kept everywhere."""
    from advisor.core.model.answers import GpuSpec
    from advisor.core.sides import side_workload

    a = answers(targets=["b200-sxm@4", "b300-sxm@16"])
    assert a.workload.sequences_per_step == 8
    fewer = side_workload(a, GpuSpec("b200-sxm", 4), catalog)[0]
    more = side_workload(a, GpuSpec("b300-sxm", 16), catalog)[0]
    assert (fewer.gpus, fewer.global_batch, fewer.accumulation) == (4, 8, 2)
    assert (more.gpus, more.global_batch, more.sequences_per_step) == (16, None, 16)
    pinned = answers(targets=["b200-sxm@4"], workload={**a.workload.model_dump(),
                                                         "global_batch": 64})
    assert side_workload(pinned, GpuSpec("b200-sxm", 4), catalog)[0].global_batch == 64
    serve = answers(targets=["b200-sxm@4"], workload={
        "model": "llama-3.1-8b", "mode": "serve", "seq_lens": [1024], "osl": 256, "gpus": 8})
    assert side_workload(serve, GpuSpec("b200-sxm", 4), catalog)[0].global_batch is None


def test_a_rack_cap_counts_each_nodes_hosts(catalog) -> None:
    """48 B200s against a 40 kW cap: their boards draw about 46 kW, their six DGX-class nodes
    another 38.4 kW (0.8 x 8 x 1,000 W each, from DGX system power): the cap line says both,
    and how many fit once the hosts are counted."""
    a = answers(current="h100-sxm@48", targets=["b200-sxm@48"], power_cap_kw=40.0,
                workload={"model": "llama-3.1-70b", "seq_lens": [8192], "token_budget": 1e12})
    t = decide(a, catalog).targets[0]
    job = t.job
    assert job is not None and job.power_kw is not None and job.nodes == 6
    assert job.host_kw == pytest.approx(6 * 0.8 * 8 * 1.0)
    assert job.rack_kw == pytest.approx(job.power_kw + 38.4)
    assert job.within_power_cap is False and job.max_gpus_under_cap is not None
    per_gpu = job.power_kw / 48
    assert job.max_gpus_under_cap < 40 / per_gpu  # fewer than the boards alone allow
    assert t.verdict is not None
    line = next(reason_text(r) for r in t.verdict.reasons if r.kind == "power")
    assert line.startswith(f"48 x b200-sxm draw {job.rack_kw:,.1f} kW with their hosts")
    assert "kW for the hosts of 6 nodes: CPUs, NICs, switches and fans" in line
    assert f"at most {job.max_gpus_under_cap} fit" in line


def test_the_most_gpus_a_cap_powers_fills_whole_nodes_first() -> None:
    from advisor.core.economics.cost import max_gpus_under, rack_kw

    # 40 kW, 8-slot nodes of 1 kW GPUs and 6.4 kW hosts: two full nodes (28.8 kW), then a
    # third node's hosts leave 4.8 kW for four more GPUs
    assert max_gpus_under(40.0, 8, 1000.0, 6400.0) == 20
    assert rack_kw(20, 8, 1000.0, 6400.0) <= 40.0 < rack_kw(21, 8, 1000.0, 6400.0)
    assert max_gpus_under(5.0, 8, 1000.0, 6400.0) == 0  # not even one node's hosts
    assert max_gpus_under(40.0, 8, 1000.0, 0.0) == 40


def test_each_target_is_gated_on_the_stack_it_would_run(catalog) -> None:
    """With torch 2.5.1+cu124 and FlashAttention, TPUs and Trainium came out 'beta, no support
    data' and a capability upgrade; they are blocked with what to install, and a TPU given
    its own stack (stacks.<gpu>) is judged on that one and passes."""
    cuda = {"source": "declared", "packages": {"torch": "2.5.1+cu124", "flash-attn": "2.7.4"}}
    xla = {"source": "declared", "packages": {"torch": "2.8.0", "torch-xla": "2.8.0"}}
    a = answers(current="h100-sxm", targets=["tpu-v5p", "tpu-v7x", "trainium2", "gaudi3"],
                stack=cuda, stacks={"tpu-v5p": xla},
                workload={"model": "llama-3.1-8b", "seq_lens": [8192]})
    d = decide(a, catalog)
    by = {t.gpu: t for t in d.targets}
    own = by["tpu-v5p"]
    assert own.software_gate is not None and own.software_gate.status == "ok"
    assert own.verdict is not None and own.verdict.kind != "blocked-by-gate"
    assert own.framework == "fsdp"  # read off its own stack
    for gpu, what in (("tpu-v7x", "PyTorch/XLA"), ("trainium2", "Neuron"), ("gaudi3", "Gaudi")):
        v = by[gpu].verdict
        assert v is not None and v.kind == "blocked-by-gate", gpu
        cause = v.headline.cause or ""
        assert what in cause and "flash-attn" in cause
        assert any(flip_text(f, gpu).startswith("unblocked by: install") for f in v.flips), gpu


def test_the_smaller_things_a_decision_now_says(catalog) -> None:
    """FSDP named with no stage runs FSDP's FULL_SHARD (it stayed 'ZeRO-0 (DDP)'), listed as a
    default with its source; packing says how much attention work it removes."""
    a = answers(workload={"model": "llama-3.1-8b", "seq_lens": [8192], "framework": "fsdp",
                          "packed_doc_len": 1024})
    d = decide(a, catalog)
    assert d.current.as_run[0].layout is not None and d.current.as_run[0].layout.zero_stage == 3
    zero = next(x for x in d.defaults if x.field == "workload.zero_stage")
    assert (zero.value, zero.source) == ("3", "PyTorch FSDP's default sharding, FULL_SHARD")
    assert any(n.startswith("packed sequences: documents of 1,024 tokens") and "8.0x less"
               in n for n in d.notes)
    plain = decide(answers(workload={"model": "llama-3.1-8b", "seq_lens": [8192],
                                     "framework": "fsdp", "zero_stage": 1}), catalog)
    assert plain.current.as_run[0].layout.zero_stage == 1  # type: ignore[union-attr]
    assert not any(n.startswith("packed") for n in plain.notes)


def test_a_model_that_fits_nowhere_shows_no_per_request_figures(catalog) -> None:
    """405B on one 24 GB card and one L4: no side holds it, so no reason quotes a TTFT or
    TPOT for a layout that cannot run (the verdict listed 'TTFT 8,557 ms' for one)."""
    answers = parse_answers({"current": "rtx-4090", "targets": ["l4"], "workload": {
        "model": "llama-3.1-405b", "mode": "serve", "seq_lens": [1000], "osl": 1000,
        "gpus": 1}}, "a.toml", catalog)
    v = decide(answers, catalog).targets[0].verdict
    assert v is not None and v.kind == "hold" and not v.headline.fits
    said = [reason_text(r) for r in v.reasons] + [flip_text(f, "") for f in v.flips]
    assert not [t for t in said if "TTFT" in t or "TPOT" in t], said


def test_one_request_in_flight_is_singular() -> None:
    from advisor.core.model.layout import LayoutChoice

    one = LayoutChoice(gpus=1, nodes=1, tp=1, pp=1, cp=1, ep=1, vp=1, micro_batch=1,
                       accumulation=1, zero_stage=0, recompute="none",
                       offload_optimizer=False, fused_kernels=True)
    assert "1 request in flight per replica" in one.describe(serving=True)
