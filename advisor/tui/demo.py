"""Fixed boxes for tests, screenshots and the benchmark: an 8×H100 node and a CPU laptop,
and `settle`, which lets a Pilot-driven app finish what a key press started.

Kept beside the app (not under tests/) because scripts/screenshots.py and
benchmarks/bench_tui.py use them too; nothing in the wizard itself does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.core import Stack
from advisor.tui.hardware import DetectedGpu, Hardware, stack_lines

if TYPE_CHECKING:
    from textual.pilot import Pilot


def gpu_box() -> Hardware:
    stack = Stack(source="detected", packages={"torch": "2.7.1+cu128", "flash-attn": "2.8.3"},
                  driver="575.57.08")
    return Hardware(gpus=(DetectedGpu("NVIDIA H100 80GB HBM3", "h100-sxm", 79.6, 8),),
                    driver="575.57.08", packages=stack_lines(stack), stack=stack)


def cpu_box() -> Hardware:
    stack = Stack(source="detected", packages={"torch": "2.13.0+cpu"})
    return Hardware(packages=stack_lines(stack), stack=stack)


async def settle(pilot: Pilot[None]) -> None:
    """Pending messages, then every worker (decide, sweep, probes), then the repaint."""
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
