"""What this box runs: package versions, torch's build, and its GPUs.

Impure, so it lives outside `advisor.core`. It never imports torch: importing
it takes seconds, can initialise CUDA, and fails on a broken install, while
the facts we need are in package metadata and in `torch/version.py`'s text.
NVIDIA GPUs come from NVML where `nvidia-ml-py` is importable (the `nvml` extra: one
library call instead of a process, as nvitop and gpustat do), else from `nvidia-smi`; AMD
GPUs from `amd-smi` or `rocm-smi`; each tool with a short timeout. A CPU box has none.
"""

from __future__ import annotations

import ast
import contextlib
import csv
import importlib.metadata as md
import importlib.util
import io
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from advisor.core.model.catalog import Catalog, Gpu
from advisor.core.model.stack import Stack, normalize_package

# pip distribution -> catalog package id. The FA4 distribution
# is flash-attn-4 although it imports as flash_attn.cute; cuDNN ships as nvidia-cudnn-cuXX.
DISTRIBUTIONS: dict[str, str] = {
    "torch": "torch",
    "triton": "triton",
    "pytorch-triton-rocm": "triton",
    "flash-attn": "flash-attn",
    "flash-attn-3": "flash-attn-3",
    "flash-attn-4": "flash-attn-4",
    "transformer-engine": "transformer-engine",
    "deepspeed": "deepspeed",
    "megatron-core": "megatron-core",
    "vllm": "vllm",
    "torchao": "torchao",
    "bitsandbytes": "bitsandbytes",
    "liger-kernel": "liger-kernel",
    "flash-linear-attention": "flash-linear-attention",
    "nvidia-cudnn-cu12": "cudnn",
    "nvidia-cudnn-cu13": "cudnn",
}

NVIDIA_QUERY = "name,uuid,driver_version,memory.total,compute_cap"
TIMEOUT_S = 5.0


class DetectedGpu(BaseModel):
    """One GPU as the vendor tool reports it, with a best-effort catalog id."""

    model_config = ConfigDict(frozen=True)

    vendor: Literal["NVIDIA", "AMD"]
    name: str
    uuid: str | None = None
    driver: str | None = None
    memory_mib: int | None = None
    capability: str | None = None  # NVIDIA compute capability, "9.0"
    gcn_arch: str | None = None  # AMD target, "gfx942"
    catalog_id: str | None = None
    catalog_note: str = ""


# ---------------------------------------------------------------- software stack


def _torch_version_file() -> dict[str, Any]:
    """The literals assigned in the installed torch/version.py, read as text."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(next(iter(spec.submodule_search_locations))) / "version.py"
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return {}
    out: dict[str, Any] = {}
    for node in tree.body:
        target = value = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and value is not None:
            try:
                out[target.id] = ast.literal_eval(value)
            except ValueError:
                continue
    return out


def _leading_version(text: object) -> str | None:
    """ "6.3.42131-fa1d09cbd" -> "6.3.42131": HIP versions carry a git suffix."""
    m = re.match(r"\d+(?:\.\d+)*", str(text)) if text else None
    return m[0] if m else None


def installed_packages(catalog: Catalog | None = None) -> dict[str, str]:
    """Catalog package id -> installed version, from distribution metadata only."""
    dists = dict(DISTRIBUTIONS)
    if catalog is not None:
        for p in catalog.packages.values():
            dists.setdefault(normalize_package(p.pip_name or p.id), p.id)
    found: dict[str, str] = {}
    for dist, pid in dists.items():
        try:
            found.setdefault(pid, md.version(dist))
        except md.PackageNotFoundError:
            continue
    return found


def detect_stack(
    needs: list[str] | None = None,
    *,
    catalog: Catalog | None = None,
    gpus: list[DetectedGpu] | None = None,
) -> Stack:
    """This box's stack; `gpus` (detected when omitted) supplies the driver version."""
    packages = installed_packages(catalog)
    info = _torch_version_file()
    version = info.get("__version__")
    if isinstance(version, str):
        packages["torch"] = version
    data: dict[str, Any] = {
        "source": "detected",
        "packages": packages,
        "cuda": _leading_version(info.get("cuda")),
        "hip": _leading_version(info.get("hip")),
    }
    if info and not data["cuda"] and not data["hip"]:
        data["torch_build"] = "xpu" if info.get("xpu") else "cpu"
    found = detect_gpus(catalog) if gpus is None else gpus
    data["driver"] = next((g.driver for g in found if g.driver), None)
    if needs is not None:
        data["needs"] = needs
    return Stack.model_validate(data)


