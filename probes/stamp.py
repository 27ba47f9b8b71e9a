"""The record's stamp: everything that changes probe results.

Two records are only comparable when the GPU, the driver, torch (and its local
build tag), CUDA/HIP, cuDNN, cuBLAS, NCCL and the kernel libraries, the clocks,
the power limit, the kernel-changing environment, the probe code and its run
settings are known, so all of them are written next to the numbers.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import platform
import socket
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

from . import PROBE_VERSION, nvml
from .device import Device, cpu_name, synchronize
from .figures import CatalogMatch
from .timing import available_memory_bytes, last_level_cache_bytes

# Distribution names to try for each optional library that changes kernels.
OPTIONAL_PACKAGES = {
    "flash_attn": ("flash-attn", "flash_attn"),  # flash-attn 2 (CK on ROCm)
    "flash_attn_3": ("flash-attn-3", "flash_attn_3", "flash_attn_interface"),
    "flash_attn_4": ("flash-attn-4", "flash_attn_4"),  # flash_attn.cute
    "flash_attn_cute": ("flash-attn-cute", "flash_attn_cute"),
    "cute_dsl": ("nvidia-cutlass-dsl",),
    "transformer_engine": ("transformer-engine", "transformer_engine", "transformer-engine-torch"),
    "triton": ("triton", "pytorch-triton", "pytorch-triton-rocm"),
    "aiter": ("amd-aiter", "aiter"),
}
CUBLAS_PACKAGES = (
    "nvidia-cublas", "nvidia-cublas-cu13", "nvidia-cublas-cu12", "nvidia-cublas-cu11"
)

# Environment variables that change which kernels run or how fast (prefixes end in "_").
KERNEL_ENV = (
    "PYTORCH_TUNABLEOP_",
    "TORCH_CUDNN_",
    "TORCH_BLAS_PREFER_",
    "TORCH_ALLOW_TF32_",
    "NVIDIA_TF32_OVERRIDE",
    "CUBLAS_",
    "CUBLASLT_",
    "CUDA_DEVICE_MAX_CONNECTIONS",
    "CUDA_LAUNCH_BLOCKING",
    "CUDA_MODULE_LOADING",
    "CUDA_AUTO_BOOST",
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_HIP_ALLOC_CONF",
    "PYTORCH_ALLOC_CONF",
    "PYTORCH_NO_CUDA_MEMORY_CACHING",
    "NCCL_",
    "TORCH_NCCL_",
    "RCCL_",
    "ROCBLAS_",
    "HIPBLASLT_",
    "MIOPEN_",
    "TORCH_ROCM_",
    "HSA_",
    "NVTE_",
    "FLASH_ATTENTION_",
    "TRITON_",
)
# Device selection: which GPUs, not how fast each is.
VISIBLE_ENV = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
# CPU threading: torchrun sets OMP_NUM_THREADS=1 by itself, so these stay with the host.
THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "KMP_", "GOMP_")


# Set by launchers (torchrun sets TORCH_NCCL_ASYNC_ERROR_HANDLING in every worker); error
# handling, not speed, so a record from `probes run` and one from torchrun stay comparable.
LAUNCHER_ENV = frozenset({"TORCH_NCCL_ASYNC_ERROR_HANDLING"})


def _env(names: tuple[str, ...], environ: dict[str, str] | None = None) -> dict[str, str]:
    env = os.environ if environ is None else environ
    out = {}
    for key in sorted(env):
        if key in LAUNCHER_ENV:
            continue
        if any(key == n or (n.endswith("_") and key.startswith(n)) for n in names):
            out[key] = env[key][:200]
    return out


def kernel_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    return _env(KERNEL_ENV, environ)


def package_version(names: tuple[str, ...]) -> str | None:
    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        except Exception:  # a broken install's metadata
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


def torch_local_tag(version: str | None) -> str | None:
    """The local build tag of a torch version: 'cu128' in '2.7.1+cu128'."""
    if not version or "+" not in version:
        return None
    return version.split("+", 1)[1] or None


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


def _loaded_library(prefix: str) -> str | None:
    """The path of a shared library this process has mapped whose name starts with prefix."""
    try:
        for line in Path("/proc/self/maps").read_text().splitlines():
            path = line.split()[-1] if "/" in line else ""
            if os.path.basename(path).startswith(prefix):
                return path
    except OSError:
        pass
    return None


def cublas_version(device: Device) -> tuple[str | None, str | None]:
    """cuBLAS as loaded by torch (cublasGetProperty), else the wheel's version; and where from."""
    if device.kind != "cuda":
        return None, None
    try:
        import torch

        x = torch.ones(16, 16, device=device.torch_device)
        _ = x @ x  # loads cuBLAS if nothing has yet
        synchronize(device)
    except Exception:
        pass
    path = _loaded_library("libcublas.so")
    if path:
        try:
            lib = ctypes.CDLL(path)
            parts = []
            for prop in (0, 1, 2):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
                value = ctypes.c_int()
                if lib.cublasGetProperty(prop, ctypes.byref(value)) != 0:
                    break
                parts.append(str(value.value))
            if len(parts) == 3:
                return ".".join(parts), f"cublasGetProperty in {path}"
        except (OSError, AttributeError):
            pass
    wheel = package_version(CUBLAS_PACKAGES)
    if wheel:
        return wheel, "the nvidia-cublas wheel's version"
    return None, "cuBLAS version not readable (no libcublas mapped, no nvidia-cublas wheel)"


