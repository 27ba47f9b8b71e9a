"""User-facing input errors.

Bad input is not a bug: it gets one line naming the file, the field and the
value, and the CLI exits with code 2. Tracebacks are kept for real bugs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from advisor.core.text import clean

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

    def one_line(self, name_field: Callable[[str], str] | None = None) -> str:
        """`name_field`: how the reader's front end names a field (the wizard's labels); by
        default, as the answers file spells it."""
        parts = []
        if self.file:
            parts.append(self.file)
        if self.entry:
            parts.append(f"entry {self.entry!r}")
        if self.field:
            parts.append(name_field(self.field) if name_field else f"field {self.field!r}")
        if self.has_value:
            shown = repr(self.value)
            if len(shown) > 80:
                shown = shown[:77] + "..."
            parts.append(f"value {shown}")
        where = ": ".join([", ".join(parts)]) if parts else ""
        text = f"{where}: {self.message}" if where else self.message
        return clean(" ".join(text.split()))  # file names and messages may carry anyone's text

    def __str__(self) -> str:
        return self.one_line()


class FieldError(InputError, ValueError):
    """An input error a model's validator raises about one of its own fields. Raised inside
    pydantic's validation it is a ValueError there, so the error keeps the path to the model
    it was raised in (`workload` of an answers file, `stages.0.workload` of a pipeline) and
    `validation_error` adds this field under it; raised anywhere else it is an InputError."""


# The schemas advisor writes, so a file of the wrong kind can be named for what it is.
KNOWN_SCHEMAS = {
    "advisor.probe-record": "a probe record",
    "advisor.decision-report": "a decision report",
    "advisor.pulled": "a pulled-data cache",
}


def not_ours(what: str, expected: str, found: Any, file: str) -> InputError:
    """The error for a document whose schema is not the one expected.

    Its schema value is shown only when it is one of ours: the file may be anything, and
    an error must not quote what is in someone's unrelated file.
    """
    if isinstance(found, str) and found in KNOWN_SCHEMAS:
        return InputError(f"this is {KNOWN_SCHEMAS[found]}, not {what}", file=file,
                          field="schema", value=found)
    return InputError(f"not {what} (expected schema {expected!r})", file=file, field="schema")


@contextmanager
def in_file(file: str) -> Iterator[None]:
    """Errors raised inside are about `file` when they name none: e.g. `decide` refusing
    an answers file's GPU, so the line says which file to fix."""
    try:
        yield
    except InputError as exc:
        exc.file = exc.file or file
        raise
