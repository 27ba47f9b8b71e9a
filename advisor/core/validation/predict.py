"""The model's figure for one published case, through the same path `advisor compare` takes."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from advisor.core.comparison import decide
from advisor.core.economics.cost import value_per_dollar
from advisor.core.errors import InputError
from advisor.core.model.answers import Answers, split_count
from advisor.core.model.catalog import Catalog
from advisor.core.model.layout import LayoutOverride
from advisor.core.model.presets import resolve_preset
from advisor.core.model.workload import Workload
from advisor.core.projection.calibration import CAL, Calibration
from advisor.core.projection.engine import (
    RESOURCES,
    all_reduce_busbw,
    attention_flops_per_token,
    memory_serving,
    memory_training,
)
from advisor.core.projection.layout import as_run
from advisor.core.projection.rates import PEAK_KEYS
from advisor.core.projection.retune import SideProjection, usable_gib
from advisor.core.sides import LAYOUT_KNOBS, resolve_gpu, resolve_sides
from advisor.core.validation.cases import GIB, CaseSpec


def need(value: Any, case: CaseSpec, field: str) -> Any:
    if value is None:
        raise InputError(f"a {case.kind} case needs {field}", entry=case.id, field=field)
    return value


def at_primary(case: CaseSpec) -> Workload:
    w: Workload = need(case.workload, case, "workload")
    seq = case.seq_len or w.seq_lens[0]
    return w.model_copy(update={"seq_lens": [seq]})


def answers_for(case: CaseSpec, w: Workload) -> Answers:
    """The case as answers. A published case ran both GPUs in the layout it states, while an
    answers file's workload layout is the current side's alone: the target is given the
    stated knobs as its own (under anything the case sets for it)."""
    target = need(case.target, case, "target")
    stated = {k: getattr(w, k) for k in sorted(LAYOUT_KNOBS & w.model_fields_set)}
    layouts = dict(case.layouts)
    if stated:
        gid = split_count(target)[0]
        mine = layouts.get(gid, LayoutOverride())
        layouts[gid] = LayoutOverride(**{**stated, **mine.fields_given()})
    return Answers(current=need(case.current, case, "current"), targets=[target], workload=w,
                   prices=case.prices, basis=case.figure, power_limits_w=case.power_limits_w,
                   layouts=layouts)


def _sides(case: CaseSpec, catalog: Catalog, cal: Calibration,
           gpu: str | None = None) -> list[SideProjection]:
    """Each GPU of the case (or just `gpu`) resolved like a decision's, projected as run and
    re-tuned."""
    w = at_primary(case)
    if gpu is not None:
        compared = [resolve_gpu(gpu, w, catalog, cal)]
    else:
        compared = resolve_sides(answers_for(case, w), catalog, {}, cal)[:2]
    out = []
    for s in compared:
        projected = s.project(cal).projection
        if projected is None:
            raise InputError(f"cannot project {s.gpu.id}: {s.problem}", entry=case.id)
        out.append(projected)
    return out


def _per_token(side: SideProjection, case: CaseSpec, w: Workload) -> tuple[float, float]:
    """(seconds per token for `measure`, model FLOPs per second for it) on one side."""
    f = side.retuned if case.figure == "retuned" else side.as_run
    p = f.proj
    step, attn = float(p.step_s[0, 0]), float(p.times["attention"][0, 0])
    tokens, flops = float(p.tokens[0, 0]), float(p.model_flops[0, 0])
    keys = np.asarray([[float(w.seq_lens[0]) / 2 if w.packed_doc_len is None
                        else w.packed_doc_len / 2]])
    a_flops = float(3.0 * attention_flops_per_token(w, keys)[0, 0] * tokens)
    seconds, work = {
        "blended": (step, flops),
        "attention": (attn, a_flops),
        "non-attention": (step - attn, flops - a_flops),
    }[case.measure]
    return seconds / tokens, work / seconds


def naive_ratio(current: str, target: str, precision: str, catalog: Catalog) -> float | None:
    """The spec-sheet predictor: sqrt(peak-FLOPS ratio x HBM-bandwidth ratio)."""
    c, t = catalog.gpu(split_count(current)[0]), catalog.gpu(split_count(target)[0])

    def peak(g: Any) -> float | None:
        for k in (*PEAK_KEYS.get(precision, (precision,)), "bf16"):
            if (v := g.peak_tflops.get(k)) is not None:
                return float(v)
        twin = catalog.gpu(g.same_die_as) if g.same_die_as else None
        return peak(twin) if twin is not None else None

    pc, pt = peak(c), peak(t)
    if not (pc and pt and c.memory and t.memory):
        return None
    return math.sqrt(pt / pc * t.memory.bandwidth_tbps / c.memory.bandwidth_tbps)


def naive(case: CaseSpec, catalog: Catalog) -> float | None:
    if case.kind == "matmul-ratio":
        c, t = catalog.gpu(need(case.current, case, "current")), catalog.gpu(
            need(case.target, case, "target"))
        pc, pt = c.peak_tflops.get(case.dtype), t.peak_tflops.get(case.dtype)
        return pt / pc if pc and pt else None
    precision = case.workload.precision if case.workload else case.dtype
    return naive_ratio(need(case.current, case, "current"),
                       need(case.target, case, "target"), precision, catalog)


def _speedup(case: CaseSpec, catalog: Catalog, cal: Calibration
             ) -> tuple[float, float | None, float | None]:
    """(speedup, band low, band high) the way `advisor compare` reports them."""
    w = at_primary(case)
    if case.measure in ("attention", "non-attention"):
        a, b = _sides(case, catalog, cal)
        return _per_token(a, case, w)[0] / _per_token(b, case, w)[0], None, None
    d = decide(answers_for(case, w), catalog, cal=cal)
    if case.measure == "tpot":  # a latency: the ratio of time per output token, current over target
        cur, tgt = d.current.sweep[0], d.targets[0].sweep[0]
        if not (cur.tpot_ms and tgt.tpot_ms and tgt.speedup):
            raise InputError("the model cannot project this case (a gate or no fit)",
                             entry=case.id)
        ratio = cur.tpot_ms / tgt.tpot_ms
        scale = ratio / tgt.speedup
        return ratio, (tgt.speedup_low or tgt.speedup) * scale, (
            tgt.speedup_high or tgt.speedup) * scale
    p = d.targets[0].sweep[0]
    if p.speedup is None:
        raise InputError("the model cannot project this case (a gate or no fit)",
                         entry=case.id)
    return p.speedup, p.speedup_low, p.speedup_high


def predict(case: CaseSpec, catalog: Catalog, cal: Calibration = CAL
            ) -> tuple[float | str | bool, float | None, float | None]:
    """The model's number (or category) for one case, with its band where it has one."""
    k = case.kind
    if k == "speedup":
        return _speedup(case, catalog, cal)
    if k == "report":
        return _report_figure(case, catalog, cal), None, None
    if k == "matmul-ratio":
        return _matmul_ratio(case, catalog), None, None
    if k == "attention-ratio":
        return _attention_ratio(case, catalog, cal), None, None
    if k == "tflops":
        side = _sides(case, catalog, cal, gpu=need(case.gpu, case, "gpu"))[0]
        return _per_token(side, case, at_primary(case))[1] / 1e12, None, None
    if k in ("memory", "max-seq", "fits"):
        return _memory_figure(case, catalog, cal), None, None
    if k == "usable-gib":
        g = catalog.gpu(need(case.gpu, case, "gpu"))
        return usable_gib(g.memory.gib if g.memory else 0.0, cal), None, None
    if k == "busbw":
        return _busbw(case, catalog, cal), None, None
    if k in ("value-per-dollar", "cheaper-by"):
        return _value_figure(case), None, None
    if k == "binding":
        return _binding(case, catalog, cal), None, None
    if k == "verdict":
        return _verdict_kind(case, catalog, cal), None, None
    return _model_bytes(case), None, None


