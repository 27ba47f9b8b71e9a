"""Anchoring on the user's own run: fit the current side to what they measured, carry to each
target only what transfers.

The model's figure for the current GPU is a projection; the user's measured throughput is a
fact. The fit moves the fewest knobs that can explain the difference:

- with one number (tokens/s, step time or MFU; TPOT for serving): the stack efficiency,
  the share of the modelled rate the user's software reaches on this hardware (its
  framework, kernels and host overhead together);
- with the attention share of the step as well: the attention kernel's own multiplier
  (from the share), then the stack efficiency for the rest.

To a target goes what is the user's software: the stack efficiency always, the attention
kernel's multiplier only when the target runs the same kernel (FA3 on an H100 says nothing
about FA4 on a B200). The hardware rates never move: they are the target's own. A
software that reaches 80% of the model on one GPU is assumed to reach 80% on the other,
with the transfer assumption's own spread in the band (kernels for a new architecture
may be more or less mature). A measurement no plausible efficiency explains (above the
GPU's peak, or several times off the model) is refused with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from advisor.core.errors import InputError
from advisor.core.model import bounds as B
from advisor.core.model.measured import MeasuredRun
from advisor.core.model.probe_record import ProbeRecord
from advisor.core.model.workload import Workload
from advisor.core.projection.calibration import Calibration
from advisor.core.projection.engine import Projection, project
from advisor.core.projection.kernels import probe_kernel
from advisor.core.projection.layout import Grid
from advisor.core.projection.rates import GpuRates
from advisor.core.text import clean

BISECTION_STEPS = 60  # halvings of a ratio interval: far below float resolution


@dataclass(frozen=True)
class Knobs:
    """What the user's software does with the hardware, against the model (1.0: as modelled)."""

    efficiency: float = 1.0  # share of the modelled rate the stack reaches
    attention: float = 1.0  # the attention kernel's rate, when its share was measured


@dataclass(frozen=True)
class Anchor:
    measured: MeasuredRun
    knobs: Knobs
    kernel: str  # the current side's attention kernel (its multiplier transfers only to it)
    modelled_tokens_per_s: float  # per GPU, the model before anchoring (as measured)
    measured_tokens_per_s: float  # per GPU, the measurement as tokens/s
    moved: list[str]  # what changed, in words


def apply(knobs: Knobs, cal: Calibration, rates: GpuRates,
          same_kernel: bool = True) -> tuple[Calibration, GpuRates]:
    """`cal` and `rates` with the knobs applied (the attention multiplier only where the side
    runs the anchored kernel)."""
    cal = replace(cal, stack_efficiency=cal.stack_efficiency * knobs.efficiency)
    a = knobs.attention if same_kernel else 1.0
    rates = rates.model_copy(update={"attn_fb_tflops": rates.attn_fb_tflops * a,
                                     "attn_f_tflops": rates.attn_f_tflops * a})
    return cal, rates


def _measured_rate(m: MeasuredRun, p: Projection) -> float:
    """The measurement as tokens/s per GPU, in the units of the projection `p` (1 layout)."""
    tokens, step = float(p.tokens[0, 0]), float(p.step_s[0, 0])
    if m.tokens_per_s_per_gpu is not None:
        return m.tokens_per_s_per_gpu
    if m.step_s is not None:
        return tokens / m.step_s
    if m.mfu is not None:
        flops_per_token = float(p.model_flops[0, 0]) / tokens
        return m.mfu * p.peak / flops_per_token
    if m.tpot_ms is None or p.tpot_s is None:
        raise InputError("a time per output token measures serving, and this workload "
                         "trains: give tokens_per_s_per_gpu, step_s or mfu",
                         field="measured.tpot_ms", value=m.tpot_ms)
    return tokens / step * float(p.tpot_s[0, 0]) / (m.tpot_ms / 1000)


def _solve(f: Callable[[float], float], lo: float, hi: float) -> float:
    """The root of an increasing f on [lo, hi] by geometric bisection."""
    for _ in range(BISECTION_STEPS):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return math.sqrt(lo * hi)


