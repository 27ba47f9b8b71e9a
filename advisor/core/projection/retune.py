"""One GPU type at one GPU count: the workload as the user runs it, and re-tuned.

Re-tuning is what real comparisons do: more memory buys a larger micro-batch, less
recompute, less TP/PP and no offload; a GPU that cannot hold the user's layout gets
the smallest change that makes it fit. The engine projects every candidate layout in
one pass; memory fit (and for serving, the latency limits) is a hard constraint, and
the fastest layout that passes wins at each sequence length.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from advisor.core.model.layout import LayoutChoice
from advisor.core.model.workload import Workload
from advisor.core.projection.calibration import CAL, Calibration
from advisor.core.projection.engine import (
    Projection,
    memory_serving,
    memory_training,
    project,
)
from advisor.core.projection.layout import (
    Grid,
    as_run,
    serving_candidates,
    training_candidates,
)
from advisor.core.projection.rates import GpuRates

SEQ_GRANULE = 256  # max_seq_len is reported rounded down to this
MAX_SEQ = 1 << 24


@dataclass(frozen=True)
class Fitted:
    """The projection at one chosen layout per sequence length."""

    proj: Projection  # arrays (1, S)
    layouts: list[LayoutChoice]
    fits: list[bool]  # memory (and latency limits) satisfied
    memory_gib: list[float]


@dataclass(frozen=True)
class Side:
    rates: GpuRates
    usable_gib: float
    as_run: Fitted
    retuned: Fitted
    max_seq_as_run: int | None
    max_seq_retuned: int | None
    fit_change: list[str | None]  # per seq: the smallest change that makes the as-run fit


def usable_gib(capacity_gib: float, cal: Calibration = CAL) -> float:
    """Labelled capacity less what the driver, context and allocator keep."""
    return capacity_gib * cal.usable_memory_fraction


def _memory(w: Workload, g: Grid, s: np.ndarray, cal: Calibration) -> np.ndarray:
    if w.training:
        return memory_training(w, g, s.reshape(1, -1), cal)
    ctx = s if w.mode != "serve" else s + float(w.osl or 0) / 2
    return memory_serving(w, g, ctx.reshape(1, -1), cal)


def _max_seq(w: Workload, g: Grid, usable: float, cal: Calibration) -> np.ndarray:
    """Longest sequence each layout holds: memory is affine in the sequence length."""
    at0 = _memory(w, g, np.asarray([0.0]), cal)[:, 0]
    at1 = _memory(w, g, np.asarray([float(SEQ_GRANULE)]), cal)[:, 0]
    slope = (at1 - at0) / SEQ_GRANULE
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(slope > 0, (usable - at0) / slope, MAX_SEQ)
    room = np.where(at0 >= usable, 0.0, np.minimum(room, MAX_SEQ))
    return np.floor(room / SEQ_GRANULE) * SEQ_GRANULE


def _ok(w: Workload, p: Projection, usable: float) -> np.ndarray:
    ok = p.memory_gib <= usable
    if p.tpot_s is not None and w.tpot_ms is not None:
        ok &= p.tpot_s * 1000 <= w.tpot_ms
    if p.ttft_s is not None and w.ttft_ms is not None:
        ok &= p.ttft_s * 1000 <= w.ttft_ms
    return ok


def _fitted(p: Projection, g: Grid, idx: np.ndarray, ok: np.ndarray) -> Fitted:
    cols = np.arange(p.step_s.shape[1])
    picked = p.at(idx)
    return Fitted(proj=picked, layouts=[g.choice(int(i)) for i in idx],
                  fits=[bool(ok[i, c]) for i, c in zip(idx, cols, strict=True)],
                  memory_gib=picked.memory_gib[0].tolist())


def _changes(a: LayoutChoice, b: LayoutChoice) -> list[str]:
    out = []
    for f in LayoutChoice.model_fields:
        if f in ("nodes", "accumulation"):
            continue
        va, vb = getattr(a, f), getattr(b, f)
        if va != vb:
            out.append(f"{f.replace('_', ' ')} {va} -> {vb}")
    return out


def project_side(w: Workload, rates: GpuRates, seqs: list[int], cal: Calibration = CAL,
                 retune: bool = True) -> Side:
    """As run and re-tuned, with memory fit, for one GPU type at `w.gpus` GPUs."""
    s = np.asarray(seqs, dtype=float)
    usable = usable_gib(rates.capacity_gib, cal)
    mine = as_run(w)
    p_run = project(w, rates, mine, s, cal)
    ok_run = _ok(w, p_run, usable)
    zero = np.zeros(len(seqs), dtype=int)
    run = _fitted(p_run, mine, zero, ok_run)
    if not retune:
        return Side(rates, usable, run, run, _seq(_max_seq(w, mine, usable, cal).max()),
                    _seq(_max_seq(w, mine, usable, cal).max()), [None] * len(seqs))
    make = training_candidates if w.training else serving_candidates
    grid = make(w, w.gpus, w.gpus_per_node, rates.domain)
    p = project(w, rates, grid, s, cal)
    ok = _ok(w, p, usable)
    if not w.training:  # serving: the user's TP/PP/EP stays where it fits; the batch is tuned
        prefer = ((grid.tp == w.tp) & (grid.pp == w.pp) & (grid.ep == w.ep)).reshape(-1, 1)
    else:  # training: layouts that keep the global batch exactly, where any fits
        prefer = (grid.mb * grid.acc * grid.dp == w.sequences_per_step).reshape(-1, 1)
    ok = np.where((ok & prefer).any(axis=0, keepdims=True), ok & prefer, ok)
    score = np.where(ok, p.tokens_per_s, -np.inf)
    best = np.argmax(score, axis=0)
    none = ~ok.any(axis=0)
    fallback = np.argmin(p.memory_gib, axis=0)
    best = np.where(none, fallback, best)
    tuned = _fitted(p, grid, best, ok)
    # The as-run layout stays the answer where it is as fast as the best (ties keep it).
    keep = (ok_run[0]) & (p_run.tokens_per_s[0] >= tuned.proj.tokens_per_s[0] * (1 - 1e-9))
    if keep.any():
        layouts = [run.layouts[i] if keep[i] else tuned.layouts[i] for i in range(len(seqs))]
        tuned = Fitted(proj=_merge(run.proj, tuned.proj, keep), layouts=layouts,
                       fits=[run.fits[i] if keep[i] else tuned.fits[i] for i in range(len(seqs))],
                       memory_gib=[run.memory_gib[i] if keep[i] else tuned.memory_gib[i]
                                   for i in range(len(seqs))])
    # the smallest change: keep the user's fused-kernel setting where that still fits
    as_theirs = replace(grid, fused=np.full_like(grid.fused, int(w.fused_kernels)))
    ok_theirs = _memory(w, as_theirs, s, cal) <= usable
    change: list[str | None] = []
    for c in range(len(seqs)):
        if ok_run[0, c]:
            change.append(None)
            continue
        pool = as_theirs if ok_theirs[:, c].any() else grid
        fits = np.nonzero(ok_theirs[:, c] if ok_theirs[:, c].any() else ok[:, c])[0]
        if not len(fits):
            change.append("nothing fits on this GPU count")
            continue
        mine_c = run.layouts[c]
        costs = [(len(_changes(mine_c, pool.choice(int(i)))), -float(p.tokens_per_s[i, c]),
                  int(i)) for i in fits]
        _, _, i = min(costs)
        change.append("; ".join(_changes(mine_c, pool.choice(i))) or None)
    return Side(rates, usable, run, tuned, _seq(_max_seq(w, mine, usable, cal).max()),
                _seq(_max_seq(w, grid, usable, cal).max()), change)


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
        ttft_s=m(a.ttft_s, b.ttft_s), tpot_s=m(a.tpot_s, b.tpot_s))


def _seq(x: float) -> int | None:
    return int(x) if x >= SEQ_GRANULE else None
