"""`advisor probe` and Ctrl-C outside a measurement: exit 130, no traceback, and an honest
account of the record on disk. (Inside a measurement the suite itself stops after it and
keeps the partial record; that is probes.runner's, tested with the probes.)

The suite is replaced by a stand-in that writes what the real one would and then gets the
KeyboardInterrupt at the moment under test, so no timing is involved.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import advisor.probes.cli as probe_cli
import pytest

from advisor.cli import main


def _record(complete: bool) -> dict[str, Any]:
    return {
        "schema": "advisor.probe-record", "version": 1, "complete": complete,
        "interrupted": False,
        "stamp": {"hostname": "box", "date": "2026-03-01T10:00:00Z",
                  "device": {"kind": "cpu", "name": "cpu", "count": 1},
                  "versions": {"python": "3.11"}},
        "notes": [],
        "matmul": [{"status": "ok", "dtype": "bf16", "mode": "quick", "mamf_tflops": 0.5}],
        "seconds_total": 1.0,
    }


def _suite(moment: str):
    def run_command(args, write, check, prog="probes") -> int:
        if moment == "loading torch":
            raise KeyboardInterrupt
        record = _record(complete=False)
        write(record, args.out)  # a checkpoint after the first stage
        record["bandwidth"] = [{"status": "ok", "kind": "d2d", "bytes": 1, "gbps_median": 2.0}]
        if moment == "between stages":
            raise KeyboardInterrupt  # e.g. after the suite's loop, before the final write
        record["complete"] = True
        write(record, args.out)
        check(record)
        raise KeyboardInterrupt  # while the summary is printed
    return run_command


@pytest.mark.parametrize("moment", ["loading torch", "between stages", "printing the summary"])
def test_ctrl_c_outside_a_measurement(moment: str, tmp_path: Path, monkeypatch,
                                      capsys) -> None:
    monkeypatch.setattr(probe_cli, "run_command", _suite(moment))
    out = tmp_path / "box.json"
    assert main(["probe", "--device", "cpu", "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    if moment == "loading torch":
        assert "before any measurement; nothing was written" in err and not out.exists()
        return
    record = json.loads(out.read_text())
    if moment == "between stages":
        # the checkpoint said complete=false, interrupted=false: now it says what happened
        assert record["complete"] is False and record["interrupted"] is True
        assert "partial record (1 matmul) written to" in err and str(out) in err
        assert any("Ctrl-C" in n for n in record["notes"])
    else:
        assert record["complete"] is True and record["interrupted"] is False
        assert f"the record in {out} is complete" in err
