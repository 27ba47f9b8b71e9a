"""Ctrl-C on `python -m probes run`: exit 130, no traceback, an honest partial record.

These drive a real process with SIGINT. Whatever moment the signal lands on (while
torch imports, while the stamp is taken, mid-measurement, after the last stage),
the assertions are the same: exit 130 (or a normal exit if the run had already
finished), no traceback, and a record, if one was written, that says how far it got.
No test waits on a timer: each sends the signal once the child says it has reached the
moment under test (a progress line, or with `-X importtime` the line of an import).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from probes.interrupts import FINISHING, MEASURING, STARTING, Interrupts

ROOT = Path(__file__).resolve().parents[2]
CPU = ["run", "--device", "cpu"]


def start(args: list[str], ignore_sigint: bool = False,
          importtime: bool = False) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    preexec = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
    python = [sys.executable, *(["-X", "importtime"] if importtime else [])]
    return subprocess.Popen(
        [*python, "-m", "probes", *args], cwd=ROOT, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=preexec,
    )


def wait_for(proc: subprocess.Popen[str], needle: str, timeout: float = 120,
             pattern: re.Pattern[str] | None = None) -> list[str]:
    """Read stderr lines until one contains `needle` (or matches `pattern`)."""
    assert proc.stderr is not None
    lines = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        if (pattern.search(line.rstrip()) if pattern else needle in line):
            return lines
    raise AssertionError(f"{needle!r} never appeared: {''.join(lines)[-4000:]}")


def finish(proc: subprocess.Popen[str], seen: list[str] | None = None) -> tuple[int, str]:
    out, err = proc.communicate(timeout=120)
    proc.captured_out = out  # type: ignore[attr-defined]
    return proc.returncode, "".join(seen or []) + err


def interrupted(rc: int) -> bool:
    """Exit 130, or death by SIGINT itself (a Ctrl-C that lands while the interpreter shuts
    down, after the record is written): what a shell reports as 130 either way."""
    return rc in (130, -signal.SIGINT)


def honest(path: Path) -> dict | None:
    if not path.exists():
        return None
    record = json.loads(path.read_text())
    statuses = [s["status"] for s in record["stages"]]
    if record["complete"]:
        assert not record["interrupted"] and set(statuses) <= {"done", "failed"}
    else:
        assert record["interrupted"] and {"stopped", "not run"} & set(statuses)
    assert record["stages_finished"] == [s["name"] for s in record["stages"]
                                         if s["status"] == "done"]
    return record


@pytest.mark.parametrize("module", [
    "probes.interrupts",  # the early handler is in, the interrupt policy is being installed
    "probes.cli",  # the command line is imported, torch is not yet
    "torch._utils",  # torch is importing
    "torch",  # torch is in: the stamp is taken, the suite set up
])
def test_ctrl_c_while_starting_and_importing_torch(tmp_path, module):
    """The readiness signal is the `-X importtime` line of `module`: SIGINT lands after that
    import, whatever the load on the box (a timer cannot promise that)."""
    out = tmp_path / "r.json"
    proc = start([*CPU, "--only", "attention", "--out", str(out)], importtime=True)
    seen = wait_for(proc, module, pattern=re.compile(rf"\|\s+{re.escape(module)}$"))
    proc.send_signal(signal.SIGINT)
    rc, err = finish(proc, seen)
    assert interrupted(rc), err
    assert "Traceback" not in err and "more than once per process" not in err
    honest(out)


def test_ctrl_c_during_bandwidth_is_honoured(tmp_path):
    out = tmp_path / "r.json"
    proc = start([*CPU, "--only", "bandwidth", "--out", str(out)])
    seen = wait_for(proc, "plan:")  # the suite has started measuring
    proc.send_signal(signal.SIGINT)
    rc, err = finish(proc, seen)
    assert interrupted(rc) and "Traceback" not in err, err
    record = honest(out)
    assert record is not None  # a partial (or, if it just finished, complete) record


def test_ctrl_c_is_honoured_when_started_with_sigint_ignored(tmp_path):
    """A shell's background job inherits SIGINT ignored; a probe run takes it back."""
    out = tmp_path / "r.json"
    proc = start([*CPU, "--only", "attention", "--out", str(out)], ignore_sigint=True)
    seen = wait_for(proc, "attention:")
    proc.send_signal(signal.SIGINT)
    rc, err = finish(proc, seen)
    assert interrupted(rc) and "Traceback" not in err, err
    record = honest(out)
    assert record is not None and record["interrupted"] and not record["complete"]
    assert [s["status"] for s in record["stages"]] == ["stopped"]


def test_two_ctrl_c_stop_at_once_and_keep_the_partial_record(tmp_path):
    out = tmp_path / "r.json"
    proc = start([*CPU, "--only", "matmul,attention", "--dtype", "bf16", "--out", str(out)])
    seen = wait_for(proc, "attention:")
    proc.send_signal(signal.SIGINT)
    time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    proc.send_signal(signal.SIGINT)  # a third while it finishes: still no traceback
    rc, err = finish(proc, seen)
    assert interrupted(rc) and "Traceback" not in err, err
    assert "stopping after the current measurement" in err
    record = honest(out)
    assert record is not None and record["interrupted"]
    assert record["stages_finished"] == ["matmul bf16"]
    assert [s["status"] for s in record["stages"]][-1] == "stopped"
    assert "INTERRUPTED: partial record (stages finished: matmul bf16)" in proc.captured_out  # type: ignore[attr-defined]


def test_the_controller_phases():
    ctl = Interrupts()
    assert ctl.phase == STARTING and not ctl.requested
    ctl.enter(MEASURING)
    ctl.handler(signal.SIGINT, None)
    assert ctl.requested and ctl.measuring_count == 1 and ctl.phase == MEASURING
    with pytest.raises(KeyboardInterrupt):
        ctl.handler(signal.SIGINT, None)
    assert ctl.phase == FINISHING  # from here on, only counted
    ctl.handler(signal.SIGINT, None)
    assert ctl.count == 3
