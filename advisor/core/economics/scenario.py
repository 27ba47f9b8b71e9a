"""The published RTX PRO 6000 -> B200 projection for a drafter-training pipeline, and which
of its assumptions carries the verdict.

Source: /work/shared/reference/cost-power-figures.md, sections "Cost-performance projection:
RTX PRO 6000 Blackwell -> B200" and "Power vs throughput" (seed write-ups 000 and 003).
Measured there: 14.8 Ktok/s on 3 target GPUs + 1 drafter, 27% MFU, a ~60 ms GPU->CPU hop per
batch; 34.7 Ktok/s at 0.74 batches/s on 7 + 1 with the queue empty. Assumed there: 54 GFLOP
per token, MFU rising to 40-50% on B200, NVLink removing the hop, B200 at 3.4x the price.

The published arithmetic is kept as it was (B200 per target = peak x MFU / FLOPs per token;
the RTX side is the measured rate) and every assumption is then moved across its range one
at a time. Two things the write-up leaves implicit are made explicit: its peaks (4.5 and
1 PFLOP/s) are sparse-style figures, twice the dense ones in the catalog; and the drafter
must keep up, which this module checks with the pipeline balance model.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from advisor.core.economics.pipeline import Pipeline, Stage, balance
from advisor.core.model import bounds as B

if TYPE_CHECKING:
    from advisor.core.model.catalog import Catalog

SOURCE = ("cost-power-figures.md: 'Cost-performance projection: RTX PRO 6000 Blackwell -> B200' "
          "and 'Power vs throughput' (seed write-ups 000 and 003)")
CURRENT_ID, TARGET_ID = "rtx-pro-6000-bw-server", "b200-sxm"
Verdict = Literal["faster and cheaper", "faster but dearer", "slower"]


class ScenarioInputs(BaseModel):
    """Every figure of the projection, each labelled with where it comes from."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    tokens: float = Field(default=6 * 1.866e9, ge=B.MIN_TOKENS, le=B.MAX_TOKENS,
                          description="published: 6 epochs of 1.866B tokens")
    current_tokens_per_s: float = Field(
        default=14_800, ge=B.MIN_RATE_PER_S, le=B.MAX_TOKENS_PER_S,
        description="measured: 4x RTX PRO 6000, 3 targets + 1 drafter")
    current_split: tuple[Annotated[int, Field(ge=1, le=B.MAX_GPUS)],
                         Annotated[int, Field(ge=1, le=B.MAX_GPUS)]] = Field(default=(3, 1),
                                           description="measured: targets + drafters")
    drafter_tokens_per_s: float = Field(
        default=34_700, ge=B.MIN_RATE_PER_S, le=B.MAX_TOKENS_PER_S,
        description="measured: one RTX drafter keeps up with 7 targets (queue empty)")
    tokens_per_batch: float = Field(
        default=34_700 / 0.74, ge=B.MIN_TOKENS_PER_UNIT, le=B.MAX_TOKENS,
        description="measured: 34.7 Ktok/s at 0.74 batches/s")
    flops_per_token: float = Field(default=54e9, ge=B.MIN_FLOPS_PER_TOKEN,
                                   le=B.MAX_FLOPS_PER_TOKEN,
                                   description="published assumption: target forward pass")
    current_mfu: float = Field(default=0.27, ge=B.MIN_MFU, le=1,
                               description="measured on RTX PRO 6000")
    target_mfu: float = Field(default=0.45, ge=B.MIN_MFU, le=1,
                              description="published assumption: 40-50% on B200")
    current_peak_tflops: float = Field(
        default=1000.0, ge=B.MIN_TFLOPS, le=B.MAX_TFLOPS,
        description="published: '1 PFLOP/s (as quoted)', sparse-style")
    target_peak_tflops: float = Field(
        default=4500.0, ge=B.MIN_TFLOPS, le=B.MAX_TFLOPS,
        description="published: HGX B200 36 PFLOP/s sparse / 8")
    current_dense_tflops: float = Field(ge=B.MIN_TFLOPS, le=B.MAX_TFLOPS,
                                        description="catalog: dense bf16 peak")
    target_dense_tflops: float = Field(ge=B.MIN_TFLOPS, le=B.MAX_TFLOPS,
                                       description="catalog: dense bf16 peak")
    target_tdp_w: float = Field(gt=0, le=B.MAX_BOARD_W, description="catalog")
    target_idle_w: float = Field(ge=0, le=B.MAX_IDLE_W,
                                 description="catalog, else 10% of TDP (assumption)")
    hop_s: float = Field(default=0.0, ge=0, le=B.MAX_HOP_S,
                         description="GPU->CPU hop per batch left on B200: 0 when NVLink "
                                     "removes it, 0.060 s measured on RTX PRO 6000")
    price_ratio: float = Field(default=3.4, ge=1 / B.MAX_PRICE_RATIO, le=B.MAX_PRICE_RATIO,
                               description="published: B200 $/GPU over RTX")


