"""The program's entry (`advisor.__main__.main`) runs a short command without the cycle
collector; the wizard and the probes, which stay, turn it back on; `advisor.cli.main`
called from elsewhere (a script, these tests) leaves it as it found it."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from advisor import cli
from advisor.cli import models


@pytest.fixture
def collector() -> Iterator[None]:
    """Whatever a test does to the collector, the next test finds it on and unfrozen."""
    yield
    gc.unfreeze()
    gc.enable()


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether the collector was on while `advisor models` drew its output."""
    states: list[bool] = []
    real = models.show

    def show(*args: Any, **kwargs: Any) -> None:
        states.append(gc.isenabled())
        real(*args, **kwargs)

    monkeypatch.setattr(models, "show", show)
    return states


PROGRAM = """
import gc, sys
import advisor.cli.models as models
real = models.show
def show(*args, **kwargs):
    print("collector on:", gc.isenabled(), file=sys.stderr)
    real(*args, **kwargs)
models.show = show
sys.argv = ["advisor", "models"]
from advisor.__main__ import main
raise SystemExit(main())
"""


def test_the_program_runs_a_short_command_without_it() -> None:
    """In its own process: the entry installs its Ctrl-C handler when imported."""
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == ["collector on: False"]
    assert "llama-3.1-8b" in done.stdout


def test_main_called_from_elsewhere_leaves_it_alone(seen, capsys) -> None:
    assert gc.isenabled()
    assert cli.main(["models"]) == 0
    assert seen == [True] and gc.isenabled()
    capsys.readouterr()


def test_the_wizard_turns_it_back_on_with_the_imports_frozen(collector, monkeypatch) -> None:
    states: list[tuple[bool, int]] = []

    def wizard(args: Any) -> int:
        states.append((gc.isenabled(), gc.get_freeze_count()))
        return 0

    monkeypatch.setattr(cli, "run_wizard", wizard)
    gc.unfreeze()
    gc.disable()  # as advisor.__main__ leaves it
    assert cli.main([]) == 0
    on, frozen = states[0]
    assert on and frozen > 10_000, "what was imported is frozen, then collection is back on"


EXIT = """
import atexit, gc, sys
atexit.register(lambda: print("at exit:", gc.isenabled(), gc.get_freeze_count() > 10_000,
                              file=sys.stderr))
sys.argv = ["advisor", "models"]
from advisor.__main__ import main
raise SystemExit(main())
"""


def test_a_short_command_leaves_what_it_made_to_the_exit() -> None:
    """The interpreter's last collection as it exits runs with the collector off too: what
    the command made is frozen first, so that collection does not walk it all."""
    done = subprocess.run([sys.executable, "-c", EXIT], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == ["at exit: False True"]
    assert "llama-3.1-8b" in done.stdout
