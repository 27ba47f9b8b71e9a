"""One resolved side per compared GPU: the verdict, the sweep, the ranking and pipeline stages
read the same count, nodes, framework, formats and power, so they cannot disagree."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.core.economics.ranking import rank, ranking_answers
from advisor.core.entry import run
from advisor.core.errors import InputError
from advisor.core.model.answers import Answers, GpuSpec, parse_answers
from advisor.core.sides import nodes_for, resolve_gpu, resolve_sides, side_workload


def answers(**kw: Any) -> Answers:
    base: dict[str, Any] = {
        "current": "h100-sxm", "targets": ["b200-sxm"],
        "workload": {"model": "llama-3.1-8b", "seq_lens": [4096], "gpus": 8,
                     "token_budget": 1e11},
    }
    return parse_answers(base | kw)


def test_nodes_follow_one_rule() -> None:
    """The fewest nodes of at most a domain's GPUs that hold the count evenly."""
    assert nodes_for(8, 8) == 1
    assert nodes_for(12, 8) == 2  # two nodes of 6
    assert nodes_for(256, 72) == 4  # an NVL72 rack holds 64 of them
    assert nodes_for(7, 8) == 1
    with pytest.raises(InputError):
        nodes_for(0, 8)


def test_a_side_reads_its_domain_from_the_catalog(catalog) -> None:
    a = answers(current="gb200@256", targets=["b300-sxm@192"],
                workload={"model": "deepseek-v3", "seq_lens": [4096], "precision": "fp8"})
    gb200, b300 = resolve_sides(a, catalog)
    assert (gb200.gpus, gb200.nodes, gb200.slots_per_node) == (256, 4, 72)
    assert (b300.gpus, b300.nodes, b300.slots_per_node) == (192, 24, 8)
    assert gb200.at(64).nodes == 1  # 64 GPUs fit one rack
    # what a node draws besides its GPUs: an NVL72 rack shares its hosts, an HGX board less so
    assert gb200.host_w == pytest.approx(0.39 * 1200 * 72)
    assert b300.host_w == pytest.approx(0.8 * 1100 * 8)


def test_the_sweep_and_the_verdict_agree_at_the_count_the_answers_give(catalog) -> None:
    """GB200 x256 against B300 x192 for DeepSeek-V3: the sweep's row at each side's own count
    is the verdict's tokens/s, days and kW (they disagreed by 46% when the sweep assumed
    8-GPU nodes for an NVL72 rack)."""
    a = answers(current="gb200@256", targets=["b300-sxm@192"],
                workload={"model": "deepseek-v3", "seq_lens": [4096], "precision": "fp8",
                          "token_budget": 1e12},
                configs={"counts": [192, 256]})
    report = run(a, catalog)
    assert report.configs is not None
    d = report.decision
    for side in (d.current, d.targets[0]):
        row = next(p for p in report.configs.points if p.gpu == side.gpu and p.gpus == side.gpus)
        job = side.job
        assert job is not None and job.power_kw is not None
        assert row.tokens_per_s == pytest.approx(side.sweep[0].tokens_per_s_cluster, rel=0.01)
        assert row.eta_days == pytest.approx(job.wall_clock_h / 24, rel=0.01)
        assert row.power_kw == pytest.approx(job.power_kw, rel=0.01)


def test_an_uneven_count_is_laid_out_not_refused(catalog) -> None:
    """12 B200s for a 70B Megatron job: an uneven pipeline split (80 layers over 3 stages),
    as a user would run it, rather than 'nothing fits on this GPU count'."""
    a = answers(targets=["b200-sxm@12"],
                workload={"model": "llama-3.1-70b", "seq_lens": [8192], "framework": "megatron",
                          "gpus": 8})
    t = run(a, catalog).decision.targets[0]
    p = t.sweep[0]
    assert p.runnable and p.layout is not None and p.layout.gpus == 12
    assert t.verdict is not None and t.verdict.kind != "blocked-by-gate"


