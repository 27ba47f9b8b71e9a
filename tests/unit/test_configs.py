"""Configuration sweep (time, $, power, Pareto front, best under constraints) and pipeline
stages from measured, projected or assumed rates, checked against the published 7+1 case."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.core.economics.configs import ConfigPoint, choose, mark, sweep_configs
from advisor.core.economics.stages import analyse_pipeline, stage_rate
from advisor.core.errors import InputError
from advisor.core.formats import parse_toml
from advisor.core.model.answers import parse_answers
from advisor.core.model.options import ConfigOptions, PipelineSpec, StageSpec
from advisor.core.projection.calibration import CAL
from advisor.core.report.answers_toml import answers_to_toml, parse_answers_toml
from advisor.io.catalog_store import effective_catalog
from advisor.io.documents import load_answers
from advisor.io.files import read_text

ROOT = Path(__file__).parents[2]
DATA = ROOT / "advisor" / "published_cases"
CATALOG = effective_catalog()


def answers(**over):
    base = {"current": "h100-sxm", "targets": ["b200-sxm"],
            "workload": {"mode": "pretrain", "model": "llama-3.1-8b", "seq_lens": [4096],
                         "zero_stage": 3, "checkpointing": True, "token_budget": 2e10},
            "prices": {"h100-sxm": 3.9}, "configs": {"counts": [1, 2, 4, 8, 16]}}
    return parse_answers({**base, **over})


@pytest.fixture(scope="module")
def sweep():
    return sweep_configs(answers(), CATALOG)


def point(gpu="b200-sxm", gpus=8, eta=1.0, usd=100.0, kw=1.0) -> ConfigPoint:
    return ConfigPoint(
        gpu=gpu, name=gpu, gpus=gpus, nodes=1, idle_gpus=0, tokens_per_s=1.0,
        tokens_per_s_per_gpu=1.0, scaling_efficiency=1.0, comm_share=0.0, utilisation=1.0,
        mfu=0.5, eta_days=eta, usd=usd, usd_per_gpu_hour=1.0, price_source="user",
        gpu_days=1.0, gpu_days_equiv=1.0, power_kw=kw, energy_kwh=kw * eta * 24,
        energy_usd=0.0)


# --- options --------------------------------------------------------------------------------


def test_default_counts_double_up_to_max():
    assert ConfigOptions().gpu_counts() == [1, 2, 4, 8, 16]
    assert ConfigOptions(max_gpus=40).gpu_counts() == [1, 2, 4, 8, 16, 32]
    assert ConfigOptions(counts=[8, 6, 7]).gpu_counts() == [6, 7, 8]
    with pytest.raises(ValueError, match="distinct positive"):
        ConfigOptions(counts=[4, 4])


def test_every_count_is_re_tuned_and_names_its_layout(sweep):
    assert all(p.layout.startswith(f"{p.gpus} GPU{'s' if p.gpus > 1 else ''},")
               for p in sweep.points)


def test_a_count_the_layout_cannot_split_says_why():
    odd = answers(workload={"mode": "pretrain", "model": "llama-3.1-8b", "seq_lens": [4096],
                            "tp": 2, "token_budget": 1e10}, configs={"counts": [3]})
    result = sweep_configs(odd, CATALOG)
    assert not result.points and all("multiple of TP x PP x CP" in s.reason for s in result.skipped)


# --- the sweep ------------------------------------------------------------------------------


def test_every_config_is_projected_or_says_why(sweep):
    seen = {(p.gpu, p.gpus) for p in sweep.points} | {(s.gpu, s.gpus) for s in sweep.skipped}
    assert seen == {(g, n) for g in ("h100-sxm", "b200-sxm") for n in (1, 2, 4, 8, 16)}
    assert all(s.reason for s in sweep.skipped)
    assert sweep.points[0].gpu == "h100-sxm"  # the current GPU leads


def test_time_money_and_energy_add_up(sweep):
    for p in sweep.points:
        assert p.tokens_per_s == pytest.approx(p.tokens_per_s_per_gpu * p.gpus)
        assert p.eta_days * 86400 * p.tokens_per_s == pytest.approx(2e10)
        assert p.usd == pytest.approx(p.usd_per_gpu_hour * p.gpus * p.eta_days * 24)
        assert p.gpu_days_equiv == pytest.approx(p.usd / (3.9 * 24))
        assert p.energy_kwh == pytest.approx((p.power_kw + p.idle_slots_kw) * p.eta_days * 24)
        assert p.energy_usd == pytest.approx(p.energy_kwh * 0.12)
    assert {p.price_source for p in sweep.points} == {"user", "default"}


def test_power_is_busy_at_utilisation_plus_idle_slots(sweep):
    tdp, idle = 1000.0, 1000.0 * CAL.idle_power_fraction  # B200: catalog has no idle figure
    for p in (q for q in sweep.points if q.gpu == "b200-sxm"):
        busy = idle + p.utilisation * (tdp - idle)
        assert p.idle_gpus == (8 - p.gpus if p.gpus < 8 else 0)
        assert p.power_kw * 1000 == pytest.approx(p.gpus * busy)
        assert p.idle_slots_kw * 1000 == pytest.approx(p.idle_gpus * idle)
    rented = sweep_configs(answers(configs={"counts": [2], "count_idle_slots": False}), CATALOG)
    assert all(p.idle_gpus == 0 for p in rented.points)
    assert any("idle draw assumed 10% of TDP" in a for a in sweep.assumptions)


def test_scaling_pays_for_communication_across_nodes():
    """A thin NIC makes the two-node configuration slower per GPU than one full node."""
    slow = answers(workload={"mode": "pretrain", "model": "llama-3.1-8b", "seq_lens": [4096],
                             "zero_stage": 1, "nic_gbit": 25, "token_budget": 1e10},
                   targets=["b200-sxm"], current="b200-sxm", configs={"counts": [1, 8, 16]})
    pts = {p.gpus: p for p in sweep_configs(slow, CATALOG).points}
    assert pts[1].comm_share == 0
    assert pts[16].nodes == 2
    assert pts[16].tokens_per_s_per_gpu < pts[8].tokens_per_s_per_gpu
    assert pts[16].scaling_efficiency < pts[8].scaling_efficiency


def test_fewer_gpus_keep_the_recipes_global_batch():
    """8B on one H100 must offload the optimizer. With the batch shrunk to one sequence per
    step it ran 7x slower per GPU than on 8 (the table said "scaling 732%"); a user keeps the
    8-GPU batch and accumulates, so the offload is paid once per 8 sequences."""
    plain = answers(workload={"mode": "pretrain", "model": "llama-3.1-8b", "seq_lens": [4096],
                              "token_budget": 1e10}, configs={"counts": [1, 8, 16]})
    result = sweep_configs(plain, CATALOG)
    pts = {p.gpus: p for p in result.points if p.gpu == "h100-sxm"}
    assert "optimizer offloaded" in pts[1].layout and "optimizer offloaded" not in pts[8].layout
    assert 1.2 < pts[8].scaling_efficiency < 3  # offload still costs, but once per 8 sequences
    assert any("below 8 GPUs the global batch stays at your 8 sequences" in a
               for a in result.assumptions)
    why = [a for a in result.assumptions if a.startswith("h100-sxm: scaling reaches")]
    assert len(why) == 1 and "1-GPU run needs" in why[0] and "offloaded" in why[0]
    assert not any(a.startswith("b200-sxm: scaling") for a in result.assumptions)


def test_choice_respects_cap_deadline_and_objective(sweep):
    cheap = sweep.choice
    assert cheap.best is not None and cheap.objective == "cost"
    assert cheap.best.usd == min(p.usd for p in sweep.points)
    fast = sweep_configs(answers(power_cap_kw=12.0, configs={
        "counts": [1, 2, 4, 8, 16], "objective": "time"}), CATALOG).choice
    assert fast.best is not None and fast.best.rack_kw <= 12.0
    assert "12 kW power cap" in fast.reason and "fastest" in fast.reason


def test_a_rack_cap_counts_the_hosts():
    """An 8-GPU node draws its GPUs and, besides, its hosts (CPUs, NICs, switches, fans) at
    DGX system power over its GPUs' TDP: an 8 kW cap holds one 8x H100 node's boards (~5.2
    kW) but not the node, and the sweep says what it counted."""
    result = sweep_configs(answers(power_cap_kw=8.0, configs={"counts": [4, 8, 16]}),
                           CATALOG)
    h100 = {p.gpus: p for p in result.points if p.gpu == "h100-sxm"}
    eight = h100[8]
    assert eight.host_kw == pytest.approx(0.8 * 0.7 * 8, rel=1e-6)  # 4.48 kW per DGX H100
    assert eight.rack_kw == pytest.approx(eight.power_kw + eight.idle_slots_kw + 4.48)
    assert eight.power_kw < 8.0 < eight.rack_kw and eight.meets_power_cap is False
    assert h100[4].meets_power_cap is True
    assert any("each node's hosts" in a and "h100-sxm 4.5 kW per 8-slot node" in a
               for a in result.assumptions)


def test_nothing_qualifies_names_the_closest_miss(sweep):
    c = choose(sweep.points, "cost", 0.5, 0.1)
    assert c.best is None and c.closest_miss is not None
    assert c.reason.startswith("no configuration meets a 0.5 kW power cap and a 0.1-day deadline")
    assert "kW against 0.5" in c.reason and "days against 0.1" in c.reason
    assert choose([], "time", None, None).best is None


def test_nothing_priced_is_never_called_the_cheapest():
    """The reason states the fact; the price it lacks is asked for as data, and each front end
    says where to quote one in its own words."""
    fast, slow = point(gpu="x", usd=None, eta=0.5), point(gpu="y", usd=None, eta=2.0)
    fast, slow = (q.model_copy(update={"usd": None}) for q in (fast, slow))
    c = choose([slow, fast], "cost", None, None)
    assert c.best == fast
    assert c.reason.startswith("no configuration has a price, so none is cheapest; ")
    assert "is the cheapest" not in c.reason and "--" not in c.reason and c.ask == "price"
    assert "is the fastest of 2 configuration(s)" in c.reason


def test_cost_objective_ranks_unpriced_last():
    unpriced = point(gpu="x", usd=None, eta=0.5).model_copy(update={"usd": None})
    priced = point(gpu="y", usd=500.0, eta=2.0)
    assert choose([unpriced, priced], "cost", None, None).best == priced
    assert choose([unpriced, priced], "time", None, None).best == unpriced


def test_sweep_needs_a_token_budget():
    w = {"mode": "pretrain", "model": "llama-3.1-8b", "seq_lens": [4096]}
    with pytest.raises(InputError, match="token budget"):
        sweep_configs(answers(workload=w), CATALOG)


def test_gated_gpu_is_skipped_with_the_gate_reason():
    fp8 = answers(workload={"mode": "pretrain", "model": "llama-3.1-8b", "seq_lens": [4096],
                            "precision": "fp8", "zero_stage": 3, "token_budget": 1e10},
                  current="b200-sxm", targets=["a100-sxm"], configs={"counts": [8]})
    result = sweep_configs(fp8, CATALOG)
    assert [s.gpu for s in result.skipped] == ["a100-sxm"]
    assert "fp8" in result.skipped[0].reason.lower()


def dominated(p: ConfigPoint, pts: list[ConfigPoint]) -> bool:
    return any(q.eta_days <= p.eta_days and q.usd <= p.usd and q.power_kw <= p.power_kw
               and (q.eta_days, q.usd, q.power_kw) != (p.eta_days, p.usd, p.power_kw)
               for q in pts)


def test_pareto_front_of_the_sweep(sweep):
    front = sweep.front()
    assert front
    assert all(not dominated(p, sweep.points) for p in front)
    assert all(dominated(p, sweep.points) for p in sweep.points if not p.pareto)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 9), st.integers(1, 9), st.integers(1, 9)),
                min_size=1, max_size=12))
def test_pareto_front_is_exactly_the_non_dominated(triples):
    pts = mark([point(eta=t, usd=u, kw=k) for t, u, k in triples], None, None)
    assert any(p.pareto for p in pts)
    for p in pts:
        assert p.pareto == (not dominated(p, pts))


def test_answers_carry_configs_and_pipeline_through_toml():
    spec = parse_toml(read_text(ROOT / "examples" / "configs_pipeline.toml"), "x")["pipeline"]
    a = load_answers(DATA / "configs_sweep.toml").model_copy(
        update={"pipeline": PipelineSpec.model_validate(spec)})
    back = parse_answers_toml(answers_to_toml(a), "round trip")
    assert back == a and back.configs is not None and back.configs.counts == [4, 8, 16]


# --- pipeline stages --------------------------------------------------------------------------


def example() -> PipelineSpec:
    data = parse_toml(read_text(ROOT / "examples" / "configs_pipeline.toml"), "example")
    return PipelineSpec.model_validate(data["pipeline"])


@pytest.fixture(scope="module")
def dflash():
    return analyse_pipeline(example(), CATALOG)


def test_published_seven_plus_one_is_balanced(dflash):
    """The DFlash power write-up: 7+1 at 34.7 Ktok/s, ~4.7 kW, queue empty, ETA 3.7 days."""
    now = dflash.current
    assert now.split == (7, 1) and now.balanced and "near empty" in now.queue
    assert now.tokens_per_s == pytest.approx(34_700, rel=0.001)
    assert now.power_kw_low == pytest.approx(4.7) and now.power_kw_high == pytest.approx(4.7)
    assert now.eta_days == pytest.approx(3.7, rel=0.02)
    assert {s.source for s in dflash.stages} == {"measured"}


@pytest.mark.parametrize(("split", "ktok", "eta", "saved"),
                         [((6, 1), 29.7, 4.3, 0.55), ((5, 1), 24.8, 5.2, 1.1)])
def test_published_neighbours(dflash, split, ktok, eta, saved):
    """Published: 6+1 ~29.7 Ktok/s, ~4.3 days, ~0.55 kW saved; 5+1 ~24.8, ~5.2, ~1.1 kW."""
    assert [b.split for b in dflash.neighbours] == [(7, 1), (6, 1), (5, 1)]
    b = next(b for b in dflash.neighbours if b.split == split)
    assert b.tokens_per_s / 1000 == pytest.approx(ktok, rel=0.01)
    assert b.eta_days == pytest.approx(eta, rel=0.02)
    assert b.bottleneck == "targets" and "drafter starve" in b.queue
    now = dflash.current
    # saved power: between "starved drafter keeps full draw" and "its draw follows utilisation"
    assert now.power_kw_high - b.power_kw_high <= saved * 1.05
    assert saved * 0.95 <= now.power_kw_low - b.power_kw_low


def test_four_gpus_split_three_plus_one_at_published_rate():
    """Published: 4 GPUs as 3 producers + 1 consumer ran at 14.8 Ktok/s."""
    best = analyse_pipeline(example(), CATALOG, gpus=4).best
    assert best[0].split == (3, 1)
    assert best[0].tokens_per_s / 1000 == pytest.approx(14.8, rel=0.01)


def test_projected_stage_uses_the_engine():
    data = parse_toml(read_text(DATA / "configs_pipeline_projected.toml"), "projected")
    spec = PipelineSpec.model_validate(data["pipeline"])
    report = analyse_pipeline(spec, CATALOG)
    targets, drafter = report.stages
    assert (targets.source, drafter.source) == ("projected", "measured")
    assert targets.detail.startswith("projected: prefill of qwen3-32b")
    assert targets.power_source.startswith("engine utilisation")
    assert drafter.power_source.startswith("catalog TDP")
    from advisor.core.sides import resolve_gpu

    w = spec.stages[0].workload
    side = resolve_gpu("rtx-pro-6000-bw-server", w, CATALOG).at(7).project(
        seqs=w.seq_lens[:1]).projection
    assert side is not None
    rate = float(side.retuned.proj.tokens_per_s[0, 0])
    assert targets.tokens_per_s_per_gpu == pytest.approx(rate)
    assert report.current.tokens_per_s == pytest.approx(min(7 * rate, 34_700), rel=1e-6)


def test_assumed_stage_is_the_published_arithmetic():
    """4.5 PFLOP/s x 45% / 54 GFLOP per token = 37.5 Ktok/s; a 60 ms hop per batch slows it."""
    stage = StageSpec(name="targets", gpu="b200-sxm", gpus=3, flops_per_token=54e9, mfu=0.45,
                      peak_tflops=4500)
    r = stage_rate(stage, None, CATALOG)
    assert r.source == "assumed" and r.tokens_per_s_per_gpu == pytest.approx(37_500)
    assert r.idle_w == pytest.approx(100) and "idle assumed 10%" in r.power_source
    hop = stage_rate(stage.model_copy(update={"hop_s_per_unit": 0.06}), 46_891.9, CATALOG)
    assert hop.tokens_per_s_per_gpu == pytest.approx(46_891.9 / (46_891.9 / 37_500 + 0.06))
    dense = stage_rate(stage.model_copy(update={"peak_tflops": None}), None, CATALOG)
    assert dense.tokens_per_s_per_gpu == pytest.approx(2250e12 * 0.45 / 54e9)
    assert "catalog dense" in dense.detail


@pytest.mark.parametrize(("stage", "match"), [
    ({}, "give one rate"),
    ({"measured_tokens_per_s": 1.0, "measured_units_per_s": 1.0}, "not both"),
    ({"measured_tokens_per_s": 1.0, "flops_per_token": 1e9, "mfu": 0.5}, "give one rate"),
    ({"flops_per_token": 1e9}, "go together"),
    ({"measured_tokens_per_s": 1.0, "hop_s_per_unit": 0.1}, "already includes"),
])
def test_stage_spec_errors(stage, match):
    with pytest.raises(ValueError, match=match):
        StageSpec(name="s", gpu="b200-sxm", gpus=1, **stage)


def test_pipeline_spec_errors():
    s = {"name": "a", "gpu": "b200-sxm", "gpus": 1, "measured_units_per_s": 1.0}
    t = {**s, "name": "b"}
    with pytest.raises(ValueError, match="tokens_per_unit is needed"):
        PipelineSpec(stages=[s, t])
    with pytest.raises(ValueError, match="stage names repeat"):
        PipelineSpec(stages=[s, s], tokens_per_unit=1.0)
    with pytest.raises(ValueError, match="vary names no stage"):
        PipelineSpec(stages=[s, t], tokens_per_unit=1.0, vary="c")
    with pytest.raises(ValueError, match="below the stages"):
        PipelineSpec(stages=[s, {**t, "gpus": 2}], tokens_per_unit=1.0, box_gpus=2)


def test_stage_without_tdp_asks_for_active_w():
    tpu = StageSpec(name="rollout", gpu="tpu-v5e", gpus=1, measured_tokens_per_s=1000.0)
    with pytest.raises(InputError, match="give active_w"):
        stage_rate(tpu, None, CATALOG)
    assert stage_rate(tpu.model_copy(update={"active_w": 200.0}), None, CATALOG).active_w == 200
