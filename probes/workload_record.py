"""The record's workload section: its runs' statistics, the per-layer figures and the
whole-model extrapolation, and the summary lines. Stdlib only, so the CLIs can show a
record without torch.

Per layer = (deep - shallow) / (layers apart) for the step time, each time bucket and
the peak memory; outside the layers = shallow - its layers × per layer (the embedding,
LM head, loss and their optimizer share; a value that noise puts below zero is shown as
0 and said); the whole model on one device = outside + all layers × per layer. A run of
the whole model is reported as measured, not extrapolated.
"""

from __future__ import annotations

import statistics
from typing import Any

from .kernel_split import BUCKETS

WORKLOAD_TOY_NOTE = (
    "CPU run at toy sizes: the model's widths, vocabulary, sequence length and batch are "
    "shrunk, and it runs on one thread; these figures check that the workload probe works "
    "and are not GPU figures"
)
GIB = 2**30


def layers_text(n: int) -> str:
    return f"{n} layer{'s' if n != 1 else ''}"


def new_run(depth: int) -> dict[str, Any]:
    return {"layers": depth, "status": "not run", "reason": None, "build_s": None,
            "warmup_steps": 0, "first_step_ms": None, "steps_ms": [], "steps_timed": 0,
            "step_ms_median": None, "step_ms_min": None, "step_ms_max": None,
            "spread_pct": None, "tokens_per_step": None, "tokens_per_s": None,
            "peak_memory_gib": None, "peak_reserved_gib": None, "memory_source": None,
            "split": None, "split_us": None, "attention_ops": [], "gpu_state": None}


def finish_run(entry: dict[str, Any], tokens: int, stopped: bool) -> None:
    """Statistics of what was timed, and the split carved out of the median step. Also
    used on a run a second Ctrl-C cut short, from the steps it had timed."""
    times = entry["steps_ms"]
    entry["tokens_per_step"] = tokens
    entry["steps_timed"] = len(times)
    if times:
        med = round(statistics.median(times), 4)  # tokens/s follows the median as recorded
        entry.update(
            step_ms_median=med, step_ms_min=min(times), step_ms_max=max(times),
            spread_pct=round(100 * (max(times) - min(times)) / med, 2),
            tokens_per_s=round(tokens / (med / 1e3), 3),
        )
        raw = entry.pop("split_us", None)
        total = sum(raw[b] for b in BUCKETS) if raw else 0.0
        if raw and total > 0:
            shares = {b: raw[b] / total for b in BUCKETS}
            entry["split"] = {
                **{f"{b}_ms": round(shares[b] * med, 4) for b in BUCKETS},
                **{f"{b}_share": round(shares[b], 5) for b in BUCKETS},
                "kernel_ms_per_step": round(total / 1e3 / raw["steps"], 4),
                "busy_share": round(total / 1e3 / raw["steps"] / med, 4),
                "profiled_steps": raw["steps"],
                "samples": raw["samples"],
            }
    if entry["status"] in ("running", "not run"):
        if stopped:
            done = f"{len(times)} step(s) timed" if times else "nothing timed"
            entry.update(status="stopped", reason=f"stopped early (Ctrl-C); {done}"
                         + ("" if entry["split"] else ", not profiled"))
        elif times:
            entry["status"] = "ok"
        else:
            entry.update(status="failed", reason="no step was timed")


def _per_layer(a: dict[str, Any], b: dict[str, Any]) -> dict[str, float | None]:
    gap = b["layers"] - a["layers"]
    out: dict[str, float | None] = {
        "step_ms": (b["step_ms_median"] - a["step_ms_median"]) / gap}
    for key in ("peak_memory_gib",):
        out[key] = (b[key] - a[key]) / gap if a[key] is not None and b[key] is not None else None
    for bucket in BUCKETS:
        sa, sb = a["split"], b["split"]
        out[f"{bucket}_ms"] = ((sb[f"{bucket}_ms"] - sa[f"{bucket}_ms"]) / gap
                               if sa and sb else None)
    return out


def summarize_phase(phase: dict[str, Any], layers_total: int) -> None:
    """Per-layer figures from two depths, what lies outside the layers, and the whole model
    extrapolated on one device; each None with the reason where it cannot be had."""
    runs = sorted((r for r in phase["runs"] if r["step_ms_median"]), key=lambda r: r["layers"])
    phase.update(per_layer=None, outside_layers=None, full_model=None, reason=None)
    if not runs:
        phase["reason"] = "no run was timed"
        return
    deep = runs[-1]
    tokens = phase["tokens_per_step"]
    if deep["layers"] == layers_total:  # the whole model ran: nothing to extrapolate
        phase["full_model"] = _whole(deep["step_ms_median"], deep["split"],
                                     deep["peak_memory_gib"], tokens, layers_total, False)
    if len(runs) < 2:
        if phase["full_model"] is None:
            phase["reason"] = "one depth was timed: no per-layer figure to extrapolate from"
        return
    shallow = runs[0]
    per = _per_layer(shallow, deep)
    step = per["step_ms"]
    if step is None or step <= 0:
        phase["reason"] = (f"{deep['layers']} layers were not slower than {shallow['layers']}: "
                           "the time a layer adds is lost in noise here")
        return
    reasons = []
    negative = [k for k, v in per.items() if v is not None and v < 0]
    if negative:
        reasons.append(f"per layer, {', '.join(negative)} came out below zero (noise) and "
                       "is left out")
        dropped = set(negative) | ({f"{b}_ms" for b in BUCKETS}
                                   if any(k.endswith("_ms") for k in negative) else set())
        per = {k: (None if k in dropped else v) for k, v in per.items()}
    outside: dict[str, float | None] = {}
    clamped = []
    for key, value in per.items():
        if value is None:
            outside[key] = None
            continue
        base = shallow["step_ms_median"] if key == "step_ms" else (
            shallow["peak_memory_gib"] if key == "peak_memory_gib"
            else shallow["split"][key])
        rest = base - shallow["layers"] * value
        if rest < 0:
            clamped.append(f"{key} {rest:.3g}")
            rest = 0.0
        outside[key] = rest
    if clamped:
        reasons.append("outside the layers, " + ", ".join(clamped)
                       + " came out below zero (noise) and is shown as 0")
    phase["reason"] = "; ".join(reasons) or None
    phase["per_layer"] = {k: (round(v, 5) if v is not None else None) for k, v in per.items()}
    phase["outside_layers"] = {k: (round(v, 5) if v is not None else None)
                               for k, v in outside.items()}
    if phase["full_model"] is not None:
        return
    full = {k: (outside[k] or 0.0) + layers_total * v if v is not None else None
            for k, v in per.items()}
    assert full["step_ms"] is not None
    buckets = None
    if all(full[f"{b}_ms"] is not None for b in BUCKETS):
        buckets = {f"{b}_ms": full[f"{b}_ms"] for b in BUCKETS}
    phase["full_model"] = _whole(full["step_ms"], buckets, full["peak_memory_gib"], tokens,
                                 layers_total, True)


