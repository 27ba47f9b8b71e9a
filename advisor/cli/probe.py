"""`advisor probe`: measure what this box achieves and write a probe record.

The same suite and flags as `python -m probes run` (the standalone path for a
rented box): the flags are defined once in probes.cli, a stdlib-only module.
torch and the probes themselves load only when the command runs.
"""

from __future__ import annotations

import argparse
from typing import Any

DESCRIPTION = """\
Runs the on-device probes: matmul MAMF (time-budgeted shape search, or the full
mamf-finder grid with --exhaustive), attention TFLOPS through SDPA and flash-attn,
memory and host-link bandwidth, and with --health the spread across local GPUs.
The default suite takes about a minute on a datacenter GPU; on a CPU it runs at
toy sizes and says so. Ctrl-C stops after the current measurement and keeps the
partial record (a second Ctrl-C stops at once). For all-reduce bandwidth run
`torchrun --standalone --nproc-per-node N -m probes collectives --out FILE`.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from probes.cli import add_suite_arguments

    p = sub.add_parser(
        "probe",
        help="measure this box: MAMF, attention, bandwidth, node health",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_suite_arguments(p)
    p.set_defaults(handler=cmd_probe)
    psub = p.add_subparsers(dest="probe_command", metavar="import")
    imp = psub.add_parser("import", help="file a probe record made on another box, by GPU")
    imp.add_argument("file", help="a record from `advisor probe` or `python -m probes`")
    imp.add_argument("--gpu", help="catalog id to file it under, when the record names none")
    imp.set_defaults(handler=cmd_import)


def cmd_import(args: argparse.Namespace) -> int:
    from advisor.io.probe_store import import_command

    return import_command(args.file, args.gpu)


def cmd_probe(args: argparse.Namespace) -> int:
    from advisor.core import parse_probe_record
    from advisor.io.atomic import write_atomic
    from probes.cli import run_command
    from probes.record import to_json

    def write(record: dict[str, Any], path: str) -> None:
        write_atomic(path, to_json(record))

    def check(record: dict[str, Any]) -> None:
        parse_probe_record(record, args.out or "probe run")  # the mirror must accept our own record

    return run_command(args, write, check, prog="advisor")