_GTS_TO_GEN = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6, 128.0: 7}


def _gen(speed: str) -> int | None:
    try:
        return _GTS_TO_GEN.get(float(speed.split()[0]))
    except (ValueError, IndexError):
        return None


def pcie_from_sysfs(bdf: str, root: str | Path = "/sys/bus/pci/devices") -> dict[str, Any] | None:
    folder = Path(root) / bdf
    try:
        read = {n: (folder / n).read_text().strip() for n in (
            "current_link_speed", "current_link_width", "max_link_speed", "max_link_width"
        )}
    except OSError:
        return None

    def width(text: str) -> int | None:
        return int(text) if text.isdigit() else None

    return {
        "gen": _gen(read["current_link_speed"]),
        "width": width(read["current_link_width"]),
        "max_gen": _gen(read["max_link_speed"]),
        "max_width": width(read["max_link_width"]),
        "source": "sysfs",
    }


def _bdf(device: Device) -> str | None:
    try:
        import torch

        p = torch.cuda.get_device_properties(device.index)
        ids = [getattr(p, f"pci_{n}_id") for n in ("domain", "bus", "device")]
        return f"{ids[0]:04x}:{ids[1]:02x}:{ids[2]:02x}.0"
    except Exception:
        return None


def code_fingerprint(folder: Path | None = None) -> str:
    """A short hash of the probe sources, so locally edited probe code is told apart."""
    folder = folder or Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.py")) + sorted(folder.glob("*.sh")):
        with contextlib.suppress(OSError):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


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
            nvidia_style = device.kind == "cuda" and not text.startswith(("GPU-", "MIG-"))
            uuids.append(f"GPU-{text}" if nvidia_style else text)
    props = torch.cuda.get_device_properties(device.index)
    gcn = getattr(props, "gcnArchName", None) if device.kind == "rocm" else None
    return {
        "uuids": uuids,
        "capability": None if gcn else f"{props.major}.{props.minor}",
        "gcn_arch": gcn.split(":")[0] if gcn else None,
        "memory_gib": round(props.total_memory / 2**30, 2),
        "sm_count": getattr(props, "multi_processor_count", None),
    }


def versions(device: Device, nvml_module: ModuleType | None) -> dict[str, str | None]:
    import torch

    cudnn = torch.backends.cudnn
    out: dict[str, str | None] = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torch_local": torch_local_tag(torch.__version__),
        "torch_git": getattr(torch.version, "git_version", None),
        "cuda": torch.version.cuda,
        "hip": torch.version.hip,
        # On ROCm this API reports MIOpen, which is not cuDNN.
        "cudnn": cudnn_version(cudnn.version())
        if device.kind == "cuda" and cudnn.is_available()
        else None,
        "cublas": None,
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
        out["cublas"] = cublas_version(device)[0]
    for key, names in OPTIONAL_PACKAGES.items():
        out[key] = package_version(names)
    return out


