"""User-facing input errors.

Bad input is not a bug: it gets one line naming the file, the field and the
value, and the CLI exits with code 2. Tracebacks are kept for real bugs.
"""

from __future__ import annotations

from typing import Any

EXIT_INPUT_ERROR = 2


class InputError(Exception):
    """A problem with something the user (or a data file) supplied."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        entry: str | None = None,
        field: str | None = None,
        value: Any = None,
        has_value: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.entry = entry
        self.field = field
        self.value = value
        self.has_value = has_value or value is not None

    def one_line(self) -> str:
        parts = []
        if self.file:
            parts.append(self.file)
        if self.entry:
            parts.append(f"entry {self.entry!r}")
        if self.field:
            parts.append(f"field {self.field!r}")
        if self.has_value:
            shown = repr(self.value)
            if len(shown) > 80:
                shown = shown[:77] + "..."
            parts.append(f"value {shown}")
        where = ": ".join([", ".join(parts)]) if parts else ""
        text = f"{where}: {self.message}" if where else self.message
        return " ".join(text.split())

    def __str__(self) -> str:
        return self.one_line()