def _report_figure(case: CaseSpec, catalog: Catalog, cal: Calibration) -> float:
    """One figure of the whole report the case's answers produce, by its dotted path (a
    number indexes a list)."""
    from advisor.core.entry import run

    report = run(need(case.answers, case, "answers"), catalog, cal=cal)
    value: Any = report.model_dump()
    for part in need(case.figure_path, case, "figure_path").split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return float(value)


def _matmul_ratio(case: CaseSpec, catalog: Catalog) -> float:
    """The catalog's published best-shape matmul figures, target over current, passed
    through (NaN when either GPU lacks one)."""
    c, t = (catalog.gpu(need(x, case, f)) for x, f in ((case.current, "current"),
                                                         (case.target, "target")))
    mc, mt = c.mamf.get(case.dtype), t.mamf.get(case.dtype)  # type: ignore[call-overload]
    return mt.tflops / mc.tflops if mc and mt else float("nan")


def _attention_ratio(case: CaseSpec, catalog: Catalog, cal: Calibration) -> float:
    """Attention throughput at the case's sequence length, target over current, from each
    side's forward-attention rate and its half-saturation length."""
    s = float(need(case.seq_len, case, "seq_len"))
    w = at_primary(case)
    a = Answers(current=need(case.current, case, "current"),
                targets=[need(case.target, case, "target")], workload=w)
    pair = [x.rates for x in resolve_sides(a, catalog, {}, cal)]
    speed = [r.attn_fb_tflops * s / (s + r.attn_s_half) for r in pair if r is not None]
    return speed[1] / speed[0]