def torch_settings() -> dict[str, Any]:
    """The torch switches that pick kernels: TF32, reduced-precision reductions, BLAS choice."""
    import torch

    out: dict[str, Any] = {"float32_matmul_precision": torch.get_float32_matmul_precision()}

    def grab(name: str, fn: Any) -> None:
        try:
            value = fn()
            out[name] = value if isinstance(value, bool | int | float | str) else str(value)
        except Exception:
            out[name] = None

    matmul = torch.backends.cuda.matmul
    grab("cuda_matmul_allow_tf32", lambda: matmul.allow_tf32)
    grab("allow_bf16_reduced_precision_reduction",
         lambda: matmul.allow_bf16_reduced_precision_reduction)
    grab("allow_fp16_reduced_precision_reduction",
         lambda: matmul.allow_fp16_reduced_precision_reduction)
    grab("cudnn_allow_tf32", lambda: torch.backends.cudnn.allow_tf32)
    grab("cudnn_benchmark", lambda: torch.backends.cudnn.benchmark)
    grab("deterministic_algorithms", torch.are_deterministic_algorithms_enabled)
    if torch.cuda.is_available():
        grab("preferred_blas_library", lambda: torch.backends.cuda.preferred_blas_library())
        grab("tunableop_enabled", lambda: torch.cuda.tunable.is_enabled())
    return out


def host_info() -> dict[str, Any]:
    import torch

    llc, source = last_level_cache_bytes()
    free = available_memory_bytes()
    return {
        "cpu": cpu_name(),
        "cpus": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "llc_bytes": llc,
        "llc_source": source,
        "memory_available_gib": round(free / 2**30, 1) if free else None,
        "os": f"{platform.system()} {platform.release()}",
        "threads_env": _env(THREAD_ENV),
    }


def collect_stamp(
    device: Device,
    identity: dict[str, Any],
    match: CatalogMatch,
    nvml_module: ModuleType | None,
    nvml_reason: str | None,
    run: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`identity` comes from gpu_identity(); the catalog match needs it first."""
    clocks: dict[str, Any] = {}
    power: dict[str, Any] = {}
    pcie = ecc = mig = None
    gpu_misc: dict[str, Any] = {}
    clocks_note = pcie_note = None
    if device.kind == "cuda" and nvml_module is not None:
        uuid = identity["uuids"][device.index] if identity["uuids"] else None
        try:
            h = nvml.handle(nvml_module, uuid, device.index)
        except Exception as exc:
            h = None
            clocks_note = f"clocks and power limit not read: NVML has no handle ({exc})"
        if h is not None:
            clocks = nvml.clocks(nvml_module, h)
            power = nvml.power(nvml_module, h)
            pcie = nvml.pcie(nvml_module, h)
            ecc = nvml.ecc(nvml_module, h)
            mig = nvml.mig(nvml_module, h)
            gpu_misc = nvml.misc(nvml_module, h)
    elif device.kind == "cuda":
        clocks_note = f"clocks and power limit not read: {nvml_reason}"
    else:
        clocks_note = f"clocks and power limit are read through NVML, not on {device.kind}"
    if device.is_gpu and pcie is None:
        bdf = _bdf(device)
        pcie = pcie_from_sysfs(bdf) if bdf else None
        if pcie is None:
            pcie_note = "PCIe link not readable (no NVML, no sysfs entry for this GPU)"
    visible = _env(VISIBLE_ENV)
    if mig is None and any("MIG-" in v for v in visible.values()):
        mig = {"enabled": True, "pending": None}
    return {
        "hostname": socket.gethostname(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "device": {
            "kind": device.kind,
            "name": device.name,
            "count": device.count,
            **identity,
            "visible_devices": visible or None,
            "catalog_id": match.gpu.id if match.gpu else None,
            "catalog_note": match.note,
        },
        "versions": versions(device, nvml_module),
        "clocks": clocks,
        "clocks_note": clocks_note,
        "power_limit_w": power.get("limit_w"),
        "power": power or None,
        "pcie": pcie,
        "pcie_note": pcie_note,
        "ecc": ecc,
        "mig": mig,
        "gpu_settings": gpu_misc or None,
        "env": kernel_env(),
        "torch_settings": torch_settings(),
        "probe": {"version": PROBE_VERSION, "code": code_fingerprint()},
        "run": run or {},
        "host": host_info(),
    }
