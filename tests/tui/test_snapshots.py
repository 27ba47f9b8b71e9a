"""One snapshot per step at 120×40, on the happy path with the frozen catalog and fake runner.

Update only after reading snapshot_report.html: `pytest tests/tui --snapshot-update`.
"""

from __future__ import annotations

from textual.pilot import Pilot

from advisor.core.model.options import ConfigOptions
from advisor.tui.demo import settle
from advisor.tui.screens.configs import ConfigsScreen
from advisor.tui.screens.performance import PerformanceScreen
from advisor.tui.screens.verdict import VerdictScreen

SIZE = (120, 40)



def test_welcome_gpu_box(snap_compare, make_app):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=settle)


def test_welcome_cpu_box(snap_compare, make_app, cpu_box):
    assert snap_compare(make_app(hardware=cpu_box), terminal_size=SIZE, run_before=settle)


def test_workload(snap_compare, make_app, ready_state):
    assert snap_compare(make_app(state=ready_state(), start=1), terminal_size=SIZE,
                        run_before=settle)


def test_targets(snap_compare, make_app, ready_state):
    state = ready_state(quotes={"b200-sxm": 4.5})
    assert snap_compare(make_app(state=state, start=2), terminal_size=SIZE, run_before=settle)


def test_dtype_gate(snap_compare, make_app, ready_state):
    state = ready_state(targets=["b200-sxm", "mi300x", "v100-sxm2"], workload={"precision": "fp8"})
    assert snap_compare(make_app(state=state, start=3), terminal_size=SIZE, run_before=settle)


def test_software_gate(snap_compare, make_app, ready_state):
    async def highlight_b200(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("down")

    assert snap_compare(make_app(state=ready_state(), start=4), terminal_size=SIZE,
                        run_before=highlight_b200)


def test_probes_after_run(snap_compare, make_app, ready_state):
    async def run_probes(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)

    assert snap_compare(make_app(state=ready_state(), start=5), terminal_size=SIZE,
                        run_before=run_probes)


def test_performance(snap_compare, make_app, ready_state):
    state = ready_state(probe_source="catalog", targets=["b200-sxm", "h200-sxm"],
                        workload={"seq_lens": (2048, 8192, 32768)})
    assert snap_compare(make_app(state=state, start=PerformanceScreen.STEP), terminal_size=SIZE,
                        run_before=settle)


def test_configs(snap_compare, make_app, ready_state):
    """A cap and a deadline, so the limits column and a late configuration show."""
    state = ready_state(probe_source="catalog", targets=["b200-sxm", "h200-sxm"],
                        quotes={"b200-sxm": 4.5}, power_cap_kw=3.0,
                        configs=ConfigOptions(counts=[4, 8, 16], deadline_days=60),
                        reached=ConfigsScreen.STEP)
    assert snap_compare(make_app(state=state, start=ConfigsScreen.STEP), terminal_size=SIZE,
                        run_before=settle)


def test_verdict(snap_compare, make_app, ready_state):
    state = ready_state(probe_source="catalog", targets=["b200-sxm", "h200-sxm"],
                        quotes={"b200-sxm": 4.5}, reached=VerdictScreen.STEP)
    assert snap_compare(make_app(state=state, start=VerdictScreen.STEP), terminal_size=SIZE,
                        run_before=settle)


def test_configs_pipeline(snap_compare, make_app, ready_state):
    """The Pipeline view with the published 7+1 drafter case filled in."""
    async def fill_example(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("ctrl+t")
        await pilot.click("#pl-example")
        await settle(pilot)

    state = ready_state(probe_source="catalog", targets=["b200-sxm"], reached=ConfigsScreen.STEP)
    assert snap_compare(make_app(state=state, start=ConfigsScreen.STEP), terminal_size=SIZE,
                        run_before=fill_example)
