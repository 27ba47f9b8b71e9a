"""How long one full decision takes, relative to the smallest one, in the same run.

    python benchmarks/bench_decide.py [--runs 50]

The subject is decide() end to end (gates, rates, the roofline sweep, memory, costs,
buy-back, verdicts) for 1 current + 29 targets x 8 sequence lengths on the shipped
catalog; the reference is decide() for 1 current + 1 target x 1 sequence length, timed
alternately with it. The ratio (min and median) says what the size costs whatever the
box and its load; the absolute times are printed for context, never judged. Timing lives
here, not in the unit tests, because a loaded machine must not fail a correctness suite.
"""

from __future__ import annotations

import argparse
import sys
import time

from _ratio import interleaved, line

from advisor.core.comparison import decide
from advisor.core.model.answers import Answers
from advisor.io.catalog_store import load_catalog

SEQ_LENS = [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072]
WORKLOAD = {"model": "llama-3.1-8b", "zero_stage": 3, "checkpointing": True, "gpus": 8,
            "token_budget": 1e10}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50, help="timings of each (default 50)")
    args = parser.parse_args(argv)
    catalog = load_catalog()
    ids = [g.id for g in catalog.gpus if g.peak_tflops.bf16 and g.memory]
    if len(ids) < 30:
        print(f"only {len(ids)} projectable GPUs in the catalog; need 30", file=sys.stderr)
        return 1
    current, targets = "h200-sxm", [i for i in ids if i != "h200-sxm"][:29]
    big = Answers(current=current, targets=targets,
                  workload={**WORKLOAD, "seq_lens": SEQ_LENS}, prices={"b300-sxm": 8.0})
    small = Answers(current=current, targets=targets[:1],
                    workload={**WORKLOAD, "seq_lens": SEQ_LENS[3:4]})

    def timed(answers: Answers) -> float:
        start = time.perf_counter()
        decide(answers, catalog)
        return time.perf_counter() - start

    timed(big), timed(small)  # warm caches and imports
    subj, ref = interleaved(lambda: timed(big), lambda: timed(small), args.runs)
    print(f"decide(): 1 current + {len(targets)} targets x {len(SEQ_LENS)} sequence lengths "
          f"against 1 + 1 x 1, {args.runs} runs each")
    print(line("  full decision", subj, ref))
    return 0


if __name__ == "__main__":
    sys.exit(main())