def published_inputs(catalog: Catalog) -> ScenarioInputs:
    """The published figures plus the catalog's dense peaks and B200 power."""
    from advisor.core.projection.calibration import CAL

    cur, tgt = catalog.gpu(CURRENT_ID), catalog.gpu(TARGET_ID)
    tdp = tgt.power.tdp_w if tgt.power and tgt.power.tdp_w else 1000.0
    idle = tgt.power.idle_w if tgt.power and tgt.power.idle_w else tdp * CAL.idle_power_fraction
    return ScenarioInputs(current_dense_tflops=cur.peak_tflops.bf16 or 0.0,
                          target_dense_tflops=tgt.peak_tflops.bf16 or 0.0,
                          target_tdp_w=tdp, target_idle_w=idle)


def catalog_caveats(catalog: Catalog) -> list[str]:
    """The catalog's open questions about the two GPUs' peaks, power and bandwidth."""
    return [f"{gid}: {note}" for gid in (CURRENT_ID, TARGET_ID)
            for note in catalog.gpu(gid).uncertain]


class Projected(BaseModel):
    model_config = ConfigDict(frozen=True)

    label: str
    split: tuple[int, int]
    target_tokens_per_s_per_gpu: float
    drafter_tokens_per_s_per_gpu: float
    tokens_per_s: float
    bottleneck: str
    queue: str
    power_kw_low: float
    power_kw_high: float
    days: float
    gpu_days_equiv: float = Field(description="GPUs x price ratio x days: RTX PRO 6000 days")
    speedup: float
    cost_ratio: float = Field(description="B200 job cost over the 4x RTX PRO 6000 job's")
    verdict: Verdict


def current_days(s: ScenarioInputs) -> float:
    return s.tokens / s.current_tokens_per_s / 86400


def current_gpu_days(s: ScenarioInputs) -> float:
    return sum(s.current_split) * current_days(s)


def classify(speedup: float, cost_ratio: float) -> Verdict:
    if speedup < 1:
        return "slower"
    return "faster and cheaper" if cost_ratio < 1 else "faster but dearer"


def project(s: ScenarioInputs, split: tuple[int, int] = (3, 1)) -> Projected:
    """B200 targets at peak x MFU / FLOPs (plus any hop), feeding a drafter that speeds up by
    the same peak x MFU ratio over its measured RTX rate; the pipeline takes the slower."""
    target = s.target_peak_tflops * 1e12 * s.target_mfu / s.flops_per_token
    target = s.tokens_per_batch / (s.tokens_per_batch / target + s.hop_s)
    gain = s.target_peak_tflops * s.target_mfu / (s.current_peak_tflops * s.current_mfu)
    drafter = s.drafter_tokens_per_s * gain
    stages = [Stage(name=name, gpus=n, rate_per_gpu=rate / s.tokens_per_batch,
                    active_w=s.target_tdp_w, idle_w=s.target_idle_w, rate_source="assumed")
              for name, n, rate in (("targets", split[0], target), ("drafter", split[1], drafter))]
    b = balance(Pipeline(stages=stages, tokens_per_unit=s.tokens_per_batch, token_budget=s.tokens))
    days = b.eta_days or 0.0
    gpus = sum(split)
    cost = gpus * s.price_ratio * days
    speedup = current_days(s) / days
    ratio = cost / current_gpu_days(s)
    return Projected(
        label=f"{gpus}x B200 ({split[0]}+{split[1]})", split=split,
        target_tokens_per_s_per_gpu=target, drafter_tokens_per_s_per_gpu=drafter,
        tokens_per_s=b.tokens_per_s, bottleneck=b.bottleneck, queue=b.queue,
        power_kw_low=b.power_kw_low, power_kw_high=b.power_kw_high, days=days,
        gpu_days_equiv=cost, speedup=speedup, cost_ratio=ratio, verdict=classify(speedup, ratio),
    )


