"""Catalog figures for this GPU, read with the stdlib only.

The probes compare what they measure with the catalog's peak, published MAMF
and memory bandwidth. The catalog is the sibling `catalog` package; when the
probes folder is copied alone onto a box it is absent, and the record says
"no catalog figure" instead of failing. Matching a torch device name to a
catalog entry is deliberately conservative: a wrong entry would produce a
confident but false efficiency, so an ambiguous name matches nothing and the
user can pass --catalog-id.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from .device import Device


@dataclass(frozen=True)
class CatalogGpu:
    id: str
    name: str
    aliases: tuple[str, ...] = ()
    compute_capability: str | None = None
    memory_gib: float | None = None
    peak_tflops: dict[str, float] = field(default_factory=dict)
    mamf_tflops: dict[str, float] = field(default_factory=dict)
    memory_gbps: float | None = None
    link_unidirectional_gbps: float | None = None


@dataclass(frozen=True)
class CatalogMatch:
    """The entry used for comparisons (or None) and a note saying why."""

    gpu: CatalogGpu | None
    note: str | None = None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def parse_gpus(doc: dict[str, Any]) -> list[CatalogGpu]:
    """Entries of a gpus.toml document; malformed figures are dropped, never guessed."""
    gpus = []
    for raw in doc.get("gpu", []):
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
            continue
        peaks = {k: v for k, x in _table(raw.get("peak_tflops")).items() if (v := _number(x))}
        mamf = {
            k: v
            for k, x in _table(raw.get("mamf")).items()
            if (v := _number(_table(x).get("tflops")))
        }
        memory = _table(raw.get("memory"))
        tbps = _number(memory.get("bandwidth_tbps"))
        link = _table(raw.get("interconnect"))
        gbps = _number(link.get("gbps"))
        if gbps is not None and link.get("direction") == "bidirectional":
            gbps /= 2
        aliases = raw.get("aliases", [])
        cc = raw.get("compute_capability")
        gpus.append(
            CatalogGpu(
                id=raw["id"],
                name=str(raw.get("name", raw["id"])),
                aliases=tuple(a for a in aliases if isinstance(a, str)),
                compute_capability=cc if isinstance(cc, str) else None,
                memory_gib=_number(memory.get("gib")),
                peak_tflops=peaks,
                mamf_tflops=mamf,
                memory_gbps=tbps * 1000 if tbps is not None else None,
                link_unidirectional_gbps=gbps,
            )
        )
    return gpus


def _catalog_text() -> str | None:
    """gpus.toml from a `catalog` folder next to this package (a copied folder, the repo,
    or an installed namespace that ships both), else from an importable `catalog` package."""
    sibling = Path(__file__).resolve().parent.parent / "catalog" / "gpus.toml"
    try:
        return sibling.read_text(encoding="utf-8")
    except OSError:
        pass
    try:
        return (resources.files("catalog") / "gpus.toml").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError, OSError, TypeError):
        return None


def load_catalog() -> tuple[list[CatalogGpu], str | None]:
    """The catalog's GPUs, or an empty list and the reason it could not be read."""
    text = _catalog_text()
    if text is None:
        return [], "no catalog figure: the catalog folder is not installed next to probes"
    try:
        return parse_gpus(tomllib.loads(text)), None
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        return [], f"no catalog figure: catalog/gpus.toml is not valid TOML ({exc})"


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


# Model tokens in device names: h100, a100, gh200, b200, mi300x, l40s, l4 ...
_MODEL = re.compile(r"(?<![a-z0-9])([a-z]{1,3}\d{1,4}[a-z]?)(?![0-9])")
# Words in a torch device name that pick the form factor among same-model entries.
_FORM_WORDS = ("pcie", "nvl", "sxm")


def _id_model(gpu: CatalogGpu) -> str:
    return gpu.id.split("-", 1)[0]


# Vendors label capacity in GB and torch reports GiB less reserved memory (an "80GB" H100
# shows 79.6, a "141GB" H200 139.8); a wider gap is a different SKU (A100 40GB vs 80GB).
MEMORY_TOLERANCE = 0.12


def match_name(
    device_name: str,
    capability: str | None,
    gpus: list[CatalogGpu],
    memory_gib: float | None = None,
) -> CatalogMatch:
    """Match a torch device name, e.g. "NVIDIA H100 80GB HBM3", to one catalog entry.

    An entry must agree on compute capability and memory size when both are known."""

    def compatible(g: CatalogGpu) -> bool:
        if capability is not None and g.compute_capability not in (None, capability):
            return False
        if memory_gib is None or g.memory_gib is None:
            return True
        return abs(memory_gib - g.memory_gib) <= MEMORY_TOLERANCE * g.memory_gib

    key = _norm(device_name)
    exact = [g for g in gpus if key in {_norm(s) for s in (g.id, g.name, *g.aliases)}]
    exact = [g for g in exact if compatible(g)]
    if len(exact) == 1:
        return CatalogMatch(exact[0], f"matched {device_name!r} by name")
    lowered = device_name.lower()
    models = set(_MODEL.findall(lowered))
    candidates = [g for g in gpus if _id_model(g) in models and compatible(g)]
    if len(candidates) > 1:
        words = [w for w in _FORM_WORDS if w in lowered] or ["sxm"]
        narrowed = [g for g in candidates if any(w in g.id for w in words)]
        candidates = narrowed if len(narrowed) == 1 else candidates
    if len(candidates) == 1:
        return CatalogMatch(candidates[0], f"matched {device_name!r} by model name")
    if candidates:
        ids = ", ".join(sorted(g.id for g in candidates))
        return CatalogMatch(None, f"{device_name!r} is ambiguous ({ids}); pass --catalog-id")
    return CatalogMatch(None, f"no catalog entry for {device_name!r}; pass --catalog-id")


def match_device(
    device: Device,
    capability: str | None,
    memory_gib: float | None = None,
    override: str | None = None,
    catalog: tuple[list[CatalogGpu], str | None] | None = None,
) -> CatalogMatch:
    """The catalog entry for this device; CPU and MPS never get one."""
    if device.kind == "cpu":
        return CatalogMatch(None, "no catalog figure for CPU")
    if device.kind == "mps":
        return CatalogMatch(None, "no catalog figure for Apple MPS")
    gpus, reason = catalog if catalog is not None else load_catalog()
    if reason:
        return CatalogMatch(None, reason)
    if override:
        chosen = [g for g in gpus if g.id == override.lower()]
        if not chosen:
            raise ValueError(f"unknown --catalog-id {override!r}")
        return CatalogMatch(chosen[0], f"chosen with --catalog-id {override}")
    return match_name(device.name, capability, gpus, memory_gib)
