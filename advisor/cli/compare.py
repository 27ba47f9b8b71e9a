"""`advisor compare`: the headless comparison, current GPU against one or more targets.

Flags build the same Answers the wizard fills and `advisor decide` reads, `run()` does
the work, advisor.present builds its blocks and advisor.cli.render draws them: the verdict
first, then every figure, input and assumption, as text, Markdown, HTML or SVG, or `--json`
for scripts.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from advisor.cli import COMMANDS
from advisor.cli.flags import COMMAND_LINE, errors_name_flags
from advisor.cli.numbers import amount, keyed, plain, tokens, whole
from advisor.cli.output import add_output_options, show
from advisor.cli.schemas import DECISION_SUMMARY, Schema
from advisor.core import InputError, vocabulary
from advisor.present.verdict import flip_text, reason_text, verdict_headline
from advisor.present.words import Dialect

if TYPE_CHECKING:
    from advisor.core import Answers, Catalog, GpuResult, ModelSpec, Report, Stack, SweepPoint

DIMENSIONS = {
    "layers": "layers", "hidden": "hidden size", "heads": "attention heads",
    "kv_heads": "KV heads", "ffn": "MLP intermediate size (of the dense layers)",
    "vocab": "vocabulary", "experts": "routed experts", "active_experts": "experts per token",
    "shared_experts": "always-on shared experts per MoE layer (DeepSeek, Llama 4)",
    "moe_ffn": "expert FFN width: each expert's intermediate size (default --ffn)",
    "dense_layers": "leading layers with a dense MLP, before the first MoE layer",
    "moe_every": "after the dense layers, an MoE layer every N layers (Llama-4 Maverick: 2)",
}
"""The custom model's flags (`--moe-ffn`), keyed as the answers' `model` table keys them."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "compare", help=COMMANDS["compare"],
        description="Project the workload on --current and each --target from the catalog (and "
                    "any probe records), each GPU as you run it and re-tuned for it, and say "
                    "whether moving is worth it.",
    )
    add_workload_args(p, required=True, counts=True)
    p.add_argument("--by", choices=["cost", "time", "energy"], default="cost",
                   help="with --target all: rank by $/token (default), time or energy")
    add_output_options(p)
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
    model.add_argument("--model", help="a preset (llama-3.1-8b, gpt-oss-120b; `advisor models` "
                       "lists them), a Hugging Face config.json or its folder, or a hub id "
                       "(org/name, fetched with huggingface_hub installed)")
    model.add_argument("--params", type=amount, help="parameter count of a custom model (8e9, 8B)")
    for dim, what in DIMENSIONS.items():
        p.add_argument(f"--{dim.replace('_', '-')}", type=whole, help=f"custom model: {what}")
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
    p.add_argument("--precision", choices=vocabulary.PRECISIONS,
                   help="number format of weights and GEMMs on every GPU (default bf16)")
    p.add_argument("--current-precision", choices=vocabulary.PRECISIONS,
                   help="the current GPU's format, e.g. fp8 on the H200 against nvfp4 on a "
                        "B200 (default --precision)")
    p.add_argument("--target-precision", choices=vocabulary.PRECISIONS,
                   help="every target's format (default --precision)")
    p.add_argument("--zero", type=int, choices=range(4), help="ZeRO/FSDP stage as you run it")
    p.add_argument("--optimizer",
                   choices=vocabulary.OPTIMIZERS,
                   help="paged_*: bitsandbytes' paged optimizers, the state in host-backed "
                        "memory that pages in for the update")
    p.add_argument("--checkpointing", action="store_true",
                   help="full activation checkpointing (same as --recompute full)")
    p.add_argument("--recompute", choices=vocabulary.RECOMPUTES)
    p.add_argument("--offload-optimizer", action="store_true", help="optimizer state on the CPU")
    p.add_argument("--fused-kernels", action="store_true",
                   help="fused norm/SwiGLU/RoPE and chunked loss (e.g. Liger-Kernel)")
    p.add_argument("--framework",
                   choices=vocabulary.FRAMEWORKS,
                   help="what runs the job: a training framework (sets per-step overhead and "
                        "what re-tuning may change) or a serving engine; default: read off "
                        "the stack and the layout")
    p.add_argument("--attention-kernel",
                   choices=vocabulary.ATTENTION_KERNEL_NAMES)
    p.add_argument("--packed-doc-len", type=tokens, help="mean document length of packed sequences")
    lora = p.add_argument_group("LoRA", "with --mode lora: the adapters and the frozen base")
    lora.add_argument("--base-format", choices=vocabulary.BASE_FORMATS,
                      help="the frozen base as held: bf16 (default), fp8, int8 (LLM.int8), nf4 "
                           "(bitsandbytes 4-bit, QLoRA) or int4 (GPTQ/AWQ)")
    lora.add_argument("--double-quant", action=argparse.BooleanOptionalAction, default=None,
                      help="nf4: quantize the absmax constants too (QLoRA's default, on)")
    lora.add_argument("--lora-rank", type=whole, help="adapter rank (default 16)")
    lora.add_argument("--lora-targets", metavar="LAYERS",
                      help="comma-separated PEFT module names (q_proj,v_proj; qkv_proj for a "
                           "fused QKV) or all-linear (default)")
    lora.add_argument("--offload-frozen-weights", action="store_true",
                      help="the frozen base on the host, streamed to the GPU each pass")
    lora.add_argument("--allow-quantized-base", action="store_true",
                      help="where the base as given fits nowhere, let the re-tune hold it in "
                           "4-bit NF4 (QLoRA) or offload it")
    p.add_argument("--mode", choices=vocabulary.MODES, help="default pretrain")
    p.add_argument("--kv-dtype", choices=vocabulary.KV_DTYPES,
                   help="serving: KV-cache format on every GPU (auto: fp8 for fp8/fp4 weights)")
    p.add_argument("--current-kv-dtype", choices=vocabulary.KV_DTYPES,
                   help="the current GPU's KV format")
    p.add_argument("--target-kv-dtype", choices=vocabulary.KV_DTYPES,
                   help="every target's KV format")
    p.add_argument("--ttft-ms", type=plain, help="serve: time-to-first-token limit")
    p.add_argument("--tpot-ms", type=plain, help="serve/decode: time-per-output-token limit")
    p.add_argument("--min-tokens-per-user", type=plain, metavar="N",
                   help="serve/decode: the interactivity target, output tokens/s each user "
                        "sees (1000 / TPOT ms); without it, serving shows the curve")
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
    m = p.add_argument_group(
        "your own run", "what your job does today on the current GPU, at the first sequence "
        "length and in your layout: the projection is anchored on it")
    m.add_argument("--measured-tokens-per-s", type=amount, metavar="N",
                   help="tokens/s per GPU (serving: output tokens/s per GPU)")
    m.add_argument("--measured-step-s", type=plain, metavar="S",
                   help="training: seconds per optimizer step at your global batch")
    m.add_argument("--measured-mfu", type=plain, metavar="F", help="training: MFU, 0-1")
    m.add_argument("--measured-attention-share", type=plain, metavar="F",
                   help="share of the step's GPU time in attention, 0-1 (from a profile)")
    m.add_argument("--measured-peak-gib", type=plain, metavar="GIB", help="peak memory per GPU")
    m.add_argument("--measured-concurrency", type=whole, metavar="N",
                   help="serving: requests in flight per replica when measured")
    m.add_argument("--measured-tpot-ms", type=plain, metavar="MS",
                   help="serving: time per output token")
    m.add_argument("--measured-ttft-ms", type=plain, metavar="MS",
                   help="serving: time to first token")
    p.add_argument("--probe", action="append", default=[], metavar="FILE",
                   help="a probe record; it applies to the GPU it was measured on "
                        "(records imported with `advisor probe import` are used too)")
    t = p.add_argument_group(
        "each side's own stack and layout", "the software gate checks every GPU against "
        "the stack it would run; TP/PP/CP/EP above are what runs on --current, and each "
        "target is re-tuned unless given its own")
    t.add_argument("--stack", type=stack_arg, metavar="PKG==VER ...",
                   help="the job's stack, e.g. 'torch==2.5.1+cu124 flash-attn==2.7.4': every "
                        "package named is checked on every GPU, and it names the framework "
                        "(as an answers file's [stack] does)")
    t.add_argument("--target-stack", type=gpu_stack, action="append", default=[],
                   metavar="GPU=PKG==VER ...",
                   help="the stack a target would run instead, e.g. "
                        "'tpu-v5p=torch==2.8.0 torch-xla==2.8.0'; repeatable")
    t.add_argument("--target-layout", type=gpu_layout, action="append", default=[],
                   metavar="GPU=KNOB=V,...",
                   help="a target's own layout, e.g. 'b200-sxm=gpus=4,tp=2,ep=4' (gpus, nodes, "
                        "tp, pp, cp, ep, vp, micro_batch, zero_stage, recompute, precision, "
                        "kv_dtype, ...); repeatable")


