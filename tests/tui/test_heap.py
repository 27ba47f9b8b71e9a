"""The wizard keeps what stays for its session out of the cycle collector's sight
(advisor.heap): a full collection of ~250,000 objects fell inside step changes."""

from __future__ import annotations

import gc

from advisor.tui.demo import settle
from advisor.tui.screens.welcome import WelcomeScreen
from advisor.tui.screens.workload import WorkloadScreen

from .conftest import WIDE


def _frozen(obj: object) -> bool:
    """Whether `obj` is in the permanent generation: tracked, yet in no generation the
    collector walks."""
    return gc.is_tracked(obj) and not any(o is obj for o in gc.get_objects())


async def test_the_catalog_and_each_built_step_are_kept_for_the_session(make_app):
    gc.unfreeze()
    app = make_app()
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, WelcomeScreen) and app.screen.built
        assert _frozen(app.screen), "a built step is frozen"
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert isinstance(app.screen, WorkloadScreen)
        assert _frozen(app.screen), "and so is the next one, once built"
        assert _frozen(app.ctx.catalog)


async def test_a_loaded_catalog_is_kept_for_the_session(catalog):
    from advisor.tui.app import AdvisorApp
    from advisor.tui.demo import DemoProbeRunner, gpu_box

    gc.unfreeze()
    app = AdvisorApp(lambda: catalog, gpu_box(), DemoProbeRunner())  # loaded in a worker
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        assert app.ctx.loaded is catalog
        assert _frozen(catalog)
