"""What a long-running command keeps for its session, moved out of the cycle collector's
sight.

A full collection walks every tracked object. In the wizard (Textual, the catalog, the
engine's modules and a few built steps) that is some 250,000 objects, and one full
collection took 110-200 ms on a 2-core box: it fell inside a step change as often as not
(Software gate -> Probes took 300 ms on a revisit). What arrives once and stays (imported
modules, the catalog, the engine's schemas, a built step) is frozen as it arrives
(`gc.freeze`), so a collection walks only what came since. The young generations are
collected first, which is cheap: garbage that has already reached the old generation is
kept, and there is little of it right after a load or a build. The cost, measured over
four laps of every step change and back: the wizard held 6 MB more, and grew about 1 MB a
lap more than without freezing (widgets recomposed after their step was frozen).

Short commands run without the collector at all (`advisor.__main__`); the wizard and the
probes turn it back on through `collect_cycles_from_here`.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def loading_for_the_session() -> Iterator[None]:
    """Around a load whose objects all stay (a resumed report, with the engine's models and
    numpy): no collection runs while it loads, then what it loaded is kept for the session.

    Each collection during such a load walks objects that will never be garbage; a full one
    walks all of Textual's as well, and a resume ran one (with some 90 young ones) in the
    load, 50-60 ms of its CPU. One young collection at the end (`keep_for_the_session`)
    frees what the load left over. Only for a load on the main thread before the app runs:
    the collector is off for the whole process meanwhile."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        keep_for_the_session()
        if was_on:
            gc.enable()


def keep_for_the_session() -> None:
    """Call once what was just loaded or built is meant to stay until the command ends."""
    gc.collect(1)
    gc.freeze()


def collect_cycles_from_here() -> None:
    """A command that stays (the wizard, the probes) turns the cycle collector back on if
    the program's entry turned it off, with what was imported until then kept for the
    session, so the first collection does not walk all of it."""
    if not gc.isenabled():
        keep_for_the_session()
        gc.enable()
