"""One resolved side per compared GPU: everything the engine and the economics need, decided once.

A side is a GPU with its own count, nodes and scale-up domain (read from the catalog's
interconnect: 72 for an NVL72 rack, 8 for an HGX board), its framework, its number
formats (FP8 on one GPU, NVFP4 on the other is a legitimate question), both gates and
their findings, its rates with their evidence, and its power model. The verdict, the
GPU-count sweep, the ranking, pipeline stages and `validate` all take sides from
`resolve_sides` (or `resolve_gpu` for one GPU) and move them with `ResolvedSide.at`, so
nothing downstream re-derives a node count, a framework or a power figure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from pydantic import ValidationError

from advisor.core.errors import InputError
from advisor.core.gates.dtype import DtypeGate, check_dtype
from advisor.core.gates.software import SoftwareGate, check_software
from advisor.core.model.answers import Answers, GpuSpec
from advisor.core.model.catalog import Catalog, Gpu
from advisor.core.model.frameworks import FSDP_DEFAULT_STAGE, framework_of
from advisor.core.model.layout import LayoutOverride
from advisor.core.model.probe_record import ProbeRecord
from advisor.core.model.stack import ATTENTION_KERNELS, Stack
from advisor.core.model.workload import Workload
from advisor.core.projection.calibration import BETA_KERNEL_SIGMA, CAL, Calibration
from advisor.core.projection.rates import PEAK_KEYS, GpuRates, resolve_rates, transfer_efficiency
from advisor.core.projection.retune import SideProjection, project_side

Role = Literal["current", "target"]
DEFAULT_NODE_GPUS = 8  # an HGX/DGX board, for a part the catalog gives no scale-up domain


@dataclass(frozen=True)
class PowerModel:
    """One GPU's draw: idle, plus the busy share of the idle-to-limit range; and what its
    node draws besides (hosts, NICs, switches, fans), which a rack's power budget counts.

    The limit is the part's TDP, or the user's per-GPU cap where it is lower. Every
    power and energy figure (verdict, sweep, ranking, pipeline stages) comes from here.
    """

    tdp_w: float | None
    idle_w: float | None
    idle_assumed: bool  # the catalog gives no idle figure: a stated fraction of TDP
    cap_w: float | None
    host_fraction: float = 0.0  # a node's draw besides its GPUs, per GPU slot, over TDP

    def host_w(self, slots: int) -> float | None:
        """What a node of `slots` GPU slots draws besides its GPUs, at their TDP."""
        return None if self.tdp_w is None else self.host_fraction * self.tdp_w * slots

    @property
    def limit_w(self) -> float | None:
        if self.tdp_w is None:
            return None
        return min(self.tdp_w, self.cap_w) if self.cap_w else self.tdp_w

    def draw_w(self, busy: float) -> float | None:
        """Average board power at a busy (compute or HBM) share of the step."""
        limit = self.limit_w
        if limit is None or self.idle_w is None:
            return None
        return self.idle_w + (limit - min(self.idle_w, limit)) * min(max(busy, 0.0), 1.0)


def power_model(gpu: Gpu, cap_w: float | None, cal: Calibration = CAL) -> PowerModel:
    tdp = gpu.power.tdp_w if gpu.power else None
    idle = gpu.power.idle_w if gpu.power else None
    assumed = idle is None and tdp is not None
    if assumed and tdp is not None:
        idle = tdp * cal.idle_power_fraction
    rack = node_gpus(gpu) > DEFAULT_NODE_GPUS  # an NVL72 rack shares its hosts and shelves
    host = cal.host_power_fraction_rack if rack else cal.host_power_fraction
    return PowerModel(tdp_w=tdp, idle_w=idle, idle_assumed=assumed, cap_w=cap_w,
                      host_fraction=host)


def node_gpus(gpu: Gpu) -> int:
    """GPUs that share one scale-up domain: the catalog's (72 for NVL72), or an 8-GPU board."""
    domain = gpu.interconnect.domain_gpus if gpu.interconnect else 1
    return domain if domain > 1 else DEFAULT_NODE_GPUS


