"""Pipeline stages from a spec: each stage's rate measured, projected by the engine, or assumed.

A staged workload (N GPUs run a frozen target's forward pass and feed M GPUs that train
a drafter; RL rollouts feed a trainer) is described stage by stage: its GPU, its count,
and where its rate comes from. A measured rate (the user saw "0.74 batches/s") wins and
is labelled measured; otherwise the decision engine projects the stage's own workload
(prefill for a forward-only stage, pretrain/finetune for a trainer) on its GPU; or, as in
published back-of-envelope projections, FLOPs per token at an assumed MFU of a peak.
The rates then go to advisor.core.economics.pipeline for the bottleneck, queues, splits and power.

Answers can carry a [pipeline] section and the wizard imports answers at startup
without numpy, so the engine loads only inside `stage_rates` when a stage asks for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from advisor.core.economics.cost import SOURCE_WORDS
from advisor.core.economics.pipeline import (
    Pipeline,
    PipelineBalance,
    Stage,
    balance,
    best_splits,
    kw_saved,
    neighbours,
)
from advisor.core.economics.sanity import check_stage_mfu
from advisor.core.errors import InputError
from advisor.core.formats import validation_error
from advisor.core.model import bounds as B
from advisor.core.model.options import (
    PipelineAlternative,
    PipelineSpec,
    RateSource,
    StageSpec,
)

if TYPE_CHECKING:
    from advisor.core.model.catalog import Catalog, Gpu
    from advisor.core.model.probe_record import ProbeRecord
    from advisor.core.projection.calibration import Calibration
    from advisor.core.result import AnchorReport

class StageRate(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    gpu: str
    gpus: int
    tokens_per_s_per_gpu: float
    source: RateSource
    detail: str
    active_w: float
    idle_w: float
    power_source: str


class SplitFigures(BaseModel):
    """One split of a pipeline on another GPU: the given rates, and the engine's own."""

    model_config = ConfigDict(frozen=True)

    split: list[int]
    tokens_per_s: float
    bottleneck: str
    eta_days: float | None
    gpu_days_equiv: float | None = Field(
        description="GPUs x price ratio x days: what the job costs in current-GPU days")
    engine_tokens_per_s: float | None
    engine_bottleneck: str | None
    engine_eta_days: float | None
    engine_gpu_days_equiv: float | None


class AlternativeReport(BaseModel):
    """The same pipeline on another GPU type."""

    model_config = ConfigDict(frozen=True)

    gpu: str
    price_ratio: float | None
    price_note: str
    stages: list[StageRate]
    engine_stages: list[StageRate] = Field(
        description="the engine's projection of each stage with a workload (others as given)")
    splits: list[SplitFigures]
    differences: list[str]
    source: str


class PipelineReport(BaseModel):
    """Stage rates, the configured split, the best splits of a box, and the neighbour walk."""

    model_config = ConfigDict(frozen=True)

    unit: str
    tokens_per_unit: float = Field(ge=B.MIN_TOKENS_PER_UNIT, le=B.MAX_TOKENS,
                                   description="the answers' (1 where they give none): a kept "
                                               "report's is held to the same bounds")
    box_gpus: int
    stages: list[StageRate]
    current: PipelineBalance
    best_gpus: int
    best: list[PipelineBalance]
    vary: str
    neighbours: list[PipelineBalance]
    assumptions: list[str]
    source: str
    current_gpu_days: float | None = Field(
        default=None, description="the pipeline as given: GPUs x days for the token budget")
    alternatives: list[AlternativeReport] = Field(default_factory=list)


