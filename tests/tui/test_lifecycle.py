"""Closing the wizard while it builds later steps ahead: clean, whenever it happens.

Building ahead starts on a timer half a second after launch; here it is started at once
(what the timer calls), so the close lands mid-mount every time instead of by chance.
"""

from __future__ import annotations

import pytest

from advisor.tui.app import AHEAD

SIZE = (80, 24)


@pytest.mark.parametrize("steps", [1, len(AHEAD)])
async def test_closing_mid_mount_waits_for_the_screen(make_app, steps: int) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for _ in range(steps):
            app._build_ahead()  # each call starts mounting the next screen
        await app.stop_building_ahead()  # what ctrl+q and the tests' close do
        assert app.is_screen_installed(f"step-{AHEAD[steps - 1]}")
    assert app.return_code in (None, 0)


async def test_ctrl_q_mid_mount_quits_cleanly(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app._build_ahead()
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0


async def test_nothing_is_built_once_stopped(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await app.stop_building_ahead()
        last = f"step-{AHEAD[-1]}"
        if app.is_screen_installed(last):  # the timer got there first, on a loaded box
            app.uninstall_screen(last)

        def built() -> list[int]:
            return [s for s in AHEAD if app.is_screen_installed(f"step-{s}")]

        before = built()  # at least the last one is missing
        app._build_ahead()  # the timer firing after the stop
        assert built() == before