def stack_arg(text: str) -> Stack:
    """A stack as typed for --stack (the wizard's grammar)."""
    from advisor.core import parse_stack

    try:
        return parse_stack(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def gpu_stack(text: str) -> tuple[str, Stack]:
    """`GPU=torch==2.8.0 torch-xla==2.8.0` for --target-stack."""
    gpu, sep, rest = text.partition("=")
    if not sep or not gpu.strip() or not rest.strip():
        raise argparse.ArgumentTypeError(
            f"expected GPU=PKG==VER ..., e.g. 'tpu-v5p=torch==2.8.0 torch-xla==2.8.0': {text!r}")
    try:
        return gpu.strip(), stack_arg(rest)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{gpu.strip()}: {exc}") from None


def gpu_layout(text: str) -> tuple[str, dict[str, str]]:
    """`GPU=KNOB=V,KNOB=V` for --target-layout; the answers check each knob and value."""
    from advisor.core import LayoutOverride

    gpu, sep, rest = text.partition("=")
    knobs: dict[str, str] = {}
    for item in rest.split(","):
        key, eq, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or key not in LayoutOverride.model_fields or not value.strip():
            raise argparse.ArgumentTypeError(
                f"expected GPU=KNOB=V,... with knobs from {', '.join(LayoutOverride.model_fields)}"
                f", e.g. 'b200-sxm=gpus=4,tp=2': {text!r}")
        knobs[key] = value.strip()
    if not sep or not gpu.strip():
        raise argparse.ArgumentTypeError(f"expected GPU=KNOB=V,...: {text!r}")
    return gpu.strip(), knobs


def _workload(args: argparse.Namespace) -> dict[str, Any]:
    """The workload fields given on the command line; the rest stay core's defaults."""
    from advisor.io.model_config import read_model

    dims = {d: getattr(args, d) for d in DIMENSIONS if getattr(args, d) is not None}
    if args.mlp is not None:
        dims["gated_mlp"] = args.mlp == "gated"
    if args.model and dims:
        raise InputError("model dimensions go with --params, not with --model (a preset or "
                         "a config names them all)", field="--model", value=args.model)
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
        "min_tokens_per_user": args.min_tokens_per_user,
        "base_format": args.base_format, "double_quant": args.double_quant,
        "lora_rank": args.lora_rank, "lora_targets": args.lora_targets,
        "offload_frozen_weights": args.offload_frozen_weights or None,
        "allow_quantized_base": args.allow_quantized_base or None,
    }
    data = {k: v for k, v in given.items() if v is not None}
    if args.model or args.params is not None:
        data["model"] = (read_model(args.model) if args.model
                         else _custom_model(args.params, dims))
    return data


