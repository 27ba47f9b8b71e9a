"""Reading a user-named file: its bytes, or one InputError line saying why not."""

from __future__ import annotations

from pathlib import Path

from advisor.core.errors import InputError
from advisor.core.formats import decode_text


def read_bytes(path: str | Path) -> bytes:
    """A file's bytes, or an InputError saying why it can't be read."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror})", file=str(path)) from None


def read_text(path: str | Path) -> str:
    """A UTF-8 text file, or an InputError saying why it can't be read."""
    return decode_text(read_bytes(path), str(path))
