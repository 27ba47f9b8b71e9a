"""What the wizard knows about this box, as a plain value the app is given.

The app takes a `Hardware` in its constructor so tests can say "an H100 box" or
"CPU only" without nvidia-smi; `detect_hardware()` fills it from `advisor.detect`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
    stack: Any = None
    """The core `Stack` handed to the software gate; None when nothing was detected."""
    notes: tuple[str, ...] = field(default=())

    @property
    def has_gpu(self) -> bool:
        return bool(self.gpus)
