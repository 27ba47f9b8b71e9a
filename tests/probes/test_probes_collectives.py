"""All-reduce bus bandwidth through the real CLI path: torchrun with gloo ranks on the CPU,
and the merge into an existing record, which is refused when its stamp differs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from probes.__main__ import main as probes_main
from probes.collectives import summarize_times
from probes.device import detect
from probes.figures import CatalogMatch
from probes.record import new_record, read_record, write_record
from probes.stamp import collect_stamp, gpu_identity

ROOT = Path(__file__).resolve().parents[2]


def torchrun(*args: str, nproc: int = 2) -> subprocess.CompletedProcess[str]:
    launcher = Path(sys.executable).parent / "torchrun"
    cmd = [str(launcher)] if launcher.exists() else [sys.executable, "-m", "torch.distributed.run"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [*cmd, "--standalone", "--nproc-per-node", str(nproc), "-m", "probes", "collectives",
         *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def this_box_record() -> dict:
    device = detect("cpu")
    stamp = collect_stamp(device, gpu_identity(device), CatalogMatch(None, "no catalog figure"),
                          None, "n/a", {"preset": "quick"})
    record = new_record(stamp, {"preset": "quick"})
    record["matmul"] = [{"dtype": "bf16", "status": "ok"}]
    return record


SMALL = ("--backend", "gloo", "--sizes", "64K,1M", "--iters", "3", "--warmup", "1")


def test_gloo_all_reduce_with_two_ranks_merges_into_a_record(tmp_path):
    box = tmp_path / "box.json"
    write_record(this_box_record(), box)
    result = torchrun(*SMALL, "--out", str(box), "--merge")
    assert result.returncode == 0, result.stderr[-2000:]
    record = read_record(box)
    assert record["matmul"] == [{"dtype": "bf16", "status": "ok"}]  # the rest is kept
    small, big = record["collectives"]
    assert (small["bytes"], big["bytes"]) == (65536, 2**20)
    for entry in (small, big):
        assert entry["status"] == "ok" and entry["backend"] == "gloo"
        assert entry["world_size"] == 2 and entry["nodes"] == 1 and entry["iterations"] == 3
        # busbw = algbw·2(n−1)/n, which is algbw itself for two ranks
        assert entry["busbw_gbps"] == entry["algbw_gbps"] > 0
        assert entry["busbw_gbps_max"] >= entry["busbw_gbps"]
        assert entry["rank_skew_pct"] is not None and entry["catalog_gbps"] is None
    assert "busbw" in result.stdout


def test_a_merge_into_a_record_from_another_stack_is_refused_unless_forced(tmp_path):
    box = tmp_path / "box.json"
    other = this_box_record()
    other["stamp"]["versions"]["torch"] = "2.4.0+cu124"
    other["stamp"]["env"] = {"PYTORCH_TUNABLEOP_ENABLED": "1"}
    write_record(other, box)
    before = box.read_bytes()
    refused = torchrun(*SMALL, "--out", str(box), "--merge")
    assert refused.returncode != 0 and box.read_bytes() == before  # nothing merged
    line = next(x for x in refused.stderr.splitlines() if "another stack" in x)
    assert "versions.torch: '2.4.0+cu124' vs" in line and "env.PYTORCH_TUNABLEOP_ENABLED" in line
    assert "--force" in line
    forced = torchrun(*SMALL, "--out", str(box), "--merge", "--force")
    assert forced.returncode == 0, forced.stderr[-2000:]
    record = read_record(box)
    assert len(record["collectives"]) == 2
    assert any("merged with --force" in n and "versions.torch" in n for n in record["notes"])


def test_one_rank_is_a_smoke_test_and_says_so(tmp_path):
    out = tmp_path / "coll.json"
    result = torchrun(*SMALL, "--out", str(out), nproc=1)
    assert result.returncode == 0, result.stderr[-2000:]
    entries = read_record(out)["collectives"]
    assert [e["status"] for e in entries] == ["skipped", "skipped"]
    assert all("one rank" in e["reason"] and e["iterations"] == 3 for e in entries)
    assert all(e["busbw_gbps"] is None for e in entries)  # no number is invented


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"\xef\xbb\xbf{}", "byte-order mark"), (b"[" * 50000, "nested too deeply"),
     (b"\xff\xfe", "not UTF-8")],
)
def test_a_bad_record_to_merge_into_is_one_line_before_anything_runs(
    tmp_path, capsys, monkeypatch, content, message
):
    box = tmp_path / "box.json"
    box.write_bytes(content)
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert probes_main(["collectives", "--backend", "gloo", "--out", str(box), "--merge"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_merge_needs_an_out_and_a_record(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert probes_main(["collectives", "--backend", "gloo", "--merge"]) == 2
    assert "--merge needs --out" in capsys.readouterr().err
    missing = tmp_path / "none.json"
    assert probes_main(["collectives", "--backend", "gloo", "--out", str(missing), "--merge"]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert probes_main(["collectives", "--out", str(tmp_path)]) == 2  # a directory
    assert "is a directory" in capsys.readouterr().err


def test_per_iteration_time_is_the_mean_over_ranks_not_the_slowest():
    # Rank 1 arrives late on iteration 0 (launch skew): the max would read it as slow.
    mean, worst = summarize_times([[1.0, 1.0], [3.0, 1.0]])
    assert mean == [2.0, 1.0] and worst == [3.0, 1.0]
    assert json.dumps(mean)
