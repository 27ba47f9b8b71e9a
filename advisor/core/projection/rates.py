"""Achievable rates per GPU, each with the evidence it rests on.

A projection is only as good as the rates it divides by, so every rate says
where it came from, in the order the decision prefers them:

1. a probe record measured on that GPU;
2. the catalog's published figure (MAMF for matmul, a published kernel curve
   for attention);
3. an efficiency transferred from elsewhere (this box's probe, the GPU's own
   bf16 MAMF, or the fleet median) applied to the target's peak, flagged as an
   assumption with a wider spread.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

from advisor.core.errors import InputError
from advisor.core.model.catalog import Gpu
from advisor.core.model.probe_record import ProbeRecord
from advisor.core.model.workload import Workload
from advisor.core.projection.calibration import (
    ARCH_ATTENTION,
    CAL,
    SOURCE_SIGMA,
    Calibration,
)

Source = Literal[
    "probe",
    "catalog-mamf",
    "transferred-efficiency",
    "catalog-spec",
    "published-kernel-curve",
    "generic-kernel-ratio",
]

# Precision recipe -> catalog peak keys to try, in order.
PEAK_KEYS: dict[str, tuple[str, ...]] = {
    "bf16": ("bf16",),
    "fp16": ("fp16", "bf16"),
    "fp8": ("fp8",),
    "fp4": ("fp4",),
    "nvfp4": ("nvfp4", "fp4"),
}
# Unidirectional PCIe x16 bandwidth by generation, GB/s (ml-engineering network tables).
PCIE_GBPS: dict[int, float] = {3: 15.75, 4: 31.5, 5: 63.0, 6: 121.0}
NVLINK_C2C_GBPS = 450.0  # Grace<->GPU, unidirectional (SemiAnalysis figure quoted in [NET])


class Evidence(BaseModel):
    """One achievable rate and how it was obtained; the reports print these lines."""

    model_config = ConfigDict(frozen=True)

    quantity: str
    value: float
    unit: str
    source: Source
    detail: str
    sigma: float


class GpuRates(BaseModel):
    """What one GPU sustains for this workload, before the roofline combines it."""

    model_config = ConfigDict(frozen=True)

    gpu: str
    arch: str
    peak_tflops: float  # the recipe precision's dense peak (MFU denominator)
    gemm_tflops: float  # MAMF-level matmul rate at the recipe precision
    gemm_bf16_tflops: float  # for the bf16 LM head of low-precision recipes
    attention_kernel: str
    attn_max_tflops: float  # saturated in-step attention rate, model FLOPs
    attn_s_half: float
    hbm_gbps: float
    link_gbps: float  # achievable all-reduce bus bandwidth inside a node
    nic_gbps: float  # achievable scale-out bandwidth per GPU
    host_gbps: float  # achievable host link (offload traffic)
    tdp_w: float | None
    idle_w: float | None
    evidence: list[Evidence]
    sigmas: dict[str, float]  # resource -> relative 1-sigma: gemm, attention, hbm, link, nic, host


def _peak(gpu: Gpu, precision: str) -> tuple[str, float] | None:
    for key in PEAK_KEYS[precision]:
        value = gpu.peak_tflops.get(key)
        if value is not None:
            return key, value
    return None


def _probe_mamf(probe: ProbeRecord, dtype: str) -> float | None:
    """The probe's median at its best shape: comparable to the catalog's published means."""
    medians = [
        m.median_tflops
        for m in probe.matmul
        if m.status == "ok" and m.dtype == dtype and m.median_tflops is not None
    ]
    return max(medians) if medians else probe.mamf(dtype)


def _matmul(
    gpu: Gpu,
    dtype: str,
    probe: ProbeRecord | None,
    donor: tuple[float, str] | None,
    cal: Calibration,
) -> Evidence:
    """The first of: probe on this GPU, catalog MAMF, transferred efficiency x peak."""
    quantity = f"matmul {dtype}"
    peak = gpu.peak_tflops.get(dtype)
    if probe is not None and (measured := _probe_mamf(probe, dtype)) is not None:
        return Evidence(quantity=quantity, value=measured, unit="TFLOPS", source="probe",
                        detail=f"probe record on this GPU ({probe.stamp.date})",
                        sigma=SOURCE_SIGMA["probe"])
    published = gpu.mamf.get(dtype)  # type: ignore[call-overload]
    if published is not None:
        torch = f", torch {published.torch}" if published.torch else ""
        return Evidence(quantity=quantity, value=published.tflops, unit="TFLOPS",
                        source="catalog-mamf",
                        detail=f"published MAMF, best shape {published.shape}{torch}",
                        sigma=SOURCE_SIGMA["catalog-mamf"])
    if peak is None:
        raise InputError(f"the catalog has no {dtype} peak for this GPU", entry=gpu.id,
                         field=f"peak_tflops.{dtype}")
    if donor is not None:
        eff, how = donor
    elif (own := gpu.mamf_efficiency("bf16")) is not None:
        eff, how = own, "this GPU's bf16 MAMF efficiency"
    else:
        eff, how = cal.fleet_mamf_efficiency, "the fleet median MAMF efficiency"
    return Evidence(quantity=quantity, value=peak * eff, unit="TFLOPS",
                    source="transferred-efficiency",
                    detail=f"assumed: {eff:.1%} ({how}) x peak {peak:g}",
                    sigma=SOURCE_SIGMA["transferred-efficiency"])


def transfer_efficiency(
    current: Gpu, probe: ProbeRecord | None, dtype: str
) -> tuple[float, str] | None:
    """This box's measured matmul efficiency, to carry to a target without a published MAMF."""
    if probe is None:
        return None
    for d in (dtype, "bf16"):
        measured, peak = _probe_mamf(probe, d), current.peak_tflops.get(d)
        if measured is not None and peak:
            return measured / peak, f"this box's probe: {current.id} {d}"
    return None