# --- the published check -----------------------------------------------------------------------


class Check(BaseModel):
    model_config = ConfigDict(frozen=True)

    figure: str
    published: float
    predicted: float
    tolerance: float = Field(description="relative")
    note: str = ""

    @property
    def ok(self) -> bool:
        return abs(self.predicted / self.published - 1) <= self.tolerance


def published_check(s: ScenarioInputs) -> list[Check]:
    """The write-up's figures against this module's arithmetic on the published inputs."""
    four, eight = project(s, (3, 1)), project(s, (7, 1))
    rounded = "the write-up rounds days to 0.1 before multiplying"
    return [
        Check(figure="B200 Ktok/s per target GPU", published=37.5,
              predicted=four.target_tokens_per_s_per_gpu / 1e3, tolerance=0.01),
        Check(figure="4x B200 (3+1) Ktok/s", published=112,
              predicted=four.tokens_per_s / 1e3, tolerance=0.01),
        Check(figure="4x B200 days", published=1.2, predicted=four.days, tolerance=0.05,
              note=rounded),
        Check(figure="8x B200 (7+1) Ktok/s", published=262,
              predicted=eight.tokens_per_s / 1e3, tolerance=0.01,
              note=f"bottleneck here: {eight.bottleneck}"),
        Check(figure="8x B200 days", published=0.5, predicted=eight.days, tolerance=0.02),
        Check(figure="4x RTX PRO 6000 days", published=8.8, predicted=current_days(s),
              tolerance=0.01),
        Check(figure="GPU-days equiv, 4x RTX PRO 6000", published=35.2,
              predicted=current_gpu_days(s), tolerance=0.01, note=rounded),
        Check(figure="GPU-days equiv, 4x B200", published=16.3, predicted=four.gpu_days_equiv,
              tolerance=0.05, note=rounded),
        Check(figure="GPU-days equiv, 8x B200", published=13.6, predicted=eight.gpu_days_equiv,
              tolerance=0.01),
        Check(figure="B200 value per FLOP", published=1.32,
              predicted=s.target_peak_tflops / s.current_peak_tflops / s.price_ratio,
              tolerance=0.01),
    ]


# --- sensitivity -------------------------------------------------------------------------------


class TornadoRow(BaseModel):
    """One assumption moved across its range with the others at the published values."""

    model_config = ConfigDict(frozen=True)

    assumption: str
    baseline: str
    low: str
    high: str
    low_cost_ratio: float
    high_cost_ratio: float
    low_verdict: Verdict
    high_verdict: Verdict
    break_even: float | None = Field(
        description="the value where the cost ratio crosses 1, if it does in a wide domain")
    break_even_label: str | None = None
    flips: bool
    source: str

    @property
    def swing(self) -> float:
        return abs(math.log(self.high_cost_ratio / self.low_cost_ratio))


class Sensitivity(BaseModel):
    model_config = ConfigDict(frozen=True)

    split: tuple[int, int]
    baseline: Projected
    rows: list[TornadoRow] = Field(
        description="single assumptions, largest swing first; then the engine cross-check "
                    "(when given) and all adverse ends together")
    carries: list[str] = Field(description="single assumptions whose range flips the verdict")
    summary: str


def _break_even(s: ScenarioInputs, split: tuple[int, int], field: str, lo: float,
                hi: float) -> float | None:
    """Bisect `field` over [lo, hi] for a cost ratio of 1; None when it never crosses."""
    def f(x: float) -> float:
        return project(s.model_copy(update={field: x}), split).cost_ratio - 1

    a, b = f(lo), f(hi)
    if a * b > 0:
        return None
    for _ in range(60):
        mid = (lo + hi) / 2
        if (f(mid) > 0) == (a > 0):
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _pct(x: float) -> str:
    return f"{x:.0%}" if abs(x * 100 - round(x * 100)) < 0.05 else f"{x:.1%}"


def _gflop(x: float) -> str:
    return f"{x / 1e9:.1f} GFLOP"


def _ms(x: float) -> str:
    return f"{x * 1000:.0f} ms"


def _times(x: float) -> str:
    return f"{x:.2f}x"


