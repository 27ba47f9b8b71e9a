"""The wizard's model field reads a Hugging Face config.json: chosen, typed, Enter; the step
does not go on until one is read, a bad path is the row's error, and the saved answers hold
the shape it read."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from textual.widgets import Input, Select

from advisor.core import ModelSpec
from advisor.tui.demo import settle

from .conftest import WIDE, retype, text_of

CONFIG = Path(__file__).parents[1] / "data" / "gpt-oss-120b" / "config.json"


async def choose_config(pilot: Any) -> Any:
    """On the Workload step, the model field's config.json way chosen; the step's screen."""
    await settle(pilot)
    screen = pilot.app.screen
    screen.query_one("#preset", Select).value = "config"
    await settle(pilot)
    return screen


async def read(pilot: Any, screen: Any, path: Path) -> None:
    await retype(pilot, screen.query_one("#model-config", Input), str(path))
    await pilot.press("enter")
    await settle(pilot)


async def test_a_config_json_is_the_model(make_app, ready_state, tmp_path: Path) -> None:
    app = make_app(state=ready_state(reached=1), start=1)
    async with app.run_test(size=WIDE) as pilot:
        screen = await choose_config(pilot)
        assert "give the path" in text_of(screen.query_one("#model-info"))
        ok, why = screen.ready()
        assert not ok and "read a config.json first" in why
        await read(pilot, screen, tmp_path / "nope.json")
        row = screen.query_one("#f-model-config")
        assert row.has_class("-invalid") and "cannot read" in str(row.error)
        await read(pilot, screen, CONFIG)
        assert not row.has_class("-invalid")
        model = app.state.given["model"]
        assert isinstance(model, ModelSpec) and model.name == "gpt-oss-120b"
        assert "116.8B params" in text_of(screen.query_one("#model-info"))
        assert screen.ready()[0]
        app.state.toggle_target("b200-sxm")
        app.action_save_answers()
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
    saved = tomllib.loads((tmp_path / "advisor-answers.toml").read_text(encoding="utf-8"))
    assert saved["workload"]["model"]["sliding_window"] == 128
    assert saved["workload"]["model"]["source"].startswith(str(CONFIG))


async def test_a_preset_after_a_config_is_the_preset(make_app, ready_state) -> None:
    app = make_app(state=ready_state(reached=1), start=1)
    async with app.run_test(size=WIDE) as pilot:
        screen = await choose_config(pilot)
        await read(pilot, screen, CONFIG)
        screen.query_one("#preset", Select).value = "qwen3-8b"
        await settle(pilot)
        assert app.state.given["model"] == "qwen3-8b" and not screen.query("#model-config")
        assert screen.ready()[0]
