"""Reading a user-named file: its bytes, or one InputError line saying why not.

Reads are capped as HTTP bodies are: a regular file over the cap is refused from its
size without being read, and anything else (a device, a pipe: `report show /dev/zero`)
is read up to one byte past the cap and refused there, so no path can make advisor
hold more than the cap in memory. Opening never blocks on a FIFO without a writer.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from advisor.core.errors import InputError
from advisor.core.formats import decode_text
from advisor.core.model.bounds import MAX_JSON_BYTES, MAX_TOML_BYTES


def read_bytes(path: str | Path, limit: int = MAX_JSON_BYTES) -> bytes:
    """A file's bytes (at most `limit`), or an InputError saying why it can't be read."""
    file = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror})", file=file) from None
    try:
        st = os.fstat(fd)
        regular = stat.S_ISREG(st.st_mode)
        if regular and st.st_size > limit:
            raise InputError(f"file is {st.st_size:,} bytes, over the {limit:,} byte cap "
                             "on what advisor reads", file=file)
        if stat.S_ISDIR(st.st_mode):
            raise InputError("cannot read (Is a directory)", file=file)
        if not regular and hasattr(os, "set_blocking"):  # a pipe or device: read it as `cat`
            os.set_blocking(fd, True)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror})", file=file) from None
    finally:
        os.close(fd)
    if size > limit:
        raise InputError(f"more than {limit:,} bytes, the cap on what advisor reads", file=file)
    return b"".join(chunks)


def read_text(path: str | Path, limit: int = MAX_TOML_BYTES) -> str:
    """A UTF-8 text file (at most `limit` bytes), or an InputError saying why it can't be."""
    return decode_text(read_bytes(path, limit), str(path))