def test_one_framework_rule_for_every_path(catalog) -> None:
    """A declared DeepSpeed stack makes every side DeepSpeed; serving names a serving engine."""
    a = answers(stack={"source": "declared", "packages": {"torch": "2.9.1+cu128",
                                                            "deepspeed": "0.17.0"}})
    assert {s.framework for s in resolve_sides(a, catalog)} == {"deepspeed"}
    serve = answers(workload={"model": "llama-3.1-8b", "mode": "serve", "seq_lens": [1000],
                              "osl": 1000})
    sides = resolve_sides(serve, catalog)
    assert {s.framework for s in sides} == {"vllm"}
    stage = resolve_gpu("b200-sxm", serve.workload, catalog)
    assert stage.framework == "vllm"


def test_per_side_formats_are_gated_each_on_its_own(catalog) -> None:
    """FP8 on the H200 against NVFP4 on a B200: the H200 is not blocked for lacking NVFP4."""
    a = answers(current="h200-sxm", targets=["b200-sxm"],
                workload={"model": "llama-3.1-70b", "mode": "serve", "seq_lens": [1000],
                          "osl": 1000, "precision": "fp8"},
                layouts={"b200-sxm": {"precision": "nvfp4"}})
    h200, b200 = resolve_sides(a, catalog)
    assert (h200.precision, b200.precision) == ("fp8", "nvfp4")
    assert h200.dtype.passed and b200.dtype.passed
    d = run(a, catalog).decision
    t = d.targets[0]
    assert (d.current.precision, t.precision) == ("fp8", "nvfp4")
    assert t.verdict is not None
    texts = [r.text for r in t.verdict.reasons if r.kind == "format"]
    assert texts and "nvfp4" in texts[0] and "accuracy" in texts[0]


def test_the_same_side_moves_with_its_count(catalog) -> None:
    a = answers()
    w = side_workload(a, GpuSpec("b200-sxm", 16), catalog)[0]
    assert (w.gpus, w.nodes) == (16, 2)
    side = resolve_sides(a, catalog)[1]
    moved = side.at(16)
    assert (moved.gpus, moved.nodes, moved.precision) == (16, 2, side.precision)
    assert moved.rates is side.rates  # rates do not depend on the count


def test_a_stated_tp_is_the_current_sides_on_a_smaller_target(catalog) -> None:
    """`--current h200-sxm@2 --target b200-sxm@1 --tp 2`: TP 2 is what runs on the two H200s
    today; the one B200 cannot hold it, so it is re-tuned (and says so) instead of refusing
    'layouts.b200-sxm: gpus 1 is not a multiple of TP x PP x CP = 2', a field never written."""
    a = answers(current="h200-sxm@2", targets=["b200-sxm@1"],
                workload={"model": "llama-3.1-8b", "seq_lens": [8192], "tp": 2})
    d = run(a, catalog).decision
    cur, tgt = d.current, d.targets[0]
    assert cur.as_run[0].layout is not None and cur.as_run[0].layout.tp == 2
    p = tgt.sweep[0]
    assert p.layout is not None and (p.layout.gpus, p.layout.tp) == (1, 1)
    assert p.speedup is not None and 1.0 < p.speedup < 3.0
    assert any("b200-sxm: 1 GPU cannot hold the current side's TP 2" in n for n in d.notes)


def test_the_count_after_at_is_the_count_the_layout_is_checked_on(catalog) -> None:
    """`--current gb200@512 --target gb300@512 --tp 4 --pp 8 --cp 2`: the layout is checked on
    512 GPUs (it was refused as 'gpus 8 is not a multiple of TP x PP x CP = 64')."""
    a = answers(current="gb200@512", targets=["gb300@512"],
                workload={"model": "llama-3.1-70b", "seq_lens": [8192], "tp": 4, "pp": 8,
                          "cp": 2})
    assert a.workload.gpus == 512
    d = run(a, catalog).decision
    mine = d.current.as_run[0].layout
    assert mine is not None and (mine.gpus, mine.tp, mine.pp, mine.cp) == (512, 4, 8, 2)
    t = d.targets[0]
    assert t.gpus == 512 and t.sweep[0].layout is not None
    assert t.sweep[0].speedup is not None and 0.8 < t.sweep[0].speedup < 2.0
    assert not any("cannot hold" in n for n in d.notes)  # the same count holds it


