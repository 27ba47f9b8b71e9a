"""Every step fits 80×24 and 120×40 without clipping a label, a value or an error.

Checked on the screen as laid out: no widget runs past the right edge of its container
(which would cut it off), no text needs more lines than it is given, and no table is wider
than the space it has (a column scrolled out of sight is a column the user does not see).
An input scrolls its own text as it is edited, as inputs do; it is not counted.
"""

from __future__ import annotations

from typing import Any

import pytest
from textual.containers import ScrollableContainer
from textual.widget import Widget
from textual.widgets import DataTable, Input, Static

from advisor.tui.demo import settle
from advisor.tui.state import STEPS

from .conftest import NARROW, WIDE, open_layout, open_ranking, press, set_attr


def _visible(widget: Widget) -> bool:
    node: Any = widget
    while node is not None and isinstance(node, Widget):
        if not node.display or not node.visible:
            return False
        node = node.parent
    return widget.region.width > 0 and widget.region.height > 0


def clipped(screen: Any) -> list[str]:
    """What the layout cuts off, as readable lines (empty when everything fits)."""
    out = []
    for widget in screen.query("*"):
        if not isinstance(widget, Widget) or not _visible(widget):
            continue
        parent = widget.parent
        if isinstance(parent, Widget) and not isinstance(parent, ScrollableContainer) \
                and parent.region.width and widget.region.right > parent.region.right:
            out.append(f"{widget!r} runs {widget.region.right - parent.region.right} cells "
                       f"past {parent!r}")
        if isinstance(widget, DataTable | ScrollableContainer) and not isinstance(widget, Input):
            # A horizontal scroll hides what is past the edge: the footer's keys, a column.
            need, have = widget.virtual_size.width, widget.scrollable_content_region.width
            if need > have:
                out.append(f"{widget!r} needs {need} columns, has {have}")
        elif widget.id == "hint" or (isinstance(widget, Static)
                                     and widget.styles.height is not None
                                     and widget.styles.height.is_cells):
            # The hint beside Next has the nav bar's height: a longer one ends mid-sentence.
            width = widget.content_region.width
            lines = widget.get_content_height(screen.region, screen.region, width)
            if lines > widget.content_region.height:
                out.append(f"{widget!r} needs {lines} lines, has "
                           f"{widget.content_region.height}")
    return out


def state_at(ready_state: Any, step: int) -> Any:
    return ready_state(targets=["b200-sxm", "mi300x", "v100-sxm2"], reached=step,
                       given={"token_budget": 1e11})





async def _advanced(pilot: Any) -> None:
    pilot.app.screen.query_one("#advanced").collapsed = False
    await settle(pilot)


async def _serve(pilot: Any) -> None:
    await _advanced(pilot)
    pilot.app.screen.query_one("#mode").value = "serve"
    await settle(pilot)


async def _lora(pilot: Any) -> None:
    await _advanced(pilot)
    pilot.app.screen.query_one("#mode").value = "lora"
    await settle(pilot)


async def _tab(pilot: Any) -> None:
    await pilot.press("ctrl+t")
    await settle(pilot)


async def _tab2(pilot: Any) -> None:
    await pilot.press("ctrl+t", "ctrl+t")
    await settle(pilot)


async def _pipeline(pilot: Any) -> None:
    await pilot.press("ctrl+t")
    await settle(pilot)
    await pilot.click("#pl-example")
    await settle(pilot)




VIEWS = {
    "workload-advanced": (1, _advanced),
    "workload-serving": (1, _serve),
    "workload-lora": (1, _lora),
    "workload-measured": (1, lambda p: set_attr(p, "#measured", collapsed=False)),
    "workload-custom": (1, lambda p: set_attr(p, "#preset", value="custom")),
    "targets-layout": (2, open_layout),
    "quit": (2, lambda p: press(p, "ctrl+q")),
    "performance-buckets": (6, _tab),
    "performance-layouts": (6, _tab2),
    "configs-pipeline": (7, _pipeline),
    "help": (2, lambda p: press(p, "f1")),
    "ranking": (8, lambda p: open_ranking(p)),
    "export": (8, lambda p: press(p, "ctrl+e")),
    "summary": (8, lambda p: press(p, "ctrl+y")),
}


@pytest.mark.parametrize("size", [NARROW, WIDE], ids=["80x24", "120x40"])
@pytest.mark.parametrize("view", list(VIEWS))
async def test_each_view_fits(make_app, ready_state, size, view):
    step, action = VIEWS[view]
    app = make_app(state=state_at(ready_state, step), start=step)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await action(pilot)
        problems = clipped(app.screen)
        assert not problems, "\n".join(problems)


def serving_at(ready_state: Any, step: int) -> Any:
    """Serving Llama-3.1-70B (fp8; B200 in nvfp4) under a TPOT limit, with a measured run:
    the widest serving rows, the format and anchor lines, at every computed step."""
    state = ready_state(targets=["b200-sxm", "mi300x", "v100-sxm2"], reached=step,
                        layouts={"b200-sxm": {"precision": "nvfp4", "kv_dtype": "fp8"}},
                        measured={"tokens_per_s_per_gpu": 900.0},
                        given={"model": "llama-3.1-70b", "mode": "serve",
                               "seq_lens": (2048, 8192), "osl": 512, "precision": "fp8",
                               "tpot_ms": 50.0, "token_budget": 1e11})
    return state


def lora_at(ready_state: Any, step: int) -> Any:
    """A 14B LoRA on one 24 GB L4 with its 16-bit base: the longest lines a LoRA verdict has
    (what would fit, with flags, tokens/s and memory each)."""
    return ready_state(current="l4", targets=["h100-sxm", "b200-sxm", "mi300x"], reached=step,
                       given={"model": "qwen2.5-14b", "mode": "lora", "seq_lens": (4096,),
                              "gpus": 1})


STATES = {"training": state_at, "serving": serving_at, "lora": lora_at}


@pytest.mark.parametrize("size", [NARROW, WIDE], ids=["80x24", "120x40"])
@pytest.mark.parametrize("step", range(len(STEPS)), ids=[s for s, _ in STEPS])
@pytest.mark.parametrize("kind", list(STATES))
async def test_each_step_fits(make_app, ready_state, size, step, kind):
    app = make_app(state=STATES[kind](ready_state, step), start=step)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        problems = clipped(app.screen)
        assert not problems, "\n".join(problems)
