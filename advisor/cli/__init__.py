"""The `advisor` command line.

Each subcommand lives in its own module with a `register(subparsers)` function
that adds its parser and sets `handler`. Modules here stay light at import:
torch and textual are imported inside handlers, never at module level, so
`advisor --help` and the catalog commands start fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from advisor import __version__
from advisor.core.errors import EXIT_INPUT_ERROR, InputError

# Subcommand modules, in the order `advisor --help` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "catalog", "prices", "probe", "compare", "decide", "report", "validate", "configs",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
    try:  # Ctrl-C while the subcommands load is 130 and one line too, not a traceback
        parser = build_parser()
        args = parser.parse_args(argv)
    except KeyboardInterrupt:
        print("advisor: interrupted", file=sys.stderr)
        return 130
    handler = getattr(args, "handler", None)
    try:
        if handler is None:
            return run_wizard(args)
        return int(handler(args) or 0)
    except InputError as exc:
        print(f"advisor: error: {exc.one_line()}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    except KeyboardInterrupt:
        print("advisor: interrupted", file=sys.stderr)
        return 130


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
