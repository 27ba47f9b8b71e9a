"""Achievable rates per GPU, each with the evidence it rests on.

A projection is only as good as the rates it divides by, so every rate says
where it came from, in the order the decision prefers them:

1. a probe record measured on that GPU (for attention: only a figure from the
   kernel this stack runs there);
2. the catalog's published figure (MAMF for matmul, a published kernel curve
   for attention, a measured copy bandwidth);
3. an efficiency transferred from elsewhere (this box's probe, a sibling part of
   the same die scaled by peak, the GPU's own bf16 MAMF, or the fleet median)
   applied to the target's peak, flagged as an assumption with a wider spread.

A power cap below the part's limit lowers the compute rates by the stated
power-scaling assumption.
"""

from __future__ import annotations

import re
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from advisor.core.errors import InputError
from advisor.core.model.catalog import GemmShapes, Gpu
from advisor.core.model.frameworks import framework_of
from advisor.core.model.probe_record import ProbeRecord
from advisor.core.model.stack import Stack
from advisor.core.model.vocabulary import RECIPE_FORMATS
from advisor.core.model.workload import Workload
from advisor.core.projection.calibration import (
    BITS_PER_BYTE,
    CAL,
    DEFAULT_PCIE_GEN,
    NVLINK_C2C_GBPS,
    PCIE_GBPS,
    SOURCE_SIGMA,
    Calibration,
)
from advisor.core.projection.kernels import KernelChoice, choose_attention, probe_kernel

Source = Literal[
    "probe",
    "catalog-mamf",
    "catalog-measured",
    "transferred-efficiency",
    "catalog-spec",
    "published-kernel-curve",
    "generic-kernel-ratio",
]

PEAK_KEYS: dict[str, tuple[str, ...]] = {n: f.rates for n, f in RECIPE_FORMATS.items()}
"""A recipe format -> the catalog peak and GEMM keys its GEMMs run at, first found first."""


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
    """What one GPU sustains for this workload, before the engine combines it."""

    model_config = ConfigDict(frozen=True)

    gpu: str
    arch: str
    peak_tflops: float  # the recipe precision's dense peak (MFU denominator)
    gemm_tflops: float  # MAMF-level matmul rate at the recipe precision
    gemm_bf16_tflops: float  # for the bf16 LM head of low-precision recipes
    gemm_shapes: GemmShapes | None = None  # the recipe format's rate by GEMM width and depth
    gemm16_shapes: GemmShapes | None = None  # ... and the 16-bit one's
    attention_kernel: str
    attention_why: str
    attn_fb_tflops: float  # saturated fwd+bwd rate, FlashAttention convention
    attn_f_tflops: float  # saturated forward rate
    attn_s_half: float
    hbm_gbps: float
    link_gbps: float  # achievable all-reduce bus bandwidth inside the scale-up domain
    nic_gbps: float  # achievable scale-out bandwidth per GPU
    host_gbps: float  # achievable host link (offload traffic)
    domain: int  # GPUs in the scale-up (NVLink/xGMI) domain
    tdp_w: float | None
    idle_w: float | None
    capacity_gib: float
    evidence: list[Evidence]
    sigmas: dict[str, float]  # resource -> relative 1-sigma: gemm, attention, hbm, link, nic, host

    # SI units for the engine
    @property
    def peak_flops(self) -> float:
        return self.peak_tflops * 1e12

    @property
    def gemm_flops(self) -> float:
        return self.gemm_tflops * 1e12

    @property
    def gemm16_flops(self) -> float:
        return self.gemm_bf16_tflops * 1e12

    @property
    def attn_fb_flops(self) -> float:
        return self.attn_fb_tflops * 1e12

    @property
    def attn_f_flops(self) -> float:
        return self.attn_f_tflops * 1e12

    @property
    def hbm_bps(self) -> float:
        return self.hbm_gbps * 1e9

    @property
    def link_bps(self) -> float:
        return self.link_gbps * 1e9

    @property
    def nic_bps(self) -> float:
        return self.nic_gbps * 1e9

    @property
    def host_bps(self) -> float:
        return self.host_gbps * 1e9


