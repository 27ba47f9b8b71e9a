"""A short command runs without the cycle collector (advisor.cli._no_cycle_collection);
the wizard and the probes, which stay, keep it; and `main` puts it back as it found it."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from advisor import cli
from advisor.cli import models


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether the collector was on while `advisor models` ran its output."""
    states: list[bool] = []
    real = models.show

    def show(*args: Any, **kwargs: Any) -> None:
        states.append(gc.isenabled())
        real(*args, **kwargs)

    monkeypatch.setattr(models, "show", show)
    return states


def test_a_short_command_runs_without_it_and_main_puts_it_back(seen, capsys) -> None:
    assert gc.isenabled()
    assert cli.main(["models"]) == 0
    assert seen == [False]
    assert gc.isenabled(), "back on after the command"
    assert "llama-3.1-8b" in capsys.readouterr().out


def test_a_failing_command_puts_it_back_too(capsys) -> None:
    assert cli.main(["compare", "--current", "no-such-gpu", "--target", "b200-sxm",
                     "--model", "llama-3.1-8b", "--seq-len", "4096"]) == cli.EXIT_INPUT_ERROR
    assert gc.isenabled()
    assert "no-such-gpu" in capsys.readouterr().err


def test_it_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        with cli._no_cycle_collection(True):
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_commands_that_stay_keep_it() -> None:
    with cli._no_cycle_collection(False):
        assert gc.isenabled()
