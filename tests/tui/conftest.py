"""Fixtures for the wizard: a frozen catalog, a GPU box and a CPU box, a fake probe runner.

Nothing here touches nvidia-smi, torch or the user's data folders (tests/conftest.py
points ADVISOR_HOME at a fresh folder), and the catalog is a small copy in
tests/tui/catalog, so snapshots only move when the TUI does.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from advisor.core import Catalog
from advisor.io.catalog_store import load_catalog
from advisor.tui import demo
from advisor.tui.app import AdvisorApp
from advisor.tui.demo import DemoProbeRunner
from advisor.tui.hardware import Hardware
from advisor.tui.runner import ProbeRunner
from advisor.tui.state import EXAMPLE_WORKLOAD, WizardState

HERE = Path(__file__).parent
WIDE, NARROW = (120, 40), (80, 24)


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    from advisor.core.model.catalog import CATALOG_FILES, build_catalog

    folder = HERE / "catalog"
    return build_catalog({f: (folder / f).read_text(encoding="utf-8") for f in CATALOG_FILES})


@pytest.fixture(scope="session")
def shipped() -> Catalog:
    return load_catalog()


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
             state: WizardState | None = None, start: int = 0,
             with_catalog: Catalog | None = None, export_dir: Path | None = None,
             **kwargs: Any) -> AdvisorApp:
        app = AdvisorApp(with_catalog or catalog, hardware or gpu_box,
                         runner or DemoProbeRunner(), state=state, start=start,
                         screenshot_dir=tmp_path, export_dir=export_dir or tmp_path, **kwargs)
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
        given = overrides.pop("given", {})
        values.update(overrides)
        return WizardState(**values, given={**EXAMPLE_WORKLOAD, **given},
                           examples=frozenset(EXAMPLE_WORKLOAD) - set(given))

    return state


@pytest.fixture(autouse=True)
def _each_app_collected() -> Iterator[None]:
    """The wizard freezes what it keeps for its session (advisor.heap); a test's app
    ends with the test, so its objects go back to the collector rather than pile up."""
    yield
    gc.unfreeze()


@pytest.fixture(autouse=True)
def _no_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    """A blinking cursor makes snapshots depend on timing."""
    monkeypatch.setattr(Input, "cursor_blink", False)


async def retype(pilot: Pilot[Any], field: Input, text: str) -> None:
    """Focus a field, clear it and type `text` key by key, as a user would."""
    field.focus()
    field.value = ""
    await pilot.pause()
    if text:
        await pilot.press(*text)
    await demo.settle(pilot)


def text_of(widget: Any) -> str:
    return str(widget.render())


def table_text(table: Any) -> str:
    """Every cell of a DataTable as plain text, a line per row."""
    return "\n".join(" | ".join(str(c) for c in table.get_row_at(i))
                     for i in range(table.row_count))


async def open_advanced(pilot: Pilot[Any]) -> None:
    """Open the Workload step's Advanced group (its rows are built when first opened)."""
    pilot.app.screen.query_one("#advanced").collapsed = False
    await demo.settle(pilot)


async def press(pilot: Pilot[Any], *keys: str) -> None:
    """Keys as a user presses them, with the app settled before and after."""
    await demo.settle(pilot)
    await pilot.press(*keys)
    await demo.settle(pilot)


async def open_ranking(pilot: Pilot[Any]) -> Any:
    """^k, waited for until the ranking is drawn; the screen it opened."""
    await press(pilot, "ctrl+k")
    screen = pilot.app.screen
    await screen.done.wait()
    table = screen.query_one("#rank-table")
    for _ in range(100):  # the table sizes itself to its rows when the app is next idle
        if not table.display or table.size.height > 1:
            break
        await pilot.pause()
    await demo.settle(pilot)
    return screen


async def type_ahead(pilot: Pilot[Any], *keys: str) -> None:
    """Keys sent all at once, as a fast typist on a busy box sends them: none waits for the
    app to handle the one before (Pilot.press waits after each key)."""
    from textual import events

    app = pilot.app
    for key in keys:
        char = key if len(key) == 1 else None
        event = events.Key(key, char)
        event.set_sender(app)
        app.post_message(event)
    await demo.settle(pilot)


def note_of(screen: Any, row_id: str) -> str:
    """The note (or error) beside one form row."""
    return text_of(screen.query_one(f"#{row_id}").query_one(".field-note"))


async def set_attr(pilot: Pilot[Any], selector: str, **values: Any) -> None:
    """Set a widget's attributes as a user's pick would (a Select's value, a Collapsible
    opened), with the app settled before and after."""
    await demo.settle(pilot)
    widget = pilot.app.screen.query_one(selector)
    for name, value in values.items():
        setattr(widget, name, value)
    await demo.settle(pilot)


async def open_layout(pilot: Pilot[Any], gpu: str = "b200-sxm") -> None:
    """Targets: the layout dialog of one GPU, through its row's button."""
    await demo.settle(pilot)
    next(b for b in pilot.app.screen.query(".price-layout") if b.name == gpu).press()
    await demo.settle(pilot)
