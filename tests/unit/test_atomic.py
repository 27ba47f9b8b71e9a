"""The one writer: atomic for files, through links, straight through to FIFOs and descriptors,
never replacing what is not a regular file, refusing bad paths before any work, and cleaning
up after a writer killed mid-write."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from advisor.core.errors import InputError
from advisor.io import atomic
from advisor.io.atomic import TEMP_MARK, check_output_path, remove_stale_temporaries, write_output


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _temporaries(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if TEMP_MARK in p.name]


@pytest.fixture
def umask():
    """Set the process umask for one test, then put the old one back."""
    old = os.umask(0o022)
    yield os.umask
    os.umask(old)


# --- regular files ------------------------------------------------------------------------

def test_writes_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "report.toml"
    assert write_output(target, "a = 1\n") == target
    assert target.read_text() == "a = 1\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.toml"]


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_a_new_file_gets_the_umask_mode(tmp_path: Path, umask, mask: int, expected: int) -> None:
    umask(mask)
    target = tmp_path / "report.toml"
    write_output(target, b"x")
    assert _mode(target) == expected


@pytest.mark.parametrize("mode", [0o640, 0o600, 0o664])
def test_an_existing_file_keeps_its_mode(tmp_path: Path, umask, mode: int) -> None:
    umask(0o022)
    target = tmp_path / "report.toml"
    target.write_text("old")
    os.chmod(target, mode)
    write_output(target, "new")
    assert target.read_text() == "new" and _mode(target) == mode


def test_a_failed_write_keeps_the_old_file_and_says_why(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "report.toml"
    target.write_text("old")

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", full)
    with pytest.raises(InputError) as err:
        write_output(target, "new")
    assert err.value.one_line() == f"{target}: cannot write (No space left on device)"
    assert target.read_text() == "old"
    assert _temporaries(tmp_path) == []


def test_ctrl_c_mid_write_keeps_the_old_file(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "report.toml"
    target.write_text("old")

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_output(target, "new")
    assert target.read_text() == "old" and _temporaries(tmp_path) == []


def test_create_parents_is_for_advisor_own_folders(tmp_path: Path) -> None:
    target = tmp_path / "pulled" / "prices.json"
    with pytest.raises(InputError, match="does not exist"):
        write_output(target, "{}")
    write_output(target, "{}", create_parents=True)
    assert target.read_text() == "{}"


# --- links --------------------------------------------------------------------------------

def test_a_link_stays_and_its_target_is_updated(tmp_path: Path, umask) -> None:
    umask(0o022)
    real = tmp_path / "data" / "report.toml"
    real.parent.mkdir()
    real.write_text("old")
    os.chmod(real, 0o640)
    link = tmp_path / "latest.toml"
    link.symlink_to(Path("data") / "report.toml")  # relative, as people make them
    write_output(link, "new")
    assert link.is_symlink() and os.readlink(link) == os.path.join("data", "report.toml")
    assert real.read_text() == "new" and _mode(real) == 0o640
    assert _temporaries(tmp_path) == [] and _temporaries(real.parent) == []


def test_a_chain_of_links_updates_the_last_file(tmp_path: Path) -> None:
    real = tmp_path / "real.toml"
    real.write_text("old")
    (tmp_path / "b").symlink_to(real)
    (tmp_path / "a").symlink_to(tmp_path / "b")
    assert check_output_path(tmp_path / "a") == real
    write_output(tmp_path / "a", "new")
    assert (tmp_path / "a").is_symlink() and (tmp_path / "b").is_symlink()
    assert real.read_text() == "new"


def test_a_dangling_link_gets_its_file_created(tmp_path: Path) -> None:
    link = tmp_path / "out.toml"
    link.symlink_to(tmp_path / "later.toml")
    write_output(link, "x")
    assert link.is_symlink() and (tmp_path / "later.toml").read_text() == "x"


def test_a_link_to_a_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "dir")
    with pytest.raises(InputError, match="is a folder"):
        check_output_path(tmp_path / "link")


# --- not regular files --------------------------------------------------------------------

def test_a_fifo_is_written_through_and_stays_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    # daemon: were the FIFO replaced, the reader would wait forever for a writer
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()  # opening for write blocks until this reader has opened its end
    write_output(fifo, "a = 1\n")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    reader.join()
    assert got == [b"a = 1\n"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_a_link_to_a_fifo_writes_through_and_both_stay(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "out"
    link.symlink_to(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    write_output(link, b"xyz")
    assert link.is_symlink() and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    reader.join()
    assert got == [b"xyz"]


def test_a_fifo_nobody_reads_is_one_line_in_bounded_time(tmp_path: Path, monkeypatch) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    monkeypatch.setattr(atomic, "READER_WAIT_S", 0.2)
    started = time.monotonic()
    with pytest.raises(InputError, match=r"no reader opened this FIFO within 0\.2 s"):
        write_output(fifo, "a = 1\n")
    assert time.monotonic() - started < 30  # was: blocked until a reader came, forever
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_fifo_reader_that_comes_late_still_gets_the_document(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    opened = threading.Event()

    def late_reader() -> None:
        opened.wait()  # only once the writer is already waiting for a reader
        got.append(fifo.read_bytes())

    reader = threading.Thread(target=late_reader, daemon=True)
    reader.start()
    real_sleep = time.sleep

    def sleep_then_open(seconds: float) -> None:
        opened.set()
        real_sleep(seconds)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(atomic.time, "sleep", sleep_then_open)
        write_output(fifo, b"late")
    reader.join()
    assert got == [b"late"]


def test_dev_fd_is_this_process_descriptor(tmp_path: Path) -> None:
    r, w = os.pipe()
    try:
        write_output(f"/dev/fd/{w}", "hello")
        os.close(w)
        w = -1
        assert os.read(r, 100) == b"hello"
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


def test_dev_stdout_follows_what_was_printed(capfd) -> None:
    print("summary", flush=False)
    write_output("/dev/stdout", "report\n")
    assert capfd.readouterr().out == "summary\nreport\n"


def test_a_closed_descriptor_is_refused() -> None:
    fd = os.open(os.devnull, os.O_RDONLY)
    os.close(fd)
    with pytest.raises(InputError, match=f"file descriptor {fd} is not open"):
        check_output_path(f"/dev/fd/{fd}")


def test_a_socket_is_refused() -> None:
    with tempfile.TemporaryDirectory(dir="/tmp") as short:  # AF_UNIX paths are short
        path = os.path.join(short, "s")
        sock = socket.socket(socket.AF_UNIX)
        try:
            sock.bind(path)
            with pytest.raises(InputError, match="is a socket"):
                write_output(path, "x")
            assert stat.S_ISSOCK(os.lstat(path).st_mode)
        finally:
            sock.close()


# --- refused before any work --------------------------------------------------------------

def test_a_folder_is_refused_with_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        check_output_path(tmp_path)
    line = err.value.one_line()
    assert line.startswith(f"{tmp_path}: is a folder; name a file in it")
    assert "\n" not in line and tmp_path.is_dir()


def test_a_missing_folder_is_refused_and_nothing_is_made(tmp_path: Path) -> None:
    target = tmp_path / "nope" / "r.toml"
    with pytest.raises(InputError) as err:
        check_output_path(target)
    assert err.value.one_line() == (f"{target}: cannot write: folder {tmp_path / 'nope'} "
                                    "does not exist")
    assert list(tmp_path.iterdir()) == []


def test_proc_is_refused_like_any_missing_folder() -> None:
    with pytest.raises(InputError, match="folder /proc/nope does not exist"):
        check_output_path("/proc/nope/r.toml")


def test_a_file_used_as_a_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(InputError, match="part of the path is a file"):
        check_output_path(tmp_path / "f" / "r.toml")


def test_the_check_creates_nothing(tmp_path: Path) -> None:
    assert check_output_path(tmp_path / "r.toml") == tmp_path / "r.toml"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_a_read_only_folder_is_refused(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        with pytest.raises(InputError, match="permission denied"):
            check_output_path(ro / "r.toml")
    finally:
        ro.chmod(0o755)


# --- temporaries orphaned by kill -9 ------------------------------------------------------

KILLED_MID_WRITE = """
import os, sys
from advisor.io import atomic

