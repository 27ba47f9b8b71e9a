"""`advisor probe`: measure what this box achieves and write a probe record.

The same suite and flags as `python -m probes run` (the standalone path for a
rented box): the flags are defined once in probes.cli, a stdlib-only module.
torch and the probes themselves load only when the command runs.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from advisor.core import InputError

DESCRIPTION = """\
Runs the on-device probes: matmul burst MAMF and sustained MSMF (a time-budgeted
shape search, or the full grid with --exhaustive), attention TFLOPS per kernel,
memory and host-link bandwidth, and with --health the spread across local GPUs.
The default suite takes about a minute on a datacenter GPU; on a CPU it runs at
toy sizes and says so. Ctrl-C stops after the current measurement and keeps the
partial record (a second Ctrl-C stops at once). For all-reduce bandwidth run
`torchrun --standalone --nproc-per-node N -m probes collectives --out FILE`.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from advisor.probes.cli import add_suite_arguments

    p = sub.add_parser(
        "probe",
        help="measure this box: MAMF, attention, bandwidth, node health",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_suite_arguments(p)
    p.set_defaults(handler=cmd_probe, keeps_partial=True)  # Ctrl-C is a KeyboardInterrupt
    psub = p.add_subparsers(dest="probe_command", metavar="import")
    imp = psub.add_parser("import", help="file a probe record made on another box, by GPU")
    imp.add_argument("file", help="a record from `advisor probe` or `python -m probes`")
    imp.add_argument("--gpu", help="catalog id to file it under, when the record names none")
    imp.set_defaults(handler=cmd_import)


def cmd_import(args: argparse.Namespace) -> int:
    from advisor.io.probe_store import import_command

    return import_command(args.file, args.gpu)


EXIT_INTERRUPTED = 130


@contextlib.contextmanager
def _sigint_held() -> Iterator[None]:
    """Hold Ctrl-C for the few milliseconds of a record write; it is delivered right after.

    The write is atomic anyway; holding it keeps the record on disk and what we say about
    it in step (no "written" for a write that a second Ctrl-C cut short)."""
    main = threading.current_thread() is threading.main_thread()
    if main:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        if main:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def cmd_probe(args: argparse.Namespace) -> int:
    """Run the suite. Ctrl-C is exit 130 with no traceback at every moment: during a
    measurement the suite stops after it and keeps the partial record (probes.runner); at
    any other moment (torch loading, the last write, the summary) we land here and say
    honestly what is on disk, rewriting the last checkpoint as interrupted if need be."""
    from advisor.io.measure import torch_missing

    missing = torch_missing()
    if missing:
        raise InputError(missing)
    from advisor.core import parse_probe_record
    from advisor.io.atomic import check_output_path, is_stream
    from advisor.probes.cli import run_command

    if args.out:
        check_output_path(args.out, example="box.json")  # before measuring, not after
    write = RecordWriter(stream=bool(args.out) and is_stream(args.out))

    def check(record: dict[str, Any]) -> None:
        write.final = record
        parse_probe_record(record, args.out or "probe run")  # the mirror must accept our own record

    try:
        return run_command(args, write, check, prog="advisor")
    except KeyboardInterrupt:
        return _interrupted(args.out, write)


class RecordWriter:
    """Writes each checkpoint and the final record to --out; no measurement is ever lost.

    A device, FIFO or descriptor gets only the final record (one document). When --out
    cannot be written after all (the disk filled, the folder went), the record goes on to
    a fallback file in the advisor data folder, and the final write fails with one line
    that says where the record is. It remembers the last record on disk and the one the
    suite returned, so a Ctrl-C between them can be described honestly.
    """

    def __init__(self, stream: bool = False) -> None:
        self.stream = stream
        self.fallback: Path | None = None
        self.failure: InputError | None = None
        self.last: dict[str, Any] | None = None  # the last record on disk
        self.final: dict[str, Any] | None = None  # the record the suite returned

    def __call__(self, record: dict[str, Any], path: str) -> None:
        final = bool(record.get("complete") or record.get("interrupted"))
        if self.stream and not final:
            return
        with _sigint_held():
            self._write(record, path, final)
            self.last = copy.deepcopy(record)

    def _write(self, record: dict[str, Any], path: str, final: bool) -> None:
        from advisor.io.atomic import write_output
        from advisor.io.paths import unsaved_path
        from advisor.probes.record import to_json

        text = to_json(record)
        if self.fallback is None:
            try:
                write_output(path, text)
                return
            except InputError as exc:
                self.failure = exc
                self.fallback = unsaved_path("probe", ".json")
                print(f"advisor: warning: {exc.one_line()}; keeping the record in "
                      f"{self.fallback} instead", file=sys.stderr)
        write_output(self.fallback, text, create_parents=True)
        if final and self.failure is not None:
            raise InputError(f"{self.failure.message}; the record is saved in {self.fallback}",
                             file=self.failure.file)

    def where(self, out: str) -> str:
        return str(self.fallback or out)


def _interrupted(out: str | None, writer: RecordWriter) -> int:
    final, last = writer.final, writer.last
    if final is not None:  # the suite had finished and the record was written
        state = "complete" if final.get("complete") else "partial (the run was interrupted)"
        where = f"; the record in {writer.where(out)} is {state}" if out else ""
        print(f"advisor: interrupted after the probes finished{where}", file=sys.stderr)
    elif last is not None and out:  # a checkpoint is on disk: say that it is partial
        done = {**last, "complete": False, "interrupted": True}
        done["notes"] = [*done.get("notes", []), "interrupted (Ctrl-C) between measurements"]
        writer(done, out)
        counts = ", ".join(f"{len(done.get(k) or [])} {k}" for k in
                           ("matmul", "attention", "bandwidth") if done.get(k))
        print(f"advisor: interrupted; partial record ({counts or 'no results yet'}) written to "
              f"{writer.where(out)}", file=sys.stderr)
    else:
        print("advisor: interrupted before any measurement; nothing was written",
              file=sys.stderr)
    return EXIT_INTERRUPTED
