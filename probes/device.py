"""Which accelerator the probes run on.

torch calls both CUDA and ROCm devices "cuda"; the record keeps them apart
because the catalog, fp8 formats and vendor tools differ. CPU is the fallback
so the whole suite can run (small) anywhere, including CI.
"""

from __future__ import annotations

import dataclasses
import platform
from dataclasses import dataclass
from pathlib import Path

KINDS = ("cuda", "rocm", "mps", "cpu")


@dataclass(frozen=True)
class Device:
    kind: str
    name: str
    count: int
    index: int = 0

    @property
    def torch_device(self) -> str:
        return f"cuda:{self.index}" if self.is_gpu else self.kind

    @property
    def is_gpu(self) -> bool:
        """CUDA or ROCm: device events, NCCL/RCCL and the datacenter-sized profile."""
        return self.kind in ("cuda", "rocm")

    def at(self, index: int) -> Device:
        return dataclasses.replace(self, index=index)


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def detect(force: str | None = None) -> Device:
    """The best available device, or the one `force` names (an error if it is absent)."""
    import torch

    if force not in (None, "auto", *KINDS):
        raise ValueError(f"unknown device {force!r}; choose one of auto, {', '.join(KINDS)}")
    want = None if force in (None, "auto") else force
    if want in (None, "cuda", "rocm") and torch.cuda.is_available() and torch.cuda.device_count():
        kind = "rocm" if torch.version.hip else "cuda"
        if want in (None, kind):
            return Device(kind, torch.cuda.get_device_name(0), torch.cuda.device_count())
    mps = getattr(torch.backends, "mps", None)
    if want in (None, "mps") and mps is not None and mps.is_available():
        return Device("mps", "Apple MPS", 1)
    if want in (None, "cpu"):
        return Device("cpu", cpu_name(), 1)
    raise ValueError(f"no {want} device is available to torch {torch.__version__}")


def synchronize(device: Device) -> None:
    import torch

    if device.is_gpu:
        torch.cuda.synchronize(device.index)
    elif device.kind == "mps":
        torch.mps.synchronize()
