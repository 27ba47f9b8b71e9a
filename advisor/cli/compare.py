"""`advisor compare`: the headless comparison, current GPU against one or more targets.

Flags build the same Answers the wizard fills and `advisor decide` reads, `run()` does
the work, and this module only renders: a readable table with every input and
assumption shown, or `--json` for scripts.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from advisor.cli.numbers import amount, keyed, plain, tokens, whole
from advisor.core import InputError, clean_block
from advisor.textfmt import fmt_num, render_table

if TYPE_CHECKING:
    from advisor.core import (
        Answers,
        Catalog,
        Decision,
        Evidence,
        GpuResult,
        Report,
        SweepPoint,
    )

DIMENSIONS = ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "experts", "active_experts")
SHORT = {"dense": "dense", "attention": "attn", "elementwise": "elem", "optimizer": "opt",
         "communication": "comm", "overhead": "host"}
MODES = ["pretrain", "finetune", "lora", "prefill", "decode", "serve"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "compare", help="project a workload on the current GPU and targets, with a verdict each",
        description="Project the workload on --current and each --target from the catalog (and "
                    "any probe records), each GPU as you run it and re-tuned for it, and say "
                    "whether moving is worth it.",
    )
    add_workload_args(p, required=True, counts=True)
    p.set_defaults(handler=cmd_compare)


def add_workload_args(p: argparse.ArgumentParser, *, required: bool, counts: bool) -> None:
    """The GPUs, workload, price and probe flags, shared by `compare` and `configs sweep`.

    `required=False` lets another source (an answers file) stand in for the GPUs, the
    model and the sequence lengths; `counts=False` leaves out the GPU counts for commands
    that sweep them themselves.
    """
    p.add_argument("--current", required=required,
                   help="catalog id of the GPU you run on now (id@N for N of them)")
    p.add_argument("--target", action="append", required=required,
                   help="catalog id to compare against; repeatable; id@N for N of them")
    model = p.add_mutually_exclusive_group(required=required)
    model.add_argument("--model", help="a preset, e.g. llama-3.1-8b, qwen3-32b, deepseek-v3")
    model.add_argument("--params", type=amount, help="parameter count of a custom model (8e9, 8B)")
    for dim in DIMENSIONS:
        p.add_argument(f"--{dim.replace('_', '-')}", type=whole, help=f"custom model: {dim}")
    p.add_argument("--mlp", choices=["gated", "plain"],
                   help="custom model: gated (SwiGLU, Llama) or plain (GELU, GPT/MPT/Falcon) MLP")
    p.add_argument("--seq-len", type=tokens, action="append",
                   help="sequence length (serve: input tokens per request); repeat to sweep "
                        "(the first is the primary)")
    p.add_argument("--isl", type=tokens, help="serve: input tokens per request (same as --seq-len)")
    p.add_argument("--osl", type=whole, help="serve: output tokens per request")
    p.add_argument("--micro-batch", type=whole,
                   help="sequences per GPU per micro-step as you run it (serving: requests in "
                        "flight); default 1")
    p.add_argument("--global-batch", type=whole, help="sequences per optimizer step")
    if counts:
        p.add_argument("--gpus", type=whole, help="GPU count on each side (default 8)")
        p.add_argument("--current-gpus", type=whole, help="GPU count of the current GPU")
        p.add_argument("--target-gpus", type=whole, help="GPU count of every target")
        p.add_argument("--nodes", type=whole, help="nodes (default: read off the GPU count)")
    for deg in ("tp", "pp", "cp", "ep", "vp"):
        p.add_argument(f"--{deg}", type=whole, help=f"{deg.upper()} degree as you run it")
    p.add_argument("--precision", choices=["bf16", "fp16", "fp8", "fp4", "nvfp4"])
    p.add_argument("--zero", type=int, choices=range(4), help="ZeRO/FSDP stage as you run it")
    p.add_argument("--optimizer", choices=["adamw", "adamw8bit", "sgd"])
    p.add_argument("--checkpointing", action="store_true",
                   help="full activation checkpointing (same as --recompute full)")
    p.add_argument("--recompute", choices=["none", "selective", "full"])
    p.add_argument("--offload-optimizer", action="store_true", help="optimizer state on the CPU")
    p.add_argument("--fused-kernels", action="store_true",
                   help="fused norm/SwiGLU/RoPE and chunked loss (e.g. Liger-Kernel)")
    p.add_argument("--framework", choices=["auto", "megatron", "fsdp", "deepspeed"],
                   help="what runs the training (sets per-step overhead and what re-tuning may "
                        "change); default: read off the layout")
    p.add_argument("--attention-kernel",
                   choices=["auto", "fa2", "fa3", "fa4", "cudnn", "sdpa", "ck"])
    p.add_argument("--packed-doc-len", type=tokens, help="mean document length of packed sequences")
    p.add_argument("--mode", choices=MODES, help="default pretrain")
    p.add_argument("--kv-dtype", choices=["auto", "bf16", "fp8", "fp4"])
    p.add_argument("--ttft-ms", type=plain, help="serve: time-to-first-token limit")
    p.add_argument("--tpot-ms", type=plain, help="serve/decode: time-per-output-token limit")
    p.add_argument("--max-batch", type=whole, help="serving: the engine's batch cap (default 2048)")
    p.add_argument("--token-budget", type=amount, help="tokens to process, for job cost and time")
    p.add_argument("--as-run", action="store_true",
                   help="judge the layouts as you run them instead of each GPU re-tuned")
    p.add_argument("--price", type=keyed("USD", "b200-sxm=6.4", price=True), action="append",
                   default=[], metavar="GPU=USD",
                   help="quoted $/GPU-hour ($6.40/h), or a target's as a ratio to the current "
                        "GPU's (3.4x); GPUs without one use the catalog default")
    p.add_argument("--power-limit", type=keyed("W", "h100-sxm=500"), action="append",
                   default=[], metavar="GPU=W", help="a per-GPU power cap below the part's limit")
    p.add_argument("--electricity", type=plain, help="$/kWh (default 0.12)")
    p.add_argument("--power-cap", type=plain, help="rack power budget, kW")
    p.add_argument("--probe", action="append", default=[], metavar="FILE",
                   help="a probe record; it applies to the GPU it was measured on "
                        "(records imported with `advisor probe import` are used too)")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _workload(args: argparse.Namespace) -> dict[str, Any]:
    """The workload fields given on the command line; the rest stay core's defaults."""
    from advisor.core import ModelSpec

    dims = {d: getattr(args, d) for d in DIMENSIONS if getattr(args, d) is not None}
    if args.mlp is not None:
        dims["gated_mlp"] = args.mlp == "gated"
    if args.model and dims:
        raise InputError("model dimensions go with --params, not with a preset", field="--model",
                         value=args.model)
    seqs = list(args.seq_len or [])
    if args.isl is not None:
        seqs = [args.isl, *(s for s in seqs if s != args.isl)]
    mode = args.mode or ("serve" if args.osl is not None else None)
    given = {
        "mode": mode, "seq_lens": seqs or None, "micro_batch": args.micro_batch,
        "global_batch": args.global_batch, "packed_doc_len": args.packed_doc_len,
        "precision": args.precision, "optimizer": args.optimizer, "zero_stage": args.zero,
        "recompute": args.recompute or ("full" if args.checkpointing else None),
        "offload_optimizer": args.offload_optimizer or None,
        "fused_kernels": args.fused_kernels or None, "framework": args.framework,
        "attention_kernel": args.attention_kernel,
        "tp": args.tp, "pp": args.pp, "cp": args.cp, "ep": args.ep, "vp": args.vp,
        "gpus": getattr(args, "gpus", None), "nodes": getattr(args, "nodes", None),
        "token_budget": args.token_budget, "osl": args.osl, "kv_dtype": args.kv_dtype,
        "ttft_ms": args.ttft_ms, "tpot_ms": args.tpot_ms, "max_batch": args.max_batch,
    }
    data = {k: v for k, v in given.items() if v is not None}
    if args.model or args.params:
        data["model"] = args.model or ModelSpec.from_params(args.params, **dims)
    return data


