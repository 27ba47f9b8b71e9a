"""The record's stamp: everything that changes probe results.

Two records are only comparable when the GPU, driver, torch/CUDA/HIP, cuDNN,
NCCL and kernel-library versions, clocks and power cap are known, so all of
them are written next to the numbers.
"""

from __future__ import annotations

import platform
import socket
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

from probes import nvml
from probes.device import Device
from probes.figures import CatalogMatch

# Distribution names to try for each optional kernel library.
OPTIONAL_PACKAGES = {
    "flash_attn": ("flash-attn", "flash_attn"),
    "flash_attn_3": ("flash-attn-3", "flash_attn_3"),
    "flash_attn_cute": ("flash-attn-cute", "flash_attn_cute"),
    "transformer_engine": ("transformer-engine", "transformer_engine", "transformer-engine-torch"),
}


def package_version(names: tuple[str, ...]) -> str | None:
    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def cudnn_version(raw: int | None) -> str | None:
    """torch reports cuDNN as an int: 90100 is 9.1.0 (cuDNN 9+), 8902 is 8.9.2."""
    if not raw:
        return None
    if raw >= 90000:
        return f"{raw // 10000}.{raw % 10000 // 100}.{raw % 100}"
    return f"{raw // 1000}.{raw % 1000 // 100}.{raw % 100}"


def nccl_version(raw: Any) -> str | None:
    if isinstance(raw, tuple):
        return ".".join(str(p) for p in raw)
    if isinstance(raw, int):  # older torch: 21805 is 2.18.5
        return f"{raw // 10000}.{raw % 10000 // 100}.{raw % 100}"
    return None


def _driver_from_files() -> str | None:
    try:
        text = Path("/proc/driver/nvidia/version").read_text()
        for word in text.split():
            if word.count(".") >= 1 and word.replace(".", "").isdigit():
                return word
    except OSError:
        pass
    try:
        return Path("/sys/module/amdgpu/version").read_text().strip() or None
    except OSError:
        return None


def gpu_identity(device: Device) -> dict[str, Any]:
    """UUIDs of every visible GPU; compute capability or gcnArchName and memory of the first."""
    import torch

    if not device.is_gpu:
        return {"uuids": [], "capability": None, "gcn_arch": None, "memory_gib": None}
    uuids = []
    for i in range(device.count):
        uuid = getattr(torch.cuda.get_device_properties(i), "uuid", None)
        if uuid is not None:
            text = str(uuid)
            nvidia_style = device.kind == "cuda" and not text.startswith("GPU-")
            uuids.append(f"GPU-{text}" if nvidia_style else text)
    props = torch.cuda.get_device_properties(device.index)
    gcn = getattr(props, "gcnArchName", None) if device.kind == "rocm" else None
    return {
        "uuids": uuids,
        "capability": None if gcn else f"{props.major}.{props.minor}",
        "gcn_arch": gcn.split(":")[0] if gcn else None,
        "memory_gib": round(props.total_memory / 2**30, 2),
    }


def versions(device: Device, nvml_module: ModuleType | None) -> dict[str, str | None]:
    import torch

    cudnn = torch.backends.cudnn
    out: dict[str, str | None] = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "hip": torch.version.hip,
        # On ROCm this API reports MIOpen, which is not cuDNN.
        "cudnn": cudnn_version(cudnn.version())
        if device.kind == "cuda" and cudnn.is_available()
        else None,
        "nccl": None,
        "driver": None,
    }
    if device.is_gpu:
        try:
            out["nccl"] = nccl_version(torch.cuda.nccl.version())
        except Exception:
            out["nccl"] = None
        out["driver"] = (nvml.driver_version(nvml_module) if nvml_module else None) or (
            _driver_from_files()
        )
    for key, names in OPTIONAL_PACKAGES.items():
        out[key] = package_version(names)
    return out


def collect_stamp(
    device: Device,
    identity: dict[str, Any],
    match: CatalogMatch,
    nvml_module: ModuleType | None,
    nvml_reason: str | None,
) -> dict[str, Any]:
    """`identity` comes from gpu_identity(); the catalog match needs it first."""
    clocks: dict[str, float | None] = {}
    power = None
    clocks_note = None
    if device.kind == "cuda" and nvml_module is not None:
        uuid = identity["uuids"][device.index] if identity["uuids"] else None
        h = nvml.handle(nvml_module, uuid, device.index)
        clocks = nvml.clocks(nvml_module, h)
        power = nvml.power_limit_w(nvml_module, h)
    elif device.kind == "cuda":
        clocks_note = f"clocks and power limit not read: {nvml_reason}"
    else:
        clocks_note = f"clocks and power limit are read through NVML, not on {device.kind}"
    return {
        "hostname": socket.gethostname(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "device": {
            "kind": device.kind,
            "name": device.name,
            "count": device.count,
            **identity,
            "catalog_id": match.gpu.id if match.gpu else None,
            "catalog_note": match.note,
        },
        "versions": versions(device, nvml_module),
        "clocks": clocks,
        "clocks_note": clocks_note,
        "power_limit_w": power,
    }
