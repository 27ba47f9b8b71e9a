"""`advisor compare`: the headless comparison, current GPU against one or more targets.

Flags build the same Answers the wizard fills, `decide()` does the work, and
this module only renders: a readable table with every input and assumption
shown, or `--json` for scripts.
"""

from __future__ import annotations

import argparse
import json
import re
from typing import TYPE_CHECKING, Any

from advisor.core.errors import InputError
from advisor.core.text import clean_block
from advisor.textfmt import fmt_num, render_table

if TYPE_CHECKING:
    from advisor.core.decide import Decision, GpuResult, SweepPoint
    from advisor.core.model.catalog import Catalog
    from advisor.core.projection.rates import Evidence

DIMENSIONS = ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "experts", "active_experts")
SHORT = {"dense": "dense", "attention": "attn", "elementwise": "elem", "optimizer": "opt",
         "communication": "comm", "overhead": "host"}


def _count(text: str) -> float:
    """`8e9`, `8B`, `70b`, `350M` -> a number of parameters."""
    m = re.fullmatch(r"\s*([0-9.]+(?:e[0-9]+)?)\s*([kmbt]?)\s*", text.lower())
    if m is None:
        raise argparse.ArgumentTypeError(f"not a parameter count: {text!r} (e.g. 8e9 or 8B)")
    scale = {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}[m[2]]
    return float(m[1]) * scale


def _price(text: str) -> tuple[str, float]:
    gpu, sep, usd = text.partition("=")
    try:
        value = float(usd)
    except ValueError:
        value = -1.0
    if not sep or not gpu or value <= 0:
        raise argparse.ArgumentTypeError(
            f"expected GPU=USD per GPU-hour, e.g. b200-sxm=6.4: {text!r}")
    return gpu, value


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "compare", help="project a workload on the current GPU and targets, with a verdict each",
        description="Project the workload on --current and each --target from the catalog (and "
                    "any probe records), and say whether moving is worth it.",
    )
    add_workload_args(p, required=True, counts=True)
    p.set_defaults(handler=cmd_compare)


