"""One pull at a time: an exclusive lock on the pulled overlay.

Pulls of either kind take one lock (a flock on a file in the data folder) for the whole
fetch-merge-validate-write, so a `catalog pull` and a `prices pull` run at the same time
are serialised and each validates against what the other actually left: together they
can never leave an overlay that every command refuses. The lock is released if its
holder dies.

`fcntl` is imported here and only here, so reading commands work where it is missing.
There (Windows) pulls are not serialised: each is still fetched, validated against the
other cache as it found it and written atomically, so no file is ever half written; two
pulls run at the same moment can only leave two caches whose combination nobody
validated, which a command refuses in one line naming a cache if they disagree, and
which pulling again repairs.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator

from advisor.core.model import bounds as B
from advisor.io.fetch import FetchError
from advisor.io.paths import pulled_dir

try:
    import fcntl
except ImportError:  # Windows: see the module docstring
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".lock"


@contextlib.contextmanager
def overlay_lock(wait_s: float = B.MAX_PULL_S + 30,
                 sleep: Callable[[float], None] = time.sleep) -> Iterator[None]:
    """Hold the lock on the pulled overlay: one pull of either kind at a time.

    Waiting is bounded by the longest a pull can take, then it is one line. Without
    fcntl it holds nothing (see the module docstring).
    """
    if fcntl is None:
        yield
        return
    folder = pulled_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise FetchError(f"another pull has held the lock for over {wait_s:g} s",
                                     file=str(path)) from None
                sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
