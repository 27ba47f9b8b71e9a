"""The optional sections of the answers: a GPU-count sweep and a staged pipeline.

They are inputs, so they live with the other input models; the economics
package computes with them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator, model_validator

from advisor.core.model import bounds as B
from advisor.core.model.gpu_name import GpuName
from advisor.core.model.numeric import Amount, Plain, Whole
from advisor.core.model.printable import PrintableModel
from advisor.core.model.strict import StrictInput
from advisor.core.model.workload import Workload

Objective = Literal["cost", "time"]


class ConfigOptions(StrictInput):
    """The [configs] section of answers.toml: which counts to sweep and what to optimise."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    counts: list[Whole] | None = Field(
        default=None, max_length=B.MAX_SWEEP_COUNTS,
        description="GPU counts to sweep; default 1, 2, 4, ... up to max_gpus")
    max_gpus: Whole = Field(default=16, ge=1, le=B.MAX_SWEEP_GPUS)
    gpus_per_node: Whole | None = Field(
        default=None, ge=1, le=B.MAX_GPUS_PER_NODE,
        description="GPU slots per node; default: each GPU's scale-up domain from the catalog "
                    "(8 on an HGX board, 72 in an NVL72 rack)")
    deadline_days: Plain | None = Field(default=None, ge=B.MIN_DEADLINE_DAYS,
                                        le=B.MAX_DEADLINE_DAYS)
    objective: Objective = Field(
        default="cost", description="what `best` minimises among configurations that qualify")
    count_idle_slots: bool = Field(
        default=True,
        description="a partly used node's empty slots draw idle power (an owned box); "
                    "false for rented instances")

    @field_validator("counts")
    @classmethod
    def _positive_unique(cls, v: list[int] | None) -> list[int] | None:
        if v is not None and (not v or min(v) < 1 or len(set(v)) != len(v)):
            raise ValueError("counts must be distinct positive GPU counts")
        if v is not None and max(v) > B.MAX_SWEEP_GPUS:
            raise ValueError(f"counts must be at most {B.MAX_SWEEP_GPUS:,} GPUs")
        return sorted(v) if v is not None else None

    def gpu_counts(self) -> list[int]:
        if self.counts is not None:
            return self.counts
        out, n = [], 1
        while n <= self.max_gpus:
            out.append(n)
            n *= 2
        return out


RateSource = Literal["measured", "projected", "assumed"]
# A stage's rate and power, as the stage states them and as an alternative restates them.
UnitsPerS = Annotated[Amount, Field(ge=B.MIN_RATE_PER_S, le=B.MAX_TOKENS_PER_S)]
FlopsPerToken = Annotated[Amount, Field(ge=B.MIN_FLOPS_PER_TOKEN, le=B.MAX_FLOPS_PER_TOKEN)]
Mfu = Annotated[Plain, Field(ge=B.MIN_MFU, le=B.MAX_MFU)]
PeakTflops = Annotated[Plain, Field(ge=B.MIN_TFLOPS, le=B.MAX_TFLOPS)]
HopS = Annotated[Plain, Field(ge=0, le=B.MAX_HOP_S)]
BusyW = Annotated[Plain, Field(ge=B.MIN_BOARD_W, le=B.MAX_BOARD_W)]
IdleW = Annotated[Plain, Field(ge=0, le=B.MAX_IDLE_W)]
RATE_FIELDS = ("measured_units_per_s", "measured_tokens_per_s", "flops_per_token", "mfu",
               "peak_tflops", "hop_s_per_unit", "active_w", "idle_w")


def _rate_rules(m: StageSpec | StageRateSpec) -> None:
    """What a stated rate must hold together, wherever it is stated (ValueError if not)."""
    if m.measured_units_per_s is not None and m.measured_tokens_per_s is not None:
        raise ValueError("give measured_units_per_s or measured_tokens_per_s, not both")
    if (m.flops_per_token is None) != (m.mfu is None):
        raise ValueError("flops_per_token and mfu go together")
    measured = m.measured_units_per_s is not None or m.measured_tokens_per_s is not None
    if measured and m.flops_per_token is not None:
        raise ValueError("give one rate: measured, or flops_per_token with mfu")
    if m.hop_s_per_unit and measured:
        raise ValueError("a measured rate already includes its hops")
    if m.active_w is not None and m.idle_w is not None and m.idle_w >= m.active_w:
        raise ValueError(f"idle_w {m.idle_w:g} is not below active_w {m.active_w:g}")