def _counted(gpu: str, n: int | None) -> str:
    return gpu if n is None or "@" in gpu else f"{gpu}@{n}"


def answers_from_args(args: argparse.Namespace, catalog: Catalog) -> Answers:
    from advisor.core import parse_answers

    targets = _expand_targets(args.target, catalog)
    workload = _workload(args)
    if "seq_lens" not in workload:
        raise InputError("give a sequence length (--seq-len N, or --isl N for serving)",
                         field="--seq-len")
    data: dict[str, Any] = {
        "current": _counted(args.current, getattr(args, "current_gpus", None)),
        "targets": [_counted(t, getattr(args, "target_gpus", None)) for t in targets],
        "workload": workload,
        "prices": {catalog.gpu(g).id: usd for g, usd in args.price},
        "power_limits_w": {catalog.gpu(g).id: w for g, w in args.power_limit},
    }
    if args.power_cap is not None:
        data["power_cap_kw"] = args.power_cap
    if args.electricity is not None:
        data["electricity_usd_per_kwh"] = args.electricity
    if args.as_run:
        data["basis"] = "as_run"
    return parse_answers(data, "command line", catalog)


def _expand_targets(targets: list[str], catalog: Catalog) -> list[str]:
    """`all` (or `all:VENDOR`) stands for every catalog GPU; other ids pass through."""
    out: list[str] = []
    for t in targets:
        head, _, vendor = t.partition(":")
        if head.lower() == "all":
            out += [g.id for g in catalog.gpus
                    if not vendor or g.vendor.lower() == vendor.lower()]
        else:
            out.append(t)
    return out


