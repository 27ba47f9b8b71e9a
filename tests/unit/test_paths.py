"""The advisor data folder: $ADVISOR_HOME, else the platform's convention (platformdirs)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from advisor.io.paths import data_dir, probes_dir, pulled_dir


def test_advisor_home_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADVISOR_HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", "/elsewhere")
    assert data_dir() == tmp_path
    assert (pulled_dir(), probes_dir()) == (tmp_path / "pulled", tmp_path / "probes")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG convention")
def test_linux_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ADVISOR_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert data_dir() == tmp_path / "advisor"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert data_dir() == tmp_path / ".local" / "share" / "advisor"


def test_the_platform_folder_is_what_platformdirs_says(monkeypatch: pytest.MonkeyPatch) -> None:
    import platformdirs

    monkeypatch.delenv("ADVISOR_HOME")
    assert data_dir() == platformdirs.user_data_path("advisor", appauthor=False)


def test_nothing_is_created(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADVISOR_HOME", str(tmp_path / "fresh"))
    data_dir(), pulled_dir(), probes_dir()
    assert list(tmp_path.iterdir()) == []
