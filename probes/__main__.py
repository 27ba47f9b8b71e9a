"""`python -m probes run|collectives`: the standalone path for a rented box.

    python -m probes run --out box.json [--quick|--full] [--exhaustive] [--dtype bf16,fp8]
    torchrun --standalone --nproc-per-node 8 -m probes collectives --out coll.json
    python -m probes.bench_search        # quick search vs exhaustive grid

Copy the resulting box.json home and give it to `advisor`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from probes.cli import add_suite_arguments, run_command


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m probes", description="Measure what this box actually achieves."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    run = sub.add_parser("run", help="run the probe suite and write a record")
    add_suite_arguments(run)
    coll = sub.add_parser(
        "collectives",
        help="all-reduce bus bandwidth; launch with torchrun",
        description="All-reduce bus bandwidth over a sweep of sizes. Launch with torchrun, e.g. "
        "`torchrun --standalone --nproc-per-node 8 -m probes collectives --out coll.json`.",
    )
    coll.add_argument("--sizes", help="comma-separated sizes, e.g. 1M,16M,256M,1G (binary units)")
    coll.add_argument("--iters", type=int, help="timed iterations per size (default 20, CPU 5)")
    coll.add_argument("--warmup", type=int, default=3, help="untimed iterations per size")
    coll.add_argument("--backend", choices=("auto", "nccl", "gloo"), default="auto")
    coll.add_argument("--timeout", type=float, default=600.0, help="process-group timeout, seconds")
    coll.add_argument("--catalog-id", help="catalog entry to compare with")
    coll.add_argument("--out", metavar="FILE", help="write the record here (rank 0)")
    coll.add_argument(
        "--merge",
        action="store_true",
        help="put the results into the existing record at --out instead of a new one",
    )
    coll.add_argument("--json", action="store_true", help="print the record as JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "collectives":
            from probes.collectives import collectives_command

            return collectives_command(args)
        from probes.record import write_record

        return run_command(args, write_record)
    except KeyboardInterrupt:  # before the suite started, or a second Ctrl-C outside it
        print("probes: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
