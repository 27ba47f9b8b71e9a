"""All-reduce bus bandwidth through the real CLI path: torchrun with 2 gloo ranks on the CPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from probes.record import new_record, read_record, write_record

ROOT = Path(__file__).resolve().parents[2]


def torchrun(*args: str) -> subprocess.CompletedProcess[str]:
    launcher = Path(sys.executable).parent / "torchrun"
    cmd = [str(launcher)] if launcher.exists() else [sys.executable, "-m", "torch.distributed.run"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [*cmd, "--standalone", "--nproc-per-node", "2", "-m", "probes", "collectives", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_gloo_all_reduce_with_two_ranks_merges_into_a_record(tmp_path):
    box = tmp_path / "box.json"
    stamp = {"hostname": "h", "date": "d", "device": {"kind": "cpu"}, "versions": {}}
    base = new_record(stamp, {"preset": "quick"})
    base["matmul"] = [{"dtype": "bf16", "status": "ok"}]
    write_record(base, box)

    result = torchrun(
        "--backend",
        "gloo",
        "--sizes",
        "64K,1M",
        "--iters",
        "3",
        "--warmup",
        "1",
        "--out",
        str(box),
        "--merge",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    record = read_record(box)
    assert record["matmul"] == [{"dtype": "bf16", "status": "ok"}]  # the rest is kept
    small, big = record["collectives"]
    assert (small["bytes"], big["bytes"]) == (65536, 2**20)
    for entry in (small, big):
        assert entry["status"] == "ok" and entry["backend"] == "gloo"
        assert entry["world_size"] == 2 and entry["nodes"] == 1
        # busbw = algbw·2(n−1)/n, which is algbw itself for two ranks
        assert entry["busbw_gbps"] == entry["algbw_gbps"] > 0
        assert entry["busbw_gbps_max"] >= entry["busbw_gbps"]
        assert entry["catalog_gbps"] is None  # CPU: no interconnect figure
    assert "busbw" in result.stdout