def _engine_rate(stage: StageSpec, gpu: Gpu, catalog: Catalog,
                 probes: Mapping[str, ProbeRecord] | None,
                 cal: Calibration) -> tuple[float, str, float | None]:
    """(tokens/s per GPU, detail, busy draw) from the engine for the stage's own workload on
    a side resolved like every other (gates, framework, nodes, power), re-tuned for the
    stage's GPU count."""
    from advisor.core.sides import resolve_gpu

    assert stage.workload is not None
    probe = (probes or {}).get(gpu.id)
    try:
        side = resolve_gpu(gpu.id, stage.workload, catalog, cal, probe=probe)
        side = side.at(stage.gpus).project(cal, stage.workload.seq_lens[:1])
    except InputError as exc:
        raise InputError(exc.message, entry=stage.name, field="workload") from None
    if side.gate is not None or side.projection is None:
        raise InputError(f"the stage cannot run on {gpu.id}: {side.gate or side.problem}",
                         entry=stage.name)
    fitted = side.projection.retuned
    if not fitted.fits[0]:
        raise InputError(f"the stage does not fit on {stage.gpus} x {gpu.id} in any layout",
                         entry=stage.name)
    w, p = side.workload, fitted.proj
    detail = (f"projected: {w.mode} of {w.model.name} at {w.seq_lens[0]:,} tokens, "
              f"{fitted.layouts[0].describe(not w.training)}, MFU {float(p.mfu[0, 0]):.0%} "
              f"(engine, {'probe' if probe else 'catalog'} rates)")
    check_stage_mfu(float(p.mfu[0, 0]), stage.name, gpu.id)
    return (float(p.tokens_per_s[0, 0]), detail, side.power.draw_w(float(p.busy()[0, 0])))


def _power(stage: StageSpec, gpu: Gpu, busy_w: float | None,
           cal: Calibration) -> tuple[float, float, str]:
    """(busy draw, idle draw, where they come from): given, else the side's power model."""
    from advisor.core.sides import power_model

    model = power_model(gpu, None, cal)
    active = stage.active_w or busy_w or model.tdp_w
    if active is None:
        raise InputError("the catalog has no TDP for this GPU; give active_w",
                         entry=stage.name, field="active_w")
    source = ("given" if stage.active_w else "engine utilisation" if busy_w
              else "catalog TDP (a busy GPU at full draw)")
    if stage.idle_w is not None:
        return active, stage.idle_w, f"{source}; idle given"
    idle = model.idle_w if model.idle_w is not None else active * cal.idle_power_fraction
    how = (f"idle assumed {cal.idle_power_fraction:.0%} of TDP" if model.idle_assumed
           or model.idle_w is None else "idle from the catalog")
    return active, idle, f"{source}; {how}"


def stage_rate(stage: StageSpec, tokens_per_unit: float | None, catalog: Catalog,
               probes: Mapping[str, ProbeRecord] | None = None,
               cal: Calibration | None = None) -> StageRate:
    """One stage's per-GPU rate in tokens/s and its power, each labelled with its source."""
    from advisor.core.projection.calibration import CAL

    cal = cal or CAL
    gpu = catalog.gpu(stage.gpu)
    busy_w = None
    if stage.measured_units_per_s is not None or stage.measured_tokens_per_s is not None:
        total = stage.measured_tokens_per_s or (stage.measured_units_per_s or 0.0) * (
            tokens_per_unit or 0.0)
        rate = total / stage.gpus
        detail = f"measured: {total / 1000:,.1f}K tokens/s on {stage.gpus} GPU(s), linear per GPU"
    elif stage.flops_per_token is None:
        rate, detail, busy_w = _engine_rate(stage, gpu, catalog, probes, cal)
    else:
        peak = stage.peak_tflops or gpu.peak_tflops.bf16
        if peak is None:
            raise InputError("the catalog has no bf16 peak for this GPU; give peak_tflops",
                             entry=stage.name, field="peak_tflops")
        assert stage.flops_per_token is not None and stage.mfu is not None
        rate = peak * 1e12 * stage.mfu / stage.flops_per_token
        basis = "given" if stage.peak_tflops else "catalog dense"
        detail = (f"assumed: {peak:g} TFLOPS ({basis}) x {stage.mfu:.0%} MFU / "
                  f"{stage.flops_per_token / 1e9:g} GFLOP per token")
    if stage.hop_s_per_unit and tokens_per_unit:
        rate = tokens_per_unit / (tokens_per_unit / rate + stage.hop_s_per_unit)
        detail += f", plus a {stage.hop_s_per_unit * 1000:g} ms hop per {tokens_per_unit:,.0f}"
    active, idle, power_source = _power(stage, gpu, busy_w, cal)
    return StageRate(name=stage.name, gpu=gpu.id, gpus=stage.gpus, tokens_per_s_per_gpu=rate,
                     source=stage.source, detail=detail, active_w=active, idle_w=idle,
                     power_source=power_source)


