"""Anchoring on the user's measured run: the current side meets the measurement, the targets
get what transfers, and an impossible figure is refused with the reason."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.core.comparison import decide
from advisor.core.errors import InputError
from advisor.core.model.answers import Answers, parse_answers


def answers(**kw: Any) -> Answers:
    base: dict[str, Any] = {
        "current": "h100-sxm", "targets": ["b200-sxm"],
        "workload": {"model": "llama-3.1-8b", "seq_lens": [8192], "gpus": 8, "zero_stage": 1,
                     "recompute": "selective", "fused_kernels": True, "tp": 2,
                     "micro_batch": 2},
    }
    return parse_answers(base | kw)


def test_the_current_side_meets_the_measurement(catalog) -> None:
    plain = decide(answers(), catalog)
    modelled = plain.current.as_run[0].tokens_per_s_per_gpu
    assert modelled
    measured = 0.8 * modelled
    d = decide(answers(measured={"tokens_per_s_per_gpu": measured}), catalog)
    assert d.anchor is not None
    assert d.anchor.measured_tokens_per_s_per_gpu == pytest.approx(measured)
    assert d.anchor.modelled_tokens_per_s_per_gpu == pytest.approx(modelled)
    assert d.current.as_run[0].tokens_per_s_per_gpu == pytest.approx(measured, rel=1e-6)
    assert d.anchor.efficiency == pytest.approx(0.8, rel=1e-6)
    assert "stack efficiency x0.80" in d.anchor.moved[0]
    # the model's own figure stays beside the anchored one
    assert d.current.modelled_tokens_per_s_per_gpu == pytest.approx(
        plain.current.sweep[0].tokens_per_s_per_gpu)
    assert d.notes[0].startswith("anchored on your measured")


def test_a_stack_efficiency_carries_to_the_target_and_keeps_the_ratio(catalog) -> None:
    """One number: the software reaches the same share of the model on both GPUs, so the
    target's absolute figure moves and the speedup does not."""
    plain = decide(answers(), catalog)
    cur = plain.current.as_run[0].tokens_per_s_per_gpu
    assert cur
    d = decide(answers(measured={"tokens_per_s_per_gpu": 0.8 * cur}), catalog)
    p, q = plain.targets[0].sweep[0], d.targets[0].sweep[0]
    assert q.tokens_per_s_per_gpu == pytest.approx(0.8 * (p.tokens_per_s_per_gpu or 0), rel=1e-6)
    assert q.speedup == pytest.approx(p.speedup, rel=1e-6)
    assert "stack efficiency carries over" in d.anchor.transfers[0]  # type: ignore[union-attr]


def test_the_attention_share_moves_the_kernel_alone(catalog) -> None:
    plain = decide(answers(), catalog)
    cur = plain.current.as_run[0]
    share = cur.bucket_seconds["attention"] / sum(cur.bucket_seconds.values())
    d = decide(answers(measured={"tokens_per_s_per_gpu": cur.tokens_per_s_per_gpu,
                                 "attention_share": share * 1.5}), catalog)
    assert d.anchor is not None and d.anchor.attention < 1  # a slower kernel than published
    moved = " ".join(d.anchor.moved)
    assert "attention kernel (fa3)" in moved
    assert "fa4, not your fa3" in d.anchor.transfers[0]  # FA3's rate says nothing of FA4


def test_step_time_and_mfu_are_the_same_measurement(catalog) -> None:
    plain = decide(answers(), catalog)
    p = plain.current.as_run[0]
    assert p.step_s and p.mfu
    by_step = decide(answers(measured={"step_s": p.step_s * 1.25}), catalog).anchor
    by_mfu = decide(answers(measured={"mfu": p.mfu / 1.25}), catalog).anchor
    assert by_step and by_mfu
    assert by_step.efficiency == pytest.approx(0.8, rel=1e-6)
    assert by_mfu.efficiency == pytest.approx(0.8, rel=1e-6)


@pytest.mark.parametrize(("measured", "words"), [
    ({"tokens_per_s_per_gpu": 1e7}, "of this GPU's peak"),
    ({"tokens_per_s_per_gpu": 10.0}, "slower than any stack explains"),
])
def test_an_impossible_measurement_is_refused_with_the_reason(catalog, measured, words) -> None:
    with pytest.raises(InputError) as err:
        decide(answers(measured=measured), catalog)
    assert words in err.value.message and err.value.field == "measured"


def test_a_measurement_needs_a_figure() -> None:
    with pytest.raises(InputError, match="give what you measured"):
        answers(measured={"attention_share": 0.3})