def _peak(gpu: Gpu, precision: str) -> tuple[str, float] | None:
    for key in PEAK_KEYS[precision]:
        value = gpu.peak_tflops.get(key)
        if value is not None:
            return key, value
    return None


def _probe_mamf(probe: ProbeRecord, dtype: str) -> float | None:
    """The probe's sustained rate: MSMF (version 2), else the median at the best shape,
    both comparable to the catalog's published means; a burst MAMF only as a last resort,
    as it runs at a clock a training step does not hold."""
    medians = [
        m.msmf_tflops if m.msmf_tflops is not None else m.median_tflops
        for m in probe.matmul
        if m.status == "ok" and m.dtype == dtype
        and (m.msmf_tflops is not None or m.median_tflops is not None)
    ]
    return max(v for v in medians if v is not None) if medians else probe.mamf(dtype)


def _power_ratio(gpu: Gpu, twin: Gpu, cal: Calibration) -> tuple[float, str] | None:
    mine = gpu.power.tdp_w if gpu.power else None
    theirs = twin.power.tdp_w if twin.power else None
    if not mine or not theirs:
        return None
    f = (mine / theirs) ** cal.power_exponent
    return f, (f"{twin.id}'s rate x ({mine:g} W / {theirs:g} W)^{cal.power_exponent:g} = "
               f"x{f:.2f} (same silicon; assumed throughput ~ power^{cal.power_exponent:g})")


def _sustained(gpu: Gpu, dtype: str, cal: Calibration) -> tuple[float, str, Source] | None:
    """A catalog figure for the large-shape rate: measured, or a best shape scaled down."""
    g = gpu.gemm.get(dtype)  # type: ignore[call-overload]
    if g is not None:
        return g.tflops, f"published large-shape GEMM rate ({g.source[0].split(' ')[0]})", \
            "catalog-measured"
    m = gpu.mamf.get(dtype)  # type: ignore[call-overload]
    if m is not None:
        frac = cal.large_shape_fraction[dtype]
        torch = f", torch {m.torch}" if m.torch else ""
        return m.tflops * frac, (f"published MAMF {m.tflops:g} (best shape {m.shape}{torch}) "
                                 f"x {frac:.0%} for realistic shapes"), "catalog-mamf"
    return None


