"""Atomic writes: all or nothing, no temporary files left, ordinary permissions."""

from __future__ import annotations

import os
import stat

import pytest

from advisor.io import atomic
from advisor.io.atomic import write_atomic


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_writes_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "sub" / "report.toml"
    write_atomic(target, "a = 1\n")
    assert target.read_text() == "a = 1\n"
    assert [p.name for p in target.parent.iterdir()] == ["report.toml"]


def test_new_file_gets_the_umask_mode_not_0600(tmp_path):
    target = tmp_path / "report.toml"
    write_atomic(target, b"x")
    assert _mode(target) == 0o666 & ~atomic._UMASK


def test_existing_mode_is_kept(tmp_path):
    target = tmp_path / "report.toml"
    target.write_text("old")
    os.chmod(target, 0o640)
    write_atomic(target, "new")
    assert target.read_text() == "new" and _mode(target) == 0o640


def test_a_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "report.toml"
    target.write_text("old")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(atomic.os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.toml"]
