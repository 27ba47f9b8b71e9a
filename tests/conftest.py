"""Suite-wide isolation: no test reads or writes the developer's real advisor data."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def advisor_home(tmp_path_factory, monkeypatch) -> Path:
    """A fresh ADVISOR_HOME per test (subprocesses inherit it): pulled data, imported probes."""
    home = tmp_path_factory.mktemp("advisor-home")
    monkeypatch.setenv("ADVISOR_HOME", str(home))
    return home
