"""How long one full decision takes: 30 GPUs x 8 sequence lengths must stay under 20 ms.

Run with `python benchmarks/bench_decide.py`. It times decide() end to end
(gates, rates, the roofline sweep, memory, costs, buy-back, verdicts) on the
shipped catalog, reports the median and best of many runs, and exits 1 when
the median is over budget. Timing lives here, not in the unit tests, because
a loaded CI machine should not fail a correctness suite.
"""

from __future__ import annotations

import statistics
import sys
import time

from advisor.core.decide import decide
from advisor.core.model.answers import Answers
from advisor.io.catalog_store import load_catalog

BUDGET_MS = 20.0
SEQ_LENS = [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072]


def main(runs: int = 50) -> int:
    catalog = load_catalog()
    ids = [g.id for g in catalog.gpus if g.peak_tflops.bf16 and g.memory]
    if len(ids) < 30:
        print(f"only {len(ids)} projectable GPUs in the catalog; need 30", file=sys.stderr)
        return 1
    current, targets = "h200-sxm", [i for i in ids if i != "h200-sxm"][:29]
    answers = Answers(
        current=current, targets=targets,
        workload={"model": "llama-3.1-8b", "seq_lens": SEQ_LENS, "zero_stage": 3,
                  "checkpointing": True, "gpus": 8, "token_budget": 1e10},
        prices={"b300-sxm": 8.0},
    )
    decide(answers, catalog)  # warm caches and imports
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        decide(answers, catalog)
        times.append((time.perf_counter() - start) * 1e3)
    median, best = statistics.median(times), min(times)
    print(f"decide(): 1 current + {len(targets)} targets x {len(SEQ_LENS)} sequence lengths, "
          f"{runs} runs: median {median:.1f} ms, best {best:.1f} ms, worst {max(times):.1f} ms "
          f"(budget {BUDGET_MS:.0f} ms)")
    return 0 if median <= BUDGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