# ---------------------------------------------------------------- GPUs


def _run(argv: list[str], timeout: float) -> str | None:
    """stdout of a tool on PATH, or None when it is absent, fails or hangs."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _value(text: str | None) -> str | None:
    t = (text or "").strip()
    return None if not t or t.startswith("[") or t.upper() == "N/A" else t


def _mib(text: str | None) -> int | None:
    m = re.match(r"\s*([\d.]+)", text or "")
    return int(float(m[1])) if m else None


def parse_nvidia_smi(text: str) -> list[DetectedGpu]:
    """Rows of `--query-gpu=name,uuid,driver_version,memory.total[,compute_cap]
    --format=csv,noheader[,nounits]`; "[N/A]" cells become None."""
    gpus = []
    for row in csv.reader(io.StringIO(text), skipinitialspace=True):
        if len(row) < 4 or not row[0].strip():
            continue
        gpus.append(
            DetectedGpu(
                vendor="NVIDIA",
                name=row[0].strip(),
                uuid=_value(row[1]),
                driver=_value(row[2]),
                memory_mib=_mib(_value(row[3])),
                capability=_value(row[4]) if len(row) > 4 else None,
            )
        )
    return gpus


def _gfx(text: object) -> str | None:
    """ "gfx942:sramecc+:xnack-" -> "gfx942"; old rocm-smi prints gfx90a as "gfx9010"."""
    m = re.match(r"gfx([0-9a-f]+)", str(text or "").strip().lower())
    if m is None:
        return None
    digits = m[1]
    legacy = re.fullmatch(r"(\d)(\d)(\d\d)", digits)
    if legacy and int(legacy[3]) >= 10:
        digits = f"{legacy[1]}{legacy[2]}{int(legacy[3]):x}"
    return f"gfx{digits}"


def parse_amd_smi(text: str) -> list[DetectedGpu]:
    """`amd-smi static --asic --vram --driver --json`: a list of cards, or {"gpu_data": [...]}."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return []
    cards = data.get("gpu_data", []) if isinstance(data, dict) else data
    gpus = []
    for card in cards if isinstance(cards, list) else []:
        asic = card.get("asic") or {}
        size = (card.get("vram") or {}).get("size")
        memory = size.get("value") if isinstance(size, dict) else size
        gpus.append(
            DetectedGpu(
                vendor="AMD",
                name=str(asic.get("market_name") or "AMD GPU"),
                driver=_value(str((card.get("driver") or {}).get("version") or "")),
                memory_mib=_mib(str(memory)) if memory is not None else None,
                gcn_arch=_gfx(asic.get("target_graphics_version")),
            )
        )
    return gpus


def parse_rocm_smi(
    product: str, memory: str = "", unique: str = "", driver: str = ""
) -> list[DetectedGpu]:
    """Separate `rocm-smi --json` answers (--showproductname, --showmeminfo vram,
    --showuniqueid, --showdriverversion): asked together it prints only the last table."""

    def cards(text: str) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(text) if text else {}
        except json.JSONDecodeError:
            return {}
        return {k: v for k, v in data.items() if k.startswith("card") and isinstance(v, dict)}

    try:
        system = json.loads(driver).get("system", {}) if driver else {}
    except (json.JSONDecodeError, AttributeError):
        system = {}
    mem, ids = cards(memory), cards(unique)
    gpus = []
    for key, info in sorted(cards(product).items()):
        vram = str(mem.get(key, {}).get("VRAM Total Memory (B)") or "")
        gpus.append(
            DetectedGpu(
                vendor="AMD",
                name=str(info.get("Card Series") or info.get("Card series") or "AMD GPU"),
                uuid=_value(ids.get(key, {}).get("Unique ID")),
                driver=_value(system.get("Driver version")),
                memory_mib=int(vram) // 2**20 if vram.isdigit() else None,
                gcn_arch=_gfx(info.get("GFX Version")),
            )
        )
    return gpus


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def nvml_gpus() -> list[DetectedGpu] | None:
    """The NVIDIA GPUs NVML lists, or None where NVML is not installed or will not start
    (then `nvidia-smi` is asked instead). Never raises: detection is best effort."""
    try:
        import pynvml  # the nvidia-ml-py distribution
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:  # no driver, no library: NVMLError and its many subclasses
        return None
    try:
        driver = _text(pynvml.nvmlSystemGetDriverVersion())
        gpus = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(h)
            gpus.append(DetectedGpu(
                vendor="NVIDIA", name=_text(pynvml.nvmlDeviceGetName(h)),
                uuid=_text(pynvml.nvmlDeviceGetUUID(h)), driver=driver,
                memory_mib=int(pynvml.nvmlDeviceGetMemoryInfo(h).total) // 2**20,
                capability=f"{major}.{minor}"))
        return gpus
    except Exception:  # a device NVML cannot read: let nvidia-smi try
        return None
    finally:
        with contextlib.suppress(Exception):
            pynvml.nvmlShutdown()


