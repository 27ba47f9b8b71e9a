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
VERSION = 1

Status = Literal["ok", "skipped", "failed"]
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


class Stamp(_Model):
    """Everything that changes the results, so two records can be compared fairly."""

    hostname: str
    date: str = Field(description="ISO 8601, UTC")
    device: Device
    versions: Versions
    clocks: dict[str, float | None] = Field(default_factory=dict)
    clocks_note: str | None = None
    power_limit_w: float | None = None


class _Measurement(_Model):
    status: Status
    reason: str | None = None


class MatmulResult(_Measurement):
    dtype: str
    torch_dtype: str | None = Field(default=None, description="fp8 only: float8_e4m3fn or ...fnuz")
    mode: Literal["quick", "exhaustive"]
    mamf_tflops: Tflops | None = Field(
        default=None, description="fastest iteration at the best shape (mamf-finder's 'max')"
    )
    median_tflops: Tflops | None = Field(
        default=None, description="median at the best shape; comparable to published MAMF means"
    )
    best_shape: list[int] | None = None
    shapes_tried: Count = 0
    seconds: Seconds = 0.0
    catalog_peak_tflops: Tflops | None = None
    efficiency: Share | None = None
    catalog_mamf_tflops: Tflops | None = None
    verdict: str | None = None


class AttentionResult(_Measurement):
    backend: str
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


class BandwidthResult(_Measurement):
    kind: Literal["d2d", "h2d", "d2h"]
    bytes: Count
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
    catalog_gbps: Gbps | None = None
    fraction: Share | None = None


class GpuHealth(_Measurement):
    index: Annotated[int, Field(ge=0, le=B.MAX_DEVICES)]
    uuid: str | None = None
    tflops_median: Tflops | None = None
    tflops_max: Tflops | None = None


class GpuTelemetry(_Model):
    index: int
    sm_clock_mhz_min: float | None = None
    sm_clock_mhz_max: float | None = None
    temp_c_max: float | None = None
    power_w_max: float | None = None
    throttle_reasons: list[str] = Field(default_factory=list)


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


class ProbeRecord(_Model):
    schema_: Literal["advisor.probe-record"] = Field(alias="schema")
    version: Literal[1]
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

    def mamf(self, dtype: str) -> float | None:
        """Best measured MAMF for a dtype (bf16, fp16, tf32, fp32, fp8), or None."""
        values = [
            m.mamf_tflops
            for m in self.matmul
            if m.status == "ok" and m.dtype == dtype and m.mamf_tflops is not None
        ]
        return max(values) if values else None

    def attention_tflops(
        self, seq_len: int, head_dim: int, causal: bool, direction: Direction
    ) -> float | None:
        """Best median attention TFLOPS at this shape over the backends that ran."""
        values = [
            a.tflops_median
            for a in self.attention
            if a.status == "ok"
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
    if version != VERSION:
        raise InputError(
            f"unsupported probe record version (this advisor reads version {VERSION})",
            file=file, field="version", value=version if isinstance(version, int) else None,
            has_value=isinstance(version, int),
        )
    try:
        return ProbeRecord.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, file) from None
