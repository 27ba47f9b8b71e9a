"""One GPU type at one GPU count: the workload as the user runs it, and re-tuned.

Re-tuning is what real comparisons do. Training: more memory buys a larger micro-batch,
less recompute, less TP/PP and no offload; a GPU that cannot hold the user's layout gets
the smallest change that makes it fit. Serving: the layouts a serving engineer tries
(TP inside the scale-up domain, PP across domains for a model one domain cannot hold, EP
for mixture-of-experts, replicas filling the count) each with the most requests in flight
the KV cache, the latency limits and the engine's cap allow; tokens/s per GPU decides.
The engine projects every candidate in one pass; memory fit (and the latency limits) is a
hard constraint, and the fastest layout that passes wins at each sequence length.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from advisor.core.model.bounds import MAX_SEQ_LEN as MAX_SEQ
from advisor.core.model.frameworks import framework_of
from advisor.core.model.layout import LayoutChoice
from advisor.core.model.lora import BASE_ACCURACY, QLORA_FORMAT, BaseOption
from advisor.core.model.vocabulary import BASE_FORMATS, BatchCap
from advisor.core.model.workload import Workload
from advisor.core.projection.calibration import CAL, Z90, Calibration
from advisor.core.projection.engine import (
    Projection,
    memory_serving,
    memory_training,
    project,
    usable_gib,
)
from advisor.core.projection.interactivity import CurvePoint, frontier
from advisor.core.projection.layout import (
    Grid,
    as_run,
    grid_of,
    serving_batches,
    serving_candidates,
    serving_layouts,
    stack,
    training_candidates,
)
from advisor.core.projection.rates import GpuRates

SEQ_GRANULE = 256  # max_seq_len is reported rounded down to this


@dataclass(frozen=True)
class BatchLimit:
    """What set a serving layout's requests in flight, and what more memory would buy."""

    batch: int
    cap: BatchCap
    kv_batch: int  # the most requests the KV cache left after the weights holds
    uncapped_batch: int  # the batch if the KV cache held any number (latency and engine caps)
    uncapped_tokens_per_s: float  # per GPU at that batch
    one_request_gib: float  # the layout's memory with one request: whether it fits at all


@dataclass(frozen=True)
class Fitted:
    """The projection at one chosen layout per sequence length."""

    proj: Projection  # arrays (1, S)
    layouts: list[LayoutChoice]
    fits: list[bool]  # memory (and latency limits) satisfied
    memory_gib: list[float]
    limits: list[BatchLimit | None] | None = None  # serving only
    curve: list[CurvePoint] | None = None  # serving: throughput against interactivity


@dataclass(frozen=True)
class SideProjection:
    rates: GpuRates
    usable_gib: float
    as_run: Fitted
    retuned: Fitted
    max_seq_as_run: int | None
    max_seq_retuned: int | None
    fit_change: list[str | None]  # per seq: the smallest change that makes the as-run fit
    # per seq, a LoRA whose base as given fits nowhere: each other way of holding it that fits
    base_options: list[tuple[BaseOption, ...]] | None = None


def _memory(w: Workload, g: Grid, s: np.ndarray, cal: Calibration) -> np.ndarray:
    """GiB per GPU of each layout at the lengths `s`: a (1, S) row puts every layout at
    every length, an (L, 1) column each layout at its own (serving holds half the output)."""
    if w.training:
        return memory_training(w, g, s, cal)
    ctx = s if w.mode != "serve" else s + float(w.osl or 0) / 2
    return memory_serving(w, g, ctx, cal)


