"""Suite-wide isolation: no test reads or writes the developer's real advisor data, and no
test depends on how the runner itself was started."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """A runner started as a background job (`pytest &` in a script, some CI shells) ignores
    SIGINT, and every child it spawns inherits that: the tests that press Ctrl-C on a child
    would see it ignored. Catching it here makes each exec'd child start at the default."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def advisor_home(tmp_path_factory, monkeypatch) -> Path:
    """A fresh ADVISOR_HOME per test (subprocesses inherit it): pulled data, imported probes."""
    home = tmp_path_factory.mktemp("advisor-home")
    monkeypatch.setenv("ADVISOR_HOME", str(home))
    return home
