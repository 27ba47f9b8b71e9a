"""Fixtures for the wizard: a frozen catalog, a GPU box and a CPU box, a fake probe runner.

Nothing here touches nvidia-smi, torch or the user's data folders, and the
catalog is a small copy in tests/tui/catalog, so snapshots only move when the
TUI does.
"""

from __future__ import annotations

import tomllib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from advisor.core.model.catalog import CATALOG_FILES, Catalog, build_catalog
from advisor.tui import demo
from advisor.tui.app import AdvisorApp
from advisor.tui.hardware import Hardware
from advisor.tui.runner import FakeProbeRunner, ProbeRunner
from advisor.tui.screens.export import ExportScreen
from advisor.tui.screens.verdict import VerdictScreen
from advisor.tui.state import WizardState

HERE = Path(__file__).parent


@pytest.fixture(autouse=True)
def close_as_ctrl_q_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test's app closes as ctrl+q closes it: first no more screens built ahead, and
    the one being mounted finished. Half a second after launch the app starts building the
    later steps' screens; a test that ended just then used to close the app mid-mount, and
    fail on whatever that screen's handlers could no longer find (`NoMatches '#counts'`)."""
    run_test = AdvisorApp.run_test

    @asynccontextmanager
    async def closing(self: AdvisorApp, *args: Any, **kwargs: Any) -> AsyncIterator[Pilot[None]]:
        async with run_test(self, *args, **kwargs) as pilot:
            try:
                yield pilot
            finally:
                await self.stop_building_ahead()

    monkeypatch.setattr(AdvisorApp, "run_test", closing)


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    folder = HERE / "catalog"
    return build_catalog({f: (folder / f).read_text(encoding="utf-8") for f in CATALOG_FILES})


@pytest.fixture
def gpu_box() -> Hardware:
    return demo.gpu_box()


@pytest.fixture
def cpu_box() -> Hardware:
    return demo.cpu_box()


@pytest.fixture
def make_app(catalog: Catalog, gpu_box: Hardware, tmp_path: Path) -> Callable[..., AdvisorApp]:
    """A fresh app per call: GPU box and fake runner unless told otherwise."""

    def make(hardware: Hardware | None = None, runner: ProbeRunner | None = None,
             state: WizardState | None = None, start: int = 0) -> AdvisorApp:
        app = AdvisorApp(catalog, hardware or gpu_box, runner or FakeProbeRunner(),
                         state=state, start=start, screenshot_dir=tmp_path,
                           export_dir=tmp_path)
        app.theme = "textual-dark"
        app.animation_level = "none"
        return app

    return make


@pytest.fixture
def ready_state() -> Callable[..., WizardState]:
    """Answers as they stand after Targets: H100 today, B200 and MI300X as targets."""

    def state(**overrides: Any) -> WizardState:
        values: dict[str, Any] = {"current": "h100-sxm", "targets": ["b200-sxm", "mi300x"],
                                  "reached": 2}
        values.update(overrides)
        return WizardState(**values)

    return state


@pytest.fixture(autouse=True)
def _no_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    """A blinking cursor makes snapshots depend on timing."""
    from textual.widgets import Input

    monkeypatch.setattr(Input, "cursor_blink", False)


@pytest.fixture
def export_from_next_step(tmp_path: Path) -> Callable[[AdvisorApp, Pilot[Any]], Awaitable[Any]]:
    """Next to the verdict, ^e, accept the default path: the report as stdlib reads it."""

    async def go(app: AdvisorApp, pilot: Pilot[Any]) -> Any:
        await pilot.press("ctrl+n")
        await demo.settle(pilot)
        assert isinstance(app.screen, VerdictScreen)
        await pilot.press("ctrl+e")
        assert isinstance(app.screen, ExportScreen)
        await pilot.press("enter")
        await pilot.pause()
        return tomllib.loads((tmp_path / "advisor-report.toml").read_text(encoding="utf-8"))

    return go
