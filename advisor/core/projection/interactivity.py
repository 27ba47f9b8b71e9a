"""Serving throughput against interactivity, the curve AIConfigurator and InferenceMAX draw.

A serving GPU trades one for the other: a larger batch serves more tokens per GPU and fewer
per user (each user waits for the whole batch's step). Every layout and batch the re-tune
projects is a point; the curve keeps those no other point beats on both axes, so reading it
at a tokens-per-user target gives the most a GPU serves there.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Protocol, TypeVar

import numpy as np

from advisor.core.projection.engine import Projection
from advisor.core.projection.layout import Grid


@dataclass(frozen=True)
class CurvePoint:
    """One operating point: a layout and a batch, what each user and each GPU sees."""

    tokens_per_s_per_user: float  # 1 / TPOT
    tokens_per_s_per_gpu: float
    batch: int  # requests in flight per replica
    tp: int
    pp: int
    ep: int
    ttft_s: float
    tpot_s: float


def frontier(p: Projection, grid: Grid, ok: np.ndarray, column: int = 0) -> list[CurvePoint]:
    """The points at `column` that pass `ok` (memory and the TTFT limit) and that no other
    passing point beats on tokens/s per user and per GPU both, fastest per user first."""
    if p.tpot_s is None or p.ttft_s is None:
        return []
    per_user = 1.0 / np.maximum(p.tpot_s[:, column], 1e-12)
    per_gpu = p.tokens_per_s[:, column]
    rows = np.nonzero(ok)[0]
    out: list[CurvePoint] = []
    best = -np.inf
    for i in rows[np.lexsort((-per_gpu[rows], -per_user[rows]))]:
        if per_gpu[i] <= best * (1 + 1e-9):
            continue
        best = float(per_gpu[i])
        out.append(CurvePoint(
            tokens_per_s_per_user=float(per_user[i]), tokens_per_s_per_gpu=best,
            batch=int(grid.mb[i, 0]), tp=int(grid.tp[i, 0]), pp=int(grid.pp[i, 0]),
            ep=int(grid.ep[i, 0]), ttft_s=float(p.ttft_s[i, column]),
            tpot_s=float(p.tpot_s[i, column])))
    return out


class Operating(Protocol):
    @property
    def tokens_per_s_per_user(self) -> float: ...
    @property
    def tokens_per_s_per_gpu(self) -> float: ...


P = TypeVar("P", bound=Operating)


def at_interactivity(curve: list[P], tokens_per_user: float) -> P | None:
    """The point serving the most per GPU while each user still gets `tokens_per_user`."""
    meets = [c for c in curve if c.tokens_per_s_per_user >= tokens_per_user * (1 - 1e-9)]
    return max(meets, key=lambda c: c.tokens_per_s_per_gpu) if meets else None


def leaders(curves: dict[str, list[P]], score: dict[str, float] | None = None,
            tie: float = 0.0) -> list[tuple[float, float, str]]:
    """Which GPU serves best at each interactivity: (from, to tokens/s per user, GPU) bands,
    slowest per user first. Best is the most tokens/s per GPU, or with `score` (a GPU's
    $/GPU-hour) the fewest dollars per token; a band ends where the leader changes or the
    last GPU reaching that interactivity runs out; a lead over less than `tie` (relative) of
    interactivity is a tie and stays with the band before it."""
    levels = sorted({c.tokens_per_s_per_user for pts in curves.values() for c in pts})
    bands: list[tuple[float, float, str]] = []
    for lo, hi in itertools.pairwise(levels):
        ranked = []
        for gpu, pts in curves.items():
            point = at_interactivity(pts, hi)
            if point is not None:
                value = point.tokens_per_s_per_gpu / (score[gpu] if score else 1.0)
                ranked.append((value, gpu))
        if not ranked:
            continue
        gpu = max(ranked)[1]
        if bands and (bands[-1][2] == gpu or hi < lo * (1 + tie)) and bands[-1][1] == lo:
            bands[-1] = (bands[-1][0], hi, bands[-1][2])
        else:
            bands.append((lo, hi, gpu))
    return bands
