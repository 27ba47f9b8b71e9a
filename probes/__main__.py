"""`python -m probes run|collectives|workload`: the standalone path for a rented box.

    python -m probes run --out box.json [--quick|--full] [--exhaustive] [--dtype bf16,fp8]
    python -m probes workload --shape model.toml --seq-len 8k --out box.json
    torchrun --standalone --nproc-per-node 8 -m probes collectives --out box.json --merge
    python -m probes.bench_search        # quick search vs exhaustive sweep, measured

Copy the resulting box.json home and give it to `advisor`.
"""

if __name__ == "__main__":  # Ctrl-C policy first, before anything slow is imported
    import _signal  # the interpreter's own, already loaded: `signal` takes ~10 ms to import
    import os as _os  # already imported by `site`

    def _early(signum: int, frame: object) -> None:  # until the policy below is in
        _os.write(2, b"probes: interrupted before any measurement; nothing was written\n")
        _os._exit(130)

    _signal.signal(_signal.SIGINT, _early)
    from .interrupts import CONTROLLER

    CONTROLLER.install()

import argparse
import sys
from collections.abc import Sequence

from .cli import EXIT_BROKEN_PIPE, EXIT_INPUT_ERROR, _quiet_stdout, add_suite_arguments, run_command
from .interrupts import EXIT_INTERRUPTED
from .workload_cli import add_workload_parser


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
        help="put the results into the existing record at --out instead of a new one; "
        "refused when that record's stamp (GPU, driver, versions, settings) differs",
    )
    coll.add_argument(
        "--force", action="store_true", help="with --merge: merge even when the stamps differ"
    )
    coll.add_argument("--json", action="store_true", help="print the record as JSON")
    add_workload_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "collectives":
            from .collectives import collectives_command

            return collectives_command(args)
        return run_command(args)
    except KeyboardInterrupt:  # a safety net; the interrupt policy normally handles Ctrl-C
        print("probes: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as exc:  # a user-named path that failed late: one line, never a traceback
        name = f"{exc.filename}: " if exc.filename else ""
        print(f"probes: error: {name}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_INPUT_ERROR


if __name__ == "__main__":
    sys.exit(main())
