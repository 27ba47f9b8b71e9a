"""The output flags every reporting command shares, and the one place that honours them.

`--format text|md|html|svg|json` (`--json` stays as the short form scripts use) and
`-q/--quiet`: the verdict lines alone instead of the whole text, and no status lines.
rich loads only when something is drawn, so `--help` stays on the standard library.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from advisor.cli.schemas import Schema
    from advisor.present.blocks import Block

FORMATS = ("text", "md", "html", "svg", "json")
"""The formats the renderer draws (`emit.Format` names the same; a unit test keeps them
equal), here so that `--help` imports no rich."""


def add_output_options(p: argparse.ArgumentParser, *,
                       json_help: str = "machine-readable output (same as --format json)"
                       ) -> None:
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="text for the terminal (default), md, html or svg to share, or json")
    p.add_argument("--json", action="store_true", help=json_help)
    p.add_argument("-q", "--quiet", action="store_true",
                   help="only the verdict (or the result) and errors, no tables or notes")


def chosen(args: argparse.Namespace) -> str:
    """The format asked for: --json wins over the default text."""
    fmt = getattr(args, "format", None)
    if args.json:
        if fmt not in (None, "json"):
            from advisor.core import InputError

            raise InputError("--json is --format json; give one of them", field="--format",
                             value=fmt)
        return "json"
    return fmt or "text"


def show(args: argparse.Namespace, blocks: Callable[[], Sequence[Block]], title: str,
         data: Callable[[], Mapping[str, Any]], quiet_lines: Callable[[], list[str]] | None = None,
         *, schema: Schema) -> None:
    """Print what the flags ask for: `data()` as the JSON document `schema` names, the quiet
    lines, or `blocks()` drawn as text (fitted to the terminal) or as a shareable document."""
    from advisor.core import clean_block

    out = sys.stdout
    fmt = chosen(args)
    if fmt == "json":
        print(json.dumps(schema.document(data()), indent=2), file=out)
        return
    if args.quiet and fmt == "text" and quiet_lines is not None:
        print(clean_block("\n".join(quiet_lines())), file=out)
        return
    from advisor.cli.render import emit

    if fmt == "text":
        emit.print_text(blocks(), out)
        return
    document = emit.render(list(blocks()), fmt, title)  # type: ignore[arg-type]
    if fmt in ("html", "svg"):  # what the stream cannot show, as character references
        from advisor.cli.encoding import for_document

        document = for_document(document, out)
    out.write(document)


def status(args: argparse.Namespace, line: str, file: TextIO | None = None) -> None:
    """A status line ("report written to ..."), unless --quiet."""
    if not getattr(args, "quiet", False):
        print(line, file=file or sys.stderr)