def sensitivity(s: ScenarioInputs, split: tuple[int, int] = (3, 1),
                engine_speedup: float | None = None) -> Sensitivity:
    """A tornado table over the projection's assumptions for one B200 split.

    `engine_speedup`, when given, adds a row replacing the MFU rise with the engine's own
    B200/RTX per-GPU projection (see `engine_speedup`).
    """
    dense = {"target_peak_tflops": s.target_dense_tflops,
             "current_peak_tflops": s.current_dense_tflops}
    dense_s = s.model_copy(update=dense)
    rtx_dense_mfu = (s.current_tokens_per_s / s.current_split[0] * s.flops_per_token
                     / (s.current_dense_tflops * 1e12))
    specs: list[tuple[str, ScenarioInputs, str, float, float, tuple[float, float],
                      Callable[[float], str], str]] = [
        (f"B200 MFU (of {s.target_peak_tflops:g} quoted)", s, "target_mfu", s.current_mfu, 0.50,
         (0.005, 1.0), _pct, "published: 40-50% assumed; 27% = no rise (measured on RTX); "
                             "critics: 35%"),
        (f"B200 MFU (of {s.target_dense_tflops:g} dense)",
         dense_s, "target_mfu", 0.40, 0.50, (0.005, 1.0), _pct,
         f"MFU is usually quoted against the dense peak; stated range 40-50% (the RTX's "
         f"measured rate is already {rtx_dense_mfu:.0%} of its dense peak)"),
        ("RTX MFU (sets the drafter's gain)", s, "current_mfu",
         s.current_mfu, rtx_dense_mfu, (0.01, 1.0), _pct,
         f"measured 27% against 1 PFLOP/s; 14.8 Ktok/s is {rtx_dense_mfu:.0%} of the dense "
         f"{s.current_dense_tflops:g} TFLOPS"),
        ("FLOPs per token", s, "flops_per_token", s.flops_per_token * 0.8,
         s.flops_per_token * 1.25, (1e9, 1e13), _gflop,
         "published 54 GFLOP (2 x 27B); +-25% assumed for attention and LM-head FLOPs"),
        ("GPU->CPU hop per batch", s, "hop_s", 0.0, 0.060, (0.0, 100.0), _ms,
         "measured 60 ms on RTX PRO 6000; published assumption: NVLink removes it"),
        ("Price ratio B200 : RTX", s, "price_ratio", s.price_ratio * 0.7,
         s.price_ratio * 1.3, (0.01, 1000.0), _times, "published 3.4x; +-30% assumed"),
    ]
    base = project(s, split)
    rows = [_row(label, src, field, lo, hi, domain, fmt, note, split, base)
            for label, src, field, lo, hi, domain, fmt, note in specs]
    rows.append(_peak_row(s, dense_s, split, base))
    rows.sort(key=lambda r: -r.swing)
    carries = [r.assumption for r in rows if r.flips]
    if engine_speedup is not None:
        rows.append(_engine_row(s, split, base, engine_speedup))
    rows.append(_adverse_row(s, dense_s, split, base))
    return Sensitivity(split=split, baseline=base, rows=rows, carries=carries,
                       summary=_summary(base, rows))


def _row(label: str, s: ScenarioInputs, field: str, lo: float, hi: float,
         domain: tuple[float, float], fmt: Callable[[float], str], note: str,
         split: tuple[int, int], base: Projected) -> TornadoRow:
    return _pair_row(
        label, fmt(getattr(s, field)),
        (fmt(lo), project(s.model_copy(update={field: lo}), split)),
        (fmt(hi), project(s.model_copy(update={field: hi}), split)), base, note,
        _break_even(s, split, field, *domain), fmt)


def _pair_row(assumption: str, baseline: str, low: tuple[str, Projected],
              high: tuple[str, Projected], base: Projected, source: str,
              break_even: float | None = None,
              fmt: Callable[[float], str] | None = None) -> TornadoRow:
    return TornadoRow(
        assumption=assumption, baseline=baseline, low=low[0], high=high[0],
        low_cost_ratio=low[1].cost_ratio, high_cost_ratio=high[1].cost_ratio,
        low_verdict=low[1].verdict, high_verdict=high[1].verdict, break_even=break_even,
        break_even_label=fmt(break_even) if fmt and break_even is not None else None,
        flips=base.verdict != low[1].verdict or base.verdict != high[1].verdict, source=source)


