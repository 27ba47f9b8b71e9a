"""One ranking for `compare --target all`, `advisor rank` and the wizard's ^k: each GPU at its
own count, ordered, with the remedy a GPU needs first beside it and the rest out with why,
the hardware's reason before any software one."""

from __future__ import annotations

from typing import Any

from advisor.core.economics.ranking import rank, ranking_answers
from advisor.core.entry import run
from advisor.core.model.answers import Answers, parse_answers

CUDA_124 = {"source": "declared", "packages": {"torch": "2.5.1+cu124", "flash-attn": "2.7.4"}}


def answers(**kw: Any) -> Answers:
    base: dict[str, Any] = {
        "current": "rtx-4090@1", "targets": ["rtx-4090@1"],
        "workload": {"model": "llama-3.1-8b", "mode": "finetune", "seq_lens": [4096],
                     "token_budget": 1e9},
    }
    return parse_answers(base | kw)


def test_every_gpu_runs_at_the_current_count_unless_given_its_own(catalog) -> None:
    """`--current rtx-4090@1 --target all` put every target at 8 GPUs ('8x rtx-4090 ...
    cannot run this'); each runs at the current side's one GPU, a counted target at its
    own."""
    a = ranking_answers(answers(targets=["b200-sxm@2"]), catalog)
    report = run(a, catalog)
    d = report.decision
    gpus = {r.gpu: r.gpus for r in (d.current, *d.targets)}
    assert gpus.pop("b200-sxm") == 2
    assert set(gpus.values()) == {1}
    assert len(d.targets) == len(catalog.gpus) - 1


def test_ranked_by_dollars_per_token_and_priced_first(catalog) -> None:
    result = rank(run(ranking_answers(answers(), catalog), catalog).decision, "cost")
    costs = [r.point(4096).usd_per_mtok for r in result.ranked]  # type: ignore[union-attr]
    priced = [c for c in costs if c is not None]
    assert len(priced) >= 10 and priced == sorted(priced)
    assert costs[: len(priced)] == priced  # unpriced ones rank last, never first
    by_time = rank(run(ranking_answers(answers(), catalog), catalog).decision, "time")
    hours = [r.job.wall_clock_h for r in by_time.ranked if r.job]
    assert hours == sorted(hours)


def test_a_target_that_needs_only_an_upgrade_is_ranked_with_the_remedy(catalog) -> None:
    """torch 2.5.1+cu124 has no sm_100 kernels: the B200 was listed 'Out' while a dearer GPU
    ranked first; it is ranked on its figures with the upgrade beside it. A TPU needs
    another vendor's stack: out, with what to install."""
    result = rank(run(ranking_answers(answers(stack=CUDA_124), catalog), catalog).decision)
    ranked = {r.gpu: r for r in result.ranked}
    assert "b200-sxm" in ranked
    first = result.remedies["b200-sxm"]
    assert first.kind == "upgrade" and first.text.startswith("upgrade torch 2.5.1+cu124")
    assert {"b200-sxm", "b300-sxm"} <= set(result.by_remedy()[first.text])  # one line each
    b200 = ranked["b200-sxm"]
    assert b200.verdict is not None and b200.verdict.kind == "blocked-by-gate"
    assert "h100-sxm" in ranked and "h100-sxm" not in result.remedies  # runs as it is
    out = dict((r.gpu, why) for r, why in result.out)
    assert "install PyTorch/XLA (torch-xla) or JAX" in out["tpu-v5p"]
    assert "install the AWS Neuron SDK" in out["trainium2"]


def test_does_not_fit_is_said_before_any_software_remedy(catalog) -> None:
    """A TPU v6e (32 GB) cannot hold an 8B fine-tune on one chip; that it would also need
    another stack comes after. The RTX 4090 itself does not fit, and says so."""
    result = rank(run(ranking_answers(answers(stack=CUDA_124), catalog), catalog).decision)
    out = dict((r.gpu, why) for r, why in result.out)
    assert out["tpu-v6e"].startswith("does not fit at 4,096 tokens on 1 GPU")
    assert out["rtx-4090"].startswith("does not fit")
    assert "upgrade torch" not in out["l40s"]
