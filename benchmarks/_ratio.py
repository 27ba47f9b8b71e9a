"""Benchmark figures as ratios against a reference measured in the same run.

Absolute times say more about the box and its load than about advisor: a loaded CI
runner makes every figure slower, and no fixed budget means anything there. So each
benchmark times a reference (the same kind of work done by the smallest thing that does
it) interleaved with its subject, and reports subject / reference: the min ratio is the
best case of each, the median ratio the typical one.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Sequence


def installed_env(**extra: str) -> dict[str, str]:
    """The environment for a timed child process, with bytecode caching on, as an installed
    advisor runs (pip compiles a wheel's modules at install): a PYTHONDONTWRITEBYTECODE in
    this one would have every child compile advisor's modules from source, which the
    libraries it is compared with (installed with their bytecode) never do."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, **extra}

def interleaved(subject: Callable[[], float], reference: Callable[[], float],
                runs: int) -> tuple[list[float], list[float]]:
    """`runs` timings of each, alternating, so that load changes hit both alike."""
    subj: list[float] = []
    ref: list[float] = []
    for _ in range(runs):
        ref.append(reference())
        subj.append(subject())
    return subj, ref


def ratios(subj: Sequence[float], ref: Sequence[float]) -> tuple[float, float]:
    """(min / min, median / median)."""
    return min(subj) / min(ref), statistics.median(subj) / statistics.median(ref)


def line(label: str, subj: Sequence[float], ref: Sequence[float], unit: float = 1e3,
         suffix: str = "ms") -> str:
    lo, mid = ratios(subj, ref)
    return (f"{label}: {lo:.2f}x min, {mid:.2f}x median of the reference "
            f"(here: {min(subj) * unit:.1f} / {statistics.median(subj) * unit:.1f} {suffix} "
            f"vs {min(ref) * unit:.1f} / {statistics.median(ref) * unit:.1f} {suffix})")
