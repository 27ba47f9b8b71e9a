"""The conventions the record states: FLOP counts, bytes counted, bus bandwidth, rates, versions."""

from __future__ import annotations

import pytest

from probes.attention import AttentionPlan, attention_flops
from probes.bandwidth import counted_bytes
from probes.collectives import Topology, bus_bandwidth, parse_size, topology_from_env
from probes.record import CONVENTIONS
from probes.stamp import cudnn_version, nccl_version
from probes.timing import Effort, rate


def test_attention_flops_follow_the_flash_attention_benchmarks():
    # 4·B·s²·H·d forward; B=2, s=1024, H=16, d=128
    fwd = 4 * 2 * 1024**2 * 16 * 128
    assert attention_flops(2, 1024, 16, 128, False, "fwd") == fwd
    assert attention_flops(2, 1024, 16, 128, True, "fwd") == fwd / 2
    assert attention_flops(2, 1024, 16, 128, False, "fwd_bwd") == 3.5 * fwd
    assert attention_flops(2, 1024, 16, 128, True, "fwd_bwd") == 1.75 * fwd
    assert "3.5" in CONVENTIONS["attention_flops"] and "halved" in CONVENTIONS["attention_flops"]


def test_attention_plan_shapes_follow_tokens_and_hidden():
    plan = AttentionPlan(seq_lens=(1024, 32768), head_dims=(128,), effort=Effort(1, 1), gqa_ratio=4)
    cases = plan.cases()
    assert len(cases) == 2 * 2 * 2  # seq lengths × causal × direction
    first = cases[0]
    assert (first.batch, first.heads, first.kv_heads) == (16, 16, 4)  # 16k tokens, hidden 2048
    assert cases[-1].batch == 1  # never below one sequence
    with pytest.raises(ValueError, match="GQA ratio 3"):
        AttentionPlan(seq_lens=(1024,), head_dims=(128,), effort=Effort(1, 1), gqa_ratio=3).cases()


def test_copy_counts_read_plus_write():
    assert counted_bytes("d2d", 1000) == 2000
    assert counted_bytes("h2d", 1000) == 1000
    assert counted_bytes("d2h", 1000) == 1000


def test_bus_bandwidth_is_nccl_tests_all_reduce_correction():
    assert bus_bandwidth(100.0, 2) == pytest.approx(100.0)
    assert bus_bandwidth(100.0, 8) == pytest.approx(175.0)
    assert bus_bandwidth(100.0, 1) == 0.0


def test_sizes_and_topology():
    assert parse_size("64K") == 65536 and parse_size("16M") == 16 * 2**20
    assert parse_size("1GiB") == 2**30 and parse_size("4096") == 4096
    with pytest.raises(ValueError):
        parse_size("lots")
    topo = topology_from_env(
        {"RANK": "3", "WORLD_SIZE": "16", "LOCAL_RANK": "3", "LOCAL_WORLD_SIZE": "8"}
    )
    assert topo == Topology(3, 16, 3, 8) and topo.nodes == 2
    with pytest.raises(ValueError, match="torchrun"):
        topology_from_env({})


def test_rate_reports_median_and_fastest_iteration():
    r = rate(10.0, [1.0, 2.0, 4.0])
    assert r.median == 5.0 and r.max == 10.0
    with pytest.raises(ValueError):
        rate(1.0, [])
    assert Effort(3, 7).total == 10


def test_version_formatting():
    assert cudnn_version(90100) == "9.1.0"
    assert cudnn_version(8902) == "8.9.2"
    assert cudnn_version(None) is None
    assert nccl_version((2, 21, 5)) == "2.21.5"
    assert nccl_version(21805) == "2.18.5"
