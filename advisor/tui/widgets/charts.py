"""Text charts that need no plotting library: speedup bars per sequence length, and time
against cost for the configuration sweep."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.markup import escape

from advisor.present.humanize import axis
from advisor.present.words import asked
from advisor.tui.numbers import format_seq_lens

if TYPE_CHECKING:
    from advisor.core import ConfigSweep, Decision

EIGHTHS = " ▏▎▍▌▋▊▉"


def bar(value: float, scale: float, width: int) -> str:
    """A horizontal bar `value / scale` of `width` cells, in eighth-cell steps."""
    cells = max(0.0, min(1.0, value / scale)) * width
    full = int(cells)
    part = EIGHTHS[int((cells - full) * 8)]
    return ("█" * full + (part if full < width else "")).ljust(width)


def speedup_chart(decision: Decision, width: int = 16) -> str:
    """Speedup over the current GPU against sequence length, one block per target (markup).

    The dim tick marks 1x: bars past it are faster than today. Points where
    either GPU does not fit say so instead of drawing a bar.
    """
    values = [p.speedup_high or p.speedup or 0.0 for t in decision.targets for p in t.sweep]
    scale = max([2.0, *values])
    one = round(width / scale)
    lines = [f"[b]Speedup[/b] over {decision.current.gpu}",
             f"[dim]by seq length; ┆ = 1x, full bar = {scale:.1f}x[/]"]
    for t in decision.targets:
        lines.append(f"[b]{t.gpu}[/b]")
        for cur, p in zip(decision.current.sweep, t.sweep, strict=True):
            label = format_seq_lens((p.seq_len,)).rjust(6)
            if p.speedup is None:
                lines.append(f"{label} [dim]{decision.why_unprojected(t, p, cur)}[/]")
                continue
            drawn = bar(p.speedup, scale, width)
            drawn = drawn[:one] + ("[dim]┆[/]" if drawn[one:one + 1] == " " else drawn[one]) \
                + drawn[one + 1:]
            colour = "$success" if p.speedup >= 1 else "$warning"
            band = (f" [dim]{p.speedup_low:.2f}-{p.speedup_high:.2f}[/]"
                    if p.speedup_low is not None and p.speedup_high is not None else "")
            lines.append(f"{label} [{colour}]{drawn}[/] {p.speedup:.2f}x{band}")
    return "\n".join(lines)


MARKS = "◆■▲▼✚✖"
COLOURS = ("$accent", "$success", "$primary", "$error", "$foreground", "$secondary")


def _money(usd: float) -> str:
    return f"${usd / 1e6:,.2f}M" if usd >= 1e6 else f"${usd / 1e3:,.1f}k" if usd >= 1e3 \
        else f"${usd:,.0f}"


def config_chart(sweep: ConfigSweep, highlight: str | None = None, width: int = 40,
                 height: int = 8) -> str:
    """Time against cost, one mark per configuration (markup): the trade-off at a glance.

    Time is on a log scale, so each doubling of GPUs is a similar step. Bright
    marks are on the Pareto front, dim ones are beaten on time, $ and kW at once;
    ★ is the pick and the highlighted table row is drawn reversed.
    """
    priced = [p for p in sweep.points if p.usd is not None]
    if not priced:
        said = escape(asked("no configuration has a price", "price", "wizard"))
        return f"[b]Time vs cost[/b]\n[dim]{said}[/]"
    glyph = {g: (MARKS[i % len(MARKS)], COLOURS[i % len(COLOURS)])
             for i, g in enumerate(sweep.gpus)}
    x = axis([p.eta_days for p in priced], width, log=True)
    y = axis([p.usd or 0.0 for p in priced], height, log=False)
    best = sweep.choice.best or sweep.choice.closest_miss
    grid: list[list[tuple[int, str]]] = [[(0, " ")] * width for _ in range(height)]
    deadline = sweep.choice.deadline_days
    days = [p.eta_days for p in priced]
    if deadline is not None and min(days) <= deadline <= max(days):
        for cells in grid:
            cells[x(deadline)] = (0, "[dim]┊[/]")
    for p in priced:
        mark, colour = glyph[p.gpu]
        key = f"{p.gpu}:{p.gpus}"
        if p == best:
            mark = "★"
        style = colour if p.pareto else f"dim {colour}"
        rank = 1 + p.pareto + 2 * (p == best)
        if key == highlight:
            style, rank = f"reverse {style}", 9
        line, col = height - 1 - y(p.usd or 0.0), x(p.eta_days)
        if rank > grid[line][col][0]:
            grid[line][col] = (rank, f"[{style}]{mark}[/]")
    costs = [p.usd or 0.0 for p in priced]
    top, bottom = _money(max(costs)), _money(min(costs))
    pad = max(len(top), len(bottom))
    lines = ["[b]Time vs cost[/b] [dim](time on a log scale)[/]"]
    for i, cells in enumerate(grid):
        label = top if i == 0 else bottom if i == height - 1 else ""
        lines.append(f"[dim]{label.rjust(pad)} │[/]" + "".join(cell for _, cell in cells))
    lo, hi = f"{min(days):,.1f} d", f"{max(days):,.1f} d"
    lines.append(f"[dim]{'':>{pad}} └{'─' * width}[/]")
    lines.append(f"[dim]{'':>{pad}}  {lo}{'ETA'.center(width - len(lo) - len(hi))}{hi}[/]")
    legend = "  ".join(f"[{c}]{m}[/] {g}" for g, (m, c) in glyph.items())
    lines.append(f"{legend}  ★ pick")
    lines.append("[dim]bright: Pareto front (time, $, kW)"
                 + ("; ┊ deadline" if deadline is not None else "") + "[/]")
    return "\n".join(lines)


def interactivity_chart(decision: Decision, width: int = 34, height: int = 9) -> str:
    """Serving: tokens/s per GPU against tokens/s per user along each GPU's curve (markup);
    empty for training or when no GPU has a curve."""
    from advisor.core import clean
    from advisor.present.plot import scatter

    results = [r for r in (decision.current, *decision.targets) if r.curve]
    target = decision.answers.workload.min_tokens_per_user
    plot = scatter({r.gpu: [(c.tokens_per_s_per_user, c.tokens_per_s_per_gpu) for c in r.curve]
                    for r in results}, width, height, target)
    if plot is None:
        return ""
    style = {r.gpu: (MARKS[i % len(MARKS)], COLOURS[i % len(COLOURS)])
             for i, r in enumerate(results)}
    pad = max(len(plot.y_top), len(plot.y_bottom))
    lines = ["[b]Tokens/s per GPU[/b] against per user",
             f"[dim]each GPU's re-tuned curve{'; ┆ your target' if target else ''}[/]"]
    for i, cells in enumerate(plot.cells):
        label = plot.y_top if i == 0 else plot.y_bottom if i == height - 1 else ""
        drawn = "".join(
            "[dim]┆[/]" if c == "|" else f"[{style[c][1]}]{style[c][0]}[/]" if c else " "
            for c in cells)
        lines.append(f"[dim]{label.rjust(pad)} │[/]{drawn}")
    span = width - len(plot.x_left) - len(plot.x_right)
    lines.append(f"[dim]{'':>{pad}} └{'─' * width}[/]")
    lines.append(f"[dim]{'':>{pad}}  {plot.x_left}{'per user'.center(max(1, span))}"
                 f"{plot.x_right}[/]")
    lines += [f"[{colour}]{mark}[/] {clean(gpu)}" for gpu, (mark, colour) in style.items()]
    return "\n".join(lines)
