"""Answers: everything `decide()` needs, in a shape that reads from and writes to TOML.

The wizard fills one of these screen by screen; a headless run reads it from
answers.toml; a report embeds it so the decision can be re-run. Figures the
user did not give (electricity price, GPU prices) fall back to defaults, and
the decision marks them as defaults.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from advisor.core.errors import InputError, in_file
from advisor.core.formats import validation_error
from advisor.core.model import bounds as B
from advisor.core.model.gpu_name import GpuName, GpuSpec, split_count
from advisor.core.model.layout import LayoutOverride
from advisor.core.model.measured import MeasuredRun
from advisor.core.model.numeric import Plain
from advisor.core.model.options import ConfigOptions, PipelineSpec
from advisor.core.model.printable import PrintableModel
from advisor.core.model.stack import Stack
from advisor.core.model.vocabulary import Basis
from advisor.core.model.workload import Workload
from advisor.core.numbers import (
    RATIO,
    USD,
    WHOLE,
    is_ratio,
    parse_number,
    parse_price,
)

if TYPE_CHECKING:
    from advisor.core.model.catalog import Catalog, Gpu

DEFAULT_ELECTRICITY_USD_PER_KWH = 0.12
SERVING_MEASURES = ("tpot_ms", "ttft_ms", "concurrency")
def _usd(value: object) -> object:
    """A quoted $/GPU-hour as typed ("4.50", "$4.50/h"); a number passes as it is (and a
    true or false, which is none, is refused by the field)."""
    return parse_price(value, USD.unbounded(), None)[1] if isinstance(value, str) else value


Watts = Annotated[Plain, Field(gt=0, le=B.MAX_BOARD_W)]
"""A per-GPU power limit; the part's own range is checked against the catalog
(`check_against_catalog`), so the message can name it."""
UsdPerHour = Annotated[float, BeforeValidator(_usd),
                       Field(ge=B.MIN_USD_PER_GPU_HOUR, le=B.MAX_USD_PER_GPU_HOUR)]


class Answers(PrintableModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    current: GpuName = Field(min_length=1, max_length=B.MAX_NAME_CHARS,
                             description="catalog id of the GPU the workload runs on now")
    targets: list[GpuName] = Field(
        min_length=1, max_length=B.MAX_TARGETS,
        description="catalog ids to compare against; 'id@N' for N GPUs of it")
    workload: Workload
    layouts: dict[GpuName, LayoutOverride] = Field(
        default_factory=dict, max_length=B.MAX_TARGETS + 1,
        description="per-GPU changes to the workload's layout, by catalog id (e.g. its count)")
    power_limits_w: dict[GpuName, Watts] = Field(
        default_factory=dict, max_length=B.MAX_TARGETS + 1,
        description="a per-GPU power cap below the part's limit, watts")
    basis: Basis = Field(
        default="retuned", description="what the verdict compares: each GPU re-tuned, or the "
                                       "layouts as run")
    prices: dict[GpuName, UsdPerHour] = Field(
        default_factory=dict, max_length=B.MAX_TARGETS + 1,
        description="quoted $/GPU-hour by catalog id; others use defaults; a target's may be "
                    "a ratio to the current GPU's price (\"3.4x\")")
    electricity_usd_per_kwh: Plain = Field(default=DEFAULT_ELECTRICITY_USD_PER_KWH, ge=0,
                                           le=B.MAX_USD_PER_KWH)
    power_cap_kw: Plain | None = Field(default=None, ge=B.MIN_POWER_CAP_KW,
                                       le=B.MAX_POWER_CAP_KW, description="rack power budget")
    stack: Stack | None = None
    stacks: dict[str, Stack] = Field(
        default_factory=dict, max_length=B.MAX_TARGETS + 1,
        description="per-GPU stacks by catalog id: what a target would run (PyTorch/XLA on a "
                    "TPU); a GPU without one is checked against `stack`")
    time_premium: Plain = Field(
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

    @model_validator(mode="before")
    @classmethod
    def _current_count(cls, data: Any) -> Any:
        """The count after @ on the current GPU is the workload's count, the one its layout
        (TP, PP, CP, EP) describes: `gb200@512` with TP 4 x PP 8 x CP 2 is checked on 512
        GPUs, not on the default 8. A workload count that differs only fills in the targets
        that have no count of their own."""
        if not isinstance(data, dict) or not isinstance(data.get("workload"), dict):
            return data
        try:
            count = split_count(str(data.get("current", "")))[1]
            given = data["workload"].get("gpus")
            given = int(parse_number(given, WHOLE)) if isinstance(given, str) else given
        except ValueError:
            return data  # the field's own validator says why
        if count is None or given == count:
            return data
        out = {**data, "workload": {**data["workload"], "gpus": count}}
        if given is not None and isinstance(data.get("targets"), list):
            out["targets"] = [t if not isinstance(t, str) or "@" in t else f"{t}@{given}"
                              for t in data["targets"]]
        return out

    @model_validator(mode="before")
    @classmethod
    def _price_ratios(cls, data: Any, info: ValidationInfo) -> Any:
        """A target's price written as a ratio ("3.4x") is that many times the current GPU's:
        its quote here, else the catalog's default (when the catalog is given as context)."""
        if not isinstance(data, dict) or not isinstance(data.get("prices"), dict):
            return data
        ratios = {k: v for k, v in data["prices"].items() if isinstance(v, str) and is_ratio(v)}
        if not ratios:
            return data
        catalog = (info.context or {}).get("catalog")
        prices = dict(data["prices"])
        for gpu, text in ratios.items():
            prices[gpu] = _resolve_ratio(gpu, text, data, catalog)
        return {**data, "prices": prices}

    @model_validator(mode="after")
    def _measured_fits_the_mode(self) -> Answers:
        """A serving figure (TPOT, TTFT, concurrency) cannot anchor a training job."""
        m = self.measured
        if m is None or not self.workload.training:
            return self
        for name in SERVING_MEASURES:
            if getattr(m, name) is not None:
                raise InputError(f"measures serving, and this {self.workload.mode} workload "
                                 "trains: give tokens_per_s_per_gpu, step_s or mfu",
                                 field=f"measured.{name}", value=getattr(m, name))
        return self

    def compared(self, catalog: Catalog, alone: bool = False) -> list[GpuSpec]:
        """The current GPU, then each distinct target, with catalog ids resolved; `alone`
        accepts no target besides the current GPU (a GPU-count sweep of one GPU)."""
        cid, ccount = split_count(self.current)
        current = GpuSpec(_named(catalog, cid, "current", self.current), ccount)
        out = [current]
        for i, text in enumerate(self.targets):
            tid, count = split_count(text)
            spec = GpuSpec(_named(catalog, tid, f"targets.{i}", text), count)
            same_count = (spec.count or self.workload.gpus) == (current.count or
                                                                 self.workload.gpus)
            if (spec.gpu == current.gpu and same_count) or spec in out:
                continue
            out.append(spec)
        if len(out) < 2 and not alone:
            raise InputError("no target differs from the current GPU", field="targets",
                             value=self.targets)
        return out

    def by_catalog_id(self, catalog: Catalog) -> Answers:
        """These answers with every per-GPU table (prices, power limits, layouts, stacks) keyed by
        catalog id, as the engine looks them up: a price quoted as "H100 SXM" is the
        h100-sxm's, not ignored. Two keys naming one GPU are refused."""
        update: dict[str, Any] = {}
        for name in ("prices", "power_limits_w", "layouts", "stacks"):
            table: dict[str, Any] = getattr(self, name)
            keyed: dict[str, Any] = {}
            first: dict[str, str] = {}
            for key, value in table.items():
                gid = _named(catalog, split_count(key)[0], f"{name}.{key}", key)
                if gid in keyed:
                    raise InputError(f"names the same GPU ({gid}) as {first[gid]!r}",
                                     field=f"{name}.{key}", value=value)
                keyed[gid], first[gid] = value, key
            if list(keyed) != list(table):
                update[name] = keyed
        return self.model_copy(update=update) if update else self

    @property
    def electricity_is_default(self) -> bool:
        return "electricity_usd_per_kwh" not in self.model_fields_set


