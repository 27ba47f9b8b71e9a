"""The wizard's one piece of state: the answers being built, step by step.

Every step screen reads and writes this object; nothing else holds answers.
It stays free of Textual so it can be unit-tested and turned into the
engine's `Answers` when the user reaches Performance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from advisor.core.catalog import Catalog
from advisor.core.probe_record import ProbeRecord
from advisor.tui.hardware import Hardware
from advisor.tui.runner import ProbeRunner

STEPS: tuple[tuple[str, str], ...] = (
    ("welcome", "Welcome"),
    ("workload", "Workload"),
    ("targets", "Targets and prices"),
    ("dtype", "Dtype gate"),
    ("software", "Software gate"),
    ("probes", "Probes"),
    ("performance", "Performance"),
    ("verdict", "Verdict"),
)
STEP_IDS = tuple(s for s, _ in STEPS)

ProbeSource = Literal["run", "catalog", "import"]


@dataclass
class WizardState:
    current: str | None = None
    """Catalog id of the GPU the workload runs on today."""
    workload: dict[str, Any] = field(default_factory=dict)
    """Validated workload fields, keyed as the engine's `Workload` names them."""
    targets: list[str] = field(default_factory=list)
    quotes: dict[str, float] = field(default_factory=dict)
    """$/GPU-hour the user typed; GPUs absent here use the catalog default."""
    electricity_usd_per_kwh: float | None = None
    """None: the default electricity price, shown as a default."""
    power_cap_kw: float | None = None
    excluded: dict[str, str] = field(default_factory=dict)
    """Targets a gate took out, with the gate's one-line reason."""
    probe_source: ProbeSource | None = None
    probe_record: ProbeRecord | None = None
    probe_note: str = ""
    decision: Any = None
    decision_for: Any = None
    """The answers `decision` was computed from; a mismatch means recompute."""
    reached: int = 0

    @property
    def active_targets(self) -> list[str]:
        return [t for t in self.targets if t not in self.excluded]

    def gpus_for_pricing(self) -> list[str]:
        """Every GPU the user may quote a price for, gated out or not."""
        return [g for g in [self.current, *self.targets] if g]

    def gpus(self) -> list[str]:
        """Current GPU first, then the targets still in play."""
        return [g for g in [self.current, *self.active_targets] if g]


@dataclass
class Context:
    """What every step screen is handed: injected so tests can fake any of it."""

    catalog: Catalog
    hardware: Hardware
    runner: ProbeRunner
    state: WizardState
