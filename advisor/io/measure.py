"""Whether this box can run the probes, and what to say when it cannot.

The probes (`advisor.probes`, the repo's `probes/`) need torch, which advisor itself does
not: installing advisor gives the whole wizard on catalog figures and never pulls CUDA
onto a box without a GPU; its `probe` extra (`gpu-upgrade-advisor[probe]`: advisor's
distribution name, the index's `advisor` is another project), or the user's own training
environment, has torch. Finding torch's spec imports nothing.
"""

from __future__ import annotations

import importlib.util

TORCH_MISSING = ("torch is not installed here: install gpu-upgrade-advisor[probe] or torch to "
                 "measure this box")


def torch_missing() -> str | None:
    """The one line to show when the probes cannot run here, else None."""
    try:
        found = importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):  # a broken or half-removed install
        found = False
    return None if found else TORCH_MISSING