def _whole(step_ms: float, buckets: dict[str, Any] | None, memory: float | None,
           tokens: int, layers: int, extrapolated: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "layers": layers, "extrapolated": extrapolated, "step_ms": round(step_ms, 4),
        "tokens_per_s": round(tokens / (step_ms / 1e3), 3),
        "peak_memory_gib": round(memory, 4) if memory is not None else None,
    }
    total = sum(buckets[f"{b}_ms"] for b in BUCKETS) if buckets else 0.0
    for b in BUCKETS:
        out[f"{b}_share"] = round(buckets[f"{b}_ms"] / total, 5) if buckets and total else None
    return out


def _status(section: dict[str, Any]) -> str:
    runs = [r for p in section["phases"] for r in p["runs"]]
    if runs and all(r["status"] == "ok" for r in runs) and len(runs) == (
        len(section["phases"]) * len(section["layers_run"])
    ):
        return "ok"
    if any(r["step_ms_median"] for r in runs):
        return "partial"
    return "failed" if runs else "not run"


def finish_section(section: dict[str, Any], stopped: bool) -> None:
    """Statistics, per-layer figures and status from what the runs hold so far; called after
    each depth (so a checkpoint is consistent) and once more at the end."""
    for phase in section["phases"]:
        for entry in phase["runs"]:
            finish_run(entry, phase["tokens_per_step"], stopped)
        summarize_phase(phase, section["layers_total"])
    ops = [op for p in section["phases"] for r in p["runs"] for op in r["attention_ops"]]
    section["attention_ops"] = list(dict.fromkeys(ops))
    section["status"] = _status(section)


def workload_lines(section: dict[str, Any]) -> list[str]:
    """The summary's lines for a workload section."""
    shape = section["shape"]
    toy = " at toy size (not GPU figures)" if section["toy_sizes"] else ""
    lines = [
        f"workload {shape['name']} {section['mode']}{toy}: {section['status']}; layers "
        f"{'/'.join(map(str, section['layers_run']))} of {section['layers_total']}, seq "
        f"{section['seq_len_run']}, micro-batch {section['micro_batch_run']}, "
        f"{section['precision']}, attention {section['attention_kernel']}"
        + (f" ({', '.join(section['attention_ops'])})" if section["attention_ops"] else "")
    ]
    for phase in section["phases"]:
        for r in phase["runs"]:
            if not r["step_ms_median"]:
                lines.append(f"  {phase['phase']} {layers_text(r['layers'])}: {r['status']}: "
                             f"{r['reason']}")
                continue
            s = r["split"]
            split_text = (f"; attention {s['attention_share']:.0%}, GEMM {s['gemm_share']:.0%}, "
                          f"other {s['other_share']:.0%}") if s else "; not profiled"
            mem = (f", peak {r['peak_memory_gib']:.3g} GiB"
                   if r["peak_memory_gib"] is not None else "")
            lines.append(
                f"  {phase['phase']} {layers_text(r['layers'])}: {r['step_ms_median']:.4g} ms/step "
                f"(spread {r['spread_pct']:.3g}%, {r['steps_timed']} steps), "
                f"{r['tokens_per_s']:.4g} tok/s{mem}{split_text}"
            )
        per, full = phase["per_layer"], phase["full_model"]
        if per:
            lines.append(f"  {phase['phase']} per layer: {per['step_ms']:.4g} ms; outside the "
                         f"layers: {phase['outside_layers']['step_ms']:.4g} ms")
        if full:
            how = "extrapolated to" if full["extrapolated"] else "measured at"
            share = (f", attention {full['attention_share']:.0%}"
                     if full["attention_share"] is not None else "")
            mem = (f", {full['peak_memory_gib']:.3g} GiB unsharded"
                   if full["peak_memory_gib"] is not None else "")
            lines.append(f"  {phase['phase']} whole model ({how} {full['layers']} layers, one "
                         f"device): {full['step_ms']:.4g} ms/step, {full['tokens_per_s']:.4g} "
                         f"tok/s{share}{mem}")
        if phase["reason"]:
            lines.append(f"  {phase['phase']}: {phase['reason']}")
    lines.extend(f"  note: {n}" for n in section["notes"] if n != WORKLOAD_TOY_NOTE)
    return lines