def build_pipeline(spec: PipelineSpec, rates: list[StageRate]) -> Pipeline:
    """The balance model's Pipeline, in the spec's work units (tokens when it has none)."""
    tpu = spec.tokens_per_unit or 1.0
    box = max(spec.box_gpus or 0, sum(r.gpus for r in rates))
    stages = []
    for r in rates:
        try:  # e.g. an idle draw from the catalog above the active_w given for the stage
            stages.append(Stage(name=r.name, gpus=r.gpus, rate_per_gpu=r.tokens_per_s_per_gpu / tpu,
                                active_w=r.active_w, idle_w=r.idle_w, rate_source=r.source))
        except ValidationError as exc:
            err = validation_error(exc, "pipeline", entry=r.name)
            raise InputError(f"{err.message} ({r.power_source}; give active_w and idle_w)"
                             if err.field in ("active_w", "idle_w", None) else err.message,
                             field=f"pipeline.stages.{r.name}" + (f".{err.field}" if err.field
                                                                 else ""),
                             value=err.value, has_value=err.has_value) from None
    return Pipeline(
        stages=stages, tokens_per_unit=tpu, token_budget=spec.token_budget,
        spare_gpus=box - sum(r.gpus for r in rates),
    )


def _with_counts(rates: list[StageRate], split: list[int]) -> list[StageRate]:
    return [r.model_copy(update={"gpus": n}) for r, n in zip(rates, split, strict=True)]


def _alternative(spec: PipelineSpec, alt: PipelineAlternative, base: list[StageRate],
                 catalog: Catalog, probes: Mapping[str, ProbeRecord] | None,
                 cal: Calibration | None, prices: Mapping[str, float]) -> AlternativeReport:
    from advisor.core.economics.cost import quote

    gpu = catalog.gpu(alt.gpu)
    given = [stage_rate(s.on(gpu.id, alt.stages.get(s.name)), spec.tokens_per_unit, catalog,
                        probes, cal) for s in spec.stages]
    engine = [stage_rate(s.on(gpu.id, None), spec.tokens_per_unit, catalog, probes, cal)
              if s.workload is not None else g for s, g in zip(spec.stages, given, strict=True)]
    engine_here = [stage_rate(s.on(s.gpu, None), spec.tokens_per_unit, catalog, probes, cal)
                   if s.workload is not None else None for s in spec.stages]
    mine, theirs = quote(spec.stages[0].gpu, dict(prices), catalog), quote(gpu.id, dict(prices),
                                                                            catalog)
    ratio = theirs.usd_per_hour / mine.usd_per_hour if mine and theirs else None
    note = (f"{gpu.id} ${theirs.usd_per_hour:g}/h ({SOURCE_WORDS[theirs.source]}) over "
            f"{spec.stages[0].gpu} ${mine.usd_per_hour:g}/h ({SOURCE_WORDS[mine.source]})"
            if mine and theirs else "no price for one of the GPUs")
    splits = []
    for split in alt.splits or [[s.gpus for s in spec.stages]]:
        a = balance(build_pipeline(spec, _with_counts(given, split)))
        ours = balance(build_pipeline(spec, _with_counts(engine, split)))
        n = sum(split)

        def equiv(days: float | None, n: int = n) -> float | None:
            return n * ratio * days if days is not None and ratio is not None else None

        splits.append(SplitFigures(
            split=split, tokens_per_s=a.tokens_per_s, bottleneck=a.bottleneck,
            eta_days=a.eta_days, gpu_days_equiv=equiv(a.eta_days),
            engine_tokens_per_s=ours.tokens_per_s, engine_bottleneck=ours.bottleneck,
            engine_eta_days=ours.eta_days, engine_gpu_days_equiv=equiv(ours.eta_days)))
    differences = []
    for g, e, b, h in zip(given, engine, base, engine_here, strict=True):
        if g.source == "projected" or e is g or h is None:
            continue
        differences.append(
            f"{g.name} on {gpu.id}: {g.detail} = {g.tokens_per_s_per_gpu / 1e3:,.1f}K tokens/s per "
            f"GPU, {g.tokens_per_s_per_gpu / b.tokens_per_s_per_gpu:.2f}x the {b.source} "
            f"{b.tokens_per_s_per_gpu / 1e3:,.1f} on {b.gpu}. The engine projects "
            f"{e.tokens_per_s_per_gpu / 1e3:,.1f} on {gpu.id} and "
            f"{h.tokens_per_s_per_gpu / 1e3:,.1f} on {b.gpu} "
            f"({e.tokens_per_s_per_gpu / h.tokens_per_s_per_gpu:.2f}x) from catalog rates: "
            f"{e.detail}")
    return AlternativeReport(gpu=gpu.id, price_ratio=ratio, price_note=note, stages=given,
                             engine_stages=engine, splits=splits, differences=differences,
                             source=alt.source)