def _attention(
    gpu: Gpu, workload: Workload, gemm_bf16: float, probe: ProbeRecord | None, cal: Calibration
) -> tuple[str, float, float, Evidence]:
    """(kernel, saturated model-FLOP rate, s_half, evidence)."""
    mma, default = ARCH_ATTENTION.get(gpu.arch, ("other", "vendor"))
    kernel = default if workload.attention_kernel == "auto" else workload.attention_kernel
    curve = cal.attention.get((kernel, mma))
    peak = gpu.peak_tflops.bf16 or gpu.peak_tflops.fp16 or 0.0
    s_half = curve.s_half if curve else cal.generic_attn_s_half
    quantity = "attention"
    if probe is not None:
        d = workload.model.qk_dim
        points = [(a.seq_len, a.tflops_median) for a in probe.attention
                  if a.status == "ok" and a.causal and a.direction == "fwd_bwd"
                  and a.head_dim == d and a.tflops_median]
        if points:
            s, measured = max(points)
            # The probe counts fwd+bwd as 3.5x forward (FlashAttention convention); the
            # model counts 3x (MFU convention), so the same time is 3/3.5 the model rate.
            rate = measured * 3.0 / 3.5 * (1 + s_half / s)
            detail = f"probe: {measured:.0f} TFLOPS fwd+bwd at {s} tokens, curve scaled to it"
            return kernel, rate, s_half, Evidence(
                quantity=quantity, value=rate, unit="TFLOPS", source="probe", detail=detail,
                sigma=SOURCE_SIGMA["probe"])
    if curve is not None and peak:
        rate = curve.e_max * peak
        detail = (f"{kernel} on {mma}-class MMA: {curve.e_max:.1%} of bf16 peak {peak:g}, "
                  f"half speed at {curve.s_half:.0f} tokens")
        return kernel, rate, s_half, Evidence(
            quantity=quantity, value=rate, unit="TFLOPS", source="published-kernel-curve",
            detail=detail, sigma=curve.sigma)
    rate = cal.generic_attn_of_matmul * gemm_bf16
    which = gpu.arch if kernel == "vendor" else f"{kernel} on {gpu.arch}"
    detail = (f"assumed: no published attention curve for {which}; "
              f"{cal.generic_attn_of_matmul:.0%} of the bf16 matmul rate")
    return kernel, rate, s_half, Evidence(
        quantity=quantity, value=rate, unit="TFLOPS", source="generic-kernel-ratio",
        detail=detail, sigma=SOURCE_SIGMA["generic-kernel-ratio"])


def _host_link(gpu: Gpu, probe: ProbeRecord | None, cal: Calibration) -> Evidence:
    if probe is not None:
        h2d = [b.gbps_median for b in probe.bandwidth
               if b.status == "ok" and b.kind == "h2d" and b.gbps_median]
        if h2d:
            return Evidence(quantity="host link", value=max(h2d), unit="GB/s", source="probe",
                            detail="probe: host-to-device copy", sigma=SOURCE_SIGMA["probe"])
    text = (gpu.interconnect.host_link if gpu.interconnect else None) or ""
    if "c2c" in text.lower():
        spec, what = NVLINK_C2C_GBPS, "NVLink-C2C"
    else:
        m = re.search(r"gen\s*(\d)", text.lower())
        gen = int(m[1]) if m and int(m[1]) in PCIE_GBPS else 4
        spec, what = PCIE_GBPS[gen], f"PCIe Gen{gen} x16" + ("" if m else " (assumed)")
    return Evidence(quantity="host link", value=spec * cal.pcie_efficiency, unit="GB/s",
                    source="catalog-spec",
                    detail=f"{what} {spec:g} GB/s x {cal.pcie_efficiency:.0%}",
                    sigma=SOURCE_SIGMA["catalog-spec"])


