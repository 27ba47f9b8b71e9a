"""The compared sides of a decision: each GPU with its own count, layout, gates and rates.

Both the decision and the GPU-count sweep start here, so a gate, a layout override or
a probe record means the same thing in each.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import ValidationError

from advisor.core.errors import InputError
from advisor.core.gates.dtype import DtypeGate, check_dtype
from advisor.core.gates.software import SoftwareGate, check_software
from advisor.core.model.answers import Answers, GpuSpec
from advisor.core.model.catalog import Catalog, Gpu
from advisor.core.model.probe_record import ProbeRecord
from advisor.core.model.stack import ATTENTION_KERNELS, Stack
from advisor.core.model.workload import Workload
from advisor.core.projection.calibration import BETA_KERNEL_SIGMA, CAL, Calibration
from advisor.core.projection.layout import framework_of
from advisor.core.projection.rates import PEAK_KEYS, GpuRates, resolve_rates, transfer_efficiency
from advisor.core.projection.retune import Side


@dataclass(frozen=True)
class Compared:
    """One compared side: its workload, gates and rates, before it is judged."""

    spec: GpuSpec
    gpu: Gpu
    workload: Workload
    dtype: DtypeGate
    software: SoftwareGate | None
    rates: GpuRates | None
    problem: str | None
    side: Side | None
    probe: ProbeRecord | None


def side_workload(answers: Answers, spec: GpuSpec, catalog: Catalog) -> Workload:
    """The workload on one side: the answers' workload with that GPU's count and layout."""
    base = answers.workload
    layouts = {catalog.gpu(k).id: v for k, v in answers.layouts.items()}
    given = layouts[spec.gpu].fields_given() if spec.gpu in layouts else {}
    data = base.model_dump()
    data.update(given)
    if spec.count is not None:
        data["gpus"] = spec.count
    if "global_batch" not in given:
        data["global_batch"] = base.global_batch_on(data["gpus"])
    if "nodes" not in given and ("nodes" not in base.model_fields_set
                                 or data["gpus"] != base.gpus):
        data["nodes"] = _nodes_for(data["gpus"], _natural_node(catalog.gpu(spec.gpu)))
    stack = answers.stack
    data["framework"] = framework_of(
        base, has_deepspeed=bool(stack and stack.version_of("deepspeed")),
        has_megatron=bool(stack and (stack.version_of("megatron-core")
                                     or stack.version_of("nemo-toolkit"))))
    try:
        return Workload.model_validate(data)
    except ValidationError as exc:
        msg = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
        raise InputError(msg, field=f"layouts.{spec.gpu}", value=spec.label) from None


def _natural_node(gpu: Gpu) -> int:
    """GPUs per node when the answers do not say: the scale-up domain, or 8."""
    domain = gpu.interconnect.domain_gpus if gpu.interconnect else 1
    return domain if domain > 1 else 8


def _nodes_for(gpus: int, per_node: int) -> int:
    """The fewest nodes of at most `per_node` GPUs that split `gpus` evenly."""
    nodes = -(-gpus // per_node)
    while gpus % nodes:
        nodes += 1
    return nodes


def _widen_for_beta(rates: GpuRates | None, gate: SoftwareGate | None) -> GpuRates | None:
    """A beta attention kernel's speed is less certain: add its spread to the attention sigma."""
    if rates is None or gate is None or not any(
            f.status == "beta" and f.package in ATTENTION_KERNELS for f in gate.findings):
        return rates
    sigmas = dict(rates.sigmas)
    sigmas["attention"] = math.hypot(sigmas["attention"], BETA_KERNEL_SIGMA)
    return rates.model_copy(update={"sigmas": sigmas})


def gated_rates(answers: Answers, catalog: Catalog, probes: Mapping[str, ProbeRecord],
                cal: Calibration = CAL, alone: bool = False) -> list[Compared]:
    """Each compared side: its workload, both gates and its rates (None, with the reason,
    where the catalog cannot project it), before any projection."""
    specs = answers.compared(catalog, alone=alone)
    current = catalog.gpu(specs[0].gpu)
    by_id = {catalog.gpu(k).id: v for k, v in probes.items()}
    key = next((k for k in PEAK_KEYS[answers.workload.precision]
                if current.peak_tflops.get(k)), "bf16")
    donor = transfer_efficiency(current, by_id.get(current.id), key)
    caps = {catalog.gpu(k).id: v for k, v in answers.power_limits_w.items()}
    out = [one_side(spec, side_workload(answers, spec, catalog), catalog, cal,
                    probe=by_id.get(spec.gpu), donor=None if i == 0 else donor,
                    stack=answers.stack, power_cap_w=caps.get(spec.gpu))
           for i, spec in enumerate(specs)]
    if out[0].rates is None and out[0].dtype.passed:
        raise InputError(f"cannot project the current GPU: {out[0].problem}", entry=current.id)
    return out


def one_side(spec: GpuSpec, w: Workload, catalog: Catalog, cal: Calibration = CAL,
             probe: ProbeRecord | None = None, donor: tuple[float, str] | None = None,
             stack: Stack | None = None, power_cap_w: float | None = None) -> Compared:
    """One GPU with its workload: both gates and its rates, or why it has none."""
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
    return Compared(spec, g, w, dgate, sgate, _widen_for_beta(rates, sgate), problem, None, probe)


def workload_on(gpu: Gpu, w: Workload) -> Workload:
    """`w` on `gpu` with nodes read off the GPU's scale-up domain when `w` does not say."""
    if "nodes" in w.model_fields_set:
        return w
    return w.model_copy(update={"nodes": _nodes_for(w.gpus, _natural_node(gpu))})
