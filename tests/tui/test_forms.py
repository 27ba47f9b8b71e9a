"""The form helpers: parsing what people type, and a resumed Workload surviving the form."""

from __future__ import annotations

import pytest

from advisor.core.model.transformer import ModelSpec
from advisor.core.model.workload import Workload
from advisor.tui.forms import (
    build_workload,
    form_from_workload,
    hidden_settings,
    parse_budget,
    parse_gpu_counts,
    parse_seq_lens,
)

MOE = ModelSpec(name="team-moe", layers=16, hidden=2048, heads=16, kv_heads=4, ffn=8192,
                vocab=64000, experts=16, active_experts=2, moe_ffn=1024, head_dim=128)


def cli_workload() -> Workload:
    """What `advisor decide` can save and the form has no field for."""
    return Workload(model=MOE, seq_lens=[4096, 8192], gpus=16, nodes=2, pp=2, ep=2,
                    global_batch=64, optimizer="sgd", fused_kernels=True,
                    attention_kernel="fa3", packed_doc_len=512, nic_gbit=200.0,
                    zero_stage=1, token_budget=None)


def test_lists_parse_sorted_and_unique():
    assert parse_gpu_counts("16 8, 8 1") == (1, 8, 16)
    assert parse_seq_lens("32k, 4k") == (4096, 32768)
    with pytest.raises(ValueError, match="GPU counts run from 1"):
        parse_gpu_counts("0, 8")
    with pytest.raises(ValueError, match="at least one GPU count"):
        parse_gpu_counts(" ")


def test_a_blank_budget_is_none():
    assert parse_budget("  ") is None
    assert parse_budget("300B") == 300 * 10**9


def test_the_form_round_trips_a_workload_it_cannot_show():
    w = cli_workload()
    assert build_workload(form_from_workload(w), w) == w
    assert form_from_workload(w)["token_budget"] is None


def test_editing_the_form_keeps_what_it_does_not_show():
    w = cli_workload()
    form = {**form_from_workload(w), "micro_batch": 2, "layers": 20}
    edited = build_workload(form, w)
    assert edited.micro_batch == 2 and edited.model.layers == 20
    assert edited.model.experts == 16 and edited.model.head_dim == 128
    assert edited.model_dump(exclude={"micro_batch", "model"}) == \
        w.model_dump(exclude={"micro_batch", "model"})
    # Without the saved workload the form's own defaults fill in (a new wizard).
    fresh = build_workload(form)
    assert fresh.pp == 1 and fresh.model.experts == 0


def test_serving_drops_the_training_only_settings_it_kept():
    w = cli_workload().model_copy(update={"offload_optimizer": True})
    edited = build_workload({**form_from_workload(w), "mode": "prefill"}, w)
    assert not edited.offload_optimizer and edited.zero_stage == 0


def test_hidden_settings_name_what_is_kept():
    kept = hidden_settings(cli_workload())
    for phrase in ("global batch 64", "optimizer sgd", "fused kernels", "pp 2", "ep 2",
                   "nodes 2", "nic gbit 200", "experts 16", "head dim 128"):
        assert phrase in kept
    assert hidden_settings(build_workload({})) == []
