"""The probe record: what `python -m probes run` measured on a real box.

`probes/` writes this JSON with the stdlib only (it has to run on a bare rented
box); these models are the validating mirror that the decision engine imports.
A record from a newer or older schema version is refused rather than guessed at,
and a malformed file gets one line naming the file, the field and the value.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, ValidationError, model_validator

from advisor.core.errors import InputError, not_ours
from advisor.core.formats import validation_error
from advisor.core.model import bounds as B
from advisor.core.model.strict import StrictInput

SCHEMA = "advisor.probe-record"
VERSION = 2  # what `python -m probes` writes now
# Version 1 records (mamf_tflops was the single fastest iteration, attention entries named
# only a backend) still load; version 2 adds burst MAMF / sustained MSMF, a kernel per
# attention entry, the full stack stamp and per-stage timings. The optional `workload`
# section (the workload probe) adds fields and changes none, so it needs no new version.
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


class _Model(StrictInput):
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
    ms_median: Annotated[float, Field(ge=B.MIN_MS, le=B.MAX_SECONDS * 1000)] | None = None

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


# --- the workload probe (`python -m probes workload`, `advisor probe --workload`) ----------

Ms = Annotated[float, Field(ge=0, le=B.MAX_SECONDS * 1000)]
StepMs = Annotated[float, Field(ge=B.MIN_MS, le=B.MAX_SECONDS * 1000)]
Gib = Annotated[float, Field(ge=0, le=B.MAX_DEVICE_GIB)]
Fraction = Annotated[float, Field(ge=0, le=1)]
# A measured throughput is what a decision is anchored on (a MeasuredRun's tokens/s per
# GPU), so it is held to the same bounds here, at load, with the record's field named.
TokensPerS = Annotated[float, Field(ge=B.MIN_RATE_PER_S, le=B.MAX_TOKENS_PER_S)]
HeldGib = Annotated[float, Field(gt=0, le=B.MAX_DEVICE_GIB)]
"""The whole model's peak memory on one device: it holds at least the weights (a run's or
a layer's figure may be 0: a layer can add nothing measurable)."""
Width = Annotated[int, Field(ge=1, le=B.MAX_WIDTH)]
Layers = Annotated[int, Field(ge=1, le=B.MAX_LAYERS)]
Heads = Annotated[int, Field(ge=1, le=B.MAX_HEADS)]
Experts = Annotated[int, Field(ge=0, le=B.MAX_EXPERTS)]
SHARE_SUM_TOLERANCE = 0.01  # the three shares are rounded to 5 digits each


def _shares_add_up(shares: tuple[float | None, ...]) -> None:
    present = [x for x in shares if x is not None]
    if present and (len(present) != len(shares)
                    or abs(sum(present) - 1) > SHARE_SUM_TOLERANCE):
        raise ValueError(f"attention, GEMM and other shares must add up to 1, not {shares}")


class WorkloadShape(_Model):
    """The model shape, every dimension explicit (the probe's shape file has this form)."""

    name: str = "custom"
    hidden: Width
    layers: Layers
    heads: Heads
    kv_heads: Heads
    head_dim: Width
    ffn: Width
    vocab: Annotated[int, Field(ge=1, le=B.MAX_VOCAB)]
    mlp: Literal["swiglu", "gelu"] = "swiglu"
    tie_embeddings: bool = False
    experts: Experts = 0
    active_experts: Experts = 0
    expert_ffn: Annotated[int, Field(ge=0, le=B.MAX_WIDTH)] = 0
    shared_experts: Experts = 0

    @model_validator(mode="after")
    def _groups(self) -> WorkloadShape:
        if self.heads % self.kv_heads:
            raise ValueError(f"heads {self.heads} is not a multiple of kv_heads {self.kv_heads}")
        return self


class WorkloadSplit(_Model):
    """One run's device time by kind: each bucket's ms is its share of the median step."""

    attention_ms: Ms
    gemm_ms: Ms
    other_ms: Ms
    attention_share: Fraction
    gemm_share: Fraction
    other_share: Fraction
    kernel_ms_per_step: Ms | None = Field(
        default=None, description="summed kernel (GPU) or op self (CPU) time per profiled step")
    busy_share: Annotated[float, Field(ge=0, le=B.MAX_BUSY_SHARE)] | None = Field(
        default=None, description="kernel_ms_per_step / the median step (above 1: overlap, "
                                  "CPU threads summed, or profiler overhead)")
    profiled_steps: Annotated[int, Field(ge=1, le=B.MAX_COUNT)] = 1
    samples: Count = 0

    @model_validator(mode="after")
    def _adds_up(self) -> WorkloadSplit:
        _shares_add_up((self.attention_share, self.gemm_share, self.other_share))
        return self


