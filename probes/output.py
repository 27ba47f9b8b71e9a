"""Where a record goes: checked before anything is measured, written without harm.

`check_target(path)` runs before the first measurement and refuses, in one line naming
the path and the reason, a directory, a missing or unwritable folder, or anything that
is neither a file, a FIFO nor a character device. `write_text(target, text)` then:

- next to a regular file (or a new one): writes a temporary file in the same folder and
  renames it over the target, so an interrupted write never leaves half a record; an
  existing file keeps its mode (and owner, where we may set it), a new one gets the
  umask's mode, as a plain open() would give it;
- through a symlink: writes the link's target that way; the link itself stays;
- to a character device or FIFO (/dev/null, a pipe, /dev/stdout): writes straight
  through, never replacing the node;
- cleans up temporary files that a killed run (kill -9) left in that folder.

`save_record_text()` adds the last resort: if the write still fails, the text goes to a
fallback file whose path is returned, so no measurement is ever lost. Stdlib only.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import socket
import stat
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


class OutputError(Exception):
    """One line: the path as the user gave it, and why it cannot be written."""


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()  # read once at import, before any thread exists
_STALE_AFTER_S = 24 * 3600
_HOST = hashlib.sha1(socket.gethostname().encode(errors="replace")).hexdigest()[:8]
_TMP_RE = re.compile(r"^\.(?P<name>.+)\.probe-tmp-(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-[0-9a-f]+$")
# Paths that mean "this process's standard streams": written through sys.stdout/stderr.
# `-` is standard output, as on any command line (`--out -`).
_STD_STREAMS = {
    "-": 1,
    "/dev/stdout": 1,
    "/dev/fd/1": 1,
    "/proc/self/fd/1": 1,
    "/dev/stderr": 2,
    "/dev/fd/2": 2,
    "/proc/self/fd/2": 2,
}


@dataclass(frozen=True)
class Target:
    given: str  # as the user typed it, for messages
    path: Path  # where the bytes go, symlinks followed
    kind: str  # "file" (exists), "new", "stream" (FIFO or character device), "stdout", "stderr"

    @property
    def atomic(self) -> bool:
        return self.kind in ("file", "new")

    @property
    def repeatable(self) -> bool:
        """Whether checkpoints may rewrite it: a stream gets the record once, at the end."""
        return self.atomic


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _fail(given: str, reason: str) -> OutputError:
    return OutputError(f"{given}: {reason}")


def check_target(given: str | os.PathLike[str]) -> Target:
    """The checked destination for `given`, or an OutputError saying why it cannot be one."""
    text = os.fspath(given)
    if not text or text.strip() != text or "\x00" in text:
        raise _fail(repr(text), "not a usable file name")
    if text in _STD_STREAMS:
        return Target(text, Path(text), "stdout" if _STD_STREAMS[text] == 1 else "stderr")
    real = Path(os.path.realpath(text))
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _fail(text, _reason(exc)) from None
    if st is None:
        return _check_new(text, real)
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        example = os.path.join(text, "box.json")
        raise _fail(text, f"is a directory; name a file in it, e.g. {example}")
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        if not os.access(real, os.W_OK):
            raise _fail(text, "permission denied")
        return Target(text, real, "stream")
    if not stat.S_ISREG(mode):
        what = "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else (
            "not a regular file"
        )
        raise _fail(text, f"is {what}; name a regular file, a FIFO or a character device")
    if not os.access(real, os.W_OK):
        raise _fail(text, "permission denied")
    _probe_folder(text, real.parent)
    return Target(text, real, "file")


def _check_new(text: str, real: Path) -> Target:
    parent = real.parent
    try:
        pst = os.stat(parent)
    except FileNotFoundError:
        raise _fail(text, f"folder {parent} does not exist") from None
    except OSError as exc:
        raise _fail(text, f"folder {parent}: {_reason(exc)}") from None
    if not stat.S_ISDIR(pst.st_mode):
        raise _fail(text, f"{parent} is not a folder")
    _probe_folder(text, parent)
    return Target(text, real, "new")


def _probe_folder(text: str, folder: Path) -> None:
    """Create and remove a temporary file there: the only test that root, read-only mounts
    and /proc all answer truthfully."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".probe-check-", dir=folder)
    except OSError as exc:
        raise _fail(text, f"cannot write in {folder}: {_reason(exc)}") from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def clean_stale_temps(folder: Path, now: float | None = None) -> list[Path]:
    """Remove temporary files a killed writer left: this host's dead pids, or a day old."""
    removed: list[Path] = []
    now = time.time() if now is None else now
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        m = _TMP_RE.match(name)
        if not m:
            continue
        path = folder / name
        try:
            age = now - os.lstat(path).st_mtime
        except OSError:
            continue
        pid = int(m.group("pid"))
        dead = m.group("host") == _HOST and pid != os.getpid() and not _pid_alive(pid)
        if dead or age > _STALE_AFTER_S:
            with contextlib.suppress(OSError):
                os.unlink(path)
                removed.append(path)
    return removed


