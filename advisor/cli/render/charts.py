"""The two charts a shared decision carries: speedup by sequence length, one bar per point
(rich's Bar), and time against cost for the GPU-count sweep, one mark per configuration."""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.cli.render.blocks import Figure
from advisor.present.humanize import axis, duration, usd
from advisor.present.words import Dialect, asked

if TYPE_CHECKING:
    from advisor.core import ConfigSweep, Decision

BAR_WIDTH = 28
MARKS = "ox+*#@%&"


def speedup_chart(d: Decision) -> Figure:
    """Each target's speedup over the current GPU at every swept sequence length, its band
    and what binds it; a point that cannot run says why instead of drawing a bar."""
    from rich.bar import Bar
    from rich.table import Table
    from rich.text import Text

    from advisor.core import clean

    highs = [p.speedup_high or p.speedup or 0.0 for t in d.targets for p in t.sweep]
    scale = max([2.0, *highs])
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(width=BAR_WIDTH, no_wrap=True)
    grid.add_column(overflow="fold")
    for t in d.targets:
        for i, (cur, p) in enumerate(zip(d.current.sweep, t.sweep, strict=False)):
            name = Text(clean(t.gpu) if i == 0 else "")  # Text: data is never markup
            if p.speedup is None:
                grid.add_row(name, f"{p.seq_len:,}", "",
                             Text(clean(d.why_unprojected(t, p, cur))))
                continue
            colour = "green" if p.speedup >= 1 else "yellow"
            span = (f" ({p.speedup_low:.2f}-{p.speedup_high:.2f})"
                    if p.speedup_low is not None and p.speedup_high is not None else "")
            grid.add_row(name, f"{p.seq_len:,}", Bar(scale, 0, p.speedup, width=BAR_WIDTH,
                                                     color=colour),
                         Text(f"{p.speedup:.2f}x{span} {p.binding or ''}".rstrip()))
    return Figure(f"Speedup over {d.current.gpu} by sequence length (tokens)", grid,
                  notes=[f"a full bar is {scale:.1f}x; the band is 90%; the word after it is "
                         "the resource that binds"])


def cost_chart(sweep: ConfigSweep, dialect: Dialect, width: int = 48, height: int = 10
               ) -> Figure:
    """Wall-clock (log scale) against job cost, one mark per GPU type; upper case is on
    the Pareto front over time, $ and kW, and `!` is the pick."""
    from rich.text import Text

    from advisor.core import clean

    priced = [p for p in sweep.points if p.usd is not None]
    if not priced:
        return Figure("Time against cost",
                      Text(asked("no configuration has a price", "price", dialect)))
    mark = {g: MARKS[i % len(MARKS)] for i, g in enumerate(sweep.gpus)}
    x = axis([p.eta_days for p in priced], width, log=True)
    y = axis([p.usd or 0.0 for p in priced], height, log=False)
    best = sweep.choice.best or sweep.choice.closest_miss
    grid: list[list[tuple[int, str, str]]] = [[(0, " ", "")] * width for _ in range(height)]
    for p in priced:
        rank, glyph, style = 1, mark[p.gpu], "dim"
        if p.pareto:
            rank, glyph, style = 2, glyph.upper(), "bold"
        if p == best:
            rank, glyph, style = 3, "!", "bold green"
        row, col = height - 1 - y(p.usd or 0.0), x(p.eta_days)
        if rank > grid[row][col][0]:
            grid[row][col] = (rank, glyph, style)
    costs = [p.usd or 0.0 for p in priced]
    days = [p.eta_days for p in priced]
    top, bottom = usd(max(costs)), usd(min(costs))
    pad = max(len(top), len(bottom))
    body = Text()
    for i, cells in enumerate(grid):
        label = top if i == 0 else bottom if i == height - 1 else ""
        body.append(f"{label.rjust(pad)} |", style="dim")
        for _, glyph, style in cells:
            body.append(glyph, style=style)
        body.append("\n")
    lo, hi = duration(min(days) * 24), duration(max(days) * 24)
    body.append(f"{'':>{pad}} +{'-' * width}\n", style="dim")
    body.append(f"{'':>{pad}}  {lo}{'wall-clock'.center(max(1, width - len(lo) - len(hi)))}{hi}",
                style="dim")
    legend = ", ".join(f"{m} {clean(g)}" for g, m in mark.items())
    return Figure("Time against cost, one mark per configuration", body,
                  notes=[f"{legend}; upper case: on the Pareto front (time, $, kW); ! the "
                         "pick; time on a log scale"])



def interactivity_chart(d: Decision, width: int = 50, height: int = 12) -> Figure | None:
    """Tokens/s per GPU against tokens/s per user, one mark per GPU along its curve (the
    re-tuned layouts no other beats on both); `|` marks the interactivity target."""
    from rich.text import Text

    from advisor.core import clean
    from advisor.present.plot import scatter

    results = [r for r in (d.current, *d.targets) if r.curve]
    mark = {r.gpu: MARKS[i % len(MARKS)] for i, r in enumerate(results)}
    target = d.answers.workload.min_tokens_per_user
    plot = scatter({r.gpu: [(c.tokens_per_s_per_user, c.tokens_per_s_per_gpu) for c in r.curve]
                    for r in results}, width, height, target)
    if plot is None:
        return None
    pad = max(len(plot.y_top), len(plot.y_bottom))
    body = Text()
    for i, cells in enumerate(plot.cells):
        label = plot.y_top if i == 0 else plot.y_bottom if i == height - 1 else ""
        body.append(f"{label.rjust(pad)} |", style="dim")
        body.append("".join(mark.get(c, c or " ") for c in cells))
        body.append("\n")
    lo, hi = plot.x_left, plot.x_right
    body.append(f"{'':>{pad}} +{'-' * width}\n", style="dim")
    body.append(f"{'':>{pad}}  {lo}{'tokens/s per user'.center(max(1, width - len(lo) - len(hi)))}"
                f"{hi}", style="dim")
    legend = ", ".join(f"{m} {clean(g)}" for g, m in mark.items())
    return Figure(f"Tokens/s per GPU against tokens/s per user at {d.primary_seq_len:,} tokens",
                  body, notes=[f"{legend}; up is more per GPU, right is faster for each user"
                               + ("; | your target" if target is not None else "")])
