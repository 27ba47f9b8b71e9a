"""Ctrl-C at a given time after `advisor` starts: what the user sees, counted.

    python benchmarks/interrupt_timing.py [--runs 12] [--ms 10,20,30,50,100,200]

Each run starts the installed console script (`advisor decide` on the example answers),
sends SIGINT after the delay, and sorts the outcome: "130" (exit 130 and the one line
`advisor: interrupted`), "python" (CPython's own report: a Fatal Python error while `site`
runs, or a KeyboardInterrupt traceback before advisor's first line), "finished" (the
command was done before the signal) or "other". A benchmark, not a test: where the
interpreter is at a given millisecond depends on the machine and its load, which is why
the suite's interrupt tests key on import lines instead (tests/cli/test_interrupt_startup).
"""

from __future__ import annotations

import argparse
import collections
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def outcome(delay_s: float, command: list[str]) -> str:
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(delay_s)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    if proc.returncode == 130 and err.strip() == "advisor: interrupted":
        return "130"
    if "Fatal Python error" in err or "Traceback" in err or proc.returncode == -signal.SIGINT:
        return "python"
    return "finished" if proc.returncode == 0 else f"other (exit {proc.returncode})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--ms", default="5,10,15,20,30,50,75,100,200")
    args = parser.parse_args()
    script = shutil.which("advisor") or str(Path(sys.executable).parent / "advisor")
    command = [script, "decide", "--answers", str(ROOT / "examples" / "answers.toml"),
               "--out", "/dev/null"]
    print(f"{'ms':>5}  " + "  ".join(f"{k:>8}" for k in ("130", "python", "finished", "other")))
    for ms in (float(m) for m in args.ms.split(",")):
        seen = collections.Counter(outcome(ms / 1000, command) for _ in range(args.runs))
        other = sum(v for k, v in seen.items() if k.startswith("other"))
        print(f"{ms:>5g}  " + "  ".join(f"{seen[k]:>8}" for k in ("130", "python", "finished"))
              + f"  {other:>8}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
