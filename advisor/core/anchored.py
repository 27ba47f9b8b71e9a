"""The resolved sides anchored on the user's own run: one resolution every path reads.

What the user measured on the current GPU today (or a workload-probe record of it) fits
the current side's calibration (`projection.anchor`), and the part that is the user's
software carries to each target. The fitted calibration and rates are part of each
resolved side, so the verdict, the GPU-count sweep, the ranking, the buy-back line and
pipeline stages all project with them: an anchored verdict and its sweep cannot disagree
at the count the answers give.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from advisor.core.errors import InputError
from advisor.core.model.answers import Answers
from advisor.core.model.catalog import Catalog
from advisor.core.model.measured import MeasuredRun
from advisor.core.model.probe_record import ProbeRecord
from advisor.core.model.workload import Workload
from advisor.core.projection.anchor import apply, fit, from_probe
from advisor.core.projection.calibration import CAL, SOURCE_SIGMA, Calibration
from advisor.core.projection.layout import Grid, as_run, grid_of, row_of
from advisor.core.projection.rates import GpuRates
from advisor.core.projection.retune import memory_margin
from advisor.core.result import AnchorReport
from advisor.core.sides import ResolvedSide, resolve_sides


@dataclass(frozen=True)
class Resolution:
    """The sides every path reads, the model's own beside them, and the anchor."""

    sides: list[ResolvedSide]  # anchored where there is a measurement
    modelled: list[ResolvedSide]  # the model alone (the same list without a measurement)
    anchor: AnchorReport | None
    unused: str | None  # why a workload probe was not used


def _measurement(answers: Answers, cur: ResolvedSide, workload_probe: ProbeRecord | None,
                 cal: Calibration) -> tuple[MeasuredRun, Workload, Grid] | str:
    """What the current side is anchored on, the workload it was measured with and that
    layout: the user's figure (their layout), else a workload-probe record (one device)."""
    assert cur.projection is not None
    m = answers.measured
    if m is None:
        if workload_probe is None:
            return "no measurement"
        assert cur.rates is not None
        found = from_probe(workload_probe, cur.workload, cur.rates.attention_kernel)
        if isinstance(found, str):
            return found
        m, w = found
        return m, w, as_run(w)
    # the layout measured: the user's own where it fits and, for serving, where they stated
    # it; else the engine's best guess at what they run (the re-tuned one)
    run = cur.projection.as_run
    usable = cur.projection.usable_gib
    if not any(memory_margin(f, 0, usable, cal)[1] or f.fits[0]
               for f in (run, cur.projection.retuned)):
        raise InputError(
            f"{m.what} on {cur.gpu.id}, where no layout holds this workload at "
            f"{cur.workload.seq_lens[0]:,} tokens ({run.memory_gib[0]:,.0f} GiB as run, "
            f"{usable:,.0f} GiB usable): a run that cannot fit cannot anchor the decision; "
            "check the model, the layout (tp, pp, zero_stage) and the sequence length",
            field="measured", value=m.what)
    told = cur.workload.training or "tp" in cur.stated
    mine = run.layouts[0] if run.fits[0] and told else cur.projection.retuned.layouts[0]
    return m, cur.workload, grid_of([row_of(mine, cur.workload.gpus_per_node,
                                            mb=m.concurrency or mine.micro_batch)])


def resolve_anchored(answers: Answers, catalog: Catalog,
                     probes: Mapping[str, ProbeRecord] | None = None, cal: Calibration = CAL,
                     alone: bool = False, workload_probe: ProbeRecord | None = None
                     ) -> Resolution:
    """Every side resolved once and projected as run and re-tuned, then anchored on the
    answers' measurement of the current GPU (else on a workload-probe record of it)."""
    modelled = [s.project(cal) for s in resolve_sides(answers, catalog, probes or {}, cal,
                                                       alone=alone)]
    cur = modelled[0]
    if cur.rates is None or cur.projection is None:
        return Resolution(modelled, modelled, None, None)
    found = _measurement(answers, cur, workload_probe, cal)
    if isinstance(found, str):
        unused = None if workload_probe is None else f"workload probe not used: {found}"
        return Resolution(modelled, modelled, None, unused)
    m, measured_w, grid = found
    try:
        anchor = fit(m, measured_w, cur.rates, grid, cal)
    except InputError as exc:  # a workload-probe figure is the record's, not `measured`'s
        if answers.measured is not None or workload_probe is None:
            raise
        raise _on_the_record(exc, workload_probe) from None
    anchored, transfers = [], []
    for i, s in enumerate(modelled):
        if s.rates is None:
            anchored.append(s)
            continue
        same = i == 0 or s.rates.attention_kernel == anchor.kernel
        tuned, rates = apply(anchor.knobs, cal, s.rates, same_kernel=same)
        rates = _anchored_spread(rates, current=i == 0, cal=cal)
        anchored.append(replace(s, rates=rates, tuned=tuned).project(cal))
        if i:
            transfers.append(_transfer_words(s, anchor.kernel, same, anchor.knobs.attention))
    report = AnchorReport(
        measured=m.what, source=m.source + (f" ({m.note})" if m.note else ""),
        measured_tokens_per_s_per_gpu=anchor.measured_tokens_per_s,
        modelled_tokens_per_s_per_gpu=anchor.modelled_tokens_per_s, moved=anchor.moved,
        transfers=transfers, efficiency=anchor.knobs.efficiency,
        attention=anchor.knobs.attention)
    return Resolution(anchored, modelled, report, None)


def _on_the_record(exc: InputError, record: ProbeRecord) -> InputError:
    """An anchor's refusal of a workload-probe figure (`measured`: its throughput;
    `measured.attention_share`...), said about the record's own field and file."""
    figure = (exc.field or "").partition(".")[2] or "tokens_per_s"
    return InputError(exc.message, file=record.origin, field=record.workload_field(figure),
                      value=exc.value)


def _anchored_spread(r: GpuRates, current: bool, cal: Calibration) -> GpuRates:
    """A measured side's software is known to the measurement's spread; a target inherits it
    with the transfer assumption's own spread on top."""
    sigmas = dict(r.sigmas)
    for key in ("gemm", "attention", "host"):
        sigmas[key] = SOURCE_SIGMA["probe"] if current else math.hypot(
            sigmas[key], cal.anchor_transfer_sigma)
    return r.model_copy(update={"sigmas": sigmas})


def _transfer_words(s: ResolvedSide, kernel: str, same: bool, attention: float) -> str:
    what = f"{s.gpu.id}: your stack efficiency carries over"
    if same or abs(attention - 1) < 1e-6:
        return what + "; its hardware rates are its own"
    return (what + f"; its attention runs {s.rates.attention_kernel if s.rates else '?'}, not "
            f"your {kernel}, so the attention multiplier does not (its published curve is used)")