def _named(catalog: Catalog, gpu: str, field: str, written: str) -> str:
    """The catalog id `gpu` names; else one line naming the field it was written in."""
    try:
        return catalog.gpu(gpu).id
    except InputError as exc:
        raise InputError(exc.message, field=field, value=written) from None


def _resolve_ratio(gpu: str, text: str, data: dict[str, Any], catalog: Catalog | None) -> float:
    """$/GPU-hour of a target's price given as a ratio to the current GPU's price. A fault
    in the current GPU's own price is blamed on its field, not on the ratio's."""
    field = f"prices.{gpu}"

    def same_id(name: str) -> str:  # an id the catalog does not know is refused later
        try:
            return catalog.gpu(name).id if catalog is not None else name
        except InputError:
            return name

    current = data.get("current")
    try:
        cid = split_count(current)[0] if isinstance(current, str) else ""
    except ValueError:  # refused, naming `current`, by the field itself
        cid = str(current)
    key = same_id(cid)
    written = {same_id(str(k)): k for k in data["prices"]}
    try:
        if same_id(gpu) == key:
            raise ValueError(f"{text}: this is the current GPU; give its $/GPU-hour")
        ratio = parse_price(text, USD, RATIO)[1]
    except ValueError as exc:
        raise InputError(str(exc), field=field, value=text) from None
    base = data["prices"].get(written[key]) if key in written else None
    base_field = f"prices.{written.get(key, cid)}"
    if isinstance(base, str):
        try:
            base = parse_price(base, USD, None)[1]
        except ValueError as exc:
            raise InputError(str(exc), field=base_field, value=base) from None
    if base is None:
        default = catalog.default_price(key) if catalog is not None else None
        if default is None:
            raise InputError(f"a ratio to the price of {cid}, which has none: quote one for it",
                             field=field, value=text)
        base = default.usd_per_hour
    if not isinstance(base, int | float) or isinstance(base, bool):
        raise InputError("expected a price in $/GPU-hour", field=base_field, value=base)
    return round(ratio * base, 6)


