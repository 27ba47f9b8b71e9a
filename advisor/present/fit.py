"""Which columns of a table a width holds, and how wide each is drawn: the CLI's text and
the wizard's tables leave out the same columns, in the same order.

A number column, and the first (the row's name), is never narrower than its widest cell: a
figure is shown whole or its column is left out, never cut into another number. A text
column wraps between words, never below its longest word (up to `LONGEST_WORD`
characters). When the columns cannot all fit, the ones the table marks droppable go first
(highest `drop` first), then the others from the right, never the first; the caller names
every column left out. A first column of text wider than the whole width, the one column
left, wraps between its words.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from advisor.core import clean
from advisor.present.blocks import Table

GAP = 3
"""Between two columns: a padding cell each side of the box's blank divider."""
LONGEST_WORD = 18
"""A text column is never squeezed below its longest word, up to this many characters."""
Measure = Callable[[str], int]
"""The cells a string takes on screen (the drawing toolkit's: wide characters take two)."""


@dataclass(frozen=True)
class Fit:
    keep: list[int]
    """The columns drawn, by index, in the table's order."""
    widths: list[int]
    """The width of each kept column, in cells."""
    whole: list[bool]
    """Whether each kept column is drawn unwrapped."""
    left_out: list[int]
    """The columns left out, in the order they went."""


def whole(t: Table, i: int) -> bool:
    """Column `i` is never wrapped: number columns and the first, unless it says otherwise."""
    col = t.cols[i]
    return col.whole if col.whole is not None else (col.numeric or i == 0)


def fit(t: Table, width: int, measure: Measure = len) -> Fit:
    """The columns of `t` that `width` holds and their widths (see the module's rules)."""
    keep = list(range(len(t.cols)))
    kept_whole = [whole(t, i) for i in keep]
    least = [_least(t, i, kept_whole[i], measure) for i in keep]
    left_out: list[int] = []

    def needed() -> int:
        return sum(least[i] for i in keep) + GAP * (len(keep) - 1)

    while needed() > width and len(keep) > 1:
        droppable = [i for i in keep if t.cols[i].drop > 0]
        victim = max(droppable, key=lambda i: (t.cols[i].drop, i)) if droppable else keep[-1]
        keep.remove(victim)
        left_out.append(victim)
    if needed() > width and not t.cols[0].numeric:  # the first column alone is too wide
        kept_whole[0] = False
        least[0] = _least(t, 0, False, measure)
    return Fit(keep=keep, widths=_widths(t, keep, least, width, measure),
               whole=[kept_whole[i] for i in keep], left_out=left_out)


def _widths(t: Table, keep: Sequence[int], least: Sequence[int], width: int,
            measure: Measure) -> list[int]:
    """Every kept column at its natural width when they fit, else each text column grown
    from its least width, the one short of its natural width by most first."""
    natural = {i: max(least[i], _natural(t, i, measure)) for i in keep}
    room = width - GAP * (len(keep) - 1)
    if sum(natural.values()) <= room:
        return [natural[i] for i in keep]
    widths = {i: min(least[i], room) for i in keep}
    spare = room - sum(widths.values())
    while spare > 0:
        short = max(keep, key=lambda i: natural[i] - widths[i])
        if natural[short] <= widths[short]:
            break
        widths[short] += 1
        spare -= 1
    return [widths[i] for i in keep]


def _texts(t: Table, i: int) -> list[str]:
    col = t.cols[i]
    return [clean(col.header), clean(col.unit),
            *(clean(row[i]) for row in t.rows if i < len(row))]


def _natural(t: Table, i: int, measure: Measure) -> int:
    return max(measure(text) for text in _texts(t, i))


def _least(t: Table, i: int, unwrapped: bool, measure: Measure) -> int:
    """The narrowest column `i` can be: unwrapped, its widest cell; else its longest word."""
    if unwrapped:
        return _natural(t, i, measure)
    words = [measure(w) for text in _texts(t, i) for w in text.split()]
    return min(LONGEST_WORD, max(words, default=1))
