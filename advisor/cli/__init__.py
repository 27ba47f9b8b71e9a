"""The `advisor` command line.

Each subcommand lives in its own module with a `register(subparsers)` function
that adds its parser and sets `handler`. Only the module of the command being run is
imported: the others are listed by name and one-line help alone, so `advisor --help`,
`--version` and `advisor catalog list` load no code they do not run. Modules stay light
at import too: torch, textual, rich and the engine load inside handlers.
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

COMMANDS: dict[str, str] = {
    "catalog": "list and inspect the GPU catalog, or pull a team one",
    "prices": "pull the team's price sheet as default prices",
    "probe": "measure this box: MAMF, attention, bandwidth, node health",
    "compare": "project a workload on the current GPU and targets, with a verdict each",
    "decide": "headless run: answers.toml in, decision report (TOML) out",
    "rank": "every catalog GPU for one workload, best first, with why the rest are out",
    "report": "show a decision report, or what changed between two",
    "validate": "check the model against published measurements, with its error",
    "configs": "GPU-count sweep and pipeline split",
    "models": "the model presets, with parameter counts and context lengths",
    "env": "versions, GPUs, driver, torch build and paths, to paste into a bug report",
    "completion": "print a shell completion script for bash, zsh or fish",
}
"""Each subcommand (its module is advisor.cli.NAME) and its line in `advisor --help`, in
the order listed there."""


def _help_formatter(prog: str) -> argparse.HelpFormatter:
    """argparse makes a formatter only to print help or a usage line: its module (and
    textwrap) load then, not on every start."""
    from advisor.cli.helptext import HelpFormatter

    return HelpFormatter(prog)


class _Parser(argparse.ArgumentParser):
    """A usage error is one line that points at --help, not the whole usage block; every
    command's help is laid out by `helptext.HelpFormatter` (within the terminal's width)."""

    def __init__(self, *args: typing.Any, **kwargs: typing.Any) -> None:
        kwargs.setdefault("formatter_class", _help_formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> typing.NoReturn:
        self.exit(EXIT_INPUT_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(argv: Sequence[str] | None = None, *, full: bool = False
                 ) -> argparse.ArgumentParser:
    """The parser for `argv`: the named command's module is loaded and registers its flags;
    every other command is a name and a line of help. `full` loads them all (completion)."""
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
    wanted = None if full else command_named(sys.argv[1:] if argv is None else argv)
    for name, line in COMMANDS.items():
        if full or name == wanted:
            importlib.import_module(f"advisor.cli.{name}").register(sub)
        else:
            sub.add_parser(name, help=line)
    return parser


def command_named(argv: Sequence[str]) -> str | None:
    """The subcommand `argv` names: its first word that is not an option of `advisor`'s own
    (`--resume REPORT` takes a value)."""
    words = iter(argv)
    for word in words:
        if word == "--":
            return next(words, None)
        if word == "--resume":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


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
    from advisor.cli.encoding import plain_streams

    plain_streams()  # an ASCII-only stdout gets plain stand-ins, not a traceback
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if args.command in (None, "probe"):  # the wizard and the probes stay, and use torch
        from advisor.heap import collect_cycles_from_here

        collect_cycles_from_here()
    else:
        single_threaded_blas()
    handler = getattr(args, "handler", None)
    try:
        with _ctrl_c_as_exception(handler is None or getattr(args, "keeps_partial", False)):
            if handler is None:
                return run_wizard(args)
            if getattr(args, "json", False):
                from advisor.cli.output import chosen

                chosen(args)  # --json beside another --format: refused before any work
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


def single_threaded_blas() -> None:
    """One OpenBLAS thread, unless the user chose: numpy's OpenBLAS otherwise starts a
    thread per core when it loads, which costs a short command more CPU than the engine's
    arrays (a few hundred numbers, elementwise) ever repay; on a loaded box they also spin
    against other work. Set before numpy is first imported, which is inside the handler."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


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
