"""The one writer for every file advisor produces: reports, caches, probe records, exports,
screenshots. It respects what is already at the path:

- a regular file (or none yet) is replaced atomically: a temporary file in the same folder,
  fsync, then rename, so a crash or Ctrl-C never leaves half a report, and the old file stays
  until the new one is complete. An existing file keeps its mode (and, where allowed, its
  owner); a new one gets the mode the umask gives a plain `open()`, never mkstemp's 0600;
- a symbolic link is followed: its target is replaced atomically and the link stays;
- a character device or a FIFO (`/dev/null`, a terminal, a named pipe) is written straight
  through: the node is never replaced, so `--out /dev/null` run as root leaves `/dev/null`
  a device. A FIFO nobody opens for reading within READER_WAIT_S is one line, never a
  write blocked forever (the caller keeps its result elsewhere, and says where);
- `-` is standard output, as everywhere on a command line (`advisor decide --out -`);
  `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` and `/proc/self/fd/N` are this process's own
  descriptors, and are written to as such (the summary and the report keep their order);
- a folder, a block device, a socket or a missing parent folder is refused with one line
  (`InputError`, exit code 2). `check_output_path` says so before any work starts: call it
  first, then compute, then `write_output`.

A temporary file is named `.NAME.advisor-tmp.HOST.PID.RANDOM`. One orphaned by kill -9 is
removed by the next write to that folder: at once when its process is gone from this host,
otherwise once it is an hour old (another host sharing the folder, a reused pid).

A regular file with other hard links is replaced under this name only; the other names keep
the old contents, as with any atomic save.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import sys
import time
from pathlib import Path

from advisor.core.errors import InputError

TEMP_MARK = ".advisor-tmp."
STALE_AFTER_S = 3600.0
"""A temporary file this old is an orphan whoever made it: a real write takes milliseconds."""

_TEMP = re.compile(rf"^\..*{re.escape(TEMP_MARK)}(?P<host>[A-Za-z0-9-]+)\.(?P<pid>\d+)\.[0-9a-f]+$")
_DESCRIPTOR = re.compile(r"^/(?:dev/fd|proc/self/fd)/(\d+)$")
_STD = {"-": 1, "/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
READER_WAIT_S = 5.0
"""How long a write to a FIFO waits for a reader to open it, then says there is none."""
_NAME_KEPT = 96
"""Of the target's name in a temporary name: the whole must stay under NAME_MAX (255)."""


def check_output_path(path: str | os.PathLike[str], example: str = "report.toml") -> Path:
    """Where `write_output(path, ...)` will put its bytes, or an InputError saying why not.

    For a link that is the file it points to; for a device, FIFO or descriptor, the path
    itself. Nothing is created or changed. Call it before the work whose result goes there.
    `example` is the file name suggested when `path` is a folder.
    """
    given = os.fspath(path)
    if not given:
        raise InputError("no output file named (an empty path)")
    fd = _descriptor(given)
    if fd is not None:
        try:
            os.fstat(fd)
        except OSError:
            raise InputError(f"file descriptor {fd} is not open", file=given) from None
        return Path(given)
    try:
        st: os.stat_result | None = os.stat(given)
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise InputError("cannot write: part of the path is a file, not a folder",
                         file=given) from None
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror})", file=given) from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise InputError("is a folder; name a file in it, e.g. "
                             f"{os.path.join(given, example)}", file=given)
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            if not os.access(given, os.W_OK):
                raise InputError("cannot write (permission denied)", file=given)
            return Path(given)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"is a {_kind(st.st_mode)}; advisor writes only regular files, "
                             "character devices (/dev/null) and FIFOs", file=given)
    target = Path(os.path.realpath(given))  # a (possibly dangling) link: the file it names
    folder = target.parent
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise InputError(f"cannot write: folder {folder} {what}", file=given)
    why = _cannot_create_in(folder)
    if why:
        raise InputError(f"cannot write in folder {folder} ({why})", file=given)
    return target


def write_output(path: str | os.PathLike[str], data: str | bytes, *,
                 create_parents: bool = False, private: bool = False) -> Path:
    """Write `data` (str is UTF-8) to `path` as the module docstring says; return `path`.

    `create_parents` is for advisor's own data folders (caches, imported records): a
    user-named path's folder must already exist. `private` makes the file readable by its
    owner alone, whatever the umask or the old file's mode (a key). Any failure is an
    InputError naming the path and the reason, and a regular file is then left as it was.
    """
    given = os.fspath(path)
    if create_parents and given and _descriptor(given) is None:
        try:
            Path(given).parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create its folder ({exc.strerror})", file=given) from None
    target = check_output_path(given)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd = _descriptor(given)
        if fd is not None:
            _to_descriptor(fd, payload)
        elif not target.is_file() and target.exists():  # a device or FIFO: straight through
            _through(target, payload)
        else:
            _replace(target, payload, private)
    except OSError as exc:
        raise InputError(f"cannot write ({exc.strerror or exc})", file=given) from None
    return Path(given)


