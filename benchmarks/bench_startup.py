"""What a headless command costs as a whole process, as ratios to an interpreter doing
nothing, timed in the same run.

    python benchmarks/bench_startup.py [--runs 7]

- `advisor --help` against `python -c "import argparse"`, wall clock (target: 4x, min);
- `advisor --version` against the same;
- one `advisor compare` (llama-3.1-8b, H100 against B200, one sequence length, text out)
  against `python -c pass`, CPU time of the process and its threads (target: 20x, min);
- `advisor decide` on examples/answers.toml (with its GPU-count sweep) against the same;
- for context, not a target: importing only the libraries a compare cannot do without
  (numpy with one BLAS thread as advisor runs it, pydantic, rich's console and table),
  against the same: the floor under the compare ratio on this box;
- `advisor compare` against that floor directly (target: 2x, min).

Every process runs with bytecode caching on, as an installed advisor does (pip compiles a
wheel's modules at install): a `PYTHONDONTWRITEBYTECODE` in the environment is dropped for
the children, and the first, untimed run of each writes the caches. Left in, it made every
compare recompile 89 of advisor's modules from source, 0.42 s of its 1.6 s of CPU.

Each subject is timed alternately with its reference, so load on the box hits both alike;
the min and median ratios are printed with the absolute times for context, never judged
here. Run it with the interpreter of the environment advisor is installed in.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

from _ratio import installed_env, interleaved, line

ROOT = Path(__file__).resolve().parent.parent
ADVISOR = [sys.executable, "-m", "advisor"]
COMPARE = ["compare", "--current", "h100-sxm", "--target", "b200-sxm", "--model",
           "llama-3.1-8b", "--seq-len", "8192"]
DECIDE = ["decide", "--answers", str(ROOT / "examples" / "answers.toml")]
LIBRARIES = [sys.executable, "-c", "import os; os.environ['OPENBLAS_NUM_THREADS'] = '1'; "
             "import numpy, pydantic, rich.console, rich.table; from pydantic import BaseModel"]


ENV = installed_env(COLUMNS="100")


def timed(argv: list[str], clock: str) -> float:
    """Seconds one run of `argv` took: wall clock, or CPU time (user + system) of the child."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, env=ENV)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()[-500:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall if clock == "wall" else cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="timings of each (default 7)")
    args = parser.parse_args(argv)
    argparse_only = [sys.executable, "-c", "import argparse"]
    nothing = [sys.executable, "-c", "pass"]
    cases = [
        ("advisor --help, wall clock, vs python -c 'import argparse'",
         [*ADVISOR, "--help"], argparse_only, "wall"),
        ("advisor --version, wall clock, vs python -c 'import argparse'",
         [*ADVISOR, "--version"], argparse_only, "wall"),
        ("advisor compare, CPU time, vs python -c pass", [*ADVISOR, *COMPARE], nothing, "cpu"),
        ("advisor decide (with its sweep), CPU time, vs python -c pass", [*ADVISOR, *DECIDE],
         nothing, "cpu"),
        ("context: numpy, pydantic and rich alone, CPU time, vs python -c pass", LIBRARIES,
         nothing, "cpu"),
        ("advisor compare, CPU time, vs numpy, pydantic and rich alone (issue 31: 2x)",
         [*ADVISOR, *COMPARE], LIBRARIES, "cpu"),
    ]
    print(f"{args.runs} runs of each, alternating with its reference")
    for label, subject, reference, clock in cases:
        timed(subject, clock), timed(reference, clock)  # caches, bytecode
        subj, ref = interleaved(lambda s=subject, c=clock: timed(s, c),  # type: ignore[misc]
                                lambda r=reference, c=clock: timed(r, c), args.runs)
        print(line(f"  {label}", subj, ref))
    return 0


if __name__ == "__main__":
    sys.exit(main())
