"""The probe record: what `python -m probes run` measured on a real box.

`probes/` writes this JSON with the stdlib only (it has to run on a bare rented
box); these models are the validating mirror that the decision engine imports.
A record from a newer or older schema version is refused rather than guessed at,
and a malformed file gets one line naming the file, the field and the value.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from advisor.core.errors import InputError, not_ours
from advisor.core.formats import validation_error
from advisor.core.model import bounds as B

SCHEMA = "advisor.probe-record"
VERSION = 2  # what `python -m probes` writes now
# Version 1 records (mamf_tflops was the single fastest iteration, attention entries named
# only a backend) still load; version 2 adds burst MAMF / sustained MSMF, a kernel per
# attention entry, the full stack stamp and per-stage timings.
SUPPORTED_VERSIONS = (1, 2)

Status = Literal["ok", "skipped", "failed"]
StageStatus = Literal["done", "stopped", "failed", "not run"]
DeviceKind = Literal["cuda", "rocm", "mps", "cpu"]
Direction = Literal["fwd", "fwd_bwd"]

# Measured figures. The engine divides by them and takes their logs, so a record that
# passes these is one it can compute with: strictly positive, finite, physical.
Tflops = Annotated[float, Field(ge=B.MIN_TFLOPS, le=B.MAX_TFLOPS)]
Gbps = Annotated[float, Field(ge=B.MIN_GBPS, le=B.MAX_GBPS)]
Share = Annotated[float, Field(ge=0, le=B.MAX_SHARE)]  # efficiency, fraction, spread
Seconds = Annotated[float, Field(ge=0, le=B.MAX_SECONDS)]
Count = Annotated[int, Field(ge=0, le=B.MAX_COUNT)]
Dim = Annotated[int, Field(ge=1, le=B.MAX_SEQ_LEN)]


class _Model(BaseModel):
    # Extra keys are ignored: a version-1 writer may add fields without breaking readers.
    model_config = ConfigDict(extra="ignore", frozen=True, allow_inf_nan=False)


class Device(_Model):
    kind: DeviceKind
    name: str
    count: int = Field(ge=0, le=B.MAX_DEVICES)
    uuids: list[str] = Field(default_factory=list)
    capability: str | None = None
    gcn_arch: str | None = None
    memory_gib: float | None = Field(default=None, ge=0, le=B.MAX_DEVICE_GIB,
                                     description="as torch reports it (GiB)")
    catalog_id: str | None = None
    catalog_note: str | None = Field(
        default=None, description="why catalog_id is null, or how it was chosen"
    )
    sm_count: int | None = None
    visible_devices: dict[str, str] | None = None


class Versions(_Model):
    python: str
    torch: str | None = None
    cuda: str | None = None
    hip: str | None = None
    cudnn: str | None = None
    nccl: str | None = None
    driver: str | None = None
    flash_attn: str | None = None
    flash_attn_3: str | None = None
    flash_attn_cute: str | None = None
    transformer_engine: str | None = None
    # Version 2 stamps also record these.
    torch_local: str | None = Field(default=None, description="local build tag, e.g. cu128")
    torch_git: str | None = None
    cublas: str | None = None
    flash_attn_4: str | None = None
    cute_dsl: str | None = Field(default=None, description="nvidia-cutlass-dsl")
    triton: str | None = None
    aiter: str | None = None


class ProbeCode(_Model):
    version: str | None = None
    code: str | None = Field(default=None, description="hash of the probe sources")


class Stamp(_Model):
    """Everything that changes the results, so two records can be compared fairly."""

    hostname: str
    date: str = Field(description="ISO 8601, UTC")
    device: Device
    versions: Versions
    clocks: dict[str, float | bool | None] = Field(default_factory=dict)
    clocks_note: str | None = None
    power_limit_w: float | None = None
    # Version 2: power limits (enforced, default, range), PCIe link, ECC, MIG, the
    # kernel-changing environment and torch switches, the probe code and its run settings.
    power: dict[str, float | bool | None] | None = None
    pcie: dict[str, int | str | None] | None = None
    pcie_note: str | None = None
    ecc: dict[str, bool | None] | None = None
    mig: dict[str, bool | None] | None = None
    gpu_settings: dict[str, Any] | None = None
    env: dict[str, str] = Field(default_factory=dict)
    torch_settings: dict[str, Any] = Field(default_factory=dict)
    probe: ProbeCode | None = None
    run: dict[str, Any] = Field(default_factory=dict)
    host: dict[str, Any] = Field(default_factory=dict)


class _Measurement(_Model):
    status: Status
    reason: str | None = None


class MatmulResult(_Measurement):
    dtype: str
    torch_dtype: str | None = Field(default=None, description="fp8 only: float8_e4m3fn or ...fnuz")
    mode: Literal["quick", "exhaustive"]
    mamf_tflops: Tflops | None = Field(
        default=None,
        description="version 2: burst MAMF, the median of the 5 fastest iterations after an "
        "idle gap; version 1: the fastest iteration at the best shape",
    )
    median_tflops: Tflops | None = Field(
        default=None,
        description="version 2: the median iteration at the MSMF shape; version 1: the median "
        "at the best shape",
    )
    best_shape: list[int] | None = None
    mamf_peak_tflops: Tflops | None = Field(default=None, description="the single fastest burst")
    mamf_shape: list[int] | None = None
    mamf_clock_mhz: float | None = None
    mamf_power_w: float | None = None
    msmf_tflops: Tflops | None = Field(
        default=None, description="sustained: trimmed median of saturated runs after a soak"
    )
    msmf_shape: list[int] | None = None
    msmf_spread_pct: float | None = None
    msmf_state: dict[str, Any] | None = Field(
        default=None, description="SM clock, power and clock-event reasons during the MSMF runs"
    )
    search: dict[str, Any] | None = None
    shapes_tried: Count = 0
    seconds: Seconds = 0.0
    catalog_peak_tflops: Tflops | None = None
    efficiency: Share | None = None
    catalog_mamf_tflops: Tflops | None = None
    verdict: str | None = None


class AttentionResult(_Measurement):
    backend: str
    kernel: str | None = Field(
        default=None, description="the one kernel that ran it (version 2); else see backend"
    )
    family: str | None = None
    kernel_version: str | None = None
    iterations: int | None = None
    dtype: str = "bf16"
    seq_len: Dim
    head_dim: Dim
    heads: Dim
    kv_heads: Dim
    batch: Dim
    causal: bool
    direction: Direction
    tflops_median: Tflops | None = None
    tflops_max: Tflops | None = None
    ms_median: Annotated[float, Field(gt=0, le=B.MAX_SECONDS * 1000)] | None = None

    @property
    def kernel_name(self) -> str:
        """The kernel that produced this figure ("sdpa-flash", "flash-attn-3", ...)."""
        return self.kernel or self.backend


class AttentionPoint(_Model):
    """One measured attention figure, with the kernel that produced it."""

    kernel: str
    seq_len: int
    head_dim: int
    causal: bool
    direction: Direction
    tflops_median: float
    tflops_max: float | None = None


class BandwidthResult(_Measurement):
    kind: Literal["d2d", "h2d", "d2h"]
    bytes: Count
    buffer_bytes: Count | None = None
    gbps_median: Gbps | None = None
    gbps_max: Gbps | None = None
    catalog_gbps: Gbps | None = None
    fraction: Share | None = None
    note: str | None = None


class CollectiveResult(_Measurement):
    op: str = "all_reduce"
    backend: str
    world_size: Annotated[int, Field(ge=1, le=B.MAX_GPUS)]
    nodes: Annotated[int, Field(ge=1, le=B.MAX_NODES)] = 1
    dtype: str = "fp32"
    bytes: Count
    algbw_gbps: Gbps | None = None
    busbw_gbps: Gbps | None = None
    busbw_gbps_max: Gbps | None = None
    rank_skew_pct: float | None = None
    catalog_gbps: Gbps | None = None
    fraction: Share | None = None


class GpuHealth(_Measurement):
    index: Annotated[int, Field(ge=0, le=B.MAX_DEVICES)]
    uuid: str | None = None
    tflops_median: Tflops | None = None
    tflops_max: Tflops | None = None
    tflops_first_s: Seconds | None = None


class GpuTelemetry(_Model):
    index: int
    clock_event_reasons: list[str] = Field(
        default_factory=list, description="every reason NVML gave, sw_power_cap included"
    )
    sm_clock_mhz_min: float | None = None
    sm_clock_mhz_max: float | None = None
    temp_c_max: float | None = None
    power_w_max: float | None = None
    throttle_reasons: list[str] = Field(
        default_factory=list, description="only the reasons that mean trouble"
    )


class NodeHealth(_Measurement):
    dtype: str | None = None
    shape: list[int] | None = None
    gpus: list[GpuHealth] = Field(default_factory=list)
    spread: Share | None = Field(default=None, description="(fastest - slowest) / fastest")
    slowest_index: int | None = None
    node_tflops: Tflops | None = Field(default=None, description="the slowest GPU: the node's pace")
    telemetry_source: str | None = None
    telemetry: list[GpuTelemetry] = Field(default_factory=list)
    throttling: bool | None = None
    warnings: list[str] = Field(default_factory=list)
    duration_s: float | None = None
    power_capped_gpus: list[int] | None = None


class StageResult(_Model):
    name: str
    status: StageStatus
    estimate_s: float | None = None
    seconds: float | None = None


class ProbeRecord(_Model):
    schema_: Literal["advisor.probe-record"] = Field(alias="schema")
    version: Literal[1, 2]
    complete: bool
    interrupted: bool
    stamp: Stamp
    conventions: dict[str, str] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    matmul: list[MatmulResult] = Field(default_factory=list)
    attention: list[AttentionResult] = Field(default_factory=list)
    bandwidth: list[BandwidthResult] = Field(default_factory=list)
    collectives: list[CollectiveResult] = Field(default_factory=list)
    node_health: NodeHealth | None = None
    seconds_total: Seconds = 0.0
    stages: list[StageResult] = Field(default_factory=list)
    stages_finished: list[str] = Field(default_factory=list)
    estimate_s: Seconds | None = None


    def attention_kernels(self) -> list[str]:
        """The kernels with at least one measured figure, in the order they first appear."""
        return list(
            dict.fromkeys(
                a.kernel_name
                for a in self.attention
                if a.status == "ok" and a.tflops_median is not None
            )
        )

    def attention_points(
        self,
        kernel: str | None = None,
        *,
        head_dim: int | None = None,
        causal: bool | None = None,
        direction: Direction | None = None,
    ) -> dict[str, list[AttentionPoint]]:
        """Measured attention figures grouped by the kernel that produced them, sorted by
        sequence length; only `kernel`'s when it is given. Figures of different kernels are
        never merged: a caller that compares two kernels does so knowingly."""
        out: dict[str, list[AttentionPoint]] = {}
        for a in self.attention:
            if a.status != "ok" or a.tflops_median is None:
                continue
            name = a.kernel_name
            if kernel is not None and name != kernel:
                continue
            if head_dim is not None and a.head_dim != head_dim:
                continue
            if causal is not None and a.causal != causal:
                continue
            if direction is not None and a.direction != direction:
                continue
            out.setdefault(name, []).append(
                AttentionPoint(
                    kernel=name,
                    seq_len=a.seq_len,
                    head_dim=a.head_dim,
                    causal=a.causal,
                    direction=a.direction,
                    tflops_median=a.tflops_median,
                    tflops_max=a.tflops_max,
                )
            )
        for points in out.values():
            points.sort(key=lambda p: (p.head_dim, p.causal, p.direction, p.seq_len))
        return out

    def mamf(self, dtype: str) -> float | None:
        """Best measured MAMF for a dtype (bf16, fp16, tf32, fp32, fp8), or None."""
        values = [
            m.mamf_tflops
            for m in self.matmul
            if m.status == "ok" and m.dtype == dtype and m.mamf_tflops is not None
        ]
        return max(values) if values else None

    def attention_tflops(
        self,
        seq_len: int,
        head_dim: int,
        causal: bool,
        direction: Direction,
        kernel: str | None = None,
    ) -> float | None:
        """Median attention TFLOPS at this shape: `kernel`'s, or the best over the kernels
        that ran (which mixes kernels; `attention_points` keeps them apart)."""
        values = [
            a.tflops_median
            for a in self.attention
            if a.status == "ok"
            and (kernel is None or a.kernel_name == kernel)
            and a.seq_len == seq_len
            and a.head_dim == head_dim
            and a.causal == causal
            and a.direction == direction
            and a.tflops_median is not None
        ]
        return max(values) if values else None

    def d2d_gbps(self) -> float | None:
        """Best median device-to-device copy bandwidth (read+write bytes), GB/s."""
        values = [
            b.gbps_median
            for b in self.bandwidth
            if b.status == "ok" and b.kind == "d2d" and b.gbps_median is not None
        ]
        return max(values) if values else None


def parse_probe_record(data: Any, file: str) -> ProbeRecord:
    """Validate an already-decoded record; `file` names it in error messages."""
    if not isinstance(data, dict):
        raise InputError("a probe record must be a JSON object", file=file)
    schema = data.get("schema")
    if schema != SCHEMA:
        raise not_ours("a probe record", SCHEMA, schema, file)
    version = data.get("version")
    if version not in SUPPORTED_VERSIONS or isinstance(version, bool):
        raise InputError(
            "unsupported probe record version (this advisor reads versions "
            f"{', '.join(map(str, SUPPORTED_VERSIONS))})",
            file=file, field="version", value=version if isinstance(version, int) else None,
            has_value=isinstance(version, int),
        )
    try:
        return ProbeRecord.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, file) from None
