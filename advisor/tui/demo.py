"""Fixed boxes for tests, screenshots and the benchmark: an 8×H100 node and a CPU laptop.

Kept beside the app (not under tests/) because scripts/screenshots.py and
benchmarks/bench_tui.py use them too; nothing in the wizard itself does.
"""

from __future__ import annotations

from advisor.core.stack import Stack
from advisor.tui.hardware import DetectedGpu, Hardware, stack_lines


def gpu_box() -> Hardware:
    stack = Stack(source="detected", packages={"torch": "2.7.1+cu128", "flash-attn": "2.8.3"},
                  driver="575.57.08")
    return Hardware(gpus=(DetectedGpu("NVIDIA H100 80GB HBM3", "h100-sxm", 79.6, 8),),
                    driver="575.57.08", packages=stack_lines(stack), stack=stack)


def cpu_box() -> Hardware:
    stack = Stack(source="detected", packages={"torch": "2.13.0+cpu"})
    return Hardware(packages=stack_lines(stack), stack=stack)
