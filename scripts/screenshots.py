"""Regenerate screenshots/*.svg: every wizard step (and its other views) at 120×40, from the
real engine on the shipped catalog, the same bytes on every run.

    python scripts/screenshots.py [--out screenshots]

The scenario is fixed: Llama-3.1-8B pre-training on 8×H100 today, B200 (quoted at
$4.80/h), H200 and MI300X as candidates, a 200B-token budget under a 15 kW rack cap (hosts
counted: a DGX B200 is 14.3 kW), sweeping 8 to 32 GPUs against a 30-day deadline; the same
anchored on a measured 9,000 tok/s per GPU (02-workload-anchor, 09-verdict-anchored); and
serving Llama-3.1-70B in fp8 against B200 in nvfp4 and H200 under a 50 ms TPOT limit
(03-targets-layout, 11-serving-*). The box is a
made-up 8×H100 node (no nvidia-smi needed) running torch 2.7.1+cu128 and flash-attn 2.8.3,
so the software gate blocks MI300X (a CUDA build of torch cannot drive it).

Every figure is `advisor.core.run` on the shipped catalog with catalog figures (no probe
record), except the probes step's own screenshot, which shows a run of the demo runner
(`advisor.tui.demo`): its figures (host "fake-box", MAMF 720 TFLOPS, ...) are canned, not
measured, and nothing after that step uses them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input

from advisor.core import ConfigOptions
from advisor.io.atomic import write_output
from advisor.io.catalog_store import load_catalog
from advisor.tui import demo
from advisor.tui.app import AdvisorApp
from advisor.tui.hardware import Hardware
from advisor.tui.state import EXAMPLE_WORKLOAD, WizardState

SIZE = (120, 40)
Step = Callable[[Pilot[None]], Awaitable[None]]


def serving(start: int) -> WizardState:
    """Llama-3.1-70B served in fp8 on 8×H100 against B200 in nvfp4 (its own format, set on
    Targets) and H200, 2k in / 512 out under a 50 ms TPOT limit."""
    return WizardState(
        current="h100-sxm", reached=start, targets=("b200-sxm", "h200-sxm"),
        quotes={"b200-sxm": ("usd", 4.80)}, probe_choice="none",
        layouts={"b200-sxm": {"precision": "nvfp4"}}, examples=frozenset(),
        given={"model": "llama-3.1-70b", "mode": "serve", "seq_lens": (2048,), "osl": 512,
               "precision": "fp8", "tpot_ms": 50.0})


def anchored(start: int) -> WizardState:
    """The main scenario, anchored on a measured 9,000 tok/s per GPU, 25% of it attention."""
    state = scenario(start)
    state.set_measured("tokens_per_s_per_gpu", 9000.0)
    state.set_measured("attention_share", 0.25)
    return state


def scenario(start: int) -> WizardState:
    return WizardState(
        current="h100-sxm", reached=start, targets=("b200-sxm", "h200-sxm", "mi300x"),
        quotes={"b200-sxm": ("usd", 4.80)}, power_cap_kw=15.0, probe_choice="none",
        configs=ConfigOptions(counts=[8, 16, 32], deadline_days=30), examples=frozenset(),
        given={**EXAMPLE_WORKLOAD, "seq_lens": (4096, 8192, 16384), "recompute": "selective",
               "token_budget": 200e9})


async def shoot(out: Path, name: str, hardware: Hardware, start: int,
                action: Step | None = None, fresh: bool = False,
                state: Callable[[int], WizardState] = scenario) -> None:
    app = AdvisorApp(load_catalog(), hardware, demo.DemoProbeRunner(),
                     state=None if fresh else state(start), start=start,
                     export_dir=Path("/home/you/reports"))
    app.theme = "textual-dark"
    app.animation_level = "none"
    async with app.run_test(size=SIZE) as pilot:
        await demo.settle(pilot)
        if action is not None:
            await action(pilot)
            await demo.settle(pilot)
        write_output(out / name, app.export_screenshot())
    print(out / name)


async def press(pilot: Pilot[None], *keys: str) -> None:
    await pilot.press(*keys)
    await demo.settle(pilot)


async def run_probes(pilot: Pilot[None]) -> None:
    next(b for b in pilot.app.screen.query("#choice Choice") if b.name == "quick").value = True
    await demo.settle(pilot)
    await press(pilot, "ctrl+r")


async def advanced(pilot: Pilot[None]) -> None:
    pilot.app.screen.query_one("#advanced").collapsed = False
    await demo.settle(pilot)


async def measured(pilot: Pilot[None]) -> None:
    pilot.app.screen.query_one("#measured").collapsed = False
    await demo.settle(pilot)


async def layout_b200(pilot: Pilot[None]) -> None:
    next(b for b in pilot.app.screen.query(".price-layout") if b.name == "b200-sxm").press()
    await demo.settle(pilot)


async def highlight_mi300x(pilot: Pilot[None]) -> None:
    await press(pilot, "down", "down", "down")


async def pipeline_example(pilot: Pilot[None]) -> None:
    await press(pilot, "ctrl+t")
    await pilot.click("#pl-example")


async def rank(pilot: Pilot[None]) -> None:
    await press(pilot, "ctrl+k")
    await pilot.app.screen.done.wait()  # type: ignore[attr-defined]
    table = pilot.app.screen.query_one("#rank-table")
    for _ in range(100):  # the table sizes itself to its rows when the app is next idle
        if table.size.height > 1:
            break
        await pilot.pause()


async def main(out: Path) -> None:
    Input.cursor_blink = False  # a blinking cursor would make the images depend on timing
    os.environ["ADVISOR_HOME"] = tempfile.mkdtemp()  # no imported probe records, no pulls
    out.mkdir(parents=True, exist_ok=True)
    gpu, cpu = demo.gpu_box(), demo.cpu_box()
    await shoot(out, "01-welcome.svg", gpu, 0, fresh=True)
    await shoot(out, "01-welcome-cpu-only.svg", cpu, 0, fresh=True)
    await shoot(out, "02-workload.svg", gpu, 1, advanced)
    await shoot(out, "03-targets.svg", gpu, 2)
    await shoot(out, "04-dtype-gate.svg", gpu, 3)
    await shoot(out, "05-software-gate.svg", gpu, 4, highlight_mi300x)
    await shoot(out, "06-probes.svg", gpu, 5, run_probes)
    await shoot(out, "07-performance.svg", gpu, 6)
    await shoot(out, "07-performance-buckets.svg", gpu, 6, lambda p: press(p, "ctrl+t"))
    await shoot(out, "07-performance-layouts.svg", gpu, 6,
                lambda p: press(p, "ctrl+t", "ctrl+t"))
    await shoot(out, "08-configs.svg", gpu, 7)
    await shoot(out, "08-configs-pipeline.svg", gpu, 7, pipeline_example)
    await shoot(out, "09-verdict.svg", gpu, 8)
    await shoot(out, "09-verdict-ranking.svg", gpu, 8, rank)
    await shoot(out, "10-help.svg", gpu, 8, lambda p: press(p, "f1"))
    await shoot(out, "10-quit.svg", gpu, 8, lambda p: press(p, "ctrl+q"))
    await shoot(out, "02-workload-anchor.svg", gpu, 1, measured, state=anchored)
    await shoot(out, "09-verdict-anchored.svg", gpu, 8, state=anchored)
    await shoot(out, "03-targets-layout.svg", gpu, 2, layout_b200, state=serving)
    await shoot(out, "11-serving-dtype.svg", gpu, 3, state=serving)
    await shoot(out, "11-serving-performance.svg", gpu, 6, state=serving)
    await shoot(out, "11-serving-verdict.svg", gpu, 8, state=serving)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] /
                        "screenshots")
    asyncio.run(main(parser.parse_args().out))