def add_workload_args(p: argparse.ArgumentParser, *, required: bool, counts: bool) -> None:
    """The GPUs, workload, price and probe flags, shared by `compare` and `configs sweep`.

    `required=False` lets another source (an answers file) stand in for the GPUs, the
    model and the sequence lengths; `counts=False` leaves out --gpus/--nodes for
    commands that sweep the GPU count themselves.
    """
    p.add_argument("--current", required=required, help="catalog id of the GPU you run on now")
    p.add_argument("--target", action="append", required=required,
                   help="catalog id; repeatable")
    model = p.add_mutually_exclusive_group(required=required)
    model.add_argument("--model", help="a preset, e.g. llama-3.1-8b, qwen3-32b, deepseek-v3")
    model.add_argument("--params", type=_count, help="parameter count of a custom model (8e9, 8B)")
    for dim in DIMENSIONS:
        p.add_argument(f"--{dim.replace('_', '-')}", type=int, help=f"custom model: {dim}")
    p.add_argument("--seq-len", type=int, action="append", required=required,
                   help="sequence length; repeat to sweep (the first is the primary)")
    p.add_argument("--micro-batch", type=int, default=1)
    p.add_argument("--global-batch", type=int, help="sequences per optimizer step")
    if counts:
        p.add_argument("--gpus", type=int, default=8, help="GPU count on each side (default 8)")
        p.add_argument("--nodes", type=int, default=1)
    else:
        p.set_defaults(gpus=8, nodes=1)
    for deg in ("tp", "pp", "cp", "ep"):
        p.add_argument(f"--{deg}", type=int, default=1, help=f"{deg.upper()} degree")
    p.add_argument("--precision", default="bf16", choices=["bf16", "fp16", "fp8", "fp4", "nvfp4"])
    p.add_argument("--zero", type=int, default=0, choices=range(4), help="ZeRO/FSDP stage")
    p.add_argument("--optimizer", default="adamw", choices=["adamw", "adamw8bit", "sgd"])
    p.add_argument("--checkpointing", action="store_true", help="activation checkpointing")
    p.add_argument("--offload-optimizer", action="store_true", help="optimizer state on the CPU")
    p.add_argument("--fused-kernels", action="store_true",
                   help="fused norm/SwiGLU/RoPE and chunked loss (e.g. Liger-Kernel)")
    p.add_argument("--packed-doc-len", type=int, help="mean document length of packed sequences")
    p.add_argument("--mode", default="pretrain",
                   choices=["pretrain", "finetune", "lora", "prefill", "decode"])
    p.add_argument("--token-budget", type=float, help="tokens to process, for job cost and time")
    p.add_argument("--price", type=_price, action="append", default=[], metavar="GPU=USD",
                   help="quoted $/GPU-hour; GPUs without one use the catalog default")
    p.add_argument("--electricity", type=float, help="$/kWh (default 0.12)")
    p.add_argument("--power-cap", type=float, help="rack power budget, kW")
    p.add_argument("--probe", action="append", default=[], metavar="FILE",
                   help="a probe record; it applies to the GPU it was measured on "
                        "(records imported with `advisor probe import` are used too)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _answers(args: argparse.Namespace, catalog: Catalog) -> Any:
    from advisor.core.model.answers import parse_answers
    from advisor.core.model.transformer import ModelSpec

    dims = {d: getattr(args, d) for d in DIMENSIONS if getattr(args, d) is not None}
    if args.model and dims:
        raise InputError("model dimensions go with --params, not with a preset", field="--model",
                         value=args.model)
    model: Any = args.model or ModelSpec.from_params(args.params, **dims)
    workload = {
        "mode": args.mode, "model": model, "seq_lens": args.seq_len,
        "micro_batch": args.micro_batch, "global_batch": args.global_batch,
        "packed_doc_len": args.packed_doc_len, "precision": args.precision,
        "optimizer": args.optimizer, "zero_stage": args.zero, "checkpointing": args.checkpointing,
        "offload_optimizer": args.offload_optimizer, "fused_kernels": args.fused_kernels,
        "tp": args.tp, "pp": args.pp, "cp": args.cp, "ep": args.ep, "gpus": args.gpus,
        "nodes": args.nodes, "token_budget": args.token_budget,
    }
    data: dict[str, Any] = {
        "current": args.current, "targets": args.target, "workload": workload,
        "prices": {catalog.gpu(g).id: usd for g, usd in args.price},
        "power_cap_kw": args.power_cap,
    }
    if args.electricity is not None:
        data["electricity_usd_per_kwh"] = args.electricity
    return parse_answers(data, "command line")


def cmd_compare(args: argparse.Namespace) -> int:
    from advisor.core.decide import decide
    from advisor.io.catalog_store import effective_catalog
    from advisor.io.probe_store import probes_for

    catalog = effective_catalog()
    answers = _answers(args, catalog)
    probes = probes_for([answers.current, *answers.targets], catalog, args.probe)
    decision = decide(answers, catalog, probes)
    if args.json:
        print(json.dumps(summary(decision), indent=2))
    else:
        print(clean_block(render(decision)))
    return 0


# --- JSON -----------------------------------------------------------------------------------------


def _point_json(p: SweepPoint) -> dict[str, Any]:
    return {
        "seq_len": p.seq_len, "fits": p.fits, "memory_gib": p.memory_gib,
        "tokens_per_s_per_gpu": p.tokens_per_s_per_gpu,
        "tokens_per_s_cluster": p.tokens_per_s_cluster, "mfu": p.mfu, "binding": p.binding,
        "usd_per_mtok": p.usd_per_mtok, "speedup": p.speedup, "speedup_low": p.speedup_low,
        "speedup_high": p.speedup_high, "buckets": p.bucket_speedup,
        "bucket_seconds": p.bucket_seconds, "bucket_binding": p.bucket_binding,
    }


def _gpu_json(r: GpuResult, primary: int) -> dict[str, Any]:
    p = r.point(primary)
    a = r.assumptions
    v = r.verdict
    return {
        "gpu": r.gpu, "role": r.role,
        **{k: val for k, val in _point_json(p).items() if k != "seq_len"},
        "max_seq_len": r.memory.max_seq_len,
        "verdict": v.kind if v else None,
        "headline": v.headline if v else None,
        "reasons": [x.text for x in v.reasons] if v else [],
        "flips": [x.text for x in v.flips] if v else [],
        "dtype_gate": {"passed": r.dtype_gate.passed, "reason": r.dtype_gate.reason},
        "software_gate": r.software_gate.status if r.software_gate else None,
        "rate_sources": a.rate_sources if a else {},
        "attention_kernel": a.attention_kernel if a else None,
        "price": a.price.model_dump() if a and a.price else None,
        "job": r.job.model_dump() if r.job else None,
        "break_even_usd_per_hour": r.break_even_usd_per_hour,
        "break_even_efficiency": r.break_even_efficiency,
        "buy_back": r.buy_back.model_dump() if r.buy_back else None,
        "sweep": [_point_json(q) for q in r.sweep],
    }


def summary(d: Decision) -> dict[str, Any]:
    """The documented --json shape: one object for the current GPU, one per target."""
    cal = d.current.assumptions
    return {
        "primary_seq_len": d.primary_seq_len,
        "workload": d.answers.workload.model_dump(mode="json"),
        "assumptions": {
            "gemm_efficiency": cal.gemm_efficiency if cal else None,
            "overlap": cal.overlap if cal else None,
            "host_s_per_param": cal.host_s_per_param if cal else None,
            "electricity_usd_per_kwh": d.answers.electricity_usd_per_kwh,
            "electricity_source": d.electricity_source,
            "band_level": d.band_level,
        },
        "current": _gpu_json(d.current, d.primary_seq_len),
        "targets": [_gpu_json(t, d.primary_seq_len) for t in d.targets],
        "notes": d.notes,
    }


# --- text -----------------------------------------------------------------------------------------


def _x(value: float | None) -> str:
    return f"{value:.2f}x" if value is not None else "-"


def _inputs(d: Decision) -> str:
    w = d.answers.workload
    m = w.model
    par = ", ".join(f"{k.upper()} {getattr(w, k)}" for k in ("tp", "pp", "cp", "ep")
                    if getattr(w, k) > 1) or "data parallel only"
    extras = [f"ZeRO-{w.zero_stage}", f"micro-batch {w.micro_batch}",
              f"global batch {w.sequences_per_step}"]
    extras += [x for x, on in (("checkpointing", w.checkpointing),
                               ("optimizer offload", w.offload_optimizer),
                               ("fused kernels", w.fused_kernels)) if on]
    if w.packed_doc_len:
        extras.append(f"packed, mean document {w.packed_doc_len:,} tokens")
    return "\n".join([
        f"Workload: {m.name} ({m.params_total / 1e9:.1f}B params, {m.params_active / 1e9:.1f}B "
        f"active), {w.mode}, {w.precision}, {w.gpus} GPUs on {w.nodes} node(s), {par}",
        f"          {', '.join(extras)}; "
        f"sequence lengths {', '.join(f'{s:,}' for s in w.seq_lens)}",
    ])


def _evidence(d: Decision) -> str:
    rows = []
    for r in (d.current, *d.targets):
        a = r.assumptions
        if a is None:
            rows.append([r.gpu, "-", "-", "-", "-", "-", r.problem or r.dtype_gate.reason])
            continue
        ev = {e.quantity: e for e in a.evidence}
        mat = next((e for q, e in ev.items() if q.startswith("matmul")), None)
        att, hbm = ev.get("attention"), ev.get("HBM bandwidth")  # a report may lack one

        def cell(e: Evidence | None) -> str:
            return f"{fmt_num(e.value)} {e.source}" if e else "-"

        price = f"${a.price.usd_per_hour:.2f} {a.price.source}" if a.price else "none"
        mfu = a.achieved_mfu * 100 if a.achieved_mfu is not None else None
        assumed = "; ".join(e.detail for e in a.evidence
                            if e.source in ("transferred-efficiency", "generic-kernel-ratio"))
        rows.append([r.gpu, cell(mat), f"{a.attention_kernel} {cell(att)}", cell(hbm),
                     fmt_num(mfu, 0), price, assumed])
    table = render_table(
        ["GPU", f"matmul TFLOPS ({d.answers.workload.precision})", "attention TFLOPS (max)",
         "HBM GB/s", "MFU %", "price $/h", "assumed"], rows)
    cal = d.current.assumptions
    line = ""
    if cal:
        line = (f"\nModel: GEMMs at {cal.gemm_efficiency:.0%} of the matmul rate (fitted), "
                f"{cal.overlap:.0%} of the backward pass usable to hide gradient comm, host "
                f"overhead {cal.host_s_per_param * 1e12:.0f} ps per parameter per step (fitted), "
                f"pipeline bubble {cal.pipeline_bubble:.0%}; electricity "
                f"${d.answers.electricity_usd_per_kwh}/kWh ({d.electricity_source})")
    return "Rates and where they come from\n" + table + line


def _primary(d: Decision) -> str:
    rows = []
    for r in (d.current, *d.targets):
        p = r.point(d.primary_seq_len)
        band = (f"{_x(p.speedup)} ({p.speedup_low:.2f}-{p.speedup_high:.2f})"
                if p.speedup is not None and p.speedup_low and p.speedup_high else "-")
        buckets = " ".join(f"{SHORT.get(b, b)} {v:.2f}" for b, v in p.bucket_speedup.items()) or "-"
        rows.append([r.gpu, fmt_num(p.tokens_per_s_per_gpu, 0), band, buckets,
                     p.binding or "-", "yes" if p.fits else "no",
                     fmt_num(r.memory.max_seq_len, 0), fmt_num(p.usd_per_mtok, 3),
                     r.verdict.kind if r.verdict else "(current)"])
    return (f"At {d.primary_seq_len:,} tokens\n" + render_table(
        ["GPU", "tok/s/GPU", "speedup (90% band)", "per-bucket speedup", "binding", "fits",
         "max seq", "$/Mtok", "verdict"], rows))


def _sweep(d: Decision) -> str:
    seqs = d.answers.workload.seq_lens
    rows = []
    for r in (d.current, *d.targets):
        cells = []
        for p in r.sweep:
            if p.speedup is not None:
                cells.append(f"{p.speedup:.2f}x {p.binding}")
            else:
                cells.append("no fit" if not p.fits else "-")
        rows.append([r.gpu, *cells])
    return "Speedup and binding resource by sequence length\n" + render_table(
        ["GPU", *(f"{s:,}" for s in seqs)], rows)


def _verdicts(d: Decision) -> str:
    out = ["Verdicts"]
    for r in d.targets:
        v = r.verdict
        if v is None:
            continue
        out.append(f"  {r.gpu}: {v.headline}")
        out += [f"    - {x.text}" for x in v.reasons[:5]]
        out += [f"    flip: {f.text}" for f in v.flips]
        j = r.job
        if j is not None:
            money = f"${j.usd:,.0f}" if j.usd is not None else "no price"
            energy = (f", {j.power_kw:.1f} kW, {j.energy_kwh:,.0f} kWh (${j.energy_usd:,.0f})"
                      if j.power_kw is not None and j.energy_kwh is not None
                      and j.energy_usd is not None else "")
            budget = d.answers.workload.token_budget
            what = f"{budget:.3g} tokens" if budget else "one hour"
            out.append(f"    job ({what}): {money}, {j.wall_clock_h:,.1f} h, "
                       f"{j.gpu_days:,.1f} GPU-days{energy}")
        b = r.buy_back
        if b is not None:
            if b.gpus is not None and b.comm_penalty is not None:
                cost = f", ${b.usd_per_mtok:.3f}/Mtok" if b.usd_per_mtok is not None else ""
                out.append(f"    or buy back the speed: {b.note}, {b.comm_penalty:.0%} "
                           f"per-GPU comm penalty{cost}")
            else:
                out.append(f"    or buy back the speed: {b.note}")
    return "\n".join(out)


def render(d: Decision) -> str:
    """The human report: inputs, evidence, the primary point, the sweep, verdicts, notes."""
    parts = [_inputs(d), _evidence(d), _primary(d), _sweep(d), _verdicts(d),
             "Notes\n" + "\n".join(f"  - {n}" for n in d.notes)]
    return "\n\n".join(parts)
