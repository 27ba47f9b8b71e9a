"""What the wizard keeps for the whole session, moved out of the cycle collector's sight.

A full collection walks every tracked object. With Textual, the catalog, the engine's
modules and a few built steps that is some 250,000 objects, and one full collection took
110-200 ms on a 2-core box: it fell inside a step change as often as not (Software gate ->
Probes took 300 ms on a revisit). What arrives once and stays (the catalog, the engine's
modules and schemas, a built step) is frozen as it arrives (`gc.freeze`), so a collection
walks only what came since. The young generations are collected first, which is cheap:
garbage that has already reached the old generation is kept, and there is little of it
right after a load or a build. The cost, measured over four laps of every step change and
back: the process held 6 MB more, and grew about 1 MB a lap more than without freezing
(widgets recomposed after their step was frozen).
"""

from __future__ import annotations

import gc


def keep_for_the_session() -> None:
    """Call once what was just loaded or built is meant to stay until the wizard closes."""
    gc.collect(1)
    gc.freeze()