def _max_seq(w: Workload, g: Grid, usable: float, cal: Calibration) -> np.ndarray:
    """Longest sequence each layout holds. Memory grows with the length (piecewise affine: the
    larger of two phases), so a bisection on the granule finds it for every layout at once."""
    def fits(seq: np.ndarray) -> np.ndarray:  # each layout at its own length
        return (_memory(w, g, seq.astype(float).reshape(-1, 1), cal) <= usable)[:, 0]

    lo = np.zeros(len(g))  # in granules: lo fits (or is 0), hi does not
    hi = np.full(len(g), float(MAX_SEQ // SEQ_GRANULE))
    top = fits(hi * SEQ_GRANULE)
    while np.any(hi - lo > 1):
        mid = np.floor((lo + hi) / 2)
        ok = fits(mid * SEQ_GRANULE)
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    return np.where(top, float(MAX_SEQ), lo * SEQ_GRANULE)


def _latency_ok(w: Workload, p: Projection) -> np.ndarray:
    ok = np.ones_like(p.step_s, dtype=bool)
    if p.tpot_s is not None and w.tpot_limit_ms is not None:
        ok &= p.tpot_s * 1000 <= w.tpot_limit_ms
    if p.ttft_s is not None and w.ttft_ms is not None:
        ok &= p.ttft_s * 1000 <= w.ttft_ms
    return ok


def _ok(w: Workload, p: Projection, usable: float) -> np.ndarray:
    return (p.memory_gib <= usable) & _latency_ok(w, p)


def _fitted(p: Projection, g: Grid, idx: np.ndarray, ok: np.ndarray) -> Fitted:
    cols = np.arange(p.step_s.shape[1])
    picked = p.at(idx)
    return Fitted(proj=picked, layouts=[g.choice(int(i)) for i in idx],
                  fits=[bool(ok[i, c]) for i, c in zip(idx, cols, strict=True)],
                  memory_gib=picked.memory_gib[0].tolist())


KNOB_WORDS = {"gpus": "GPUs", "tp": "TP", "pp": "PP", "cp": "CP", "ep": "EP", "vp": "VP",
              "micro_batch": "micro-batch", "zero_stage": "ZeRO stage", "recompute": "recompute",
              "offload_optimizer": "optimizer offload", "fused_kernels": "fused kernels",
              "base_format": "base format", "offload_frozen_weights": "frozen-weight offload"}
"""The layout's knobs as a re-tune's change names them ("TP 1 -> 4; ZeRO stage 0 -> 1")."""


def _knob(v: object) -> str:
    return ("on" if v else "off") if isinstance(v, bool) else str(v)


def _changes(a: LayoutChoice, b: LayoutChoice) -> list[str]:
    out = []
    for f, word in KNOB_WORDS.items():
        va, vb = getattr(a, f), getattr(b, f)
        if va != vb:
            out.append(f"{word} {_knob(va)} -> {_knob(vb)}")
    return out


def project_side(w: Workload, rates: GpuRates, seqs: list[int], cal: Calibration = CAL,
                 retune: bool = True, keep: frozenset[str] = frozenset()) -> SideProjection:
    """As run and re-tuned, with memory fit, for one GPU type at `w.gpus` GPUs. `keep` names
    the layout knobs the user stated, which a serving re-tune leaves as they are."""
    if not w.training:
        return _serving_side(w, rates, seqs, cal, retune, keep)
    s = np.asarray(seqs, dtype=float)
    usable = usable_gib(rates.capacity_gib, cal)
    mine = as_run(w)
    p_run = project(w, rates, mine, s, cal)
    ok_run = _ok(w, p_run, usable)
    zero = np.zeros(len(seqs), dtype=int)
    run = _fitted(p_run, mine, zero, ok_run)
    mine_max = _seq(_max_seq(w, mine, usable, cal).max())
    if not retune:
        return SideProjection(rates, usable, run, run, mine_max, mine_max, [None] * len(seqs))
    grid = training_candidates(w, w.gpus, w.gpus_per_node, rates.domain)
    p = project(w, rates, grid, s, cal)
    ok = _keeping_batch(w, grid, _ok(w, p, usable))
    tuned = _best(p, grid, ok)
    tuned = _keep_as_run(run, ok_run, p_run, tuned)
    # the smallest change: keep the user's fused-kernel setting where that still fits
    as_theirs = replace(grid, fused=np.full_like(grid.fused, int(w.fused_kernels)))
    ok_theirs = _memory(w, as_theirs, s.reshape(1, -1), cal) <= usable
    longest = _max_seq(w, grid, usable, cal).max()
    speed = p.tokens_per_s
    # a LoRA whose base, as given, fits nowhere: what holding it otherwise would do
    nowhere = np.asarray(~ok.any(axis=0))
    options: list[tuple[BaseOption, ...]] = [() for _ in seqs]
    alt = base_alternatives(w)
    if alt and nowhere.any():
        grid_alt = training_candidates(w, w.gpus, w.gpus_per_node, rates.domain, bases=alt)
        p_alt = project(w, rates, grid_alt, s, cal)
        ok_alt = _keeping_batch(w, grid_alt, _ok(w, p_alt, usable))
        options = _base_options(w, p_alt, grid_alt, ok_alt, nowhere)
        if w.allow_quantized_base:  # the re-tune holds the base otherwise where it must
            tuned = _choose(_best(p_alt, grid_alt, ok_alt), tuned, nowhere & ok_alt.any(axis=0))
            longest = max(longest, _max_seq(w, grid_alt, usable, cal).max())
        grid, speed = stack(grid, grid_alt), np.concatenate([speed, p_alt.tokens_per_s])
        ok = np.concatenate([ok, ok_alt])
        as_theirs = replace(grid, fused=np.full_like(grid.fused, int(w.fused_kernels)))
        ok_theirs = _memory(w, as_theirs, s.reshape(1, -1), cal) <= usable
    change: list[str | None] = []
    for c in range(len(seqs)):
        if ok_run[0, c]:
            change.append(None)
            continue
        pool = as_theirs if ok_theirs[:, c].any() else grid
        fits = np.nonzero(ok_theirs[:, c] if ok_theirs[:, c].any() else ok[:, c])[0]
        change.append(_smallest_change(run.layouts[c], pool, fits, speed[:, c]))
    return SideProjection(rates, usable, run, tuned, mine_max, _seq(longest), change,
                          options)


def _keeping_batch(w: Workload, grid: Grid, ok: np.ndarray) -> np.ndarray:
    """The layouts that fit, narrowed to those that keep the global batch exactly where any
    of them fits."""
    prefer = (grid.mb * grid.acc * grid.dp == w.sequences_per_step).reshape(-1, 1)
    return np.where((ok & prefer).any(axis=0, keepdims=True), ok & prefer, ok)


def base_alternatives(w: Workload) -> tuple[tuple[int, int], ...]:
    """Other ways to hold a LoRA's frozen base, as (format index, offloaded) grid columns: a
    4-bit NF4 base (QLoRA; its GEMMs run in 16 bits, so a 16-bit recipe only), the base as
    given but offloaded, and both. None for a base already 4-bit and offloaded, or full
    training."""
    if w.mode != "lora":
        return ()
    fmt, off = BASE_FORMATS.index(w.base_format), int(w.offload_frozen_weights)
    four = w.base_format in ("nf4", "int4") or w.precision not in ("bf16", "fp16")
    nf4 = BASE_FORMATS.index(QLORA_FORMAT)
    out = [] if four else [(nf4, off)]
    if not off:
        out += [(fmt, 1)] + ([] if four else [(nf4, 1)])
    return tuple(out)


def _base_options(w: Workload, p: Projection, grid: Grid, ok: np.ndarray,
                  where: np.ndarray) -> list[tuple[BaseOption, ...]]:
    """Per length where `where` holds: for each way of holding the base in `grid`, its fastest
    layout that fits, fastest first; the fastest is the one a permitted re-tune runs."""
    out: list[tuple[BaseOption, ...]] = []
    for c in range(p.step_s.shape[1]):
        found: list[int] = []
        # one change first (a 4-bit base, or the base offloaded), both only where neither does
        for key in base_alternatives(w):
            rows = np.nonzero(ok[:, c] & (grid.base[:, 0] == key[0])
                              & (grid.frozen_offload[:, 0] == key[1]))[0]
            both = key[0] != BASE_FORMATS.index(w.base_format) and key[1] != int(
                w.offload_frozen_weights)
            if where[c] and len(rows) and not (both and found):
                found.append(int(rows[int(np.argmax(p.tokens_per_s[rows, c]))]))
        found.sort(key=lambda i: -float(p.tokens_per_s[i, c]))
        out.append(tuple(base_option(p, grid.choice(int(i)), int(i), c,
                                     chosen=w.allow_quantized_base and n == 0, fits=True)
                         for n, i in enumerate(found)))
    return out


def base_option(p: Projection, layout: LayoutChoice, i: int, c: int, *, chosen: bool,
                fits: bool) -> BaseOption:
    """The frozen base of `layout` (row `i` of `p`) at length `c`, with what it costs."""
    return BaseOption(
        base_format=layout.base_format, offload_frozen_weights=layout.offload_frozen_weights,
        fits=fits, memory_gib=float(p.memory_gib[i, c]),
        tokens_per_s_per_gpu=float(p.tokens_per_s[i, c]), step_s=float(p.step_s[i, c]),
        dequant_s=float(p.parts["dequant"][i, c]), stream_s=float(p.parts["stream"][i, c]),
        accuracy_risk=BASE_ACCURACY[layout.base_format].risk, chosen=chosen, layout=layout)


def _best(p: Projection, grid: Grid, ok: np.ndarray) -> Fitted:
    """The fastest layout that passes at each length (the least memory where none does)."""
    score = np.where(ok, p.tokens_per_s, -np.inf)
    best = np.argmax(score, axis=0)
    best = np.where(~ok.any(axis=0), np.argmin(p.memory_gib, axis=0), best)
    return _fitted(p, grid, best, ok)


def _keep_as_run(run: Fitted, ok_run: np.ndarray, p_run: Projection, tuned: Fitted) -> Fitted:
    """The as-run layout stays the answer where it is as fast as the best (ties keep it)."""
    keep = ok_run[0] & (p_run.tokens_per_s[0] >= tuned.proj.tokens_per_s[0] * (1 - 1e-9))
    return _choose(run, tuned, keep)


def _choose(a: Fitted, b: Fitted, keep: np.ndarray) -> Fitted:
    """Per sequence length, `a` where `keep` holds, else `b`."""
    if not keep.any():
        return b
    n = len(a.layouts)
    return Fitted(proj=_merge(a.proj, b.proj, keep),
                  layouts=[a.layouts[i] if keep[i] else b.layouts[i] for i in range(n)],
                  fits=[a.fits[i] if keep[i] else b.fits[i] for i in range(n)],
                  memory_gib=[a.memory_gib[i] if keep[i] else b.memory_gib[i]
                              for i in range(n)],
                  limits=[(a.limits if keep[i] else b.limits)[i]
                          for i in range(n)] if a.limits and b.limits else None,
                  curve=b.curve if b.curve is not None else a.curve)


def _smallest_change(mine: LayoutChoice, pool: Grid, fits: np.ndarray,
                     speed: np.ndarray) -> str | None:
    """The fewest knobs changed from `mine` to a layout in `fits`; among those the fastest,
    then the first."""
    if not len(fits):
        return "nothing fits on this GPU count"
    changed = pool.knobs_changed(mine, KNOB_WORDS)[fits]
    i = int(fits[np.lexsort((fits, -speed[fits], changed))[0]])
    return "; ".join(_changes(mine, pool.choice(i))) or None


# --- serving --------------------------------------------------------------------------------


def _kv_batch(w: Workload, layouts: list[tuple[int, int, int]], gpus: int, per_node: int,
              seq: float, usable: float, cal: Calibration) -> tuple[np.ndarray, np.ndarray]:
    """(the most requests in flight each layout's KV cache holds at `seq`, its memory with
    one request): memory is affine in the batch, weights and workspace then KV per request."""
    zero = serving_candidates(w, gpus, per_node, layouts, [0])
    one = serving_candidates(w, gpus, per_node, layouts, [1])
    s = np.asarray([seq])
    a, b = (_memory(w, g, s.reshape(1, -1), cal)[:, 0] for g in (zero, one))
    per_request = np.maximum(b - a, 1e-12)
    return np.floor(np.maximum(usable - a, 0.0) / per_request).astype(int), b


def _serve_column(w: Workload, rates: GpuRates, seq: float, layouts: list[tuple[int, int, int]],
                  batches: list[int], usable: float, cal: Calibration, stated_batch: bool
                  ) -> tuple[Projection, Grid, int, np.ndarray, BatchLimit, list[CurvePoint]]:
    """Every layout at every batch (plus each layout's exact KV-cache batch) at one length:
    (projection, grid, chosen row, ok mask, what limited its batch, the throughput against
    interactivity curve with no TPOT limit)."""
    gpus, per_node = w.gpus, w.gpus_per_node
    kv, one_gib = _kv_batch(w, layouts, gpus, per_node, seq, usable, cal)
    rows = [(lay, b) for lay in layouts for b in batches]
    if not stated_batch:
        rows += [(lay, int(k)) for lay, k in zip(layouts, kv, strict=True)
                 if 1 <= k <= w.max_batch and k not in batches]
    grid = grid_of([(gpus, per_node, tp, pp, 1, ep, 1, b, 1, 0, 0, 0, 1)
                    for (tp, pp, ep), b in rows])
    p = project(w, rates, grid, np.asarray([seq]), cal)
    latency = _latency_ok(w, p)[:, 0]
    fits = (p.memory_gib <= usable)[:, 0]
    ok = latency & fits
    tps = p.tokens_per_s[:, 0]
    best = int(np.argmax(np.where(ok, tps, -np.inf))) if ok.any() \
        else int(np.argmin(p.memory_gib[:, 0]))
    same = ((grid.tp == grid.tp[best]) & (grid.pp == grid.pp[best])
            & (grid.ep == grid.ep[best]))[:, 0]
    free = same & latency  # memory ignored: what a larger KV cache would allow
    top = int(np.argmax(np.where(free, tps, -np.inf))) if free.any() else best
    batch = int(grid.mb[best, 0])
    layout = (int(grid.tp[best, 0]), int(grid.pp[best, 0]), int(grid.ep[best, 0]))
    kv_here = int(kv[layouts.index(layout)])
    one_here = float(one_gib[layouts.index(layout)])
    nxt = _next_batch(grid, best)
    cap: BatchCap
    if stated_batch:
        cap = "your concurrency"
    elif nxt == best:
        cap = "engine cap"
    elif not latency[nxt]:
        tpot_bad = p.tpot_s is not None and w.tpot_limit_ms is not None \
            and float(p.tpot_s[nxt, 0]) * 1000 > w.tpot_limit_ms
        cap = "tpot" if tpot_bad else "ttft"
    elif not fits[nxt]:
        cap = "kv-capacity"
    else:
        cap = "throughput peak"
    limit = BatchLimit(batch=batch, cap=cap, kv_batch=kv_here,
                       uncapped_batch=int(grid.mb[top, 0]),
                       uncapped_tokens_per_s=float(tps[top]), one_request_gib=one_here)
    ttft_ok = _latency_ok(w.model_copy(update={"tpot_ms": None, "min_tokens_per_user": None}),
                          p)[:, 0]
    return p, grid, best, ok, limit, frontier(p, grid, fits & ttft_ok)


def _next_batch(grid: Grid, i: int) -> int:
    """The row of the same layout with the next larger batch (or `i` itself)."""
    same = ((grid.tp == grid.tp[i]) & (grid.pp == grid.pp[i]) & (grid.ep == grid.ep[i])
            & (grid.mb > grid.mb[i]))[:, 0]
    if not same.any():
        return i
    cands = np.nonzero(same)[0]
    return int(cands[np.argmin(grid.mb[cands, 0])])


def _serving_fit(w: Workload, rates: GpuRates, seqs: list[int],
                 layouts: list[tuple[int, int, int]], usable: float, cal: Calibration,
                 stated_batch: bool) -> Fitted:
    """The best of `layouts` at each length, each at its best batch."""
    batches = serving_batches(w, stated_batch)
    cols: list[Projection] = []
    chosen: list[LayoutChoice] = []
    fits: list[bool] = []
    limits: list[BatchLimit | None] = []
    curve: list[CurvePoint] = []
    for seq in seqs:
        p, grid, best, ok, limit, column = _serve_column(w, rates, float(seq), layouts,
                                                         batches, usable, cal, stated_batch)
        curve = curve or column  # the primary length's
        cols.append(p.at(np.asarray([best])))
        chosen.append(grid.choice(best))
        fits.append(bool(ok[best]))
        limits.append(limit)
    proj = _concat(cols)
    return Fitted(proj=proj, layouts=chosen, fits=fits, memory_gib=proj.memory_gib[0].tolist(),
                  limits=limits, curve=curve)


def serving_usable_gib(w: Workload, capacity_gib: float, cal: Calibration = CAL) -> float:
    """What a serving engine takes of the card: vLLM and SGLang a fixed share of it, the
    others (TensorRT-LLM) the usable memory."""
    usable = usable_gib(capacity_gib, cal)
    share = cal.serve_memory_fraction.get(framework_of(w.framework, False, 0)[0])
    return min(usable, capacity_gib * share) if share else usable


def _serving_side(w: Workload, rates: GpuRates, seqs: list[int], cal: Calibration,
                  retune: bool, keep: frozenset[str]) -> SideProjection:
    usable = serving_usable_gib(w, rates.capacity_gib, cal)
    stated_batch = "micro_batch" in keep
    mine = [(w.tp, w.pp, w.ep)]
    run = _serving_fit(w, rates, seqs, mine, usable, cal, stated_batch)
    one = as_run(w.model_copy(update={"micro_batch": 1}))
    max_run = _cap_context(w, _seq(_max_seq(w, one, usable, cal).max()))
    if not retune:
        return SideProjection(rates, usable, run, run, max_run, max_run, [None] * len(seqs))
    layouts = serving_layouts(w, w.gpus, w.gpus_per_node, keep)
    tuned = _serving_fit(w, rates, seqs, layouts, usable, cal, stated_batch)
    ok_run = np.asarray([run.fits])
    tuned = _keep_as_run(run, ok_run, run.proj, tuned)
    singles = serving_candidates(w, w.gpus, w.gpus_per_node, layouts, [1])
    max_tuned = _cap_context(w, _seq(_max_seq(w, singles, usable, cal).max()))
    change: list[str | None] = []
    for c in range(len(seqs)):
        if run.fits[c]:
            change.append(None)
        elif tuned.fits[c]:
            change.append("; ".join(_changes(run.layouts[c], tuned.layouts[c])) or None)
        else:
            change.append("nothing fits on this GPU count")
    return SideProjection(rates, usable, run, tuned, max_run, max_tuned, change)


def _cap_context(w: Workload, longest: int | None) -> int | None:
    """Serving cannot attend past the model's context: the longest input is capped there."""
    limit = w.model.max_context
    if longest is None or limit is None:
        return longest
    return min(longest, max(limit - int(w.osl or 0), 0)) or None


def _concat(cols: list[Projection]) -> Projection:
    """(1, 1) projections side by side as one (1, S) projection."""
    def cat(xs: list[np.ndarray | None]) -> np.ndarray | None:
        if any(x is None for x in xs):
            return None
        return np.concatenate(xs, axis=1)  # type: ignore[arg-type]

    def cat_d(ds: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        return {k: np.concatenate([d[k] for d in ds], axis=1) for k in ds[0]}

    first = cols[0]
    return Projection(
        seq=np.concatenate([c.seq for c in cols]), times=cat_d([c.times for c in cols]),
        binding=cat_d([c.binding for c in cols]), compute_s=cat_d([c.compute_s for c in cols]),
        memory_s=cat_d([c.memory_s for c in cols]), flops=cat_d([c.flops for c in cols]),
        bytes=cat_d([c.bytes for c in cols]),
        step_s=np.concatenate([c.step_s for c in cols], axis=1),
        tokens=np.concatenate([c.tokens for c in cols], axis=1),
        model_flops=np.concatenate([c.model_flops for c in cols], axis=1), peak=first.peak,
        memory_gib=np.concatenate([c.memory_gib for c in cols], axis=1),
        ttft_s=cat([c.ttft_s for c in cols]), tpot_s=cat([c.tpot_s for c in cols]),
        parts=cat_d([c.parts for c in cols]))


def _merge(a: Projection, b: Projection, keep: np.ndarray) -> Projection:
    """Per sequence length, `a` where `keep` else `b` (both (1, S))."""
    def m(x: np.ndarray | None, y: np.ndarray | None) -> np.ndarray | None:
        if x is None or y is None:
            return None
        return np.where(keep.reshape(1, -1), x, y)

    def md(x: dict[str, np.ndarray], y: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {k: np.where(keep.reshape(1, -1), x[k], y[k]) for k in x if k in y}

    return Projection(
        seq=a.seq, times=md(a.times, b.times), binding=md(a.binding, b.binding),
        compute_s=md(a.compute_s, b.compute_s), memory_s=md(a.memory_s, b.memory_s),
        flops=md(a.flops, b.flops), bytes=md(a.bytes, b.bytes),
        step_s=np.where(keep.reshape(1, -1), a.step_s, b.step_s),
        tokens=np.where(keep.reshape(1, -1), a.tokens, b.tokens),
        model_flops=np.where(keep.reshape(1, -1), a.model_flops, b.model_flops), peak=a.peak,
        memory_gib=np.where(keep.reshape(1, -1), a.memory_gib, b.memory_gib),
        ttft_s=m(a.ttft_s, b.ttft_s), tpot_s=m(a.tpot_s, b.tpot_s), parts=md(a.parts, b.parts))


def _seq(x: float) -> int | None:
    return int(x) if x >= SEQ_GRANULE else None


def memory_margin(fitted: Fitted, c: int, usable: float, cal: Calibration) -> tuple[float, bool]:
    """(usable memory less what the layout needs at length c, whether that is within the
    memory model's band): serving fills the KV cache on purpose, so whether it fits at
    all is one request's memory."""
    limit = fitted.limits[c] if fitted.limits else None
    need = limit.one_request_gib if limit is not None else float(fitted.memory_gib[c])
    margin = usable - need
    return margin, abs(margin) <= Z90 * cal.memory_sigma * need