def _write_atomic(target: Path, data: bytes) -> None:
    folder = target.parent
    clean_stale_temps(folder)
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    if old is not None and not stat.S_ISREG(old.st_mode):
        raise OSError(f"{target} is no longer a regular file")
    tmp = folder / f".{target.name}.probe-tmp-{_HOST}-{os.getpid()}-{secrets.token_hex(4)}"
    # 0o666 through the umask, exactly what open(..., "w") gives a new file.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        if old is not None:
            os.fchmod(fd, stat.S_IMODE(old.st_mode))
            if hasattr(os, "fchown") and (old.st_uid, old.st_gid) != (os.getuid(), os.getgid()):
                with contextlib.suppress(OSError):
                    os.fchown(fd, old.st_uid, old.st_gid)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    try:
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write_stream(path: Path, data: bytes) -> None:
    # No O_CREAT, no O_TRUNC: the node is written through, never replaced.
    fd = os.open(path, os.O_WRONLY | getattr(os, "O_NOCTTY", 0))
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def write_text(target: Target, text: str) -> Path:
    """Write `text` to a checked target (see the module docstring); raises OSError."""
    data = text.encode("utf-8")
    if target.kind in ("stdout", "stderr"):
        stream = sys.stdout if target.kind == "stdout" else sys.stderr
        stream.flush()
        stream.buffer.write(data) if hasattr(stream, "buffer") else stream.write(text)
        stream.flush()
        return target.path
    if target.kind == "stream":
        st = os.stat(target.path)
        if not (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
            raise OSError(f"{target.path} is no longer a FIFO or character device")
        _write_stream(target.path, data)
        return target.path
    _write_atomic(target.path, data)
    return target.path


def fallback_paths(stem: str) -> list[Path]:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = f"{stem}-{socket.gethostname()}-{stamp}-{os.getpid()}-{secrets.token_hex(2)}.json"
    folders = [Path(tempfile.gettempdir()), Path.home(), Path.cwd()]
    return [f / name for f in folders]


def save_fallback(text: str, stem: str = "probe-record") -> Path | None:
    """Write `text` to the first fallback location that takes it; None if none does."""
    for path in fallback_paths(stem):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except OSError:
            continue
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(text.encode("utf-8"))
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(path)
            continue
        return path
    return None


@dataclass(frozen=True)
class Saved:
    path: Path | None  # where the record is now, if anywhere
    error: str | None = None  # why the named target failed, one line
    fallback: bool = False


def save_record_text(target: Target, text: str) -> Saved:
    """Write to the target; if that fails, to a fallback file. Never raises OSError."""
    try:
        return Saved(write_text(target, text))
    except OSError as exc:
        reason = f"{target.given}: {_reason(exc) if exc.strerror else exc}"
    path = save_fallback(text)
    return Saved(path, reason, fallback=True)