class StageSpec(PrintableModel):
    """One stage and its rate: measured, or a workload to project, or FLOPs/token at an MFU."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str = Field(min_length=1, max_length=B.MAX_NAME_CHARS)
    gpu: GpuName = Field(min_length=1, max_length=B.MAX_NAME_CHARS, description="catalog id")
    gpus: Whole = Field(ge=1, le=B.MAX_GPUS,
                        description="GPUs the stage has now (a measured rate's count)")
    measured_units_per_s: UnitsPerS | None = Field(
        default=None, description="the whole stage's measured rate, work units/s")
    measured_tokens_per_s: UnitsPerS | None = None
    workload: Workload | None = Field(
        default=None, description="projected by the engine; its gpus are the stage's")
    flops_per_token: FlopsPerToken | None = None
    mfu: Mfu | None = None
    peak_tflops: PeakTflops | None = Field(
        default=None, description="the peak the MFU is read against; default catalog dense")
    hop_s_per_unit: HopS = Field(
        default=0.0, description="serial time per work unit the projection leaves out "
                                 "(e.g. a GPU->CPU copy); measured rates include it")
    active_w: BusyW | None = Field(default=None, description="a busy GPU's draw")
    idle_w: IdleW | None = None

    @model_validator(mode="after")
    def _one_source(self) -> StageSpec:
        _rate_rules(self)
        sources = [self.measured_units_per_s is not None or self.measured_tokens_per_s is not None,
                   self.flops_per_token is not None]
        if not any(sources) and self.workload is None:
            raise ValueError("give one rate: measured_units_per_s or measured_tokens_per_s, "
                             "or flops_per_token with mfu, or a workload to project (a workload "
                             "beside a rate is what the engine projects for comparison)")
        return self

    @property
    def source(self) -> RateSource:
        if self.measured_units_per_s is not None or self.measured_tokens_per_s is not None:
            return "measured"
        return "assumed" if self.flops_per_token is not None else "projected"

    def on(self, gpu: str, given: StageRateSpec | None) -> StageSpec:
        """The stage on another GPU: its rate there if given, else its workload for the
        engine. ValidationError when what is given does not make a stage there."""
        data: dict[str, Any] = self.model_dump(exclude=set(RATE_FIELDS))
        data["gpu"] = gpu
        if given is not None:
            data.update(given.model_dump(exclude_none=True))
            if given.rated:
                data.pop("workload", None)
        return StageSpec.model_validate(data)


class StageRateSpec(PrintableModel):
    """A stage's rate on another GPU: measured there, or FLOPs/token at an MFU of a peak.

    Left out, the engine projects the stage's own workload on that GPU. The bounds and
    rules are the stage's own, so a bad figure is refused at load with its path."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    measured_units_per_s: UnitsPerS | None = None
    measured_tokens_per_s: UnitsPerS | None = None
    flops_per_token: FlopsPerToken | None = None
    mfu: Mfu | None = None
    peak_tflops: PeakTflops | None = None
    hop_s_per_unit: HopS = 0.0
    active_w: BusyW | None = None
    idle_w: IdleW | None = None

    @model_validator(mode="after")
    def _paired(self) -> StageRateSpec:
        _rate_rules(self)
        return self

    @property
    def rated(self) -> bool:
        """Whether it states a rate (else the engine projects the stage's workload)."""
        return (self.measured_units_per_s is not None or self.measured_tokens_per_s is not None
                or self.flops_per_token is not None)