def _custom_model(params: float, dims: dict[str, Any]) -> ModelSpec:
    """A `--params N` model; a dimension its bounds refuse, or a rule across dimensions
    blames, is named as its flag (`--vocab`; `--active-experts` when it is the one missing),
    and the count itself, or a dimension it inferred, as `--params`."""
    from advisor.core import ModelSpec

    try:
        return ModelSpec.from_params(params, **dims)
    except InputError as exc:
        if exc.field in DIMENSIONS:
            exc.field = f"workload.model.{exc.field}"
        elif exc.field == "declared_params":
            exc.field = "--params"
        raise


def _counted(gpu: str, n: int | None) -> str:
    return gpu if n is None or "@" in gpu else f"{gpu}@{n}"


def answers_from_args(args: argparse.Namespace, catalog: Catalog) -> Answers:
    from advisor.core import parse_answers

    targets = [t for t in args.target if not _is_all(t)]
    workload = _workload(args)
    if "seq_lens" not in workload:
        raise InputError("give a sequence length (--seq-len N, or --isl N for serving)",
                         field="--seq-len")
    data: dict[str, Any] = {
        "current": _counted(args.current, getattr(args, "current_gpus", None)),
        "targets": [_counted(t, getattr(args, "target_gpus", None)) for t in targets],
        "workload": workload,
        "prices": {_gpu_id(catalog, g, "--price"): usd for g, usd in args.price},
        "power_limits_w": {_gpu_id(catalog, g, "--power-limit"): w for g, w in args.power_limit},
        "layouts": _layouts(args, catalog, targets),
        "stacks": {_gpu_id(catalog, g, "--target-stack"): st for g, st in args.target_stack},
    }
    if args.stack is not None:
        data["stack"] = args.stack
    measured = {k: getattr(args, f"measured_{k}", None) for k in (
        "tokens_per_s", "step_s", "mfu", "attention_share", "peak_gib", "concurrency",
        "tpot_ms", "ttft_ms")}
    if any(v is not None for v in measured.values()):
        names = {"tokens_per_s": "tokens_per_s_per_gpu", "peak_gib": "peak_memory_gib"}
        data["measured"] = {names.get(k, k): v for k, v in measured.items() if v is not None}
    if args.power_cap is not None:
        data["power_cap_kw"] = args.power_cap
    if args.electricity is not None:
        data["electricity_usd_per_kwh"] = args.electricity
    if args.as_run:
        data["basis"] = "as_run"
    return parse_answers(data, COMMAND_LINE, catalog)