def parse_answers(data: Any, file: str = "answers", catalog: Catalog | None = None) -> Answers:
    """Validate decoded answers (e.g. from answers.toml); errors are one InputError line.
    With the catalog, a price ratio may be to the current GPU's default price."""
    try:
        return Answers.model_validate(data, context={"catalog": catalog})
    except ValidationError as exc:
        raise validation_error(exc, file) from None
    except InputError as exc:
        exc.file = exc.file or file
        raise


def check_against_catalog(answers: Answers, catalog: Catalog, file: str | None = None) -> None:
    """Every catalog id the answers name resolves, and every power limit is one the part
    supports; else one line naming the file and field."""
    named = [("current", answers.current),
             *((f"targets.{i}", t) for i, t in enumerate(answers.targets))]
    if answers.pipeline is not None:
        named += [(f"pipeline.stages.{i}.gpu", s.gpu)
                  for i, s in enumerate(answers.pipeline.stages)]
    named += [(f"layouts.{k}", k) for k in answers.layouts]
    named += [(f"prices.{k}", k) for k in answers.prices]
    named += [(f"power_limits_w.{k}", k) for k in answers.power_limits_w]
    named += [(f"stacks.{k}", k) for k in answers.stacks]
    with in_file(file or ""):
        for field, gpu in named:
            _named(catalog, split_count(gpu)[0], field, gpu)  # "id@N" names N GPUs of id
    for key, watts in answers.power_limits_w.items():
        part = catalog.gpu(split_count(key)[0])
        low, high = power_limit_range(part)
        if not low <= watts <= high:
            tdp = part.power.tdp_w if part.power else None
            why = (f"{B.MIN_POWER_LIMIT_FRACTION:.0%} to 100% of its {tdp:,.0f} W TDP"
                   if tdp is not None else "its TDP is not in the catalog")
            raise InputError(f"{part.id} takes a power limit of {low:,.0f} to {high:,.0f} W "
                             f"({why})", file=file, field=f"power_limits_w.{key}", value=watts)


def power_limit_range(gpu: Gpu) -> tuple[float, float]:
    """The per-GPU power limits a part accepts, watts: from MIN_POWER_LIMIT_FRACTION of its
    TDP (below the lowest limit any listed part supports) to its TDP (a limit is a cap, not
    an overclock); without a TDP in the catalog, the absolute board-power bounds."""
    tdp = gpu.power.tdp_w if gpu.power else None
    if tdp is None:
        return B.MIN_BOARD_W, B.MAX_BOARD_W
    return max(B.MIN_BOARD_W, tdp * B.MIN_POWER_LIMIT_FRACTION), tdp