def _matmul(gpu: Gpu, dtype: str, probe: ProbeRecord | None, donor: tuple[float, str] | None,
            by_id: dict[str, Gpu], cal: Calibration) -> Evidence:
    """A layer GEMM's sustained rate, from the first of: a probe on this GPU, the catalog's
    large-shape or MAMF figure, a same-die twin scaled by peak or power, or an efficiency
    transferred from this box (or the fleet) applied to the peak."""
    quantity = f"matmul {dtype}"
    frac = cal.large_shape_fraction.get(dtype, cal.other_shape_fraction)
    peak = gpu.peak_tflops.get(dtype)
    if probe is not None and (measured := _probe_mamf(probe, dtype)) is not None:
        return Evidence(quantity=quantity, value=measured * frac, unit="TFLOPS", source="probe",
                        detail=f"probe record on this GPU ({probe.stamp.date}): sustained "
                               f"{measured:.0f} TFLOPS at its best shape x {frac:.0%} for "
                               f"realistic shapes",
                        sigma=SOURCE_SIGMA["probe"])
    own = _sustained(gpu, dtype, cal)
    if own is not None:
        value, detail, source = own
        return Evidence(quantity=quantity, value=value, unit="TFLOPS", source=source,
                        detail=detail, sigma=SOURCE_SIGMA[source])
    twin = by_id.get(gpu.same_die_as or "")
    theirs = _sustained(twin, dtype, cal) if twin is not None else None
    if twin is not None and theirs is not None:
        twin_peak = twin.peak_tflops.get(dtype)
        if peak and twin_peak:
            scale, how = peak / twin_peak, f"x peak ratio {peak:g}/{twin_peak:g}"
        elif (pw := _power_ratio(gpu, twin, cal)) is not None:
            scale, how = pw
        else:
            scale, how = 1.0, "taken as equal (no peak or power to scale by)"
        return Evidence(quantity=quantity, value=theirs[0] * scale, unit="TFLOPS",
                        source="transferred-efficiency",
                        detail=f"assumed: same die as {twin.id} ({theirs[1]}) {how}",
                        sigma=SOURCE_SIGMA["transferred-efficiency"])
    if peak is None:
        raise InputError(f"the catalog has no {dtype} peak for this GPU", entry=gpu.id,
                         field=f"peak_tflops.{dtype}")
    sibling = next((s for s in by_id.values() if s.id != gpu.id and s.arch == gpu.arch
                    and s.mamf_efficiency(dtype) is not None), None)
    if donor is not None:
        eff, how = donor
    elif sibling is not None:
        eff = sibling.mamf_efficiency(dtype) or 0.0
        how = f"{sibling.id}'s published {dtype} MAMF efficiency (same architecture)"
    elif (mine := gpu.mamf_efficiency("bf16")) is not None:
        eff, how = mine, "this GPU's bf16 MAMF efficiency"
    else:
        eff, how = cal.fleet_mamf_efficiency, "the fleet median MAMF efficiency"
    return Evidence(quantity=quantity, value=peak * eff * frac, unit="TFLOPS",
                    source="transferred-efficiency",
                    detail=f"assumed: {eff:.1%} ({how}) x peak {peak:g} x {frac:.0%}",
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


def _attention(gpu: Gpu, choice: KernelChoice, gemm_bf16: float, probe: ProbeRecord | None,
               head_dim: int, cal: Calibration) -> tuple[float, float, float, Evidence]:
    """(saturated fwd+bwd rate, forward rate, s_half, evidence) for the chosen kernel.

    Curves are stated against the same GPU's sustained bf16 GEMM rate: attention runs on
    the same tensor cores at the same power-limited clock, so a part that sustains more
    (a higher power limit, a newer die) carries that into attention too.
    """
    kernel, mma = choice.kernel, choice.mma
    curve = cal.attention.get((kernel, mma))
    s_half = curve.s_half if curve else cal.generic_attn_s_half
    quantity = "attention"
    if probe is not None:
        # Only the chosen kernel's own figures (sdpa's flash backend stands in for fa2):
        # two kernels' points are never mixed into one curve.
        accepted = (kernel, "sdpa" if kernel == "fa2" else kernel)
        measured_by = probe.attention_points(head_dim=head_dim, causal=True,
                                             direction="fwd_bwd")
        matching = sorted((probe_kernel(name) != kernel, name) for name in measured_by
                          if probe_kernel(name) in accepted)
        if matching:
            backend = matching[0][1]  # the exact kernel before a stand-in
            longest = measured_by[backend][-1]
            s, measured = longest.seq_len, longest.tflops_median
            fb = measured * (1 + s_half / s)
            fwd = fb * (curve.e_f / curve.e_fb if curve else cal.attn_fwd_over_fwd_bwd)
            return fb, fwd, s_half, Evidence(
                quantity=quantity, value=fb, unit="TFLOPS", source="probe",
                detail=f"probe: {backend} {measured:.0f} TFLOPS fwd+bwd at {s} tokens, "
                       f"{choice.name} curve scaled to it", sigma=SOURCE_SIGMA["probe"])
    if curve is not None:
        fb, fwd = curve.e_fb * gemm_bf16, curve.e_f * gemm_bf16
        detail = (f"{choice.name} on {mma}-class MMA ({choice.why}): fwd+bwd {curve.e_fb:.2f}x "
                  f"this GPU's bf16 GEMM rate {gemm_bf16:.0f}, half speed at "
                  f"{curve.s_half:.0f} tokens")
        return fb, fwd, s_half, Evidence(
            quantity=quantity, value=fb, unit="TFLOPS", source="published-kernel-curve",
            detail=detail, sigma=curve.sigma)
    fb = cal.generic_attn_of_matmul * gemm_bf16
    detail = (f"assumed: no published {choice.name} curve on {gpu.arch}; "
              f"{cal.generic_attn_of_matmul:.0%} of the bf16 GEMM rate")
    return fb, fb * cal.attn_fwd_over_fwd_bwd, s_half, Evidence(
        quantity=quantity, value=fb, unit="TFLOPS", source="generic-kernel-ratio",
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
        gen = int(m[1]) if m and int(m[1]) in PCIE_GBPS else DEFAULT_PCIE_GEN
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
    ic = gpu.interconnect
    published = gpu.measured.busbw_gbps if gpu.measured else None
    if ic is not None and published is not None:
        return Evidence(quantity="scale-up link", value=published, unit="GB/s",
                        source="catalog-measured",
                        detail=f"{ic.kind}: published all-reduce bus bandwidth {published:g} GB/s",
                        sigma=SOURCE_SIGMA["catalog-measured"])
    if ic is None or ic.domain_gpus <= 1:
        return host.model_copy(update={"quantity": "scale-up link",
                                       "detail": f"no scale-up link: {host.detail}"})
    uni = ic.unidirectional_gbps
    return Evidence(quantity="scale-up link", value=uni * cal.collective_efficiency, unit="GB/s",
                    source="catalog-spec",
                    detail=f"{ic.kind} {uni:g} GB/s one way x "
                           f"{cal.collective_efficiency:.0%} (busbw rule of thumb)",
                    sigma=SOURCE_SIGMA["link-spec"])


def _hbm(gpu: Gpu, probe: ProbeRecord | None, cal: Calibration) -> Evidence:
    d2d = probe.d2d_gbps() if probe is not None else None
    if d2d:
        return Evidence(quantity="HBM bandwidth", value=d2d, unit="GB/s", source="probe",
                        detail="probe: device-to-device copy (read + write)",
                        sigma=SOURCE_SIGMA["probe"])
    assert gpu.memory is not None
    measured = gpu.measured.hbm_tbps if gpu.measured else None
    if measured is not None:
        return Evidence(quantity="HBM bandwidth", value=measured * 1000,
                        unit="GB/s", source="catalog-measured",
                        detail=f"{gpu.memory.kind}: published copy bandwidth {measured:g} TB/s "
                               f"of {gpu.memory.bandwidth_tbps:g}",
                        sigma=SOURCE_SIGMA["catalog-measured"])
    spec = gpu.memory.bandwidth_tbps * 1000
    return Evidence(quantity="HBM bandwidth", value=spec * cal.hbm_efficiency, unit="GB/s",
                    source="catalog-spec",
                    detail=f"{gpu.memory.kind} {spec:g} GB/s x {cal.hbm_efficiency:.0%}",
                    sigma=SOURCE_SIGMA["catalog-spec"])


def _power_scale(gpu: Gpu, cap_w: float | None, cal: Calibration) -> tuple[float, str | None]:
    """Compute-rate factor under a per-GPU power cap below the part's limit."""
    tdp = gpu.power.tdp_w if gpu.power else None
    if cap_w is None or tdp is None or cap_w >= tdp:
        return 1.0, None
    factor = (cap_w / tdp) ** cal.power_exponent
    return factor, (f"capped at {cap_w:.0f} W of {tdp:.0f} W: compute rates x {factor:.2f} "
                    f"(assumed throughput ~ power^{cal.power_exponent:g})")


def _own_shapes(gpu: Gpu, dtype: str) -> GemmShapes | None:
    for key in PEAK_KEYS.get(dtype, (dtype,)):
        g = gpu.gemm.get(key)  # type: ignore[call-overload]
        if g is not None and g.shapes is not None:
            return g.shapes
    return None


def _fleet_shapes(dtype: str, gpus: list[Gpu]) -> GemmShapes | None:
    """The median profile over every GPU that publishes one for this format (same grid)."""
    profiles = [(g.id, p) for g in gpus if (p := _own_shapes(g, dtype)) is not None]
    if not profiles:
        return None
    first = profiles[0][1]
    same = [(i, p) for i, p in profiles if (p.m, p.n, p.k) == (first.m, first.n, first.k)]
    table = np.median(np.asarray([p.of_large for _, p in same]), axis=0)
    names = ", ".join(sorted(i for i, _ in same))
    return first.model_copy(update={"of_large": table.round(3).tolist(),
                                    "source": [f"median of the profiles of {names}"]})


def gemm_shapes(gpu: Gpu, dtype: str, by_id: dict[str, Gpu]) -> tuple[GemmShapes | None, str]:
    """A GEMM rate's shape profile and whose it is: this GPU's, its die twin's, a part of the same
    architecture's, else the fleet median (shape effects come from tiling, shared by all)."""
    own = _own_shapes(gpu, dtype)
    if own is not None:
        return own, "published for this GPU"
    twin = by_id.get(gpu.same_die_as or "")
    if twin is not None and (theirs := _own_shapes(twin, dtype)) is not None:
        return theirs, f"assumed: {twin.id}'s (same die)"
    sibling = next(((g.id, p) for g in by_id.values() if g.arch == gpu.arch
                    and (p := _own_shapes(g, dtype)) is not None), None)
    if sibling is not None:
        return sibling[1], f"assumed: {sibling[0]}'s (same architecture)"
    fleet = _fleet_shapes(dtype, list(by_id.values()))
    if fleet is not None:
        return fleet, "assumed: the fleet median profile"
    return None, "no shape profile: the large-shape rate for every shape"


def _peak_or_twin(gpu: Gpu, precision: str, by_id: dict[str, Gpu],
                  cal: Calibration) -> tuple[str, float, str | None] | None:
    """(key, dense peak, how it was derived when the catalog has none for this part)."""
    own = _peak(gpu, precision) or _peak(gpu, "bf16")
    if own is not None:
        return own[0], own[1], None
    twin = by_id.get(gpu.same_die_as or "")
    if twin is None:
        return None
    theirs = _peak(twin, precision) or _peak(twin, "bf16")
    pw = _power_ratio(gpu, twin, cal)
    if theirs is None or pw is None:
        return None
    return theirs[0], theirs[1] * pw[0], f"no published peak: {pw[1]}"


def resolve_rates(
    gpu: Gpu,
    workload: Workload,
    probe: ProbeRecord | None = None,
    donor: tuple[float, str] | None = None,
    cal: Calibration = CAL,
    stack: Stack | None = None,
    catalog_gpus: list[Gpu] | tuple[Gpu, ...] = (),
    gpu_power_cap_w: float | None = None,
) -> GpuRates:
    """Every rate the engine needs for `gpu`; `donor` is this box's efficiency to transfer."""
    by_id = {g.id: g for g in catalog_gpus}
    peak = _peak_or_twin(gpu, workload.precision, by_id, cal)
    if peak is None or gpu.memory is None:
        missing = "bf16 peak" if peak is None else "memory bandwidth"
        raise InputError(f"the catalog has no {missing} for this GPU, so it cannot be projected",
                         entry=gpu.id)
    key, peak_value, peak_note = peak
    # 16-bit rate for the LM head and attention: bf16, or fp16 on pre-bf16 parts
    half = "fp16" if key == "fp16" or not (gpu.peak_tflops.bf16 or "bf16" in gpu.mamf
                                           or peak_note) else "bf16"
    bf16 = _matmul(gpu, half, probe, donor, by_id, cal)
    gemm = bf16 if key == half else _matmul(gpu, key, probe, donor, by_id, cal)
    precision = workload.precision
    if key != PEAK_KEYS[precision][0] and not (precision == "fp16" and key == "bf16"):
        gemm = gemm.model_copy(update={
            "detail": f"no {precision} peak published; {key} rate used: {gemm.detail}",
            "sigma": max(gemm.sigma, SOURCE_SIGMA["transferred-efficiency"])})
    elif key != precision and key != "bf16":  # a block-scaled format at its element's rate
        gemm = gemm.model_copy(update={"detail": f"{precision} at the {key} rate: {gemm.detail}"})
    framework, _ = framework_of(workload.framework, workload.training, workload.zero_stage, stack)
    choice = choose_attention(gpu.arch, workload.attention_kernel, stack, framework)
    fb, fwd, s_half, attn = _attention(gpu, choice, bf16.value, probe, workload.model.qk_dim,
                                       cal)
    scale, capped = _power_scale(gpu, gpu_power_cap_w, cal)
    if capped:
        gemm = gemm.model_copy(update={"value": gemm.value * scale,
                                       "detail": f"{gemm.detail}; {capped}"})
        if bf16 is not gemm:
            bf16 = bf16.model_copy(update={"value": bf16.value * scale})
        attn = attn.model_copy(update={"value": attn.value * scale})
        fb, fwd = fb * scale, fwd * scale
    hbm = _hbm(gpu, probe, cal)
    host = _host_link(gpu, probe, cal)
    link = _link(gpu, probe, host, cal)
    nic = Evidence(quantity="scale-out NIC",
                   value=workload.nic_gbit / BITS_PER_BYTE * cal.nic_efficiency,
                   unit="GB/s", source="catalog-spec",
                   detail=f"{workload.nic_gbit:g} Gbit/s per GPU (workload) x "
                          f"{cal.nic_efficiency:.0%}",
                   sigma=SOURCE_SIGMA["nic-spec"])
    shapes, shapes_how = gemm_shapes(gpu, key, by_id)
    shapes16, _ = gemm_shapes(gpu, half, by_id)
    if shapes is not None:
        shared = gemm is bf16
        gemm = gemm.model_copy(update={"detail": f"{gemm.detail}; by GEMM shape: {shapes_how}"})
        bf16 = gemm if shared else bf16
    power = gpu.power
    domain = gpu.interconnect.domain_gpus if gpu.interconnect else 1
    derived_peak = [Evidence(quantity=f"peak {key}", value=peak_value, unit="TFLOPS",
                             source="transferred-efficiency", detail=f"assumed: {peak_note}",
                             sigma=SOURCE_SIGMA["transferred-efficiency"])] if peak_note else []
    return GpuRates(
        gpu=gpu.id, arch=gpu.arch, peak_tflops=peak_value, gemm_tflops=gemm.value,
        gemm_bf16_tflops=bf16.value, gemm_shapes=shapes, gemm16_shapes=shapes16,
        attention_kernel=choice.kernel,
        attention_why=f"{choice.name}: {choice.why}", attn_fb_tflops=fb, attn_f_tflops=fwd,
        attn_s_half=s_half, hbm_gbps=hbm.value, link_gbps=link.value, nic_gbps=nic.value,
        host_gbps=host.value, domain=domain, tdp_w=power.tdp_w if power else None,
        idle_w=power.idle_w if power else None, capacity_gib=gpu.memory.gib,
        evidence=[gemm, *([bf16] if gemm is not bf16 else []), attn, hbm, link, nic, host,
                  *derived_peak],
        sigmas={"gemm": gemm.sigma, "attention": attn.sigma, "hbm": hbm.sigma,
                "link": link.sigma, "nic": nic.sigma, "host": host.sigma},
    )
