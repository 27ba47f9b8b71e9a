"""Layouts: how a workload is laid out on a GPU count, one or thousands at a time.

A layout is the set of knobs a user re-tunes when moving to another GPU: GPU
count and nodes, TP/PP/CP/EP/VP degrees, micro-batch and accumulation at a fixed
global batch, ZeRO/FSDP stage, recompute, optimizer offload and a fused loss;
for serving, TP/EP and the number of requests in flight. The engine evaluates
layouts as columns of numpy arrays, so re-tuning over every layout that could
make sense is one vectorised pass, not a loop.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from itertools import product
from typing import TYPE_CHECKING

import numpy as np

from advisor.core.model.frameworks import framework_of
from advisor.core.model.layout import LayoutChoice
from advisor.core.model.vocabulary import BASE_FORMATS

if TYPE_CHECKING:
    from advisor.core.model.workload import Workload

RECOMPUTE = ("none", "selective", "full")
# Search bounds: whatever the input, a re-tune evaluates at most this many layouts.
MAX_DEGREE = 64  # TP, CP, EP; PP up to the layer count
MAX_LAYOUTS = 20_000
MAX_MICRO_BATCH = 16
MAX_VIRTUAL_STAGES = 8  # interleaved chunks per pipeline stage
MIN_CP_SEQ = 4096  # context parallelism is only tried from this sequence length
# (ZeRO stage, recompute, offload) each framework offers, from the fastest to the most
# memory-saving. ZeRO-0 is left out when there is data parallelism: with a distributed
# optimizer ZeRO-1 costs the same. Megatron shards only the optimizer (its distributed
# optimizer) and scales with TP/PP/CP/EP instead; FSDP shards gradients or everything;
# DeepSpeed (as Hugging Face runs it) has every ZeRO stage and offload but no TP/PP/CP/EP.
_ALL = (*((z, r, 0) for r in (0, 1, 2) for z in (1, 2, 3)), (3, 2, 1))
MEMORY_LEVELS: dict[str, tuple[tuple[int, int, int], ...]] = {
    "megatron": ((1, 0, 0), (1, 1, 0), (1, 2, 0)),
    "fsdp": (*((z, r, 0) for r in (0, 1, 2) for z in (2, 3)), (3, 2, 1)),
    "deepspeed": _ALL,
}
SINGLE_RANK_LEVELS: tuple[tuple[int, int, int], ...] = ((0, 0, 0), (0, 1, 0), (0, 2, 0),
                                                         (1, 2, 1))
PARALLEL: dict[str, bool] = {"megatron": True, "fsdp": True, "deepspeed": False}


# Requests in flight a serving re-tune tries: steps of at most ~25%, so a batch a latency
# limit or the KV cache caps is found to within that (the KV cap is also tried exactly).
SERVING_BATCHES = (1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96,
                   112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1024, 1280,
                   1536, 1792, 2048, 2560, 3072, 3584, 4096)


@dataclass(frozen=True)
class Grid:
    """Layouts as columns: every field is an array of shape (L, 1), to broadcast over seq."""

    gpus: np.ndarray
    per_node: np.ndarray  # GPUs per node (the scale-up domain a group can stay inside)
    tp: np.ndarray
    pp: np.ndarray
    cp: np.ndarray
    ep: np.ndarray
    vp: np.ndarray
    mb: np.ndarray  # sequences per micro-step (serving: requests in flight per replica)
    acc: np.ndarray  # micro-steps per optimizer step
    zero: np.ndarray
    recompute: np.ndarray  # 0 none, 1 selective, 2 full
    offload: np.ndarray
    fused: np.ndarray
    # LoRA's frozen base; a row may leave these out (serving and full training have none):
    base: np.ndarray  # its format, an index into BASE_FORMATS (0: 16 bits)
    frozen_offload: np.ndarray  # 1: held on the host and streamed to the GPU each pass

    @property
    def dp(self) -> np.ndarray:
        return self.gpus // (self.tp * self.pp * self.cp)

    def __len__(self) -> int:
        return int(self.tp.shape[0])

    def choice(self, i: int) -> LayoutChoice:
        """Layout `i` as the plain model reports carry."""
        gpus, per_node = int(self.gpus[i, 0]), int(self.per_node[i, 0])
        return LayoutChoice(nodes=-(-gpus // per_node), **{
            knob: _chosen(knob, int(getattr(self, _COLUMNS.get(knob, knob))[i, 0]))
            for knob in _KNOBS})

    def knobs_changed(self, c: LayoutChoice, knobs: Iterable[str]) -> np.ndarray:
        """For every layout, how many of `knobs` (LayoutChoice fields) differ from `c`'s: what
        comparing `self.choice(i)` with `c` knob by knob counts, without making the
        choices (a re-tune's smallest change weighs hundreds of layouts)."""
        counts = np.zeros(len(self), dtype=np.int64)
        for knob in knobs:
            counts += self._as_chosen(knob) != getattr(c, knob)
        return counts

    def _as_chosen(self, knob: str) -> np.ndarray:
        """A LayoutChoice field over every layout, as `choice` reads it from the columns."""
        column = getattr(self, _COLUMNS.get(knob, knob))[:, 0]
        if knob in _NAMED:
            return np.asarray(_NAMED[knob], dtype=object)[column]
        return column != 0 if knob in _FLAGS else column

    def take(self, idx: np.ndarray) -> Grid:
        return Grid(**{f.name: getattr(self, f.name)[idx] for f in fields(self)})


_COLUMNS = {"micro_batch": "mb", "accumulation": "acc", "zero_stage": "zero",
            "offload_optimizer": "offload", "fused_kernels": "fused", "base_format": "base",
            "offload_frozen_weights": "frozen_offload"}
"""The Grid column of each LayoutChoice field named otherwise (`choice` reads them)."""
_NAMED = {"recompute": RECOMPUTE, "base_format": BASE_FORMATS}
_FLAGS = frozenset({"offload_optimizer", "fused_kernels", "offload_frozen_weights"})
_KNOBS = tuple(k for k in LayoutChoice.model_fields if k != "nodes")
"""Every LayoutChoice field read from a column (`nodes` is derived from gpus and per_node)."""


def _chosen(knob: str, value: int) -> int | bool | str:
    """One column's value as the LayoutChoice field `knob` holds it."""
    if knob in _NAMED:
        return _NAMED[knob][value]
    return bool(value) if knob in _FLAGS else value


def stack(a: Grid, b: Grid) -> Grid:
    """The layouts of `a`, then those of `b`."""
    return Grid(**{f.name: np.concatenate([getattr(a, f.name), getattr(b, f.name)])
                   for f in fields(Grid)})


def row_of(c: LayoutChoice, per_node: int, *, gpus: int | None = None, mb: int | None = None,
           acc: int | None = None) -> tuple[int, ...]:
    """A reported layout as a Grid row (the inverse of `Grid.choice`), with the GPU count,
    sequences per micro-step or micro-steps changed where given."""
    return (c.gpus if gpus is None else gpus, per_node, c.tp, c.pp, c.cp, c.ep, c.vp,
            c.micro_batch if mb is None else mb, c.accumulation if acc is None else acc,
            c.zero_stage, RECOMPUTE.index(c.recompute), int(c.offload_optimizer),
            int(c.fused_kernels), BASE_FORMATS.index(c.base_format), int(c.offload_frozen_weights))


def grid_of(rows: list[tuple[int, ...]]) -> Grid:
    """Rows as columns; a row without the frozen-base columns holds none (zeros)."""
    names = [f.name for f in fields(Grid)]
    a = np.asarray([(*r, *(0,) * (len(names) - len(r))) for r in rows],
                   dtype=np.int64).reshape(-1, len(names))
    return Grid(**{n: a[:, i].reshape(-1, 1) for i, n in enumerate(names)})


def as_run(w: Workload) -> Grid:
    """The one layout the user runs today."""
    return grid_of([(w.gpus, w.gpus_per_node, w.tp, w.pp, w.cp, w.ep, w.vp, w.micro_batch,
                   w.accumulation if w.training else 1, w.zero_stage,
                   RECOMPUTE.index(w.recompute), int(w.offload_optimizer),
                   int(w.fused_kernels), BASE_FORMATS.index(w.base_format),
                   int(w.offload_frozen_weights))])


def _pow2_upto(n: int) -> list[int]:
    out, k = [], 1
    while k <= n:
        out.append(k)
        k *= 2
    return out


def _divisors(n: int, cap: int) -> list[int]:
    return [d for d in range(1, min(n, cap) + 1) if n % d == 0]


def _pow2_divisors(n: int, cap: int) -> list[int]:
    return [d for d in _pow2_upto(min(n, cap)) if n % d == 0] or [1]


def training_candidates(w: Workload, gpus: int, per_node: int, domain: int,
                        bases: tuple[tuple[int, int], ...] | None = None) -> Grid:
    """Every layout worth trying for training `w` on `gpus` GPUs at the workload's global batch.

    TP, EP and CP stay inside the scale-up domain (TP within it; CP x TP and EP x TP
    within it or across nodes for CP); PP takes what is left. Micro-batch and
    accumulation keep the global batch; ZeRO, recompute and offload go from the
    fastest to the most memory-saving. A LoRA's frozen base is held as the workload says,
    or each of `bases` ((format index, offloaded) pairs) instead. The search is bounded by
    construction.
    """
    held = bases or ((BASE_FORMATS.index(w.base_format), int(w.offload_frozen_weights)),)
    domain = max(1, min(domain, per_node, gpus))
    framework = framework_of(w.framework, w.training, w.zero_stage)[0]
    parallel = PARALLEL[framework]
    eps = _ep_degrees(w, parallel)
    rows: list[tuple[int, ...]] = []
    for tp, pp, cp in product(_tp_degrees(w, gpus, per_node, domain, parallel),
                              _pp_degrees(w, gpus, parallel), _cp_degrees(w, gpus, parallel)):
        if gpus % (tp * pp * cp):
            continue
        dp = gpus // (tp * pp * cp)
        levels = MEMORY_LEVELS[framework] if dp > 1 else SINGLE_RANK_LEVELS
        rows += [(gpus, per_node, tp, pp, cp, ep, vp, mb, acc, z, r, o, 1, b, f)
                 for ep, mb, acc, vp in _within_group(w, dp, pp, eps)
                 for b, f in held for z, r, o in levels]
    if len(rows) > MAX_LAYOUTS:  # keep the search bounded: an even, deterministic subset
        rows = rows[:: -(-len(rows) // MAX_LAYOUTS)]
    if not rows:  # the global batch does not split over this many GPUs: give each rank one
        rows += [(gpus, per_node, 1, 1, 1, 1, 1, 1, 1, 1 if gpus > 1 else 0, 2, 0, 1, b, f)
                 for b, f in held]
    return grid_of(rows)


def _tp_degrees(w: Workload, gpus: int, per_node: int, domain: int, parallel: bool) -> list[int]:
    """TP stays inside a node's scale-up domain, in powers of two that split the heads, the
    GPUs and a node; a framework without model parallelism has none."""
    return [t for t in _pow2_upto(min(domain, MAX_DEGREE) if parallel else 1)
            if w.model.heads % t == 0 and gpus % t == 0 and per_node % t == 0]


def _pp_degrees(w: Workload, gpus: int, parallel: bool) -> list[int]:
    """PP takes any divisor of the GPUs up to the layer count: an uneven layer split (80
    layers over 3 stages) is how 12 GPUs run a 70B model."""
    return _divisors(gpus, min(w.model.layers, MAX_DEGREE)) if parallel else [1]


def _cp_degrees(w: Workload, gpus: int, parallel: bool) -> list[int]:
    """CP in powers of two, at most one rank per 1,024 tokens of the shortest sequence, and
    only for sequences long enough to pay for it."""
    shortest = min(w.seq_lens)
    cap = min(MAX_DEGREE, gpus, max(1, shortest // 1024)) if parallel else 1
    return [c for c in _pow2_upto(cap) if c == 1 or shortest >= MIN_CP_SEQ]


def _ep_degrees(w: Workload, parallel: bool) -> list[int]:
    """EP in powers of two that split a mixture-of-experts model's experts; 1 for a dense
    model or a framework without model parallelism."""
    experts = w.model.experts
    if not (experts and parallel):
        return [1]
    return [e for e in _pow2_upto(min(experts, MAX_DEGREE)) if experts % e == 0]


def _within_group(w: Workload, dp: int, pp: int, eps: list[int]
                  ) -> list[tuple[int, int, int, int]]:
    """(EP, micro-batch, accumulation, VP) for one TP x PP x CP group with `dp` data-parallel
    ranks: EP splits the ranks, micro-batch times accumulation holds each rank's share of
    the global batch (padded up when it does not split: the re-tune prefers layouts that
    need no padding), and VP interleaves the pipeline."""
    per_rank = -(-w.sequences_per_step // dp)
    vps = _virtual_stages(w.model.layers // pp, pp)
    return [(ep, mb, per_rank // mb, vp)
            for ep in eps if dp % ep == 0
            for mb in _pow2_divisors(per_rank, MAX_MICRO_BATCH)
            for vp in vps]


def _virtual_stages(chunks: int, pp: int) -> list[int]:
    """No interleaving, and with a pipeline the most chunks per stage (up to the bound) that
    split its `chunks` layers evenly."""
    if pp == 1:
        return [1]
    return sorted({1, max(v for v in range(1, MAX_VIRTUAL_STAGES + 1) if chunks % v == 0)})


def serving_batches(w: Workload, stated: bool) -> list[int]:
    """Requests in flight to try: the user's when stated (a fixed concurrency, or prefill's
    batch), else the grid up to the engine's cap."""
    if stated or w.mode == "prefill":
        return [min(w.micro_batch, w.max_batch)]
    return [b for b in SERVING_BATCHES if b <= w.max_batch] or [w.max_batch]


def serving_layouts(w: Workload, gpus: int, per_node: int,
                    keep: frozenset[str] = frozenset()) -> list[tuple[int, int, int]]:
    """(TP, PP, EP) a serving engineer would try on `gpus` GPUs: TP inside a node (a power of
    two dividing the heads), PP across nodes for a model one node cannot hold, EP within the
    TP x PP group for mixture-of-experts, or wider than TP inside the node with each TP group
    an attention replica of its own (data-parallel attention); replicas fill the rest. A degree
    the user stated (`keep`) stays as stated."""
    m = w.model
    # TP across a node's GPUs even without NVLink: serving engines run TP over PCIe (the
    # all-reduce then goes at the host link's rate, which the engine charges)
    domain = max(1, min(per_node, gpus))
    tps = [w.tp] if "tp" in keep else [
        t for t in _pow2_upto(min(domain, MAX_DEGREE)) if m.heads % t == 0 and gpus % t == 0]
    out = []
    for tp in tps:
        pps = [w.pp] if "pp" in keep else [
            p for p in _divisors(gpus // tp, min(m.layers, MAX_DEGREE))
            if p == 1 or tp == domain or "tp" in keep]
        for pp in pps:
            if gpus % (tp * pp):
                continue
            eps = [w.ep] if "ep" in keep else (
                _divisors(m.experts, tp * pp) if m.experts else [1])
            if m.experts and pp == 1 and "ep" not in keep:  # data-parallel attention
                eps += [e for e in _divisors(m.experts, domain)
                        if e > tp and e % tp == 0 and gpus % e == 0]
            out += [(tp, pp, ep) for ep in eps if not m.experts or m.experts % ep == 0]
    return out or [(w.tp, w.pp, w.ep)]


def serving_candidates(w: Workload, gpus: int, per_node: int, layouts: list[tuple[int, int, int]],
                       batches: list[int]) -> Grid:
    """Every (TP, PP, EP) with every batch, as columns for the engine."""
    return grid_of([(gpus, per_node, tp, pp, 1, ep, 1, b, 1, 0, 0, 0, 1)
                  for tp, pp, ep in layouts for b in batches])
