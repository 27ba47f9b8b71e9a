"""Text charts that need no plotting library: speedup bars per sequence length."""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.tui.forms import format_seq_lens

if TYPE_CHECKING:
    from advisor.core.decide import Decision

EIGHTHS = " ▏▎▍▌▋▊▉"


def bar(value: float, scale: float, width: int) -> str:
    """A horizontal bar `value / scale` of `width` cells, in eighth-cell steps."""
    cells = max(0.0, min(1.0, value / scale)) * width
    full = int(cells)
    part = EIGHTHS[int((cells - full) * 8)]
    return ("█" * full + (part if full < width else "")).ljust(width)


def speedup_chart(decision: Decision, width: int = 16) -> str:
    """Speedup over the current GPU against sequence length, one block per target (markup).

    The dim tick marks 1×: bars past it are faster than today. Points where
    either GPU does not fit say so instead of drawing a bar.
    """
    values = [p.speedup_high or p.speedup or 0.0 for t in decision.targets for p in t.sweep]
    scale = max([2.0, *values])
    one = round(width / scale)
    lines = [f"[b]Speedup[/b] over {decision.current.gpu}",
             f"[dim]by seq length; ┆ = 1×, full bar = {scale:.1f}×[/]"]
    for t in decision.targets:
        lines.append(f"[b]{t.gpu}[/b]")
        for cur, p in zip(decision.current.sweep, t.sweep, strict=True):
            label = format_seq_lens((p.seq_len,)).rjust(6)
            if p.speedup is None:
                why = ("does not fit" if not p.fits else
                       f"{decision.current.gpu} does not fit" if not cur.fits else "not projected")
                lines.append(f"{label} [dim]{why}[/]")
                continue
            drawn = bar(p.speedup, scale, width)
            drawn = drawn[:one] + ("[dim]┆[/]" if drawn[one:one + 1] == " " else drawn[one]) \
                + drawn[one + 1:]
            colour = "$success" if p.speedup >= 1 else "$warning"
            band = (f" [dim]{p.speedup_low:.2f}–{p.speedup_high:.2f}[/]"
                    if p.speedup_low is not None and p.speedup_high is not None else "")
            lines.append(f"{label} [{colour}]{drawn}[/] {p.speedup:.2f}×{band}")
    return "\n".join(lines)