def _memory_figure(case: CaseSpec, catalog: Catalog, cal: Calibration) -> float | bool:
    """The workload as run on the case's GPU: its memory at a sequence length (GiB), the
    longest sequence that fits, or whether it fits."""
    w = need(case.workload, case, "workload")
    gpu = catalog.gpu(need(case.gpu, case, "gpu"))
    if case.kind == "memory":
        at = np.asarray([[float(need(case.seq_len, case, "seq_len"))]])
        grid = as_run(w)
        mem = memory_training(w, grid, at, cal) if w.training else memory_serving(w, grid, at,
                                                                                  cal)
        return float(mem[0, 0])
    sd = _sides(case.model_copy(update={"figure": "as_run"}), catalog, cal, gpu=gpu.id)[0]
    if case.kind == "max-seq":
        return float(sd.max_seq_as_run or 0)
    return sd.as_run.fits[0]


def _busbw(case: CaseSpec, catalog: Catalog, cal: Calibration) -> float:
    """The all-reduce bus bandwidth (GB/s) the model gives the case's GPU for its ranks,
    nodes and payload."""
    n = need(case.ranks, case, "ranks")
    gpu = catalog.gpu(need(case.gpu, case, "gpu"))
    w = Workload(model=resolve_preset("llama-3.1-8b"), seq_lens=[1], gpus=n,
                 nodes=case.nodes, nic_gbit=case.nic_gbit)
    rates = resolve_gpu(gpu.id, w, catalog, cal).rates
    size = need(case.payload_gib, case, "payload_gib") * GIB
    assert rates is not None
    return all_reduce_busbw(rates, n, n // case.nodes, size, cal) / 1e9


def _value_figure(case: CaseSpec) -> float:
    """Value per dollar from a speedup and a price ratio, or how much cheaper per unit of
    work that makes the target."""
    v = value_per_dollar(need(case.speedup, case, "speedup"),
                         need(case.price_ratio, case, "price_ratio"))
    return v if case.kind == "value-per-dollar" else 1.0 - 1.0 / v


def _binding(case: CaseSpec, catalog: Catalog, cal: Calibration) -> str:
    """The resource that takes the longest in a step on the case's GPU."""
    side = _sides(case, catalog, cal, gpu=need(case.gpu, case, "gpu"))[0]
    f = side.retuned if case.figure == "retuned" else side.as_run
    return RESOURCES[int(f.proj.resource_time()[:, 0, 0].argmax())]


def _verdict_kind(case: CaseSpec, catalog: Catalog, cal: Calibration) -> str:
    """The kind of the verdict `advisor compare` gives the case ("none" without one)."""
    verdict = decide(answers_for(case, need(case.workload, case, "workload")), catalog,
                     cal=cal).targets[0].verdict
    return verdict.kind if verdict else "none"


def _model_bytes(case: CaseSpec) -> float:
    """What the workload's model holds: KV bytes per token at 16 bits, the batch's KV cache
    (GB, times the sizing's own overhead factor), or each GPU's share of the weights (GB)."""
    w = need(case.workload, case, "workload")
    if case.kind == "kv-bytes":
        return float(w.model.kv_elems_per_token * 2)
    if case.kind == "kv-cache":
        raw = w.model.kv_elems_per_token * w.kv_bytes * w.seq_lens[0] * w.micro_batch
        return float(raw * (case.overhead or 1.0) / 1e9)
    from advisor.core.model.vocabulary import WEIGHT_BYTES
    from advisor.core.projection.engine import local_params
    return float(local_params(w, as_run(w))[0, 0] * WEIGHT_BYTES[w.precision] / 1e9)