def nodes_for(gpus: int, per_node: int) -> int:
    """The fewest nodes of at most `per_node` GPUs that hold `gpus` evenly (12 GPUs on
    8-GPU nodes: two nodes of 6), as a user splits an uneven count."""
    if gpus < 1 or per_node < 1:
        raise InputError("a GPU count must be at least 1", value=gpus)
    nodes = -(-gpus // per_node)
    while gpus % nodes:
        nodes += 1
    return nodes


@dataclass(frozen=True)
class ResolvedSide:
    """One compared GPU, resolved from the answers and the catalog."""

    spec: GpuSpec
    gpu: Gpu
    role: Role
    workload: Workload  # this side's: count, nodes, formats and framework filled in
    framework_why: str
    dtype: DtypeGate
    software: SoftwareGate | None
    rates: GpuRates | None
    problem: str | None  # why there are no rates (a catalog gap), if there are none
    power: PowerModel
    probe: ProbeRecord | None
    slots_per_node: int  # physical GPU slots of one node (idle slots draw idle power)
    stated: frozenset[str] = frozenset()  # layout knobs the user gave for this side
    dropped: tuple[str, ...] = ()  # the current side's degrees this side's count cannot hold
    tuned: Calibration | None = None  # this side's calibration once anchored on a measurement
    projection: SideProjection | None = None

    @property
    def gpus(self) -> int:
        return self.workload.gpus

    @property
    def nodes(self) -> int:
        return self.workload.nodes

    @property
    def precision(self) -> str:
        return self.workload.precision

    @property
    def framework(self) -> str:
        return self.workload.framework

    @property
    def gate(self) -> str | None:
        """Why this side cannot run the workload at all, or None."""
        if not self.dtype.passed:
            return self.dtype.reason
        if self.software is not None and self.software.status == "blocked":
            return self.software.summary
        return self.problem

    @property
    def runnable(self) -> bool:
        return self.gate is None and self.rates is not None

    @property
    def host_w(self) -> float | None:
        """What one of this side's nodes draws besides its GPUs (hosts, NICs, fans)."""
        return self.power.host_w(self.slots_per_node)

    def at(self, gpus: int, per_node: int | None = None) -> ResolvedSide:
        """The same side on another GPU count: nodes by the one rule (on nodes of `per_node`
        GPUs where the answers give one), the batch rule, and the same formats, framework,
        gates and rates (none of them depends on the count)."""
        slots = per_node or self.slots_per_node
        w = _workload_at(self.workload, gpus, slots, keep_nodes=False)
        return replace(self, workload=w, projection=None, slots_per_node=slots)

    def project(self, cal: Calibration = CAL, seqs: list[int] | None = None) -> ResolvedSide:
        """This side projected as run and re-tuned (needs rates)."""
        if self.rates is None:
            return self
        return replace(self, projection=project_side(
            self.workload, self.rates, seqs or self.workload.seq_lens, self.tuned or cal,
            keep=self.stated))


def _workload_at(base: Workload, gpus: int, per_node: int, keep_nodes: bool,
                 given: dict[str, object] | None = None, field: str = "workload") -> Workload:
    """`base` on `gpus` GPUs: nodes by the one rule unless given, the global-batch rule."""
    data = base.model_dump()
    data.update(given or {})
    data["gpus"] = gpus
    if "global_batch" not in (given or {}):
        data["global_batch"] = base.global_batch_on(gpus)
    if not (keep_nodes or "nodes" in (given or {})):
        data["nodes"] = nodes_for(gpus, per_node)
    try:
        return Workload.model_validate(data)
    except ValidationError as exc:
        msg = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
        raise InputError(msg, field=field, value=gpus) from None


LAYOUT_KNOBS = frozenset({"tp", "pp", "cp", "ep", "vp", "micro_batch"})
PARALLEL_KNOBS = ("tp", "pp", "cp", "ep", "vp")


def side_workload(answers: Answers, spec: GpuSpec, catalog: Catalog,
                  stack: Stack | None = None, role: Role = "target"
                  ) -> tuple[Workload, str, frozenset[str], tuple[str, ...]]:
    """(the workload on one side, why its framework, the layout knobs stated for it, the
    current side's parallel degrees it could not take): the answers' workload with that
    GPU's count, layout and formats, nodes read off its scale-up domain, framework resolved.

    The workload's layout is the current side's: a target takes its own from its layout
    override and is re-tuned, so none of the current side's knobs is stated for it. As run,
    a target keeps the current side's layout where its count holds it; where it does not
    (TP 2 on one GPU), those degrees fall back to 1 and are named."""
    base = answers.workload
    gpu = catalog.gpu(spec.gpu)
    layouts = {catalog.gpu(k).id: v for k, v in answers.layouts.items()}
    override = layouts.get(spec.gpu, LayoutOverride())
    given = override.fields_given()
    gpus = spec.count if spec.count is not None else (override.gpus or base.gpus)
    keep = "nodes" in base.model_fields_set and gpus == base.gpus
    framework, why = framework_of(base.framework, base.training, base.zero_stage, stack)
    field = f"layouts.{spec.gpu}"
    own = {**given, "framework": framework}
    if base.training and base.framework == "fsdp" and "zero_stage" not in (
            base.model_fields_set | set(given)):
        own["zero_stage"] = FSDP_DEFAULT_STAGE  # FSDP named, no stage: its FULL_SHARD
    dropped: tuple[str, ...] = ()
    try:
        w = _workload_at(base, gpus, node_gpus(gpu), keep, own, field=field)
    except InputError:
        mine = {k: getattr(base, k) for k in PARALLEL_KNOBS
                if k not in given and getattr(base, k) != 1}
        if role == "current" or not mine:
            raise
        w = _workload_at(base, gpus, node_gpus(gpu), keep, {**dict.fromkeys(mine, 1), **own},
                         field=field)
        dropped = tuple(f"{k.upper()} {v}" for k, v in mine.items())
    mine_stated = base.model_fields_set if role == "current" else set()
    stated = (mine_stated | set(given)) & LAYOUT_KNOBS
    return w, why, frozenset(stated), dropped


def _widen_for_beta(rates: GpuRates | None, gate: SoftwareGate | None) -> GpuRates | None:
    """A beta attention kernel's speed is less certain: add its spread to the attention sigma."""
    if rates is None or gate is None or not any(
            f.status == "beta" and f.package in ATTENTION_KERNELS for f in gate.findings):
        return rates
    sigmas = dict(rates.sigmas)
    sigmas["attention"] = math.hypot(sigmas["attention"], BETA_KERNEL_SIGMA)
    return rates.model_copy(update={"sigmas": sigmas})


def _donor(current: Gpu, probe: ProbeRecord | None, precision: str) -> tuple[float, str] | None:
    """This box's measured matmul efficiency at the side's format, to carry to a target."""
    key = next((k for k in PEAK_KEYS[precision] if current.peak_tflops.get(k)), "bf16")
    return transfer_efficiency(current, probe, key)


def resolve(spec: GpuSpec, w: Workload, catalog: Catalog, role: Role, why: str,
            cal: Calibration = CAL, probe: ProbeRecord | None = None,
            donor: tuple[float, str] | None = None, stack: Stack | None = None,
            power_cap_w: float | None = None,
            stated: frozenset[str] = frozenset()) -> ResolvedSide:
    """One GPU with its workload: both gates, its rates (or why it has none), its power."""
    g = catalog.gpu(spec.gpu)
    dgate = check_dtype(g, catalog.arch_of(g), w.precision)
    sgate = check_software(stack, g, catalog, precision=w.precision) if stack else None
    rates: GpuRates | None
    problem = None
    try:
        rates = resolve_rates(g, w, probe, donor, cal, stack=stack, catalog_gpus=catalog.gpus,
                              gpu_power_cap_w=power_cap_w)
    except InputError as exc:
        rates, problem = None, exc.message
    return ResolvedSide(spec=spec, gpu=g, role=role, workload=w, framework_why=why,
                        dtype=dgate, software=sgate, rates=_widen_for_beta(rates, sgate),
                        problem=problem, power=power_model(g, power_cap_w, cal), probe=probe,
                        slots_per_node=node_gpus(g), stated=stated)


def resolve_sides(answers: Answers, catalog: Catalog,
                  probes: Mapping[str, ProbeRecord] | None = None, cal: Calibration = CAL,
                  alone: bool = False) -> list[ResolvedSide]:
    """The current GPU, then each target, each resolved once from the answers."""
    specs = answers.compared(catalog, alone=alone)
    current = catalog.gpu(specs[0].gpu)
    by_id = {catalog.gpu(k).id: v for k, v in (probes or {}).items()}
    caps = {catalog.gpu(k).id: v for k, v in answers.power_limits_w.items()}
    stacks = {catalog.gpu(k).id: v for k, v in answers.stacks.items()}
    out = []
    for i, spec in enumerate(specs):
        role: Role = "current" if i == 0 else "target"
        stack = stacks.get(spec.gpu, answers.stack)  # what this side would run
        w, why, stated, dropped = side_workload(answers, spec, catalog, stack, role)
        donor = None if i == 0 else _donor(current, by_id.get(current.id), w.precision)
        side = resolve(spec, w, catalog, role, why, cal, probe=by_id.get(spec.gpu),
                       donor=donor, stack=stack, power_cap_w=caps.get(spec.gpu),
                       stated=stated)
        out.append(replace(side, dropped=dropped))
    if out[0].rates is None and out[0].dtype.passed:
        raise InputError(f"cannot project the current GPU: {out[0].problem}", entry=current.id)
    return out


def resolve_gpu(gpu_id: str, w: Workload, catalog: Catalog, cal: Calibration = CAL,
                probe: ProbeRecord | None = None, stack: Stack | None = None,
                power_cap_w: float | None = None) -> ResolvedSide:
    """One GPU alone with a workload (a pipeline stage, a published case): the same rules."""
    g = catalog.gpu(gpu_id)
    framework, why = framework_of(w.framework, w.training, w.zero_stage, stack)
    keep = "nodes" in w.model_fields_set
    resolved = _workload_at(w, w.gpus, node_gpus(g), keep, {"framework": framework})
    return resolve(GpuSpec(g.id, None), resolved, catalog, "current", why, cal, probe=probe,
                   stack=stack, power_cap_w=power_cap_w,
                   stated=frozenset(w.model_fields_set & LAYOUT_KNOBS))
