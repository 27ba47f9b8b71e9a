"""The `advisor` command line.

Each subcommand lives in its own module with a `register(subparsers)` function
that adds its parser and sets `handler`. Modules here stay light at import:
torch and textual are imported inside handlers, never at module level, so
`advisor --help` and the catalog commands start fast.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import typing
from collections.abc import Sequence
from pathlib import Path

from advisor import __version__
from advisor.core import EXIT_INPUT_ERROR, InputError

# Subcommand modules, in the order `advisor --help` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "catalog", "prices", "probe", "compare", "decide", "report", "validate", "configs",
)


class _Parser(argparse.ArgumentParser):
    """A usage error is one line that points at --help, not the whole usage block."""

    def error(self, message: str) -> typing.NoReturn:
        self.exit(EXIT_INPUT_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="advisor",
        description=(
            "Is it worth moving this workload from GPU X to GPU Y? "
            "Run with no arguments for the interactive wizard."
        ),
    )
    parser.add_argument("--version", action="version", version=f"advisor {__version__}")
    parser.add_argument("--resume", metavar="REPORT", type=Path, default=None,
                        help="open the wizard on a saved report.toml, at its verdict")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"advisor.cli.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command and return its exit code; output trouble never becomes a traceback.

    - stdout closed early (`advisor catalog list --json | head -c 10`): quiet, exit 141 as a
      process killed by SIGPIPE would, like coreutils; the rest of the output goes nowhere;
    - bad input, or an OSError on a path the user named: one line, exit 2;
    - Ctrl-C: one line, exit 130. Started as `advisor` (`advisor.__main__`), that is the
      handler installed before any import, kept for every command that has nothing to
      keep: it ends the process at once, so no interrupt can be swallowed where Python
      ignores exceptions (a weakref callback, a finaliser) and no write is left half done
      (writes are atomic). The wizard and `advisor probe` (which keeps what it measured)
      take Ctrl-C as a KeyboardInterrupt instead, caught here.
    """
    try:
        try:
            return _dispatch(argv)
        finally:
            sys.stdout.flush()  # inside the try: a closed pipe surfaces here, not at exit
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        _say("advisor: interrupted")
        return EXIT_INTERRUPTED


@contextlib.contextmanager
def _ctrl_c_as_exception(wanted: bool) -> typing.Iterator[None]:
    """Inside, Ctrl-C is a KeyboardInterrupt (when `wanted` and the program's handler is
    one that ends the process); the handler is put back on the way out."""
    current = signal.getsignal(signal.SIGINT)
    if not wanted or current in (signal.SIG_IGN, signal.default_int_handler, None):
        yield
        return
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:  # not the main thread: nothing to change
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, current)


def _dispatch(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    try:
        with _ctrl_c_as_exception(handler is None or getattr(args, "keeps_partial", False)):
            if handler is None:
                return run_wizard(args)
            return int(handler(args) or 0)
    except InputError as exc:
        _say(f"advisor: error: {exc.one_line()}")
        return EXIT_INPUT_ERROR
    except BrokenPipeError:
        raise
    except OSError as exc:
        if exc.filename is None:  # not about a path: a bug or the system, keep the traceback
            raise
        where = f"{exc.filename} -> {exc.filename2}" if exc.filename2 else str(exc.filename)
        _say(f"advisor: error: {where}: {exc.strerror or exc}")
        return EXIT_INPUT_ERROR


EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 128 + 13  # SIGPIPE


def _say(line: str) -> None:
    """One line on stderr, even when stderr itself is a closed pipe."""
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)


def _discard_stdout() -> None:
    """Point stdout at the null device, so that the flush at interpreter exit finds nothing
    to complain about (the recipe in Python's signal documentation)."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def run_wizard(args: argparse.Namespace) -> int:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(
            "advisor: no terminal attached. For a headless run use "
            "`advisor decide --answers answers.toml --out report.toml` "
            "or `advisor compare --help`.",
            file=sys.stderr,
        )
        return EXIT_INPUT_ERROR
    from advisor.tui.app import run_app  # Textual loads only for the wizard

    return run_app(resume=args.resume)
