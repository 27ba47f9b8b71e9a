"""The real probe runner where torch is missing: one line saying what to install."""

from __future__ import annotations

from textual.widgets import Static

import advisor.io.measure as measure
from advisor.tui.runner import PackageProbeRunner
from advisor.tui.screens.probes import ProbesScreen


async def test_without_torch_the_probes_say_what_to_install(make_app, ready_state,
                                                            monkeypatch) -> None:
    real = measure.importlib.util.find_spec
    monkeypatch.setattr(measure.importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real(name, *a))
    app = make_app(state=ready_state(), runner=PackageProbeRunner(), start=5)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, ProbesScreen)
        next(b for b in app.screen.query("#choice Choice") if b.name == "quick").value = True
        await pilot.pause()
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        message = str(app.screen.query_one("#probe-message", Static).render())
        assert "install gpu-upgrade-advisor[probe] or torch to measure this box" in message
        assert not app.screen.running
