"""A snapshot of every step, and of each view and dialog, at 80×24 and 120×40, on the happy
path with the frozen test catalog and the fake probe runner.

Update only after reading snapshot_report.html: `pytest tests/tui --snapshot-update`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from advisor.tui.demo import settle
from advisor.tui.state import STEPS

from .conftest import NARROW, WIDE, open_layout, open_ranking, press, set_attr

SIZES = pytest.mark.parametrize("size", [NARROW, WIDE], ids=["80x24", "120x40"])


def scenario(ready_state: Any, step: int) -> Any:
    """H100 today; B200 (quoted), H200 and MI300X (blocked: a CUDA torch) as targets; a
    token budget, so the configurations step sweeps."""
    return ready_state(targets=["b200-sxm", "h200-sxm", "mi300x"], reached=step,
                       quotes={"b200-sxm": ("usd", 4.5)}, given={"token_budget": 1e11})


async def quick_run(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    next(b for b in pilot.app.screen.query("#choice Choice") if b.name == "quick").value = True
    await settle(pilot)
    await pilot.press("ctrl+r")
    await settle(pilot)


async def highlight_second(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await pilot.press("down", "down", "down")
    await settle(pilot)


ACTIONS = {"dtype": highlight_second, "software": highlight_second, "probes": quick_run}


@SIZES
@pytest.mark.parametrize("step", range(len(STEPS)), ids=[s for s, _ in STEPS])
def test_step(snap_compare, make_app, ready_state, size, step):
    app = make_app(state=scenario(ready_state, step), start=step)
    assert snap_compare(app, terminal_size=size,
                        run_before=ACTIONS.get(STEPS[step][0], settle))


@SIZES
def test_welcome_cpu_box(snap_compare, make_app, cpu_box, size):
    assert snap_compare(make_app(hardware=cpu_box), terminal_size=size, run_before=settle)


async def _advanced(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    pilot.app.screen.query_one("#advanced").collapsed = False
    await settle(pilot)


async def _serving(pilot: Pilot[Any]) -> None:
    await _advanced(pilot)
    pilot.app.screen.query_one("#mode").value = "serve"
    await settle(pilot)


async def _lora(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    pilot.app.screen.query_one("#mode").value = "lora"
    await settle(pilot)


async def _pipeline(pilot: Pilot[Any]) -> None:
    await press(pilot, "ctrl+t")
    await pilot.click("#pl-example")
    await settle(pilot)


def serving(ready_state: Any, step: int) -> Any:
    """Llama-3.1-70B served in fp8 on 8 H100s against B200 in nvfp4 (its own format) and
    H200, under a 50 ms TPOT limit."""
    state = ready_state(targets=["b200-sxm", "h200-sxm"], reached=step,
                        quotes={"b200-sxm": ("usd", 4.5)},
                        layouts={"b200-sxm": {"precision": "nvfp4"}},
                        given={"model": "llama-3.1-70b", "mode": "serve", "seq_lens": (2048,),
                               "osl": 512, "precision": "fp8", "tpot_ms": 50.0})
    return state


def anchored(ready_state: Any, step: int) -> Any:
    """The scenario, anchored on a measured 5,000 tok/s per GPU with a 20% attention share."""
    state = scenario(ready_state, step)
    state.set_measured("tokens_per_s_per_gpu", 5000.0)
    state.set_measured("attention_share", 0.2)
    return state


VIEWS = {
    "workload-advanced": (1, _advanced),
    "workload-serving": (1, _serving),
    "workload-lora": (1, _lora),
    "workload-measured": (1, lambda p: set_attr(p, "#measured", collapsed=False)),
    "workload-custom": (1, lambda p: set_attr(p, "#preset", value="custom")),
    "targets-layout": (2, open_layout),
    "quit": (2, lambda p: press(p, "ctrl+q")),
    "performance-buckets": (6, lambda p: press(p, "ctrl+t")),
    "performance-layouts": (6, lambda p: press(p, "ctrl+t", "ctrl+t")),
    "configs-pipeline": (7, _pipeline),
    "help": (2, lambda p: press(p, "f1")),
    "ranking": (8, lambda p: open_ranking(p)),
    "export": (8, lambda p: press(p, "ctrl+e")),
    "summary": (8, lambda p: press(p, "ctrl+y")),
}


@SIZES
@pytest.mark.parametrize("view", list(VIEWS))
def test_view(snap_compare, make_app, ready_state, size, view):
    step, action = VIEWS[view]
    app = make_app(state=scenario(ready_state, step), start=step,
                   export_dir=Path("/home/you/reports"))  # shown, never written
    assert snap_compare(app, terminal_size=size, run_before=action)


def lora(ready_state: Any, step: int) -> Any:
    """A 14B LoRA at 4k on one 24 GB L4 with its 16-bit base, against H100 and B200: it fits
    nowhere as given, and the verdict says what would."""
    return ready_state(current="l4", targets=["h100-sxm", "b200-sxm"], reached=step,
                       given={"model": "qwen2.5-14b", "mode": "lora", "seq_lens": (4096,),
                              "gpus": 1})


STATES = {"serving": serving, "anchored": anchored, "lora": lora}
SCENARIOS = [("serving", 6), ("serving", 8), ("serving", 3), ("anchored", 6), ("anchored", 8),
             ("lora", 8)]


@SIZES
@pytest.mark.parametrize(("kind", "step"), SCENARIOS,
                         ids=[f"{k}-{STEPS[s][0]}" for k, s in SCENARIOS])
def test_scenario(snap_compare, make_app, ready_state, size, kind, step):
    """Serving with a GPU in its own format, a decision anchored on a measured run, and a LoRA
    whose base fits nowhere as given."""
    app = make_app(state=STATES[kind](ready_state, step), start=step)
    assert snap_compare(app, terminal_size=size, run_before=settle)
