"""The wizard's one piece of state: the answers being built, step by step.

Every step screen reads and writes this object; nothing else holds answers.
It stays free of Textual so it can be unit-tested and turned into the
engine's `Answers` when the user reaches Performance. The engine's models load
when first needed, not before the first paint.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from advisor.core.model.catalog import Catalog
from advisor.core.model.stack import Stack
from advisor.tui.hardware import Hardware
from advisor.tui.runner import ProbeRunner

if TYPE_CHECKING:
    from advisor.core.decide import Decision  # numpy: loaded when Performance is first shown
    from advisor.core.economics.configs import ConfigSweep
    from advisor.core.model.answers import Answers
    from advisor.core.model.options import ConfigOptions, PipelineSpec
    from advisor.core.model.probe_record import ProbeRecord

STEPS: tuple[tuple[str, str], ...] = (
    ("welcome", "Welcome"),
    ("workload", "Workload"),
    ("targets", "Targets and prices"),
    ("dtype", "Dtype gate"),
    ("software", "Software gate"),
    ("probes", "Probes"),
    ("performance", "Performance"),
    ("configs", "Configurations"),
    ("verdict", "Verdict"),
)
STEP_IDS = tuple(s for s, _ in STEPS)

ProbeSource = Literal["run", "catalog", "import"]
Computed = Literal["decision", "sweep"]
"""What the app computes from the answers; each is a WizardState field, with `<name>_for`."""
Inputs = tuple["Answers", dict[str, "ProbeRecord"]]
"""What the engine computes from: the answers and the probe records. Results are cached
against the Inputs they came from; a mismatch means compute again."""


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
    stack: Stack | None = None
    """The stack to judge; None means this box's. A resumed report brings its own."""
    decision: Decision | None = None
    decision_for: Inputs | None = None
    configs: ConfigOptions | None = None
    """The configurations step's options; None: the defaults. They are in the answers from
    the start, so visiting the step and changing nothing keeps the decision."""
    sweep: ConfigSweep | None = None
    sweep_for: Inputs | None = None
    pipeline: PipelineSpec | None = None
    """A staged workload's stages (the configurations step's Pipeline view); in the
    answers, so an export writes its [pipeline] balance."""
    loaded: Answers | None = None
    """A resumed report's answers: what the wizard has no field for (pp, global batch,
    optimizer, time premium…) is kept from them."""
    reached: int = 0

    def probes(self) -> dict[str, ProbeRecord]:
        """The probe record keyed by the catalog GPU it measured, as `decide` takes them.

        A record that names no catalog GPU was made on this box, which is the
        current GPU; a CPU record says nothing about any GPU and is left out.
        """
        rec = self.probe_record
        if rec is None or self.probe_source == "catalog" or rec.stamp.device.kind == "cpu":
            return {}
        gpu = rec.stamp.device.catalog_id or self.current
        return {gpu: rec} if gpu else {}

    def decision_sweep(self) -> ConfigSweep | None:
        """The sweep, if it was made from the same answers as the decision."""
        if self.sweep is not None and self.sweep_for == self.decision_for:
            return self.sweep
        return None

    def config_options(self) -> ConfigOptions:
        from advisor.core.model.options import ConfigOptions

        return self.configs or ConfigOptions()

    def to_answers(self, stack: Stack | None) -> Answers:
        """The engine's Answers; the electricity price is passed only when the user gave one,
        so the decision marks the default as a default."""
        from advisor.core.model.answers import Answers
        from advisor.tui.forms import build_workload

        extra: dict[str, Any] = {}
        if self.electricity_usd_per_kwh is not None:
            extra["electricity_usd_per_kwh"] = self.electricity_usd_per_kwh
        if self.loaded is not None:
            extra["time_premium"] = self.loaded.time_premium
        if self.pipeline is not None:
            extra["pipeline"] = self.pipeline
        assert self.current is not None
        return Answers(
            current=self.current, targets=self.active_targets,
            workload=build_workload(self.workload, self.loaded.workload if self.loaded else None),
            prices={g: p for g, p in self.quotes.items() if g in self.gpus()},
            power_cap_kw=self.power_cap_kw, stack=stack, configs=self.config_options(), **extra)

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
