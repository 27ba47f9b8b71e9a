"""Answers: everything `decide()` needs, in a shape that reads from and writes to TOML.

The wizard fills one of these screen by screen; a headless run reads it from
answers.toml; a report embeds it so the decision can be re-run. Figures the
user did not give (electricity price, GPU prices) fall back to defaults, and
the decision marks them as defaults.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from advisor.core.errors import InputError
from advisor.core.formats import validation_error
from advisor.core.model import bounds as B
from advisor.core.model.options import ConfigOptions, PipelineSpec
from advisor.core.model.stack import Stack
from advisor.core.model.workload import Workload
from advisor.core.text import refuse_control

if TYPE_CHECKING:
    from advisor.core.model.catalog import Catalog

DEFAULT_ELECTRICITY_USD_PER_KWH = 0.12


class Answers(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    current: str = Field(min_length=1, max_length=B.MAX_NAME_CHARS,
                         description="catalog id of the GPU the workload runs on now")
    targets: list[str] = Field(min_length=1, max_length=B.MAX_TARGETS,
                               description="catalog ids to compare against")
    workload: Workload
    prices: dict[str, Annotated[float, Field(ge=B.MIN_USD_PER_GPU_HOUR,
                                             le=B.MAX_USD_PER_GPU_HOUR)]] = Field(
        default_factory=dict, description="quoted $/GPU-hour by catalog id; others use defaults"
    )
    electricity_usd_per_kwh: float = Field(default=DEFAULT_ELECTRICITY_USD_PER_KWH, ge=0,
                                           le=B.MAX_USD_PER_KWH)
    power_cap_kw: float | None = Field(default=None, ge=B.MIN_POWER_CAP_KW, le=B.MAX_POWER_CAP_KW,
                                       description="rack power budget")
    stack: Stack | None = None
    time_premium: float = Field(
        default=0.10, ge=0, le=B.MAX_TIME_PREMIUM,
        description="extra $/token still worth paying to finish sooner (0.10 = 10%)",
    )
    configs: ConfigOptions | None = Field(
        default=None, description="GPU-count sweep options for `advisor configs sweep`")
    pipeline: PipelineSpec | None = Field(
        default=None, description="a staged workload for `advisor configs pipeline`")

    @field_validator("*", mode="after")
    @classmethod
    def _printable(cls, v: Any) -> Any:
        refuse_control(v, "answers")  # names shown in tables, reports and the wizard
        return v

    @property
    def electricity_is_default(self) -> bool:
        return "electricity_usd_per_kwh" not in self.model_fields_set


def parse_answers(data: Any, file: str = "answers") -> Answers:
    """Validate decoded answers (e.g. from answers.toml); errors are one InputError line."""
    try:
        return Answers.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, file) from None


def check_gpu_ids(answers: Answers, catalog: Catalog, file: str = "answers") -> None:
    """Every catalog id the answers name resolves, or one line naming the file and field."""
    named = [("current", answers.current),
             *((f"targets.{i}", t) for i, t in enumerate(answers.targets))]
    if answers.pipeline is not None:
        named += [(f"pipeline.stages.{i}.gpu", s.gpu)
                  for i, s in enumerate(answers.pipeline.stages)]
    for field, gpu in named:
        try:
            catalog.gpu(gpu)
        except InputError as exc:
            raise InputError(exc.message, file=file, field=field, value=gpu) from None