def cmd_compare(args: argparse.Namespace) -> int:
    from advisor.core import run
    from advisor.io.catalog_store import effective_catalog, provenance
    from advisor.io.probe_store import probes_for

    catalog = effective_catalog()
    answers = answers_from_args(args, catalog)
    ids = [s.gpu for s in answers.compared(catalog)]
    report = run(answers, catalog, probes_for(ids, catalog, args.probe), provenance())
    if args.json:
        print(json.dumps(summary(report), indent=2))
    else:
        print(clean_block(render(report.decision)))
    return 0


# --- JSON -----------------------------------------------------------------------------------------


def _point_json(p: SweepPoint | None) -> dict[str, Any]:
    if p is None:
        return {}
    return {
        "seq_len": p.seq_len, "fits": p.fits, "memory_gib": p.memory_gib,
        "tokens_per_s_per_gpu": p.tokens_per_s_per_gpu,
        "tokens_per_s_cluster": p.tokens_per_s_cluster, "mfu": p.mfu, "binding": p.binding,
        "usd_per_mtok": p.usd_per_mtok, "speedup": p.speedup, "speedup_low": p.speedup_low,
        "speedup_high": p.speedup_high, "buckets": p.bucket_speedup,
        "bucket_seconds": p.bucket_seconds, "bucket_binding": p.bucket_binding,
        "ttft_ms": p.ttft_ms, "tpot_ms": p.tpot_ms,
        "layout": p.layout.model_dump() if p.layout else None,
    }


def _gpu_json(r: GpuResult, primary: int) -> dict[str, Any]:
    p = r.point(primary)
    run_p = next((q for q in r.as_run if q.seq_len == primary), None)
    a = r.assumptions
    v = r.verdict
    return {
        "gpu": r.gpu, "role": r.role, "gpus": r.gpus, "nodes": r.nodes,
        **{k: val for k, val in _point_json(p).items() if k != "seq_len"},
        "as_run": {k: val for k, val in _point_json(run_p).items() if k != "seq_len"},
        "fit_change": r.change_at(primary),
        "max_seq_len": r.memory.max_seq_len,
        "max_seq_len_as_run": r.memory.max_seq_len_as_run,
        "verdict": v.kind if v else None,
        "headline": v.headline if v else None,
        "reasons": [x.text for x in v.reasons] if v else [],
        "flips": [x.text for x in v.flips] if v else [],
        "sensitivity": [s.model_dump() for s in r.sensitivity],
        "dtype_gate": {"passed": r.dtype_gate.passed, "reason": r.dtype_gate.reason},
        "software_gate": r.software_gate.status if r.software_gate else None,
        "problem": r.problem,
        "rate_sources": a.rate_sources if a else {},
        "attention_kernel": a.attention_kernel if a else None,
        "attention_why": a.attention_why if a else None,
        "framework": a.framework if a else None,
        "price": a.price.model_dump() if a and a.price else None,
        "job": r.job.model_dump() if r.job else None,
        "break_even_usd_per_hour": r.break_even_usd_per_hour,
        "break_even_efficiency": r.break_even_efficiency,
        "buy_back": r.buy_back.model_dump() if r.buy_back else None,
        "sweep": [_point_json(q) for q in r.sweep],
        "sweep_as_run": [_point_json(q) for q in r.as_run],
    }


