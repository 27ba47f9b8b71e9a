"""Suite-wide isolation: no test reads or writes the developer's real advisor data, and no
test depends on how the runner itself was started."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from hypothesis import settings

# The suite is deterministic: the property tests draw the same examples on every run, so
# CI never fails on a draw a developer could not reproduce. `HYPOTHESIS_PROFILE=explore`
# searches afresh (random seeds), to find new counter-examples on purpose.
settings.register_profile("deterministic", derandomize=True, print_blob=True)
settings.register_profile("explore", max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))


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