def _layouts(args: argparse.Namespace, catalog: Catalog, targets: list[str]
             ) -> dict[str, dict[str, str]]:
    """Per-side number formats (`--current-precision fp8 --target-precision nvfp4`) and each
    target's own layout (`--target-layout b200-sxm=gpus=4,tp=2`) as the answers' per-GPU
    layouts hold them."""
    from advisor.core import split_count

    out: dict[str, dict[str, str]] = {}
    for gpu, knobs in args.target_layout:
        out.setdefault(_gpu_id(catalog, gpu, "--target-layout"), {}).update(knobs)
    sides = [("--current", args.current, args.current_precision, args.current_kv_dtype)]
    sides += [("--target", t, args.target_precision, args.target_kv_dtype) for t in targets]
    for flag, gpu, precision, kv in sides:
        given = {k: v for k, v in (("precision", precision), ("kv_dtype", kv)) if v}
        if given:
            try:
                name = split_count(gpu)[0]
            except ValueError as exc:
                raise InputError(str(exc), field=flag, value=gpu) from None
            out.setdefault(_gpu_id(catalog, name, flag), {}).update(given)
    return out


def _gpu_id(catalog: Catalog, gpu: str, flag: str) -> str:
    """The catalog id a flag names; else one line naming the flag."""
    try:
        return catalog.gpu(gpu).id
    except InputError as exc:
        raise InputError(exc.message, field=flag, value=gpu) from None


def _is_all(target: str) -> bool:
    """`all` or `all:VENDOR`: the whole catalog, ranked."""
    return target.partition(":")[0].strip().lower() == "all"


def cmd_compare(args: argparse.Namespace) -> int:
    from advisor.core import run
    from advisor.io.catalog_store import effective_catalog, provenance
    from advisor.io.probe_store import probes_for, workloads_for

    catalog = effective_catalog()
    with errors_name_flags(args.current):
        everything = [t for t in args.target if _is_all(t)]
        if everything:  # `--target all`: the one ranking, as `advisor rank` prints it
            from advisor.cli.rank import show_ranking

            vendors = {t.partition(":")[2].strip() for t in everything}
            if len(vendors) > 1:
                raise InputError("give one --target all or all:VENDOR", field="--target",
                                 value=", ".join(everything))
            if not [t for t in args.target if not _is_all(t)]:
                args.target = [*args.target, args.current]  # answers need one; all replace it
            show_ranking(args, answers_from_args(args, catalog), catalog, vendors.pop() or None,
                         COMMAND_LINE)
            return 0
        answers = answers_from_args(args, catalog)
        ids = [s.gpu for s in answers.compared(catalog)]
        report = run(answers, catalog, probes_for(ids, catalog, args.probe), provenance(),
                     workloads=workloads_for(ids, catalog, args.probe))
    show_report(args, report, kept=False, dialect="flags")
    return 0


