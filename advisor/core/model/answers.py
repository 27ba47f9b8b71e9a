"""Answers: everything `decide()` needs, in a shape that reads from and writes to TOML.

The wizard fills one of these screen by screen; a headless run reads it from
answers.toml; a report embeds it so the decision can be re-run. Figures the
user did not give (electricity price, GPU prices) fall back to defaults, and
the decision marks them as defaults.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from advisor.core.errors import InputError
from advisor.core.formats import validation_error
from advisor.core.model import bounds as B
from advisor.core.model.layout import LayoutOverride
from advisor.core.model.measured import MeasuredRun
from advisor.core.model.options import ConfigOptions, PipelineSpec
from advisor.core.model.printable import PrintableModel
from advisor.core.model.stack import Stack
from advisor.core.model.workload import Workload

if TYPE_CHECKING:
    from advisor.core.model.catalog import Catalog

if TYPE_CHECKING:
    from advisor.core.model.catalog import Catalog

DEFAULT_ELECTRICITY_USD_PER_KWH = 0.12
_COUNTED = re.compile(r"^(?P<id>[^@\s]+)@(?P<n>\d+)$")


@dataclass(frozen=True)
class GpuSpec:
    """One compared side: a catalog GPU and, when it differs from the workload's, its count."""

    gpu: str
    count: int | None

    @property
    def label(self) -> str:
        return f"{self.gpu}@{self.count}" if self.count else self.gpu


def split_count(text: str) -> tuple[str, int | None]:
    """'b200-sxm@64' -> ('b200-sxm', 64); a plain id has no count of its own."""
    m = _COUNTED.match(text.strip())
    return (m["id"], int(m["n"])) if m else (text.strip(), None)


class Answers(PrintableModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    current: str = Field(min_length=1, max_length=B.MAX_NAME_CHARS,
                         description="catalog id of the GPU the workload runs on now")
    targets: list[str] = Field(
        min_length=1, max_length=B.MAX_TARGETS,
        description="catalog ids to compare against; 'id@N' for N GPUs of it")
    workload: Workload
    layouts: dict[str, LayoutOverride] = Field(
        default_factory=dict, max_length=B.MAX_TARGETS + 1,
        description="per-GPU changes to the workload's layout, by catalog id (e.g. its count)")
    power_limits_w: dict[str, Annotated[float, Field(gt=0, le=B.MAX_BOARD_W)]] = Field(
        default_factory=dict, max_length=B.MAX_TARGETS + 1,
        description="a per-GPU power cap below the part's limit, watts")
    basis: Literal["retuned", "as_run"] = Field(
        default="retuned", description="what the verdict compares: each GPU re-tuned, or the "
                                       "layouts as run")
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
    measured: MeasuredRun | None = Field(
        default=None, description="what your job does today on the current GPU, at the first "
                                  "sequence length: the decision is anchored on it")

    def compared(self, catalog: Catalog, alone: bool = False) -> list[GpuSpec]:
        """The current GPU, then each distinct target, with catalog ids resolved; `alone`
        accepts no target besides the current GPU (a GPU-count sweep of one GPU)."""
        cid, ccount = split_count(self.current)
        current = GpuSpec(catalog.gpu(cid).id, ccount)
        out = [current]
        for text in self.targets:
            tid, count = split_count(text)
            spec = GpuSpec(catalog.gpu(tid).id, count)
            same_count = (spec.count or self.workload.gpus) == (current.count or
                                                                 self.workload.gpus)
            if (spec.gpu == current.gpu and same_count) or spec in out:
                continue
            out.append(spec)
        if len(out) < 2 and not alone:
            raise InputError("no target differs from the current GPU", field="targets",
                             value=self.targets)
        return out

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
    named += [(f"layouts.{k}", k) for k in answers.layouts]
    named += [(f"power_limits_w.{k}", k) for k in answers.power_limits_w]
    for field, gpu in named:
        try:
            catalog.gpu(split_count(gpu)[0])  # "id@N" names N GPUs of id
        except InputError as exc:
            raise InputError(exc.message, file=file, field=field, value=gpu) from None