def _peak_row(s: ScenarioInputs, dense: ScenarioInputs, split: tuple[int, int],
              base: Projected) -> TornadoRow:
    quoted = f"{s.target_peak_tflops:g} / {s.current_peak_tflops:g}"
    return _pair_row(
        "Peak basis (B200 / RTX TFLOPS)", quoted,
        (f"{s.target_dense_tflops:g} / {s.current_dense_tflops:g}",
         project(dense, split)), (quoted, base), base,
        "the published peaks are sparse-style (36 PF / 8; '1 PFLOP/s'); the catalog stores dense")


def _engine_row(s: ScenarioInputs, split: tuple[int, int], base: Projected,
                speedup: float) -> TornadoRow:
    """B200 per target = the measured RTX per-target rate x the engine's per-GPU speedup."""
    per_target = s.current_tokens_per_s / s.current_split[0]
    mfu = speedup * per_target * s.flops_per_token / (s.target_peak_tflops * 1e12)
    engine = project(s.model_copy(update={"target_mfu": mfu}), split)
    return _pair_row(
        "Engine B200/RTX per GPU (no MFU rise)",
        f"{base.target_tokens_per_s_per_gpu / per_target:.2f}x",
        (f"{speedup:.2f}x", engine), (f"{speedup:.2f}x", engine),
        base, "decision engine on catalog rates: prefill of a 27B dense stand-in (the real "
              "target has GDN layers the engine does not model)")


def _adverse_row(s: ScenarioInputs, dense: ScenarioInputs, split: tuple[int, int],
                 base: Projected) -> TornadoRow:
    worst = dense.model_copy(update={"target_mfu": 0.40, "flops_per_token": s.flops_per_token
                                     * 1.25, "hop_s": 0.060, "price_ratio": s.price_ratio * 1.3})
    return _pair_row(
        "All adverse ends together", "published", ("worst corner", project(worst, split)),
        ("published", base), base,
        "dense peaks, B200 MFU 40%, FLOPs per token +25%, 60 ms hop, price ratio +30%")


def _summary(base: Projected, rows: list[TornadoRow]) -> str:
    head = (f"{base.label} against 4x RTX PRO 6000 at the published values: {base.verdict} "
            f"({base.speedup:.1f}x faster, cost ratio {base.cost_ratio:.2f}).")
    flips = []
    for r in (r for r in rows if r.flips):
        at, verdict, cost = ((r.low, r.low_verdict, r.low_cost_ratio)
                             if r.low_verdict != base.verdict
                             else (r.high, r.high_verdict, r.high_cost_ratio))
        even = f"; break-even {r.break_even_label}" if r.break_even_label else ""
        flips.append(f"{r.assumption} at {at} ({verdict}, cost ratio {cost:.2f}{even})")
    if not flips:
        return head + " Nothing within the stated ranges flips it."
    return head + " It flips with: " + "; ".join(flips) + "."


def engine_speedup(catalog: Catalog, seq_len: int = 2048, micro_batch: int = 24) -> float:
    """The decision engine's B200 over RTX PRO 6000 per-GPU rate for a 27B dense forward pass.

    A stand-in for the published target (54 GFLOP/token = 2 x 27B): Llama-shaped, prefill,
    2,048-token sequences (assumed), 24 per batch (~49K tokens, the published batch budget).
    """
    from advisor.core.economics.configs import resolve_gpus, run_layout
    from advisor.core.model.transformer import ModelSpec
    from advisor.core.model.workload import Workload
    from advisor.core.projection.calibration import CAL

    w = Workload(mode="prefill", model=ModelSpec.from_params(27e9), seq_lens=[seq_len],
                 micro_batch=micro_batch, gpus=1)
    gpus = [catalog.gpu(CURRENT_ID), catalog.gpu(TARGET_ID)]
    rates = [r for r, _ in resolve_gpus(w, gpus, catalog, None, None, CAL)]
    cur, tgt = run_layout(w, gpus, rates, CAL)
    return tgt.tokens_per_s_per_gpu / cur.tokens_per_s_per_gpu


def with_overrides(s: ScenarioInputs, overrides: dict[str, Any]) -> ScenarioInputs:
    """The inputs with some figures replaced, validated like the originals (one-line errors)."""
    from advisor.core.formats import load_model

    return load_model(ScenarioInputs, {**s.model_dump(), **overrides}, "--set")