def hang(fd):  # the temporary file is written; stop here until killed
    print("ready", flush=True)
    sys.stdin.read()

atomic.os.fsync = hang
atomic.write_output(sys.argv[1], "half a report")
"""


def test_a_temporary_left_by_kill_9_goes_with_the_next_write(tmp_path: Path) -> None:
    target = tmp_path / "report.toml"
    child = subprocess.Popen([sys.executable, "-c", KILLED_MID_WRITE, str(target)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
        [orphan] = _temporaries(tmp_path)
        assert f".{child.pid}." in orphan
    finally:
        child.kill()  # SIGKILL: no except/finally runs in the child
        child.wait()
    assert _temporaries(tmp_path) == [orphan] and not target.exists()
    write_output(tmp_path / "other.toml", "x")
    assert _temporaries(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.toml"]


def test_other_hosts_temporaries_go_only_when_old(tmp_path: Path) -> None:
    fresh = tmp_path / f".r.toml{TEMP_MARK}otherhost.{os.getpid()}.0a1b"
    old = tmp_path / f".s.toml{TEMP_MARK}otherhost.{os.getpid()}.0a1c"
    mine = tmp_path / f".t.toml{TEMP_MARK}{atomic._host()}.{os.getpid()}.0a1d"
    unrelated = tmp_path / ".r.toml.tmp"
    for p in (fresh, old, mine, unrelated):
        p.write_text("")
    now = time.time()
    os.utime(old, (now - atomic.STALE_AFTER_S - 1, now - atomic.STALE_AFTER_S - 1))
    assert remove_stale_temporaries(tmp_path, now=now) == [old]
    assert {p.name for p in tmp_path.iterdir()} == {fresh.name, mine.name, unrelated.name}


def test_a_long_name_still_fits(tmp_path: Path) -> None:
    target = tmp_path / ("r" * 250)
    write_output(target, "x")
    assert target.read_text() == "x"


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="Linux /proc")
def test_an_existing_file_in_proc_is_refused_even_for_root() -> None:
    """os.access says yes to root everywhere; making a file there is the truthful test."""
    with pytest.raises(InputError, match="cannot write in folder /proc"):
        check_output_path("/proc/version")
