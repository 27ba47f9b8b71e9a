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


def test_a_load_for_the_session_runs_without_the_collector_and_is_kept():
    from advisor.heap import loading_for_the_session

    gc.unfreeze()
    try:
        with loading_for_the_session():
            during = gc.isenabled()
            loaded = [[i] for i in range(100)]
        assert not during and gc.isenabled(), "off while it loads, back on after"
        assert _frozen(loaded)
        gc.disable()  # as a short command leaves it
        with loading_for_the_session():
            pass
        assert not gc.isenabled(), "left off where it was off"
    finally:
        gc.enable()
        gc.unfreeze()


def test_a_resumed_report_is_kept_for_the_session(tmp_path, catalog):
    """`advisor --resume`: the report (and the engine's models with it) loads with the
    collector paused, then stays frozen for the session, and the collector is on again."""
    from advisor.core import Answers, report_to_toml, run
    from advisor.tui.app import wizard_app

    answers = Answers.model_validate({"current": "h100-sxm", "targets": ["b200-sxm"],
                                      "workload": {"model": "llama-3.1-8b",
                                                   "seq_lens": [4096]}})
    path = tmp_path / "r.toml"
    path.write_text(report_to_toml(run(answers, catalog, {})), encoding="utf-8")
    gc.unfreeze()
    try:
        app = wizard_app(path)
        assert gc.isenabled()
        assert _frozen(app.ctx.catalog) and _frozen(app._loaded)
    finally:
        gc.unfreeze()