def analyse_pipeline(spec: PipelineSpec, catalog: Catalog, gpus: int | None = None,
                     probes: Mapping[str, ProbeRecord] | None = None,
                     cal: Calibration | None = None, top: int = 5,
                     prices: Mapping[str, float] | None = None,
                     anchor: AnchorReport | None = None) -> PipelineReport:
    """Stage rates, bottleneck and queues now, the best splits of `gpus`, the neighbours, and
    the same pipeline on each alternative GPU, as given and as the engine projects it.
    `anchor`: the decision's anchor, whose calibration `cal` already carries."""
    rates = [stage_rate(s, spec.tokens_per_unit, catalog, probes, cal) for s in spec.stages]
    p = build_pipeline(spec, rates)
    total = gpus or p.total_gpus
    vary = spec.vary or spec.stages[0].name
    assumptions = [
        "a stage's rate scales linearly with its GPU count (independent producers; a "
        "trainer's data-parallel communication is not re-projected per split)",
        "power: busy GPUs at idle + utilisation x (active - idle) (low end) up to full draw "
        "(high end: a GPU polling an empty queue may not slow down); spare GPUs at idle",
    ]
    if anchor is not None and any(r.source == "projected" for r in rates):
        assumptions.append(f"engine-projected stages carry the stack efficiency anchored on "
                           f"{anchor.whose} {anchor.measured} (x{anchor.efficiency:.2f}), as "
                           "every target does")
    if len({r.gpu for r in rates}) > 1:
        assumptions.append("stages run on different GPU types; a split moves GPU slots, "
                           "each keeping its stage's GPU type")
    now = balance(p)

    def saved(b: PipelineBalance) -> PipelineBalance:
        return b.model_copy(update={"kw_saved": kw_saved(now, b)})

    if spec.alternatives:
        assumptions.append("GPU-days-equivalent: GPUs x (price / the first stage GPU's price) x "
                           "days, i.e. the job's cost in days of the current GPU")
    return PipelineReport(
        unit=spec.unit if spec.tokens_per_unit else "token", tokens_per_unit=p.tokens_per_unit,
        box_gpus=p.total_gpus, stages=rates, current=now, best_gpus=total,
        best=[saved(b) for b in best_splits(p, total, top=top)], vary=vary,
        neighbours=[saved(b) for b in neighbours(p, vary, spec.span)],
        assumptions=assumptions, source=spec.source,
        current_gpu_days=sum(s.gpus for s in spec.stages) * now.eta_days
        if now.eta_days is not None else None,
        alternatives=[_alternative(spec, a, rates, catalog, probes, cal, prices or {})
                      for a in spec.alternatives],
    )