def is_stream(path: str | os.PathLike[str]) -> bool:
    """Whether `write_output` writes straight through (a descriptor, device or FIFO): such
    a destination takes one document, so write it once, at the end, not at checkpoints."""
    given = os.fspath(path)
    if _descriptor(given) is not None:
        return True
    try:
        mode = os.stat(given).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _descriptor(given: str) -> int | None:
    if given in _STD:
        return _STD[given]
    m = _DESCRIPTOR.match(given) or re.match(rf"^/proc/{os.getpid()}/fd/(\d+)$", given)
    return int(m[1]) if m else None


def _kind(mode: int) -> str:
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        view = view[os.write(fd, view):]


def _to_descriptor(fd: int, payload: bytes) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, OSError):
            if stream is not None and stream.fileno() == fd:
                stream.flush()  # what was printed before comes before the file
    _write_all(fd, payload)


def _open_reader_side(target: Path) -> int:
    """Open a device or FIFO for writing without blocking on a FIFO nobody reads: retried
    until READER_WAIT_S (a reader started just after us still gets the document)."""
    deadline = time.monotonic() + READER_WAIT_S
    while True:
        try:
            fd = os.open(target, os.O_WRONLY | _NOCTTY | _CLOEXEC | _NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: a FIFO with no reader yet
                raise
            if time.monotonic() >= deadline:
                raise InputError(f"no reader opened this FIFO within {READER_WAIT_S:g} s; "
                                 "nothing was written to it", file=str(target)) from None
            time.sleep(0.05)
            continue
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return fd


def _through(target: Path, payload: bytes) -> None:
    fd = _open_reader_side(target)
    try:
        _write_all(fd, payload)
    finally:
        os.close(fd)


def _replace(target: Path, payload: bytes, private: bool = False) -> None:
    folder = target.parent
    remove_stale_temporaries(folder)
    try:
        old: os.stat_result | None = None if private else target.stat()
    except FileNotFoundError:
        old = None
    tmp, fd = _create_temporary(target, 0o600 if old or private else 0o666)  # umask applies
    try:
        if old is not None and hasattr(os, "fchmod"):  # POSIX (Windows has no modes to keep)
            with contextlib.suppress(OSError):  # only root, or the owner for its own groups
                os.fchown(fd, old.st_uid, old.st_gid)
            os.fchmod(fd, stat.S_IMODE(old.st_mode))
        _write_all(fd, payload)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, target)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_folder(folder)


def _create_temporary(target: Path, mode: int) -> tuple[Path, int]:
    stem = f".{target.name[:_NAME_KEPT]}{TEMP_MARK}{_host()}.{os.getpid()}."
    while True:
        tmp = target.with_name(stem + secrets.token_hex(4))
        try:
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC, mode)
        except FileExistsError:
            continue


def _cannot_create_in(folder: Path) -> str | None:
    """Why no file can be made in `folder`, found by making (and removing) one: the only
    test that root, read-only mounts and /proc or /sys all answer truthfully."""
    try:
        tmp, fd = _create_temporary(folder / "check", 0o600)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    with contextlib.suppress(OSError):
        tmp.unlink()
    return None


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable where the platform allows (not on Windows)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _host() -> str:
    import platform

    return re.sub(r"[^A-Za-z0-9-]", "-", platform.node())[:40] or "host"


def _alive(pid: int) -> bool:
    if pid == os.getpid() or os.name == "nt":  # on Windows os.kill would end the process
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: someone else's live process
        return True
    return True


def remove_stale_temporaries(folder: Path, now: float | None = None) -> list[Path]:
    """Delete orphaned temporary files of this writer in `folder`; return what went.

    Never raises: a folder that cannot be listed, or a file another writer removed first,
    is simply skipped.
    """
    now = time.time() if now is None else now
    host = _host()
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        m = _TEMP.match(entry.name)
        if m is None:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode):
                continue
            gone = m["host"] == host and not _alive(int(m["pid"]))
            if gone or now - st.st_mtime > STALE_AFTER_S:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue
    return removed