def test_a_workload_probe_record_anchors_the_current_gpu(catalog) -> None:
    """`advisor probe --workload` on the current GPU: its whole-model figure (one device,
    eager PyTorch) anchors the decision when the answers give no measurement."""
    from pathlib import Path

    from advisor.core.entry import run
    from advisor.core.formats import parse_json
    from advisor.core.model.probe_record import parse_probe_record

    path = Path(__file__).parent / "data" / "h100_workload_probe.json"
    record = parse_probe_record(parse_json(path.read_text(), str(path)), str(path))
    a = answers(workload={"model": "llama-3.1-8b", "seq_lens": [4096], "gpus": 8})
    d = run(a, catalog, workloads={"h100-sxm": record}).decision
    assert d.anchor is not None and d.anchor.source.startswith("probe")
    assert d.anchor.measured_tokens_per_s_per_gpu == pytest.approx(7000.0)
    assert "its attention ran sdpa, not fa3" in d.anchor.source  # the share is not used
    assert d.anchor.attention == 1.0
    # every front end says whose figure it is: core's note, and the line the CLI's table and
    # the wizard's card share
    from advisor.present.decision import anchor_lines, summary_table

    assert d.notes[0].startswith("anchored on the workload probe's ")
    assert summary_table(d).notes[0] == anchor_lines(d)[0]
    assert anchor_lines(d)[0].startswith("anchored on the workload probe's ")
    toy = record.model_copy(update={"workload": record.workload.model_copy(  # type: ignore[union-attr]
        update={"toy_sizes": True})})
    d = run(a, catalog, workloads={"h100-sxm": toy}).decision
    assert d.anchor is None and any("toy sizes" in n for n in d.notes)


def test_the_sweep_the_buy_back_and_the_verdict_read_the_anchored_side(catalog) -> None:
    """8x A100 anchored on a measured 3,100 tokens/s per GPU: the GPU-count sweep's row at
    the answers' own count is the verdict's figure (it used the modelled ~3,700 tok/s, every
    row 14% optimistic), and buying the speed back prices more of the anchored A100."""
    from advisor.core.entry import run

    a = parse_answers({
        "current": "a100-sxm@8", "targets": ["h100-sxm"], "prices": {"a100-sxm": 1.8},
        "workload": {"model": "llama-3.1-8b", "seq_lens": [4096], "zero_stage": 1,
                     "token_budget": 1e12},
        "measured": {"tokens_per_s_per_gpu": 3100}, "configs": {"counts": [8, 16]}})
    report = run(a, catalog)
    d, sweep = report.decision, report.configs
    assert d.anchor is not None and sweep is not None
    modelled = d.anchor.modelled_tokens_per_s_per_gpu
    assert modelled > 3100 * 1.05  # the model alone is faster: the anchor moves something
    for side in (d.current, d.targets[0]):
        row = next(p for p in sweep.points if p.gpu == side.gpu and p.gpus == side.gpus)
        job = side.job
        assert job is not None
        assert row.tokens_per_s == pytest.approx(side.sweep[0].tokens_per_s_cluster, rel=0.01)
        assert row.eta_days == pytest.approx(job.wall_clock_h / 24, rel=0.01)
    cur = d.current.sweep[0].tokens_per_s_per_gpu
    assert cur is not None and cur < modelled
    buy = d.targets[0].buy_back
    assert buy is not None and buy.tokens_per_s_per_gpu is not None
    assert buy.tokens_per_s_per_gpu <= cur * 1.01  # the anchored A100, not the modelled one


def test_engine_projected_pipeline_stages_run_the_anchored_stack(catalog) -> None:
    """A stage the engine projects runs the user's software, so it carries the anchored stack
    efficiency as a target does, and the report says so."""
    from advisor.core.entry import run

    stage = {"name": "trainer", "gpu": "h100-sxm", "gpus": 8,
             "workload": {"model": "llama-3.1-8b", "seq_lens": [8192], "zero_stage": 1}}
    feeder = {"name": "data", "gpu": "h100-sxm", "gpus": 1, "measured_tokens_per_s": 1e9}
    a = answers(pipeline={"stages": [feeder, stage], "source": "test"})
    plain = run(a, catalog)
    cur = plain.decision.current.as_run[0].tokens_per_s_per_gpu
    assert cur and plain.pipeline is not None
    measured = answers(measured={"tokens_per_s_per_gpu": 0.7 * cur}).measured
    anchored = run(a.model_copy(update={"measured": measured}), catalog)
    assert anchored.pipeline is not None
    before = plain.pipeline.stages[1].tokens_per_s_per_gpu
    after = anchored.pipeline.stages[1].tokens_per_s_per_gpu
    assert after < 0.9 * before
    assert any("anchored on your measured" in x for x in anchored.pipeline.assumptions)
    assert not any("anchored" in x for x in plain.pipeline.assumptions)