def _nvidia(timeout: float) -> list[DetectedGpu]:
    found = nvml_gpus()
    if found is not None:
        return found
    base = ["nvidia-smi", "--format=csv,noheader,nounits"]
    out = _run([*base, f"--query-gpu={NVIDIA_QUERY}"], timeout)
    if out is None:  # drivers before compute_cap existed reject the whole query
        out = _run([*base, f"--query-gpu={NVIDIA_QUERY.rsplit(',', 1)[0]}"], timeout)
    return parse_nvidia_smi(out) if out else []


def _amd(timeout: float) -> list[DetectedGpu]:
    out = _run(["amd-smi", "static", "--asic", "--vram", "--driver", "--json"], timeout)
    if out and (found := parse_amd_smi(out)):
        return found
    product = _run(["rocm-smi", "--showproductname", "--json"], timeout)
    if not product:
        return []
    queries = (["--showmeminfo", "vram"], ["--showuniqueid"], ["--showdriverversion"])
    extra = [_run(["rocm-smi", *q, "--json"], timeout) or "" for q in queries]
    return parse_rocm_smi(product, *extra)


_NOISE = {"nvidia", "amd", "instinct", "geforce", "tesla", "radeon", "graphics", "gpu"}
# nvidia-smi names PCIe and NVL boards so ("NVIDIA H100 PCIe", "NVIDIA H100 NVL"), but
# never says SXM: a candidate with one of these words the name lacks is less likely.
_SKU_WORDS = {"pcie", "nvl"}


def _tokens(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower())) - _NOISE


def match_gpu(catalog: Catalog, gpu: DetectedGpu) -> tuple[str | None, str]:
    """(catalog id or None, how it was chosen): arch first, then name, then memory."""
    if gpu.gcn_arch:
        archs = {gpu.gcn_arch} & set(catalog.archs)
    else:
        archs = {
            a.id
            for a in catalog.archs.values()
            if a.vendor == gpu.vendor and a.compute_capability == gpu.capability
        }
    pool = [g for g in catalog.gpus if g.vendor == gpu.vendor and (not archs or g.arch in archs)]
    want = _tokens(gpu.name)

    def names(g: Gpu) -> list[str]:
        return [g.id, g.name, *g.aliases]

    def fits(g: Gpu) -> bool:
        """Memory within 10% of the catalog's, or nothing to compare."""
        if not gpu.memory_mib or g.memory is None:
            return True
        return abs(g.memory.gib - gpu.memory_mib / 1024) <= 0.1 * g.memory.gib

    exact = [g for g in pool if any(_tokens(n) == want for n in names(g)) and fits(g)]
    if len(exact) == 1:
        return exact[0].id, f"name {gpu.name!r} matches"

    def score(g: Gpu) -> int:
        have = set().union(*(_tokens(n) for n in names(g)))
        if not any(re.search(r"\d", t) for t in want & have):
            return 0
        return len(want & have) - len((have & _SKU_WORDS) - want)

    scored = [(score(g), g) for g in pool]
    best = max((s for s, _ in scored), default=0)
    top = [g for s, g in scored if s == best and s > 0]
    if len(top) > 1:
        top = [g for g in top if fits(g)] or top
    if len(top) == 1:
        return top[0].id, f"best match for {gpu.name!r}"
    if top:
        return None, f"{gpu.name!r} is ambiguous: {', '.join(g.id for g in top)}"
    return None, f"no catalog GPU matches {gpu.name!r}"


def detect_gpus(catalog: Catalog | None = None, timeout: float = TIMEOUT_S) -> list[DetectedGpu]:
    """Every NVIDIA and AMD GPU the vendor tools list; [] on a CPU box."""
    found = _nvidia(timeout) + _amd(timeout)
    if catalog is None:
        return found
    out = []
    for g in found:
        gid, note = match_gpu(catalog, g)
        out.append(g.model_copy(update={"catalog_id": gid, "catalog_note": note}))
    return out
