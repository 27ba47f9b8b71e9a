"""Buying the speed back: how many more of the current GPU match a target's throughput.

A larger data-parallel group spends longer in the gradient all-reduce and may cross
nodes, so per-GPU throughput drops: that drop is the communication penalty. The
current GPU keeps its re-tuned layout and adds data-parallel replicas; every count is
projected by the one engine in a single pass, and the search is bounded.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict

from advisor.core.economics.cost import PriceQuote, usd_per_mtok
from advisor.core.model.layout import LayoutChoice
from advisor.core.model.workload import Workload
from advisor.core.projection.calibration import CAL, Calibration
from advisor.core.projection.engine import project
from advisor.core.projection.layout import grid_of, row_of
from advisor.core.projection.rates import GpuRates
from advisor.core.sides import nodes_for

MAX_FACTOR = 64  # search at most this many times the current GPU count


class BuyBack(BaseModel):
    """Matching a target's cluster throughput with more of the current GPU."""

    model_config = ConfigDict(frozen=True)

    gpus: int | None  # None: cannot be matched within the search or the batch
    nodes: int | None
    tokens_per_s_per_gpu: float | None
    comm_penalty: float | None  # per-GPU throughput lost against the current count
    usd_per_mtok: float | None
    power_kw: float | None
    note: str


def buy_back(w: Workload, rates: GpuRates, layout: LayoutChoice, seq_len: int,
             target_cluster_tokens_per_s: float, price: PriceQuote | None,
             power_w: float | None, cal: Calibration = CAL) -> BuyBack:
    """The fewest current GPUs, in whole data-parallel replicas, matching the target."""
    group = layout.tp * layout.pp * layout.cp
    dp0 = layout.gpus // group
    per_node = max(1, min(w.gpus_per_node, layout.gpus))
    fixed = w.training and w.global_batch is not None
    per_rank = layout.micro_batch * layout.accumulation
    factors = [f for f in range(1, MAX_FACTOR + 1)
               if not (fixed and per_rank % f) and (dp0 * f) % max(layout.ep, 1) == 0]
    rows = []
    for f in factors:
        n = dp0 * f * group
        acc = layout.accumulation // f if fixed else layout.accumulation
        rows.append(row_of(layout, per_node, gpus=n, acc=max(acc, 1)))
    grid = grid_of(rows)
    p = project(w, rates, grid, [seq_len], cal)
    per_gpu = p.tokens_per_s[:, 0]
    base = float(per_gpu[0])
    cluster = per_gpu * grid.gpus[:, 0]
    hit = np.nonzero(cluster >= target_cluster_tokens_per_s)[0]
    if not len(hit):
        why = (f": a global batch of {w.sequences_per_step} sequences caps data parallelism"
               if fixed else "")
        return BuyBack(gpus=None, nodes=None, tokens_per_s_per_gpu=None, comm_penalty=None,
                       usd_per_mtok=None, power_kw=None,
                       note=f"more of the current GPU cannot match it{why} (searched up to "
                            f"{MAX_FACTOR}x the data-parallel size)")
    i = int(hit[0])
    n, rate = int(grid.gpus[i, 0]), float(per_gpu[i])
    nodes = nodes_for(n, per_node)
    return BuyBack(
        gpus=n, nodes=nodes, tokens_per_s_per_gpu=rate,
        comm_penalty=max(0.0, 1.0 - rate / base) if base > 0 else None,
        usd_per_mtok=usd_per_mtok(price.usd_per_hour, rate) if price else None,
        power_kw=power_w * n / 1000.0 if power_w is not None else None,
        note=f"{n} GPUs on {nodes} node(s), the same layout with more data-parallel replicas"
             + (f", global batch kept at {w.sequences_per_step} sequences" if fixed else ""))
