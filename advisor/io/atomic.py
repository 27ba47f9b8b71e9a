"""Atomic file writes: a temporary file in the same folder, fsync, then rename.

A crash or a failed validation mid-write never leaves a half-written report
or catalog behind; the old file stays until the new one is complete.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp makes 0600; give the file the mode a plain open() would (or keep the old one).
        os.fchmod(fd, _mode_for(target))
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _read_umask() -> int:
    """Read once at import, before any worker thread exists: os.umask can only be swapped."""
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


_UMASK = _read_umask()


def _mode_for(target: Path) -> int:
    try:
        return target.stat().st_mode & 0o777
    except FileNotFoundError:
        return 0o666 & ~_UMASK
