"""Suite-wide isolation: no test reads or writes the developer's real advisor data."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_advisor_home(tmp_path_factory, monkeypatch):
    """Pulled catalogs and imported probes go to a fresh folder (subprocesses inherit it)."""
    monkeypatch.setenv("ADVISOR_HOME", str(tmp_path_factory.mktemp("advisor-home")))