def test_a_workload_count_fills_in_only_the_sides_without_one(catalog) -> None:
    """The current side's @N is the workload's count; a `gpus` that differs is the count of
    each target written without one."""
    a = answers(current="h100-sxm@16", targets=["b200-sxm", "h200-sxm@4"],
                workload={"model": "llama-3.1-8b", "seq_lens": [4096], "gpus": 8})
    assert a.workload.gpus == 16 and a.targets == ["b200-sxm@8", "h200-sxm@4"]
    sides = resolve_sides(a, catalog)
    assert [s.gpus for s in sides] == [16, 8, 4]
    plain = answers(current="h100-sxm@16", targets=["b200-sxm"])
    assert [s.gpus for s in resolve_sides(plain, catalog)] == [16, 8]
    alone = answers(current="h100-sxm@2", targets=["b200-sxm"],
                    workload={"model": "llama-3.1-8b", "seq_lens": [4096]})
    assert [s.gpus for s in resolve_sides(alone, catalog)] == [2, 2]


def test_the_ranking_honours_the_cap_and_each_targets_count(catalog) -> None:
    """Under a rack cap nothing over it is ranked (it is listed out with its draw), and a
    target the user counted keeps its count."""
    a = answers(targets=["b200-sxm@4"], power_cap_kw=6.0)
    ranked = ranking_answers(a, catalog)
    assert "b200-sxm@4" in ranked.targets
    assert all(t == "b200-sxm@4" or "@" not in t for t in ranked.targets)
    report = run(ranked, catalog)
    result = rank(report.decision)
    for r in result.ranked:
        assert r.job is not None and r.job.power_kw is not None and r.job.power_kw <= 6.0
    b200 = next(r for r in (*result.ranked, *(x for x, _ in result.out)) if r.gpu == "b200-sxm")
    assert b200.gpus == 4
    over = [why for _, why in result.out if "over the 6 kW cap" in why]
    assert over, "something draws more than 6 kW and must be listed out, not ranked"


def test_the_facade_offers_no_way_around_run() -> None:
    """Front ends reach sweeps and pipelines through run()/run_pipeline only."""
    import advisor.core as core

    for name in ("sweep_configs", "analyse_pipeline", "kw_saved", "resolve_sides",
                 "project_side"):
        assert name not in core.__all__


def test_a_price_or_power_limit_keyed_by_an_alias_is_the_gpus_own(catalog) -> None:
    """"H100 SXM" names the h100-sxm: its quote was ignored for the catalog default ($3.90)
    while a ratio to it was worked out from it, so the target ran at 0.77x, not 1.5x."""
    a = parse_answers({"current": "h100-sxm", "targets": ["h200-sxm"],
                       "prices": {"H100 SXM": 2.0, "h200-sxm": "1.5x"},
                       "power_limits_w": {"H100 SXM": 600},
                       "workload": {"model": "llama-3.1-8b", "seq_lens": [4096]}},
                      catalog=catalog)
    r = run(a, catalog, {})
    assert [(q.gpu, q.usd_per_hour, q.source) for q in r.quotes] == [
        ("h100-sxm", 2.0, "user"), ("h200-sxm", 3.0, "user")]
    assert r.decision.answers.power_limits_w == {"h100-sxm": 600.0}


@pytest.mark.parametrize(("prices", "message"), [
    ({"H100 SXM": 2.0, "h100-sxm": 3.0},
     "field 'prices.h100-sxm', value 3.0: names the same GPU (h100-sxm) as 'H100 SXM'"),
    ({"nonesuch": 2.0}, "field 'prices.nonesuch'"),  # was silently ignored
])
def test_price_keys_name_one_catalog_gpu_each(catalog, prices, message) -> None:
    a = parse_answers({"current": "h100-sxm", "targets": ["h200-sxm"], "prices": prices,
                       "workload": {"model": "llama-3.1-8b", "seq_lens": [4096]}})
    with pytest.raises(InputError) as err:
        run(a, catalog, {})
    assert message in err.value.one_line()


def test_a_power_limit_keyed_with_a_count_is_the_gpus_own(catalog) -> None:
    """`h100-sxm@4` passed the catalog check, then run() failed with "unknown GPU id"."""
    a = parse_answers({"current": "h100-sxm@4", "targets": ["h200-sxm@4"],
                       "power_limits_w": {"h100-sxm@4": 350},
                       "workload": {"model": "llama-3.1-8b", "seq_lens": [4096]}})
    assert run(a, catalog, {}).decision.answers.power_limits_w == {"h100-sxm": 350.0}