def summary(report: Report) -> dict[str, Any]:
    """The documented --json shape: one object for the current GPU, one per target."""
    d = report.decision
    cal = d.current.assumptions
    out: dict[str, Any] = {
        "primary_seq_len": d.primary_seq_len,
        "basis": d.basis,
        "workload": d.answers.workload.model_dump(mode="json"),
        "assumptions": {
            "gemm_efficiency": cal.gemm_efficiency if cal else None,
            "overlap": cal.overlap if cal else None,
            "framework": cal.framework if cal else None,
            "electricity_usd_per_kwh": d.answers.electricity_usd_per_kwh,
            "electricity_source": d.electricity_source,
            "band_level": d.band_level,
        },
        "defaults": [x.model_dump() for x in d.defaults],
        "current": _gpu_json(d.current, d.primary_seq_len),
        "targets": [_gpu_json(t, d.primary_seq_len) for t in d.targets],
        "notes": d.notes,
        "warnings": report.warnings,
    }
    if report.configs is not None:
        out["configs"] = report.configs.model_dump(mode="json")
    if report.pipeline is not None:
        out["pipeline"] = report.pipeline.model_dump(mode="json")
    return out


# --- text -----------------------------------------------------------------------------------------


def _x(value: float | None) -> str:
    return f"{value:.2f}x" if value is not None else "-"


def _inputs(d: Decision) -> str:
    w = d.answers.workload
    m = w.model
    size = (f"{m.params_total / 1e9:.1f}B params, {m.params_active / 1e9:.1f}B active"
            if m.experts else f"{m.params_total / 1e9:.1f}B params")
    if w.training:
        how = f"{w.mode}, {w.precision}, global batch {w.sequences_per_step} x {w.seq_lens[0]:,}"
    elif w.mode == "serve":
        how = (f"serving {w.precision} weights, {w.kv_bytes:g}-byte KV, input "
               f"{', '.join(f'{s:,}' for s in w.seq_lens)} / output {w.osl:,} tokens")
    else:
        how = f"{w.mode}, {w.precision}, sequence lengths {', '.join(f'{s:,}' for s in w.seq_lens)}"
    defaults = ", ".join(f"{x.field.removeprefix('workload.')}={x.value}" for x in d.defaults
                         if x.field.startswith("workload."))
    return "\n".join([f"Workload: {m.name} ({size}), {how}",
                      f"Defaults (not given by you): {defaults or 'none'}"])


