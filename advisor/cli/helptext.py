"""How every `--help` page is laid out: within the terminal's width (`COLUMNS`, as argparse
reads it), paragraph by paragraph.

A description is reflowed to the width one paragraph at a time (a blank line between
paragraphs), and a paragraph whose lines are all indented (an example command) is kept as
written. On the usage line an option whose choices would not fit beside the program's
name is shown by its name (`[--framework FRAMEWORK]`); its line under "options" still
lists them.
"""

from __future__ import annotations

import argparse
import re
import textwrap
from collections.abc import Callable, Iterable
from typing import Any

PREFIX = "usage: "


class HelpFormatter(argparse.HelpFormatter):
    _usage_room: int | None = None
    """While the usage line is drawn: the columns an option has beside the program's name."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out = []
        for paragraph in re.split(r"\n[ \t]*\n", text.strip("\n")):
            lines = paragraph.splitlines()
            if all(line[:1].isspace() for line in lines):
                out.append("\n".join(indent + line.rstrip() for line in lines))
            else:
                out.append(textwrap.fill(" ".join(line.strip() for line in lines), width,
                                         initial_indent=indent, subsequent_indent=indent,
                                         break_on_hyphens=False))
        return "\n\n".join(out)

    def _format_usage(self, usage: str | None, actions: Iterable[argparse.Action],
                      groups: Iterable[Any], prefix: str | None) -> str:
        width = self._width - self._current_indent
        indent = len(prefix if prefix is not None else PREFIX) + len(self._prog) + 1
        self._usage_room = width - (indent if indent <= 0.75 * width else len(PREFIX))
        try:
            return super()._format_usage(usage, actions, groups, prefix)
        finally:
            self._usage_room = None

    def _metavar_formatter(self, action: argparse.Action, default_metavar: str
                           ) -> Callable[[int], tuple[str, ...]]:
        room = self._usage_room
        if room is not None and action.metavar is None and action.choices is not None:
            listed = "{" + ",".join(str(c) for c in action.choices) + "}"
            flag = action.option_strings[0] if action.option_strings else ""
            if len(f"[{flag} {listed}]") > room:
                return lambda size: (default_metavar,) * size
        return super()._metavar_formatter(action, default_metavar)