class PipelineAlternative(PrintableModel):
    """The same pipeline on another GPU type, at one or more splits."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    gpu: GpuName = Field(min_length=1, max_length=B.MAX_NAME_CHARS, description="catalog id")
    splits: list[list[Annotated[Whole, Field(ge=1, le=B.MAX_GPUS)]]] = Field(
        default_factory=list, max_length=B.MAX_SWEEP_COUNTS,
        description="GPUs per stage to report; default the stages' own")
    stages: dict[str, StageRateSpec] = Field(
        default_factory=dict, max_length=B.MAX_PIPELINE_STAGES,
        description="by stage name: the rate there; a stage left out is projected by the "
                    "engine from its workload")
    source: str = Field(default="", max_length=B.MAX_NOTE_CHARS)

    @field_validator("splits")
    @classmethod
    def _positive(cls, v: list[list[int]]) -> list[list[int]]:
        if any(not s for s in v):
            raise ValueError("a split gives each stage at least one GPU")
        return v


class PipelineSpec(PrintableModel):
    """The [pipeline] section: stages in flow order and what one work unit carries."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    stages: list[StageSpec] = Field(min_length=2, max_length=B.MAX_PIPELINE_STAGES)
    unit: str = Field(default="batch", min_length=1, max_length=B.MAX_NAME_CHARS)
    tokens_per_unit: Amount | None = Field(
        default=None, ge=B.MIN_TOKENS_PER_UNIT, le=B.MAX_TOKENS,
        description="needed for rates in units/s and for per-unit hops")
    token_budget: Amount | None = Field(default=None, ge=B.MIN_TOKENS, le=B.MAX_TOKENS)
    box_gpus: Whole | None = Field(default=None, ge=2, le=B.MAX_GPUS,
                                   description="default: the stages' sum")
    vary: str | None = Field(default=None, description="stage the neighbour table walks; "
                                                       "default the first")
    span: Whole = Field(default=2, ge=1, le=16)
    source: str = Field(default="", max_length=B.MAX_NOTE_CHARS)
    alternatives: list[PipelineAlternative] = Field(
        default_factory=list, max_length=B.MAX_TARGETS,
        description="the same pipeline on other GPUs, to compare")

    @model_validator(mode="after")
    def _consistent(self) -> PipelineSpec:
        names = [s.name for s in self.stages]
        if len(set(names)) != len(names):
            raise ValueError("stage names repeat")
        for i, alt in enumerate(self.alternatives):
            self._alternative_holds(i, alt, names)
        stated: list[StageSpec | StageRateSpec] = [
            *self.stages, *(g for a in self.alternatives for g in a.stages.values())]
        if self.tokens_per_unit is None and any(
                s.measured_units_per_s is not None or s.hop_s_per_unit for s in stated):
            raise ValueError("tokens_per_unit is needed for rates in units/s and per-unit hops")
        if self.vary is not None and self.vary not in names:
            raise ValueError(f"vary names no stage; stages are {', '.join(names)}")
        if self.box_gpus is not None and self.box_gpus < sum(s.gpus for s in self.stages):
            raise ValueError("box_gpus is below the stages' GPUs")
        return self

    def _alternative_holds(self, i: int, alt: PipelineAlternative, names: list[str]) -> None:
        """Every stage of an alternative makes a stage on its GPU, checked now (at load) with
        the path of what is wrong, not when the pipeline is computed."""
        where = f"alternatives.{i}"
        unknown = sorted(set(alt.stages) - set(names))
        if unknown:
            raise ValueError(f"{where}.stages.{unknown[0]}: names no stage of the pipeline "
                             f"({', '.join(names)})")
        if any(len(s) != len(names) for s in alt.splits):
            raise ValueError(f"{where}.splits: a split on {alt.gpu} needs one count per stage")
        for stage in self.stages:
            given = alt.stages.get(stage.name)
            if stage.workload is None and (given is None or not given.rated):
                raise ValueError(f"{where}.stages.{stage.name}: give a rate on {alt.gpu} "
                                 "(the stage has no workload to project)")
            try:
                stage.on(alt.gpu, given)
            except ValidationError as exc:
                err = exc.errors()[0]
                loc = ".".join(str(p) for p in err["loc"])
                raise ValueError(f"{where}.stages.{stage.name}{'.' + loc if loc else ''}: "
                                 f"{str(err['msg']).removeprefix('Value error, ')}") from None
