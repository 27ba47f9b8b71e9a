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

from pydantic import BaseModel, ConfigDict, ValidationError

from advisor.core.economics.pipeline import (
    Pipeline,
    PipelineBalance,
    Stage,
    balance,
    best_splits,
    neighbours,
)
from advisor.core.errors import InputError
from advisor.core.formats import validation_error
from advisor.core.model.options import PipelineSpec, RateSource, StageSpec

if TYPE_CHECKING:
    from advisor.core.model.catalog import Catalog, Gpu
    from advisor.core.model.probe_record import ProbeRecord
    from advisor.core.projection.calibration import Calibration

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


class PipelineReport(BaseModel):
    """Stage rates, the configured split, the best splits of a box, and the neighbour walk."""

    model_config = ConfigDict(frozen=True)

    unit: str
    tokens_per_unit: float
    box_gpus: int
    stages: list[StageRate]
    current: PipelineBalance
    best_gpus: int
    best: list[PipelineBalance]
    vary: str
    neighbours: list[PipelineBalance]
    assumptions: list[str]
    source: str


def _engine_rate(stage: StageSpec, gpu: Gpu, catalog: Catalog,
                 probes: Mapping[str, ProbeRecord] | None,
                 cal: Calibration) -> tuple[float, str, float | None]:
    """(tokens/s per GPU, detail, busy draw) from the engine for the stage's own workload."""
    from advisor.core.economics.configs import layout, resolve_gpus, run_layout

    assert stage.workload is not None
    w, why = layout(stage.workload, stage.gpus, stage.workload.gpus_per_node)
    if w is None:
        raise InputError(why, entry=stage.name, field="workload")
    [(rates, gate)] = resolve_gpus(w, [gpu], catalog, probes, None, cal)
    [run] = run_layout(w, [gpu], [rates], cal)
    if gate or run.problem:
        raise InputError(f"the stage cannot be projected on {gpu.id}: {gate or run.problem}",
                         entry=stage.name)
    detail = (f"projected: {w.mode} of {w.model.name} at {w.seq_lens[0]:,} tokens, "
              f"micro-batch {w.micro_batch}, MFU {run.mfu:.0%} (engine, catalog rates)")
    return run.tokens_per_s_per_gpu, detail, run.busy_w


def _power(stage: StageSpec, gpu: Gpu, busy_w: float | None,
           idle_fraction: float) -> tuple[float, float, str]:
    """(busy draw, idle draw, where they come from): given, else engine or catalog figures."""
    tdp = gpu.power.tdp_w if gpu.power else None
    active = stage.active_w or busy_w or tdp
    if active is None:
        raise InputError("the catalog has no TDP for this GPU; give active_w",
                         entry=stage.name, field="active_w")
    source = ("given" if stage.active_w else "engine utilisation" if busy_w
              else "catalog TDP (a busy GPU at full draw)")
    if stage.idle_w is not None:
        return active, stage.idle_w, f"{source}; idle given"
    if gpu.power and gpu.power.idle_w:
        return active, gpu.power.idle_w, f"{source}; idle from the catalog"
    assumed = f"{source}; idle assumed {idle_fraction:.0%} of TDP"
    return active, (tdp or active) * idle_fraction, assumed


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
        detail = f"measured: {total / 1000:,.1f} Ktok/s on {stage.gpus} GPU(s), linear per GPU"
    elif stage.workload is not None:
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
    active, idle, power_source = _power(stage, gpu, busy_w, cal.idle_power_fraction)
    return StageRate(name=stage.name, gpu=gpu.id, gpus=stage.gpus, tokens_per_s_per_gpu=rate,
                     source=stage.source, detail=detail, active_w=active, idle_w=idle,
                     power_source=power_source)


def build_pipeline(spec: PipelineSpec, rates: list[StageRate]) -> Pipeline:
    """The balance model's Pipeline, in the spec's work units (tokens when it has none)."""
    tpu = spec.tokens_per_unit or 1.0
    box = spec.box_gpus or sum(s.gpus for s in spec.stages)
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


def analyse_pipeline(spec: PipelineSpec, catalog: Catalog, gpus: int | None = None,
                     probes: Mapping[str, ProbeRecord] | None = None,
                     cal: Calibration | None = None, top: int = 5) -> PipelineReport:
    """Stage rates, bottleneck and queues now, the best splits of `gpus`, and the neighbours."""
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
    if len({r.gpu for r in rates}) > 1:
        assumptions.append("stages run on different GPU types; a split moves GPU slots, "
                           "each keeping its stage's GPU type")
    return PipelineReport(
        unit=spec.unit if spec.tokens_per_unit else "token", tokens_per_unit=p.tokens_per_unit,
        box_gpus=p.total_gpus, stages=rates, current=balance(p), best_gpus=total,
        best=best_splits(p, total, top=top), vary=vary, neighbours=neighbours(p, vary, spec.span),
        assumptions=assumptions, source=spec.source,
    )
