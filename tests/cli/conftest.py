from __future__ import annotations

import subprocess
import sys

import pytest


def run_advisor(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The CLI as a user runs it: a fresh interpreter, no TTY."""
    return subprocess.run(
        [sys.executable, "-m", "advisor", *args],
        capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def advisor_cli():
    return run_advisor
