"""The probe record: what `python -m probes run` measured on a real box.

`probes/` writes this JSON with the stdlib only (it has to run on a bare rented
box); these models are the validating mirror that the decision engine imports.
A record from a newer or older schema version is refused rather than guessed at,
and a malformed file gets one line naming the file, the field and the value.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from advisor.core.errors import InputError
from advisor.core.formats import validation_error

SCHEMA = "advisor.probe-record"
VERSION = 1

Status = Literal["ok", "skipped", "failed"]
DeviceKind = Literal["cuda", "rocm", "mps", "cpu"]
Direction = Literal["fwd", "fwd_bwd"]


class _Model(BaseModel):
    # Extra keys are ignored: a version-1 writer may add fields without breaking readers.
    model_config = ConfigDict(extra="ignore", frozen=True)


class Device(_Model):
    kind: DeviceKind
    name: str
    count: int = Field(ge=0)
    uuids: list[str] = Field(default_factory=list)
    capability: str | None = None
    gcn_arch: str | None = None
    memory_gib: float | None = Field(default=None, description="as torch reports it (GiB)")
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
    mamf_tflops: float | None = Field(
        default=None, description="fastest iteration at the best shape (mamf-finder's 'max')"
    )
    median_tflops: float | None = Field(
        default=None, description="median at the best shape; comparable to published MAMF means"
    )
    best_shape: list[int] | None = None
    shapes_tried: int = 0
    seconds: float = 0.0
    catalog_peak_tflops: float | None = None
    efficiency: float | None = None
    catalog_mamf_tflops: float | None = None
    verdict: str | None = None


class AttentionResult(_Measurement):
    backend: str
    dtype: str = "bf16"
    seq_len: int
    head_dim: int
    heads: int
    kv_heads: int
    batch: int
    causal: bool
    direction: Direction
    tflops_median: float | None = None
    tflops_max: float | None = None
    ms_median: float | None = None


class BandwidthResult(_Measurement):
    kind: Literal["d2d", "h2d", "d2h"]
    bytes: int
    gbps_median: float | None = None
    gbps_max: float | None = None
    catalog_gbps: float | None = None
    fraction: float | None = None
    note: str | None = None


class CollectiveResult(_Measurement):
    op: str = "all_reduce"
    backend: str
    world_size: int
    nodes: int = 1
    dtype: str = "fp32"
    bytes: int
    algbw_gbps: float | None = None
    busbw_gbps: float | None = None
    busbw_gbps_max: float | None = None
    catalog_gbps: float | None = None
    fraction: float | None = None


class GpuHealth(_Measurement):
    index: int
    uuid: str | None = None
    tflops_median: float | None = None
    tflops_max: float | None = None


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
    spread: float | None = Field(default=None, description="(fastest - slowest) / fastest")
    slowest_index: int | None = None
    node_tflops: float | None = Field(default=None, description="the slowest GPU: the node's pace")
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
    seconds_total: float = 0.0

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
        raise InputError(
            f"not a probe record (expected schema {SCHEMA!r})",
            file=file, field="schema", value=schema, has_value=True,
        )
    version = data.get("version")
    if version != VERSION:
        raise InputError(
            f"unsupported probe record version (this advisor reads version {VERSION})",
            file=file, field="version", value=version, has_value=True,
        )
    try:
        return ProbeRecord.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, file) from None
