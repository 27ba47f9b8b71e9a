"""The result of a decision, which both front ends render: per GPU, the projection as run and
re-tuned, gates, costs and the verdict, all as structured fields (no front end re-reads
prose). `comparison.decide` is the step that fills it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from advisor.core.economics.buyback import BuyBack
from advisor.core.economics.cost import JobCost, PriceQuote
from advisor.core.economics.verdict import Verdict
from advisor.core.gates.dtype import DtypeGate
from advisor.core.gates.software import SoftwareGate
from advisor.core.model.answers import Answers
from advisor.core.model.layout import LayoutChoice
from advisor.core.model.lora import BaseOption
from advisor.core.model.vocabulary import Basis, BatchCap
from advisor.core.projection.rates import Evidence

Binding = Literal["compute", "memory", "network", "host", "capacity"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class SweepPoint(_Frozen):
    """One GPU at one sequence length, in one layout; numbers are None where it cannot run."""

    seq_len: int
    fits: bool
    memory_gib: float
    runnable: bool  # passes the gates, can be projected and fits in memory
    layout: LayoutChoice | None = None
    step_s: float | None
    tokens_per_s_per_gpu: float | None
    tokens_per_s_cluster: float | None
    mfu: float | None
    binding: Binding | None
    # per bucket (dense, attention, elementwise, optimizer, communication, overhead), per step:
    bucket_seconds: dict[str, float]
    bucket_binding: dict[str, str]
    bucket_speedup: dict[str, float]  # current time per token over this GPU's, where both > 0
    bucket_flops_per_token: dict[str, float]  # hardware FLOPs (recompute included)
    bucket_bytes_per_token: dict[str, float]  # HBM bytes, or host/network bytes for those buckets
    ttft_ms: float | None = None  # serving
    tpot_ms: float | None = None
    batch: int | None = Field(default=None, description="serving: requests in flight per replica")
    batch_cap: BatchCap | None = Field(
        default=None, description="serving: what set the batch (kv-capacity, tpot, ttft, "
                                  "engine cap, your concurrency, throughput peak)")
    kv_batch: int | None = Field(
        default=None, description="serving: the most requests the KV cache left after the "
                                  "weights holds in this layout")
    uncapped_batch: int | None = Field(
        default=None, description="serving: the batch with no KV-cache limit")
    uncapped_tokens_per_s_per_gpu: float | None = None
    memory_margin_gib: float | None = Field(
        default=None, description="usable memory less the estimate (negative: over)")
    borderline: bool = Field(
        default=False, description="the fit is within the memory model's own uncertainty: "
                                   "measure it before believing either way")
    usd_per_mtok: float | None
    speedup: float | None
    speedup_low: float | None
    speedup_high: float | None
    frozen_base: BaseOption | None = Field(
        default=None, description="lora: how this point holds the frozen base, what that costs "
                                  "per step and in accuracy, and whether the re-tune chose it")


class InteractivityPoint(_Frozen):
    """One serving operating point on the throughput-against-interactivity curve."""

    tokens_per_s_per_user: float = Field(gt=0, description="output tokens/s each user sees: "
                                                           "1 / TPOT")
    tokens_per_s_per_gpu: float = Field(ge=0)
    usd_per_mtok: float | None
    batch: int = Field(description="requests in flight per replica")
    tp: int
    pp: int
    ep: int
    ttft_ms: float
    tpot_ms: float


class InteractivityLead(_Frozen):
    """Over a band of tokens/s per user, the GPU that serves it best."""

    from_tokens_per_user: float
    to_tokens_per_user: float
    gpu: str
    by: Literal["cost", "throughput"] = Field(
        description="cost: the fewest dollars per token (every GPU has a price); throughput: "
                    "the most tokens/s per GPU")


class Assumptions(_Frozen):
    """What a projection rests on, for the reader to check."""

    rate_sources: dict[str, str]  # quantity -> probe | catalog-mamf | transferred-efficiency | ...
    evidence: list[Evidence]
    attention_kernel: str
    attention_why: str
    framework: str
    gemm_efficiency: float
    achieved_mfu: float | None  # at the primary sequence length, re-tuned
    overlap: float
    probe: str | None  # the record's date and host when one was used
    probe_torch: str | None  # the torch the record was measured with
    price: PriceQuote | None


class MemoryFit(_Frozen):
    gpu: str
    capacity_gib: float
    usable_gib: float
    max_seq_len: int | None  # the longest sequence any layout holds (None: none fits)
    max_seq_len_as_run: int | None  # ... in the layout as the user runs it
    total_gib: list[float]  # re-tuned, at each swept sequence length
    fits: list[bool]


class SensitivityRow(_Frozen):
    """One assumption moved across its range, the others held: does the verdict move?"""

    assumption: str
    baseline: float
    low: float
    high: float
    unit: str
    verdict_low: str
    verdict_high: str
    cost_ratio_low: float | None
    cost_ratio_high: float | None
    break_even: float | None = Field(description="the value where $/token ties, if in range")
    flips: bool
    source: str


class GpuResult(_Frozen):
    gpu: str
    name: str
    role: Literal["current", "target"]
    gpus: int
    nodes: int
    precision: str | None = Field(
        default=None, description="this GPU's number format (None in reports before v2: the "
                                  "workload's)")
    kv_bytes: float | None = Field(default=None, description="serving: bytes per KV element")
    framework: str | None = Field(default=None, description="what runs the workload here")
    framework_why: str | None = None
    dtype_gate: DtypeGate
    software_gate: SoftwareGate | None
    projectable: bool
    problem: str | None
    assumptions: Assumptions | None
    memory: MemoryFit
    sweep: list[SweepPoint]  # the basis the verdict uses (re-tuned unless the answers say)
    curve: list[InteractivityPoint] = Field(
        default_factory=list, description="serving: tokens/s per GPU against tokens/s per user "
                                          "at the primary length, every layout re-tuned")
    as_run: list[SweepPoint]  # the layout as the user runs it
    fit_change: dict[str, str] = Field(
        default_factory=dict,
        description="by sequence length: the smallest change that makes the as-run layout fit")

    base_options: dict[str, list[BaseOption]] = Field(
        default_factory=dict,
        description="lora, by sequence length where the base as given fits in no layout: each "
                    "other way of holding it that fits, fastest first")

    def change_at(self, seq_len: int) -> str | None:
        return self.fit_change.get(str(seq_len))
    job: JobCost | None
    power_w: float | None
    modelled_tokens_per_s_per_gpu: float | None = Field(
        default=None, description="with an anchor: the model's own figure at the primary length, "
                                  "before anchoring, beside the anchored one the verdict reads")
    break_even_usd_per_hour: float | None = None
    break_even_efficiency: float | None = None
    buy_back: BuyBack | None = None
    verdict: Verdict | None = None
    sensitivity: list[SensitivityRow] = Field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.gpus}x {self.gpu}"

    def point(self, seq_len: int) -> SweepPoint | None:
        return next((p for p in self.sweep if p.seq_len == seq_len), None)


class AnchorReport(_Frozen):
    """The decision anchored on the user's own measured run of the current GPU."""

    measured: str  # the figure as given, in words
    source: str  # user, or a workload probe record
    measured_tokens_per_s_per_gpu: float
    modelled_tokens_per_s_per_gpu: float  # the current GPU as run, before anchoring
    moved: list[str]  # the knobs the fit moved, in words
    transfers: list[str]  # per target: what carries over and what does not
    efficiency: float  # the share of the modelled rate the user's stack reaches
    attention: float  # the attention kernel's multiplier (1: not measured apart)

    @property
    def whose(self) -> str:
        """Whose figure the anchor is, as every front end says it."""
        return "your measured" if self.source.startswith("user") else "the workload probe's"


class DefaultUsed(_Frozen):
    """A value the user did not give, and where the one used came from."""

    field: str
    value: str
    source: str


class Decision(_Frozen):
    answers: Answers
    primary_seq_len: int
    basis: Basis
    electricity_source: Literal["user", "default"]
    band_level: float
    current: GpuResult
    targets: list[GpuResult]
    defaults: list[DefaultUsed] = Field(default_factory=list)
    notes: list[str]
    anchor: AnchorReport | None = None
    interactivity: list[InteractivityLead] = Field(
        default_factory=list, description="serving: which GPU leads at which tokens/s per user")

    def why_unprojected(self, target: GpuResult, point: SweepPoint,
                        current: SweepPoint) -> str:
        """Why `target` has no speedup at `point` (the current GPU's point at the same
        length is `current`): what a chart says in place of a bar."""
        if target.verdict is not None and target.verdict.kind == "blocked-by-gate":
            return "blocked at a gate"
        if not point.fits:
            return "does not fit"
        return f"{self.current.gpu} does not fit" if not current.fits else "not projected"
