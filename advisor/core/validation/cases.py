"""A published case and its result: what was measured, how to reproduce it, how close we got."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from advisor.core.model.answers import Answers
from advisor.core.model.layout import LayoutOverride
from advisor.core.model.workload import Workload

Kind = Literal[
    "matmul-ratio", "speedup", "tflops", "attention-ratio", "memory", "max-seq", "usable-gib",
    "busbw", "value-per-dollar", "cheaper-by", "binding", "verdict", "kv-bytes", "kv-cache",
    "weights-gb", "fits", "report",
]
Basis = Literal["in-sample", "held-out", "input"]
Category = Literal["training", "inference", "kernel", "memory", "cost", "other"]
RATIO_KINDS = ("matmul-ratio", "speedup", "attention-ratio")
GIB = float(2**30)


class CaseSpec(BaseModel):
    """One published figure and how to reproduce it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    kind: Kind
    title: str
    source: str
    file: str = ""
    group: str | None = None
    basis: Literal["input"] | None = None
    category: Category = "other"
    tier: int = 2
    figure: Literal["retuned", "as_run"] = "retuned"
    workload: Workload | None = None
    layouts: dict[str, LayoutOverride] = {}  # per-GPU changes, e.g. NVFP4 on the target only
    gpu: str | None = None
    current: str | None = None
    target: str | None = None
    measure: Literal["blended", "attention", "non-attention", "tpot"] = "blended"
    seq_len: int | None = None
    dtype: str = "bf16"
    prices: dict[str, float] = {}
    power_limits_w: dict[str, float] = {}
    ranks: int | None = None
    nodes: int = 1
    payload_gib: float | None = None
    nic_gbit: float = 400.0
    value_from: float | None = None  # the absolute figures behind a ratio, per GPU (tokens/s,
    value_to: float | None = None  # or ms per token for a TPOT case): what anchoring uses
    speedup: float | None = None
    price_ratio: float | None = None
    overhead: float | None = None  # a KV-cache sizing's own overhead factor
    measured: float | None = None
    expected: str | bool | None = None
    tolerance: float = 0.05
    answers: Answers | None = None  # "report" cases: a whole answers file through run()
    figure_path: str | None = None  # dotted path into the report, e.g. pipeline.current.eta_days
    note: str = ""


class CaseResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    kind: str
    basis: Basis
    category: str
    group: str | None
    source: str
    predicted: float | str | bool
    measured: float | str | bool
    error: float | None  # (predicted - measured) / measured
    low: float | None  # the 90% band, speedup cases
    high: float | None
    naive: float | None  # sqrt(peak ratio x HBM ratio), for ratio cases
    naive_error: float | None
    tolerance: float
    passed: bool
    switch: bool = False  # the two GPUs run different number formats


class Accuracy(BaseModel):
    """Median |error| of one set of cases, ours and the naive predictor's."""

    model_config = ConfigDict(frozen=True)

    cases: int
    median: float
    group_weighted: float
    naive_median: float
    naive_group_weighted: float
    coverage: float | None  # share of cases whose measurement falls inside our 90% band


class Summary(BaseModel):
    model_config = ConfigDict(frozen=True)

    results: list[CaseResult]
    held_out: Accuracy
    held_out_training: Accuracy
    held_out_inference: Accuracy
    held_out_switch: Accuracy  # the cases whose two GPUs run different number formats
    held_out_unseen: Accuracy  # the cases added after the band's sigma was chosen
    in_sample: Accuracy
    median_abs_error_held_out: float  # every numeric held-out case, not just speedups
    suggested_model_sigma: float  # the model sigma that makes the band hold 90% held out