class WorkloadRun(_Model):
    """One phase at one depth: warm-up, timed and profiled steps."""

    layers: Layers
    status: Literal["ok", "stopped", "failed", "skipped", "not run"]
    reason: str | None = None
    build_s: Seconds | None = None
    warmup_steps: Count = 0
    first_step_ms: StepMs | None = None
    steps_ms: list[StepMs] = Field(default_factory=list)
    steps_timed: Count = 0
    step_ms_median: StepMs | None = None
    step_ms_min: StepMs | None = None
    step_ms_max: StepMs | None = None
    spread_pct: Annotated[float, Field(ge=0)] | None = Field(
        default=None, description="(slowest - fastest) / median of the timed steps, %")
    tokens_per_step: Annotated[int, Field(ge=1, le=B.MAX_COUNT)] | None = None
    tokens_per_s: TokensPerS | None = None
    peak_memory_gib: Gib | None = None
    peak_reserved_gib: Gib | None = None
    memory_source: str | None = None
    split: WorkloadSplit | None = None
    attention_ops: list[str] = Field(default_factory=list)
    gpu_state: dict[str, Any] | None = Field(
        default=None, description="NVML over the timed steps: SM clock, power, reasons")

    @model_validator(mode="after")
    def _consistent(self) -> WorkloadRun:
        if self.steps_timed != len(self.steps_ms):
            raise ValueError(f"steps_timed {self.steps_timed} but {len(self.steps_ms)} steps_ms")
        if self.status == "ok" and self.step_ms_median is None:
            raise ValueError("an ok run needs step_ms_median")
        if self.step_ms_median is not None and self.tokens_per_step and self.tokens_per_s:
            expected = self.tokens_per_step / (self.step_ms_median / 1e3)
            if abs(self.tokens_per_s - expected) > 1e-3 * expected:
                raise ValueError(f"tokens_per_s {self.tokens_per_s} is not tokens_per_step / "
                                 f"step time ({expected:.6g})")
        return self


class WorkloadLayerFigures(_Model):
    """What one layer adds (per_layer), or what lies outside the layers (outside_layers)."""

    step_ms: Ms
    attention_ms: Ms | None = None
    gemm_ms: Ms | None = None
    other_ms: Ms | None = None
    peak_memory_gib: Gib | None = None


class WorkloadWhole(_Model):
    """The whole model on one device: measured when every layer ran, else extrapolated."""

    layers: Layers
    extrapolated: bool
    step_ms: StepMs
    tokens_per_s: TokensPerS
    peak_memory_gib: HeldGib | None = Field(default=None, description="unsharded, one device")
    attention_share: Fraction | None = None
    gemm_share: Fraction | None = None
    other_share: Fraction | None = None

    @model_validator(mode="after")
    def _adds_up(self) -> WorkloadWhole:
        _shares_add_up((self.attention_share, self.gemm_share, self.other_share))
        return self


class WorkloadPhase(_Model):
    phase: Literal["train", "prefill", "decode"]
    tokens_per_step: Annotated[int, Field(ge=1, le=B.MAX_COUNT)]
    runs: list[WorkloadRun] = Field(default_factory=list)
    per_layer: WorkloadLayerFigures | None = None
    outside_layers: WorkloadLayerFigures | None = None
    full_model: WorkloadWhole | None = None
    reason: str | None = Field(default=None, description="why a figure above is missing")


class WorkloadSection(_Model):
    """The user's own model measured on the box (a training step, or prefill and decode)."""

    status: Literal["ok", "partial", "failed", "not run"]
    mode: Literal["train", "lora", "prefill", "decode", "serve"]
    source: str | None = None
    shape: WorkloadShape = Field(description="as asked")
    shape_run: WorkloadShape = Field(description="as built (toy-sized on a CPU)")
    toy_sizes: bool
    device: DeviceKind
    device_name: str
    layers_total: Layers
    layers_run: list[Layers]
    seq_len: Dim
    seq_len_run: Dim
    micro_batch: Annotated[int, Field(ge=1, le=B.MAX_MICRO_BATCH)]
    micro_batch_run: Annotated[int, Field(ge=1, le=B.MAX_MICRO_BATCH)]
    osl: Dim | None = None
    decode_context: Dim | None = None
    precision_requested: str
    precision: Literal["bf16", "fp16", "fp8"]
    fp8_dtype: str | None = None
    attention_kernel_requested: str
    attention_kernel: str
    attention_ops: list[str] = Field(default_factory=list,
                                     description="the attention ops the profile saw run")
    recompute: Literal["none", "full"] = "none"
    lora_rank: Annotated[int, Field(ge=1, le=B.MAX_WIDTH)] | None = None
    optimizer: str | None = None
    budget_s: Seconds | None = None
    cpu_threads: int | None = None
    classification: str = ""
    phases: list[WorkloadPhase] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def phase(self, name: str) -> WorkloadPhase | None:
        return next((p for p in self.phases if p.phase == name), None)

    @property
    def primary(self) -> WorkloadPhase | None:
        """The phase a throughput is quoted for: the training step, else decode (output
        tokens), else prefill."""
        for name in ("train", "decode", "prefill"):
            if (found := self.phase(name)) is not None:
                return found
        return None


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
    workload: WorkloadSection | None = None  # from the workload probe; absent elsewhere

    # Where the record was read from: in a slot, not a field nor pydantic's private state,
    # so it is never written and two records of the same figures compare equal wherever
    # they were read from (a report's copy, the store's copy of an imported file).
    __slots__ = ("_origin",)

    def read_from(self, file: str) -> ProbeRecord:
        """This record, as read from `file`: an error about a result it drives names that
        file (`origin`)."""
        record = self.model_copy()
        object.__setattr__(record, "_origin", file)
        return record

    @property
    def origin(self) -> str | None:
        """The file this record was read from (as the user named it, or the store's path);
        None for a record made in this process (a probe run) or copied."""
        origin: str | None = getattr(self, "_origin", None)
        return origin

    def workload_field(self, figure: str) -> str:
        """Where the workload probe's whole-model `figure` (tokens_per_s, attention_share,
        peak_memory_gib) that anchors a decision is in this record."""
        sec = self.workload
        primary = sec.primary if sec is not None else None
        where = f"phases.{sec.phases.index(primary)}." if sec and primary else ""
        return f"workload.{where}full_model.{figure}"

    def measured_workload(self) -> WorkloadSection | None:
        """The workload probe's section when it timed at least one step, else None. Toy-sized
        CPU figures are marked (`toy_sizes`); `advisor probe import` files GPU records only."""
        w = self.workload
        return w if w is not None and w.status in ("ok", "partial") else None


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