def fit(m: MeasuredRun, w: Workload, rates: GpuRates, grid: Grid, cal: Calibration) -> Anchor:
    """The knobs that make the current side's projection (`grid`: the layout measured, one
    row) give what the user measured at the primary sequence length."""
    seq = [w.seq_lens[0]]
    base = project(w, rates, grid, seq, cal)
    modelled = float(base.tokens_per_s[0, 0])
    target = _measured_rate(m, base)
    implied_mfu = m.mfu if m.mfu is not None else (  # as given: no rounding on the way back
        target * float(base.model_flops[0, 0]) / float(base.tokens[0, 0]) / base.peak)
    if implied_mfu >= 1:
        raise InputError(f"{m.what} is {implied_mfu:.0%} of this GPU's peak: no kernel reaches "
                         "its peak (per GPU? each token counted once?)",
                         field="measured", value=m.what)
    a = 1.0
    if m.attention_share is not None:
        def share(x: float) -> float:  # the attention share with the kernel x as fast
            _, r = apply(Knobs(attention=x), cal, rates)
            p = project(w, r, grid, seq, cal)
            return float(p.times["attention"][0, 0] / p.step_s[0, 0])

        lo, hi = cal.anchor_min_efficiency, cal.anchor_max_efficiency
        if not share(hi) <= m.attention_share <= share(lo):
            raise InputError(
                f"an attention share of {m.attention_share:.0%} is out of reach of the "
                f"{rates.attention_kernel} kernel between x{lo:g} and x{hi:g} its published "
                f"rate (the model has {share(1.0):.0%}): check the share",
                field="measured.attention_share", value=m.attention_share)
        a = _solve(lambda x: m.attention_share - share(x), lo, hi)  # type: ignore[operator]
        _, r = apply(Knobs(attention=a), cal, rates)
        modelled_a = float(project(w, r, grid, seq, cal).tokens_per_s[0, 0])
    else:
        modelled_a = modelled
    e = target / modelled_a
    if not cal.anchor_min_efficiency <= e <= cal.anchor_max_efficiency:
        how = "faster" if e > 1 else "slower"
        raise InputError(f"{m.what} is {e:.2f}x the model's {modelled:,.0f} tokens/s per GPU for "
                         f"this layout: {how} than any stack explains (per GPU? the layout "
                         "you ran?)", field="measured", value=m.what)
    knobs = Knobs(efficiency=e, attention=a)
    moved = []
    if abs(e - 1) > cal.anchor_quiet:
        moved.append(f"stack efficiency x{e:.2f} (your software reaches {e:.0%} of the "
                     "modelled rate on this GPU)")
    if abs(a - 1) > cal.anchor_quiet:
        moved.append(f"attention kernel ({rates.attention_kernel}) rate x{a:.2f}")
    return Anchor(measured=m, knobs=knobs, kernel=rates.attention_kernel,
                  modelled_tokens_per_s=modelled, measured_tokens_per_s=target,
                  moved=moved or ["nothing: the model already gives what you measured"])


def from_probe(record: ProbeRecord, w: Workload, kernel: str
               ) -> tuple[MeasuredRun, Workload] | str:
    """A workload-probe record as a measurement, with the workload it measured (one device,
    its own sequence length and micro-batch, eager PyTorch), or why it cannot anchor. Its
    attention share counts only when it ran the kernel the side runs (`kernel`)."""
    sec = record.measured_workload()
    if sec is None:
        return "the workload probe timed no step"
    if sec.toy_sizes:
        return "the workload probe ran at toy sizes on a CPU: its figures are not GPU figures"
    phase = sec.primary
    whole = phase.full_model if phase is not None else None
    if phase is None or whole is None:
        return "the workload probe has no whole-model figure"
    if (phase.phase == "train") != w.training:
        return f"the workload probe measured {phase.phase}, not this {w.mode} workload"
    if sec.precision != w.precision:
        return f"the workload probe ran {sec.precision}, this workload {w.precision}"
    serving = phase.phase != "train"
    try:
        measured_w = w.model_copy(update={
            "gpus": 1, "nodes": 1, "tp": 1, "pp": 1, "cp": 1, "ep": 1, "vp": 1,
            "micro_batch": sec.micro_batch_run, "global_batch": None, "zero_stage": 0,
            "offload_optimizer": False, "fused_kernels": False, "packed_doc_len": None,
            "recompute": "none" if serving else sec.recompute,
            "mode": w.mode if not serving else phase.phase,
            "osl": None if serving else w.osl,
            "seq_lens": [sec.decode_context or sec.seq_len_run] if serving else [sec.seq_len_run],
            "framework": w.framework if serving else "fsdp"})
        measured_w = Workload.model_validate(measured_w.model_dump())
    except ValueError as exc:
        return f"the workload probe's run does not map onto this workload ({exc})"
    how = "extrapolated from" if whole.extrapolated else "measured on"
    ran = probe_kernel(sec.attention_kernel)
    share = whole.attention_share if not serving and ran == kernel else None
    host = _shown(record.stamp.hostname, B.SHOWN_HOST_CHARS)
    day = _shown(record.stamp.date[:B.SHOWN_DATE_CHARS], B.SHOWN_DATE_CHARS)
    note = f"workload probe on {host} {day}: one device, eager PyTorch, {how} {whole.layers} layers"
    if ran != kernel and not serving:
        note += (f"; its attention ran {_shown(sec.attention_kernel, B.SHOWN_KERNEL_CHARS)}, "
                 f"not {kernel}, so its share is not used")
    return (MeasuredRun(tokens_per_s_per_gpu=whole.tokens_per_s, attention_share=share,
                        peak_memory_gib=whole.peak_memory_gib, source="probe",
                        note=_shown(note, B.MAX_NAME_CHARS)),
            measured_w)


def _shown(text: str, most: int) -> str:
    """A record's text as a note holds it: its control characters as their visible escapes
    (a note, like all answers text, holds none), and at most `most` characters."""
    text = clean(text)
    return text if len(text) <= most else text[:most - 1] + "…"