def _link(gpu: Gpu, probe: ProbeRecord | None, host: Evidence, cal: Calibration) -> Evidence:
    if probe is not None:
        busbw = [c.busbw_gbps for c in probe.collectives
                 if c.status == "ok" and c.nodes == 1 and c.world_size > 1 and c.busbw_gbps]
        if busbw:
            return Evidence(quantity="scale-up link", value=max(busbw), unit="GB/s",
                            source="probe", detail="probe: all-reduce bus bandwidth in one node",
                            sigma=SOURCE_SIGMA["probe"])
    if gpu.interconnect is None:
        return host.model_copy(update={"quantity": "scale-up link",
                                       "detail": f"no scale-up link: {host.detail}"})
    uni = gpu.interconnect.unidirectional_gbps
    return Evidence(quantity="scale-up link", value=uni * cal.collective_efficiency, unit="GB/s",
                    source="catalog-spec",
                    detail=f"{gpu.interconnect.kind} {uni:g} GB/s one way x "
                           f"{cal.collective_efficiency:.0%} (busbw rule of thumb)",
                    sigma=0.15)


def resolve_rates(
    gpu: Gpu,
    workload: Workload,
    probe: ProbeRecord | None = None,
    donor: tuple[float, str] | None = None,
    cal: Calibration = CAL,
) -> GpuRates:
    """Every rate the roofline needs for `gpu`; `donor` is this box's efficiency to transfer."""
    precision = workload.precision
    peak = _peak(gpu, precision) or _peak(gpu, "bf16")
    if peak is None or gpu.memory is None:
        missing = "bf16 peak" if peak is None else "memory bandwidth"
        raise InputError(f"the catalog has no {missing} for this GPU, so it cannot be projected",
                         entry=gpu.id)
    key, peak_value = peak
    # 16-bit rate for the LM head (and attention fallback): bf16, or fp16 on pre-bf16 parts
    half = "bf16" if gpu.peak_tflops.bf16 or "bf16" in gpu.mamf else key
    bf16 = _matmul(gpu, half, probe, donor, cal)
    gemm = bf16 if key == half else _matmul(gpu, key, probe, donor, cal)
    if key != precision and not (precision == "fp16" and key == "bf16"):
        gemm = gemm.model_copy(update={
            "detail": f"no {precision} peak published; {key} rate used: {gemm.detail}",
            "sigma": max(gemm.sigma, SOURCE_SIGMA["transferred-efficiency"])})
    kernel, attn_rate, s_half, attn = _attention(gpu, workload, bf16.value, probe, cal)
    d2d = probe.d2d_gbps() if probe is not None else None
    if d2d:
        hbm = Evidence(quantity="HBM bandwidth", value=d2d, unit="GB/s", source="probe",
                       detail="probe: device-to-device copy (read + write)",
                       sigma=SOURCE_SIGMA["probe"])
    else:
        spec = gpu.memory.bandwidth_tbps * 1000
        hbm = Evidence(quantity="HBM bandwidth", value=spec * cal.hbm_efficiency, unit="GB/s",
                       source="catalog-spec",
                       detail=f"{gpu.memory.kind} {spec:g} GB/s x {cal.hbm_efficiency:.0%}",
                       sigma=SOURCE_SIGMA["catalog-spec"])
    host = _host_link(gpu, probe, cal)
    link = _link(gpu, probe, host, cal)
    nic = Evidence(quantity="scale-out NIC", value=workload.nic_gbit / 8 * cal.nic_efficiency,
                   unit="GB/s", source="catalog-spec",
                   detail=f"{workload.nic_gbit:g} Gbit/s per GPU (workload) x "
                          f"{cal.nic_efficiency:.0%}",
                   sigma=0.2)
    power = gpu.power
    return GpuRates(
        gpu=gpu.id, arch=gpu.arch, peak_tflops=peak_value, gemm_tflops=gemm.value,
        gemm_bf16_tflops=bf16.value, attention_kernel=kernel, attn_max_tflops=attn_rate,
        attn_s_half=s_half, hbm_gbps=hbm.value, link_gbps=link.value, nic_gbps=nic.value,
        host_gbps=host.value, tdp_w=power.tdp_w if power else None,
        idle_w=power.idle_w if power else None,
        evidence=[gemm, *([bf16] if gemm is not bf16 else []), attn, hbm, link, nic, host],
        sigmas={"gemm": gemm.sigma, "attention": attn.sigma, "hbm": hbm.sigma,
                "link": link.sigma, "nic": nic.sigma, "host": host.sigma},
    )
