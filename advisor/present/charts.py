"""The charts a decision carries, as data both front ends draw (`advisor.present.plot`):
speedup by sequence length, one bar per point; time against cost for the GPU-count sweep,
one mark per configuration; and, serving, tokens/s per GPU against tokens/s per user."""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.present.blocks import FRONT, PICK, Bar, BarChart, Point, Scatter
from advisor.present.humanize import duration, usd
from advisor.present.words import Dialect, asked

if TYPE_CHECKING:
    from advisor.core import ConfigPoint, ConfigSweep, Decision

RESOURCE_SHORT = {"compute": "compute", "memory": "HBM", "network": "network", "host": "host",
                  "capacity": "capacity"}
"""What binds a step, in a table cell or after a bar (HBM: memory bandwidth)."""


def bound_by(binding: str | None) -> str:
    return RESOURCE_SHORT.get(binding or "", binding or "")


def speedup_chart(d: Decision) -> BarChart:
    """Each target's speedup over the current GPU at every swept sequence length, its band
    and what binds it; a point that cannot run says why instead of drawing a bar."""
    highs = [p.speedup_high or p.speedup or 0.0 for t in d.targets for p in t.sweep]
    scale = max([2.0, *highs])
    bars = []
    for t in d.targets:
        for cur, p in zip(d.current.sweep, t.sweep, strict=False):
            at = f"{p.seq_len:,}"
            bars.append(Bar(t.gpu, at, note=d.why_unprojected(t, p, cur)) if p.speedup is None
                        else Bar(t.gpu, at, p.speedup, p.speedup_low, p.speedup_high,
                                 word=bound_by(p.binding)))
    return BarChart(f"Speedup over {d.current.gpu} by sequence length (tokens)", bars, scale,
                    notes=[f"a full bar is {scale:.1f}x; the band is 90%; the word after it is "
                           "the resource that binds"])


def point_key(p: ConfigPoint) -> str:
    """A configuration's key: its chart mark's, and its row's where a table is keyed."""
    return f"{p.gpu}:{p.gpus}"


def cost_chart(sweep: ConfigSweep, dialect: Dialect) -> Scatter:
    """Wall-clock (log scale) against job cost, one mark per GPU type; the configurations on
    the Pareto front over time, $ and kW stand out, the pick most; the deadline is a line."""
    priced = [p for p in sweep.points if p.usd is not None]
    if not priced:
        return Scatter("Time against cost", sweep.gpus, [],
                       notes=[asked("no configuration has a price", "price", dialect)])
    best = sweep.choice.best or sweep.choice.closest_miss
    series = {g: i for i, g in enumerate(sweep.gpus)}
    points = [Point(series[p.gpu], p.eta_days, p.usd or 0.0,
                    PICK if p == best else FRONT if p.pareto else 0, key=point_key(p))
              for p in priced]
    costs = [p.y for p in points]
    days = [p.x for p in points]
    return Scatter("Time against cost, one mark per configuration", sweep.gpus, points,
                   x_title="wall-clock",
                   x_labels=(duration(min(days) * 24), duration(max(days) * 24)),
                   y_labels=(usd(min(costs)), usd(max(costs))), x_log=True,
                   mark_x=sweep.choice.deadline_days, mark_label="the deadline",
                   notes=["time on a log scale"])


def interactivity_chart(d: Decision) -> Scatter | None:
    """Tokens/s per GPU against tokens/s per user, one mark per GPU along its curve (the
    re-tuned layouts no other beats on both); a line marks the interactivity target."""
    results = [r for r in (d.current, *d.targets) if r.curve]
    points = [Point(i, c.tokens_per_s_per_user, c.tokens_per_s_per_gpu)
              for i, r in enumerate(results) for c in r.curve]
    if not points:
        return None
    xs, ys = [p.x for p in points], [p.y for p in points]
    return Scatter(
        f"Tokens/s per GPU against tokens/s per user at {d.primary_seq_len:,} tokens",
        [r.gpu for r in results], points, x_title="tokens/s per user",
        x_labels=(f"{min(xs):,.0f}", f"{max(xs):,.0f}"),
        y_labels=(f"{min(ys):,.0f}", f"{max(ys):,.0f}"),
        mark_x=d.answers.workload.min_tokens_per_user, mark_label="your target",
        notes=["up is more per GPU, right is faster for each user"], width=50, height=12)
