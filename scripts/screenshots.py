"""Regenerate screenshots/*.svg: every wizard step at 120×40, the same bytes on every run.

    python scripts/screenshots.py [--out screenshots]

The scenario is fixed: an 8×H100 box (no nvidia-smi needed), the shipped
catalog (not any pulled overlay), a fake probe runner with canned figures,
the textual-dark theme, no animations and no blinking cursor.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input

from advisor.core.model.options import ConfigOptions
from advisor.io.atomic import write_output
from advisor.io.catalog_store import load_catalog
from advisor.tui import demo
from advisor.tui.app import AdvisorApp
from advisor.tui.hardware import Hardware
from advisor.tui.runner import FakeProbeRunner
from advisor.tui.state import WizardState

SIZE = (120, 40)
Step = Callable[[Pilot[None]], Awaitable[None]]


def scenario(start: int) -> WizardState:
    """Llama-3.1-8B pre-training on 8×H100 today; B200, H200 and MI300X as candidates,
    under a 12 kW cap, sweeping 8 to 32 GPUs against a 30-day deadline.

    From Performance on, the canned quick probe run is in the answers, as it
    would be after step 6.
    """
    measured = start > 5
    record = FakeProbeRunner().run("quick", lambda _: None, lambda: False) if measured else None
    return WizardState(
        current="h100-sxm", reached=start,
        probe_source="run" if measured else None, probe_record=record,
        probe_note="quick run complete" if measured else "",
        targets=["b200-sxm", "h200-sxm", "mi300x"],
        quotes={"b200-sxm": 4.80}, power_cap_kw=12.0,
        configs=ConfigOptions(counts=[8, 16, 32], deadline_days=30),
        workload={"preset": "llama-3.1-8b", "seq_lens": (4096, 8192, 16384),
                  "checkpointing": True, "token_budget": 200 * 10**9},
    )



async def shoot(out: Path, name: str, hardware: Hardware, start: int,
                action: Step | None = None) -> None:
    app = AdvisorApp(load_catalog(), hardware, FakeProbeRunner(), state=scenario(start),
                     start=start)
    app.theme = "textual-dark"
    app.animation_level = "none"
    async with app.run_test(size=SIZE) as pilot:
        await demo.settle(pilot)
        if action is not None:
            await action(pilot)
            await demo.settle(pilot)
        svg = app.export_screenshot()
        await app.stop_building_ahead()  # close as ctrl+q does, never mid-mount
    print(write_output(out / name, svg))


async def run_probes(pilot: Pilot[None]) -> None:
    await pilot.press("ctrl+r")


async def highlight_b200(pilot: Pilot[None]) -> None:
    await pilot.press("down")


async def pipeline_example(pilot: Pilot[None]) -> None:
    await pilot.press("ctrl+t")
    await pilot.click("#pl-example")


async def main(out: Path) -> None:
    Input.cursor_blink = False  # a blinking cursor would make the images depend on timing
    out.mkdir(parents=True, exist_ok=True)
    gpu, cpu = demo.gpu_box(), demo.cpu_box()
    await shoot(out, "01-welcome.svg", gpu, 0)
    await shoot(out, "01-welcome-cpu-only.svg", cpu, 0)
    await shoot(out, "02-workload.svg", gpu, 1)
    await shoot(out, "03-targets.svg", gpu, 2)
    await shoot(out, "04-dtype-gate.svg", gpu, 3)
    await shoot(out, "05-software-gate.svg", gpu, 4, highlight_b200)
    await shoot(out, "06-probes.svg", gpu, 5, run_probes)
    await shoot(out, "07-performance.svg", gpu, 6)
    await shoot(out, "08-configs.svg", gpu, 7)
    await shoot(out, "08-configs-pipeline.svg", gpu, 7, pipeline_example)
    await shoot(out, "09-verdict.svg", gpu, 8)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] /
                        "screenshots")
    asyncio.run(main(parser.parse_args().out))