def show_report(args: argparse.Namespace, report: Report, *, kept: bool,
                dialect: Dialect = "answers", data: Callable[[], Any] | None = None,
                schema: Schema = DECISION_SUMMARY) -> None:
    """The report as the output flags ask: the verdict first and the details after, as text,
    md, html or svg; `summary` as JSON unless `data` says otherwise; the verdict lines alone
    with --quiet. `kept` adds what a saved report records (prices, probes, provenance);
    `dialect`: where the reader gives inputs (an answers file, or compare's flags)."""
    from advisor.present import decision
    from advisor.present import report as document

    show(args, lambda: document.blocks(report, provenance=kept, dialect=dialect),
         document.title(report),
         data or (lambda: summary(report)), lambda: decision.verdict_summary(report.decision),
         schema=schema)


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
        "ttft_ms": p.ttft_ms, "tpot_ms": p.tpot_ms, "batch": p.batch, "batch_cap": p.batch_cap,
        "kv_batch": p.kv_batch, "uncapped_batch": p.uncapped_batch,
        "uncapped_tokens_per_s_per_gpu": p.uncapped_tokens_per_s_per_gpu,
        "memory_margin_gib": p.memory_margin_gib, "borderline": p.borderline,
        "layout": p.layout.model_dump() if p.layout else None,
        "frozen_base": p.frozen_base.model_dump() if p.frozen_base else None,
    }


def _key(quantity: str) -> str:
    """A quantity's name as a JSON key: `HBM bandwidth` is `hbm_bandwidth`."""
    return re.sub(r"[^a-z0-9]+", "_", quantity.lower()).strip("_")


def _gpu_json(r: GpuResult, primary: int) -> dict[str, Any]:
    p = r.point(primary)
    run_p = next((q for q in r.as_run if q.seq_len == primary), None)
    a = r.assumptions
    v = r.verdict
    return {
        "gpu": r.gpu, "role": r.role, "gpus": r.gpus, "nodes": r.nodes,
        "precision": r.precision, "kv_bytes": r.kv_bytes,
        "framework": r.framework or (a.framework if a else None),
        **{k: val for k, val in _point_json(p).items() if k != "seq_len"},
        "as_run": {k: val for k, val in _point_json(run_p).items() if k != "seq_len"},
        "fit_change": r.change_at(primary),
        "base_options": [o.model_dump() for o in r.base_options.get(str(primary), [])],
        "max_seq_len": r.memory.max_seq_len,
        "max_seq_len_as_run": r.memory.max_seq_len_as_run,
        "verdict": v.kind if v else None,
        "headline": verdict_headline(v, r.gpu) if v else None,
        "reasons": [reason_text(x) for x in v.reasons] if v else [],
        "flips": [flip_text(x, r.gpu) for x in v.flips] if v else [],
        "sensitivity": [s.model_dump() for s in r.sensitivity],
        "dtype_gate": {"passed": r.dtype_gate.passed, "reason": r.dtype_gate.reason},
        "software_gate": r.software_gate.status if r.software_gate else None,
        "problem": r.problem,
        "rate_sources": {_key(q): src for q, src in a.rate_sources.items()} if a else {},
        "attention_kernel": a.attention_kernel if a else None,
        "attention_why": a.attention_why if a else None,
        "price": a.price.model_dump() if a and a.price else None,
        "job": r.job.model_dump() if r.job else None,
        "modelled_tokens_per_s_per_gpu": r.modelled_tokens_per_s_per_gpu,
        "break_even_usd_per_hour": r.break_even_usd_per_hour,
        "break_even_efficiency": r.break_even_efficiency,
        "buy_back": r.buy_back.model_dump() if r.buy_back else None,
        "sweep": [_point_json(q) for q in r.sweep],
        "sweep_as_run": [_point_json(q) for q in r.as_run],
        "curve": [c.model_dump() for c in r.curve],
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
        "anchor": d.anchor.model_dump() if d.anchor else None,
        "interactivity": [x.model_dump() for x in d.interactivity],
    }
    if report.configs is not None:
        out["configs"] = report.configs.model_dump(mode="json")
    if report.pipeline is not None:
        out["pipeline"] = report.pipeline.model_dump(mode="json")
    return out

