"""The optional sections of the answers: a GPU-count sweep and a staged pipeline.

They are inputs, so they live with the other input models; the economics
package computes with them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from advisor.core.model import bounds as B
from advisor.core.model.printable import PrintableModel
from advisor.core.model.workload import Workload

Objective = Literal["cost", "time"]


class ConfigOptions(BaseModel):
    """The [configs] section of answers.toml: which counts to sweep and what to optimise."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    counts: list[int] | None = Field(
        default=None, max_length=B.MAX_SWEEP_COUNTS,
        description="GPU counts to sweep; default 1, 2, 4, ... up to max_gpus")
    max_gpus: int = Field(default=16, ge=1, le=B.MAX_SWEEP_GPUS)
    gpus_per_node: int | None = Field(
        default=None, ge=1, le=B.MAX_GPUS_PER_NODE,
        description="GPU slots per node; default: each GPU's scale-up domain from the catalog "
                    "(8 on an HGX board, 72 in an NVL72 rack)")
    deadline_days: float | None = Field(default=None, ge=B.MIN_DEADLINE_DAYS,
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


class StageSpec(PrintableModel):
    """One stage and its rate: measured, or a workload to project, or FLOPs/token at an MFU."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str = Field(min_length=1, max_length=B.MAX_NAME_CHARS)
    gpu: str = Field(min_length=1, max_length=B.MAX_NAME_CHARS, description="catalog id")
    gpus: int = Field(ge=1, le=B.MAX_GPUS,
                      description="GPUs the stage has now (a measured rate's count)")
    measured_units_per_s: float | None = Field(
        default=None, ge=B.MIN_RATE_PER_S, le=B.MAX_TOKENS_PER_S,
        description="the whole stage's measured rate, work units/s")
    measured_tokens_per_s: float | None = Field(default=None, ge=B.MIN_RATE_PER_S,
                                                 le=B.MAX_TOKENS_PER_S)
    workload: Workload | None = Field(
        default=None, description="projected by the engine; its gpus are the stage's")
    flops_per_token: float | None = Field(default=None, ge=B.MIN_FLOPS_PER_TOKEN,
                                           le=B.MAX_FLOPS_PER_TOKEN)
    mfu: float | None = Field(default=None, ge=B.MIN_MFU, le=1)
    peak_tflops: float | None = Field(
        default=None, ge=B.MIN_TFLOPS, le=B.MAX_TFLOPS,
        description="the peak the MFU is read against; default catalog dense")
    hop_s_per_unit: float = Field(
        default=0.0, ge=0, le=B.MAX_HOP_S,
        description="serial time per work unit the projection leaves out "
                    "(e.g. a GPU->CPU copy); measured rates include it")
    active_w: float | None = Field(default=None, gt=0, le=B.MAX_BOARD_W,
                                   description="a busy GPU's draw")
    idle_w: float | None = Field(default=None, ge=0, le=B.MAX_IDLE_W)

    @model_validator(mode="after")
    def _one_source(self) -> StageSpec:
        sources = [self.measured_units_per_s is not None or self.measured_tokens_per_s is not None,
                   self.flops_per_token is not None]
        if sum(sources) > 1 or (not any(sources) and self.workload is None):
            raise ValueError("give one rate: measured_units_per_s or measured_tokens_per_s, "
                             "or flops_per_token with mfu, or a workload to project (a workload "
                             "beside a rate is what the engine projects for comparison)")
        if self.measured_units_per_s is not None and self.measured_tokens_per_s is not None:
            raise ValueError("give measured_units_per_s or measured_tokens_per_s, not both")
        if (self.flops_per_token is None) != (self.mfu is None):
            raise ValueError("flops_per_token and mfu go together")
        if self.hop_s_per_unit and sources[0]:
            raise ValueError("a measured rate already includes its hops")
        if self.active_w is not None and self.idle_w is not None and self.idle_w >= self.active_w:
            raise ValueError(f"idle_w {self.idle_w:g} is not below active_w {self.active_w:g}")
        return self

    @property
    def source(self) -> RateSource:
        if self.measured_units_per_s is not None or self.measured_tokens_per_s is not None:
            return "measured"
        return "assumed" if self.flops_per_token is not None else "projected"


class StageRateSpec(BaseModel):
    """A stage's rate on another GPU: measured there, or FLOPs/token at an MFU of a peak.

    Left out, the engine projects the stage's own workload on that GPU."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    measured_units_per_s: float | None = Field(default=None, gt=0)
    measured_tokens_per_s: float | None = Field(default=None, gt=0)
    flops_per_token: float | None = Field(default=None, gt=0)
    mfu: float | None = Field(default=None, gt=0, le=1)
    peak_tflops: float | None = Field(default=None, gt=0)
    hop_s_per_unit: float = Field(default=0.0, ge=0)
    active_w: float | None = Field(default=None, gt=0, le=3000)
    idle_w: float | None = Field(default=None, ge=0, le=500)


class PipelineAlternative(BaseModel):
    """The same pipeline on another GPU type, at one or more splits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    gpu: str = Field(min_length=1, description="catalog id")
    splits: list[list[int]] = Field(
        default_factory=list, description="GPUs per stage to report; default the stages' own")
    stages: dict[str, StageRateSpec] = Field(
        default_factory=dict, description="by stage name: the rate there; a stage left out is "
                                          "projected by the engine from its workload")
    source: str = ""

    @field_validator("splits")
    @classmethod
    def _positive(cls, v: list[list[int]]) -> list[list[int]]:
        if any(not s or min(s) < 1 for s in v):
            raise ValueError("a split gives each stage at least one GPU")
        return v


class PipelineSpec(PrintableModel):
    """The [pipeline] section: stages in flow order and what one work unit carries."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    stages: list[StageSpec] = Field(min_length=2, max_length=B.MAX_PIPELINE_STAGES)
    unit: str = Field(default="batch", min_length=1, max_length=B.MAX_NAME_CHARS)
    tokens_per_unit: float | None = Field(
        default=None, ge=B.MIN_TOKENS_PER_UNIT, le=B.MAX_TOKENS,
        description="needed for rates in units/s and for per-unit hops")
    token_budget: float | None = Field(default=None, ge=B.MIN_TOKENS, le=B.MAX_TOKENS)
    box_gpus: int | None = Field(default=None, ge=2, le=B.MAX_GPUS,
                                 description="default: the stages' sum")
    vary: str | None = Field(default=None, description="stage the neighbour table walks; "
                                                       "default the first")
    span: int = Field(default=2, ge=1, le=16)
    source: str = ""
    alternatives: list[PipelineAlternative] = Field(
        default_factory=list, description="the same pipeline on other GPUs, to compare")

    @model_validator(mode="after")
    def _consistent(self) -> PipelineSpec:
        names = [s.name for s in self.stages]
        if len(set(names)) != len(names):
            raise ValueError("stage names repeat")
        for alt in self.alternatives:
            unknown = set(alt.stages) - set(names)
            if unknown:
                raise ValueError(f"alternative on {alt.gpu} names no stage {sorted(unknown)[0]!r}")
            if any(len(s) != len(names) for s in alt.splits):
                raise ValueError(f"a split on {alt.gpu} needs one count per stage")
            for name, given in alt.stages.items():
                if given.flops_per_token is not None and given.mfu is None:
                    raise ValueError(f"{alt.gpu} {name}: flops_per_token needs mfu")
            missing = [s.name for s in self.stages if s.name not in alt.stages
                       and s.workload is None]
            if missing:
                raise ValueError(f"alternative on {alt.gpu}: give a rate for {missing[0]!r} "
                                 "(it has no workload to project)")
        if self.tokens_per_unit is None and any(
                s.measured_units_per_s is not None or s.hop_s_per_unit for s in self.stages):
            raise ValueError("tokens_per_unit is needed for rates in units/s and per-unit hops")
        if self.vary is not None and self.vary not in names:
            raise ValueError(f"vary names no stage; stages are {', '.join(names)}")
        if self.box_gpus is not None and self.box_gpus < sum(s.gpus for s in self.stages):
            raise ValueError("box_gpus is below the stages' GPUs")
        return self
