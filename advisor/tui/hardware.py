"""What the wizard knows about this box, as a plain value the app is given.

The app takes a `Hardware` in its constructor so tests can say "an H100 box" or
"CPU only" without nvidia-smi; `detect_hardware()` fills it from `advisor.io.detect`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from advisor.core import Catalog, Stack


@dataclass(frozen=True)
class DetectedGpu:
    """One GPU seen on this box; `catalog_id` is None when the catalog has no match."""

    name: str
    catalog_id: str | None
    memory_gib: float | None = None
    count: int = 1


@dataclass(frozen=True)
class Hardware:
    gpus: tuple[DetectedGpu, ...] = ()
    driver: str | None = None
    packages: tuple[tuple[str, str | None], ...] = ()
    """(name, version or None when not installed), in display order."""
    stack: Stack | None = None
    """Handed to the software gate; None when nothing was detected."""
    notes: tuple[str, ...] = field(default=())
    pending: bool = False
    """True until detection has run: the app paints first and looks at the box in a worker."""

    @property
    def has_gpu(self) -> bool:
        return bool(self.gpus)


def detect_hardware(catalog: Catalog) -> Hardware:
    """This box via `advisor.io.detect`: vendor tools and package metadata, never torch itself."""
    from advisor.io.detect import detect_gpus, detect_stack

    found = detect_gpus(catalog)
    stack = detect_stack(catalog=catalog, gpus=found)
    groups: dict[tuple[str, str | None], list[Any]] = {}
    for g in found:
        groups.setdefault((g.name, g.catalog_id), []).append(g)
    gpus = tuple(
        DetectedGpu(name, cid, (same[0].memory_mib or 0) / 1024 or None, len(same))
        for (name, cid), same in groups.items()
    )
    notes = tuple(dict.fromkeys(g.catalog_note for g in found if not g.catalog_id))
    return Hardware(gpus=gpus, driver=stack.driver, packages=stack_lines(stack), stack=stack,
                    notes=notes)


def stack_lines(stack: Stack) -> tuple[tuple[str, str | None], ...]:
    """torch with its build, the CUDA/ROCm runtime, then every kernel the gates care about."""
    from advisor.core import ATTENTION_KERNELS

    torch = stack.describe_torch() if stack.torch else None
    lines: list[tuple[str, str | None]] = [("torch", torch)]
    if stack.cuda:
        lines.append(("CUDA", stack.cuda))
    if stack.hip:
        lines.append(("ROCm", stack.hip))
    extras = [p for p in stack.packages if p != "torch"]
    lines += [(p, stack.packages[p]) for p in extras]
    lines += [(k, None) for k in ATTENTION_KERNELS[:1] if k not in stack.packages]
    return tuple(lines)