def _evidence(d: Decision) -> str:
    rows = []
    for r in (d.current, *d.targets):
        a = r.assumptions
        if a is None:
            rows.append([r.gpu, "-", "-", "-", "-", r.problem or r.dtype_gate.reason])
            continue
        ev = {e.quantity: e for e in a.evidence}
        mat = next((e for q, e in ev.items() if q.startswith("matmul")), None)
        att, hbm = ev.get("attention"), ev.get("HBM bandwidth")  # a report may lack one

        def cell(e: Evidence | None) -> str:
            return f"{fmt_num(e.value)} {e.source}" if e else "-"

        price = f"${a.price.usd_per_hour:.2f} {a.price.source}" if a.price else "none"
        assumed = "; ".join(e.detail for e in a.evidence
                            if e.source in ("transferred-efficiency", "generic-kernel-ratio"))
        rows.append([r.gpu, cell(mat), f"{a.attention_kernel} {cell(att)}", cell(hbm), price,
                     assumed or "-"])
    table = render_table(
        ["GPU", f"matmul TFLOPS ({d.answers.workload.precision}, sustained)",
         "attention TFLOPS (max)", "HBM GB/s", "price $/h", "assumed"], rows)
    cal = d.current.assumptions
    line = ""
    if cal:
        line = (f"\nModel: {cal.framework} framework, GEMMs at {cal.gemm_efficiency:.0%} of the "
                f"sustained rate, {cal.overlap:.0%} of the overlap window usable to hide "
                f"communication; electricity ${d.answers.electricity_usd_per_kwh}/kWh "
                f"({d.electricity_source})")
    return "Rates and where they come from\n" + table + line


def _layouts(d: Decision) -> str:
    rows = []
    for r in (d.current, *d.targets):
        p = r.point(d.primary_seq_len)
        q = next((x for x in r.as_run if x.seq_len == d.primary_seq_len), None)
        serving = not d.answers.workload.training
        tuned = p.layout.describe(serving) if p and p.layout else "-"
        mine = q.layout.describe(serving) if q and q.layout else "-"
        fit = r.change_at(d.primary_seq_len)
        rows.append([r.gpu, fmt_num(q.tokens_per_s_per_gpu if q else None, 0),
                     fmt_num(p.tokens_per_s_per_gpu if p else None, 0),
                     f"{mine}" + (f" (does not fit: {fit})" if fit else ""), tuned])
    return (f"As you run it and re-tuned, at {d.primary_seq_len:,} tokens\n"
            + render_table(["GPU", "tok/s/GPU as run", "re-tuned", "your layout",
                            "re-tuned layout"], rows))


def _primary(d: Decision) -> str:
    rows = []
    for r in (d.current, *d.targets):
        p = r.point(d.primary_seq_len)
        if p is None:
            continue
        band = (f"{_x(p.speedup)} ({p.speedup_low:.2f}-{p.speedup_high:.2f})"
                if p.speedup is not None and p.speedup_low and p.speedup_high else "-")
        buckets = " ".join(f"{SHORT.get(b, b)} {v:.2f}" for b, v in p.bucket_speedup.items()) or "-"
        rows.append([r.label, fmt_num(p.tokens_per_s_per_gpu, 0), band, buckets,
                     p.binding or "-", "yes" if p.fits else "no",
                     fmt_num(r.memory.max_seq_len, 0), fmt_num(p.usd_per_mtok, 3),
                     r.verdict.kind if r.verdict else "(current)"])
    basis = "re-tuned" if d.basis == "retuned" else "as run"
    return (f"At {d.primary_seq_len:,} tokens ({basis})\n" + render_table(
        ["GPUs", "tok/s/GPU", "speedup (90% band)", "per-bucket speedup", "binding", "fits",
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
        out.append(f"  {r.label}: {v.headline}")
        out += [f"    - {x.text}" for x in v.reasons[:5]]
        out += [f"    flip: {f.text}" for f in v.flips]
        flips = [s for s in r.sensitivity if s.flips]
        for s in flips[:3]:
            tie = f", ties at {fmt_num(s.break_even)} {s.unit}" if s.break_even else ""
            out.append(f"    sensitive to {s.assumption}: {s.verdict_low} at "
                       f"{fmt_num(s.low)} .. {s.verdict_high} at {fmt_num(s.high)} {s.unit}{tie}")
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
                           f"per-GPU communication penalty{cost}")
            else:
                out.append(f"    or buy back the speed: {b.note}")
    return "\n".join(out)


def render(d: Decision) -> str:
    """The human report: inputs, evidence, layouts, the primary point, the sweep, verdicts."""
    parts = [_inputs(d), _evidence(d), _layouts(d), _primary(d), _sweep(d), _verdicts(d),
             "Notes\n" + "\n".join(f"  - {n}" for n in d.notes)]
    return "\n\n".join(parts)
