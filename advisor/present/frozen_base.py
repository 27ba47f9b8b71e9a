"""A LoRA's frozen base in words, for both front ends: how each GPU holds it and what that
costs per step and in accuracy, and, where the base as given fits in no layout, the other ways
of holding it that fit. The inputs that hold it so are named in the reader's dialect
(`advisor.present.words`): compare's flags, an answers file's keys or the wizard's fields."""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.present.humanize import number
from advisor.present.words import Dialect, base_input

if TYPE_CHECKING:
    from advisor.core import BaseOption, Decision


def _base_name(base_format: str, offloaded: bool) -> str:
    """'a 4-bit NF4 (QLoRA) base, offloaded to the host'."""
    from advisor.core import BASE_WORDS

    return f"a {BASE_WORDS[base_format]} base" + (", offloaded to the host" if offloaded else "")


def _base_inputs(o: BaseOption, given: str, dialect: Dialect) -> str:
    """The inputs that hold the base as `o` does."""
    said = [base_input("base_format", dialect, o.base_format)] if o.base_format != given else []
    if o.offload_frozen_weights:
        said.append(base_input("offload_frozen_weights", dialect))
    return (" " if dialect == "flags" else ", ").join(said)


def _seconds(s: float) -> str:
    return f"{s:.2g} s" if s < 10 else f"{s:,.0f} s"


def _base_cost(o: BaseOption) -> str:
    """What holding the base this way costs per step."""
    parts = []
    if o.dequant_s > 0:
        parts.append(f"dequantising it takes {_seconds(o.dequant_s)} of each "
                     f"{_seconds(o.step_s)} step ({o.dequant_s / o.step_s:.0%}; HBM traffic and "
                     "kernels before every GEMM, forward and backward)")
    if o.offload_frozen_weights:
        parts.append(f"streaming it over the host link adds {_seconds(o.stream_s)} a step"
                     if o.stream_s > 0 else "streaming it over the host link hides behind "
                                            "compute")
    return "; ".join(parts) or "no dequantisation: its GEMMs read it as held"


def frozen_base_lines(d: Decision, dialect: Dialect) -> list[str]:
    """A LoRA's frozen base on each GPU at the primary length, where it is not the 16-bit
    weights on the GPU: how it is held and what that costs; where the base as given fits in no
    layout, the other ways of holding it that fit, fastest first; then the accuracy risk of
    each format named, with its evidence."""
    from advisor.core import BASE_ACCURACY

    w = d.answers.workload
    seq = d.primary_seq_len
    given = _base_name(w.base_format, w.offload_frozen_weights)
    out = []
    named: dict[str, None] = {}
    for r in (d.current, *d.targets):
        p = r.point(seq)
        o = p.frozen_base if p else None
        if p is not None and o is not None and p.fits and (
                o.base_format != "bf16" or o.offload_frozen_weights):
            allow = base_input("allow_quantized_base", dialect)
            who = f"chosen by the re-tune ({allow})" if o.chosen else "as given"
            out.append(f"{r.gpu} holds {_base_name(o.base_format, o.offload_frozen_weights)}, "
                       f"{who}: {_base_cost(o)}")
            named[o.base_format] = None
        options = r.base_options.get(str(seq), [])
        if not options:
            continue
        ways = "; ".join(
            f"{_base_name(o.base_format, o.offload_frozen_weights)} "
            f"({_base_inputs(o, w.base_format, dialect)}): "
            f"{number(o.tokens_per_s_per_gpu)} tokens/s per GPU in {number(o.memory_gib, 1)} GiB"
            for o in options)
        tail = ("; the re-tune runs the first" if options[0].chosen
                else f"; {base_input('allow_quantized_base', dialect)} lets the re-tune choose")
        out.append(f"{r.gpu} does not fit {seq:,} tokens with {given} in any layout; it does "
                   f"with {ways}{tail}")
        named.update(dict.fromkeys(o.base_format for o in options))
    for fmt in (f for f in named if BASE_ACCURACY[f].risk != "none"):
        a = BASE_ACCURACY[fmt]
        out.append(f"{_base_name(fmt, False)}: accuracy risk {a.risk}: {a.evidence}")
    return out
