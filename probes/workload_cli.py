"""`python -m probes workload`: the flags of the workload probe, stdlib only.

    python -m probes workload --shape llama-3.1-8b.toml --seq-len 8k --out box.json
    python -m probes workload --hidden 4096 --layers 32 --heads 32 --kv-heads 8 \\
        --ffn 14336 --vocab 128256 --seq-len 8192 --micro-batch 1 --precision bf16

The shape comes from a JSON or TOML shape file (see probes.workload_shape for its keys),
from flags, or both (a flag overrides the file's value). `advisor probe --workload
answers.toml` resolves presets and defaults itself and hands over the same explicit shape.
"""

from __future__ import annotations

import argparse
from typing import Any

from .workload_shape import (
    ATTENTION_KERNELS,
    MLPS,
    MODE_ALIASES,
    MODES,
    PRECISIONS,
    RECOMPUTE,
    WorkloadConfig,
    read_shape_file,
    shape_from_mapping,
)

DESCRIPTION = """\
Builds your model's shape with torch at fewer layers than the whole model (1 and up to
4 on a GPU, as memory allows), at your sequence length, micro-batch, precision and
attention kernel, and times training steps (forward, backward, AdamW) or, for serving,
prefill and decode steps over a KV cache. The record keeps each depth's step time,
tokens/s, peak memory and the split of device time into attention, GEMM and the rest
(torch profiler), the time one layer adds, and the whole model extrapolated on one
device. About a minute on a GPU; on a CPU it runs at toy sizes and says so. Ctrl-C stops
after the current step and keeps what was measured.
"""

# Flag -> shape field, for the dimensions a shape file also holds.
_SHAPE_FLAGS = {
    "hidden": "hidden", "layers": "layers", "heads": "heads", "kv_heads": "kv_heads",
    "head_dim": "head_dim", "ffn": "ffn", "vocab": "vocab", "mlp": "mlp",
    "experts": "experts", "active_experts": "active_experts", "expert_ffn": "expert_ffn",
    "shared_experts": "shared_experts", "name": "name",
}


def _count(text: str) -> int:
    """An integer, with k for 1024 (8k = 8192), as the suite's --seq-lens."""
    low = text.strip().lower()
    try:
        return int(low[:-1]) * 1024 if low.endswith("k") else int(low)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def add_workload_arguments(parser: argparse.ArgumentParser) -> None:
    shape = parser.add_argument_group("the model's shape (or --shape FILE)")
    shape.add_argument("--shape", metavar="FILE",
                       help="a JSON or TOML file of the dimensions (a record's workload.shape "
                       "has the same form)")
    shape.add_argument("--name", help="a label for the model")
    for flag, helptext in (
        ("hidden", "hidden size"), ("layers", "the whole model's layers"),
        ("heads", "query heads"), ("kv-heads", "KV heads (GQA; default: heads)"),
        ("head-dim", "per-head width (default: hidden / heads)"),
        ("ffn", "MLP intermediate size"), ("vocab", "vocabulary size"),
        ("experts", "routed experts (mixture of experts)"),
        ("active-experts", "routed experts per token"),
        ("expert-ffn", "each expert's intermediate size (default: --ffn)"),
        ("shared-experts", "always-on shared experts"),
    ):
        shape.add_argument(f"--{flag}", type=_count, metavar="N", help=helptext)
    shape.add_argument("--mlp", choices=MLPS, help="gated SwiGLU (default) or a GELU MLP")
    shape.add_argument("--tie-embeddings", action="store_true", default=None,
                       help="the LM head shares the embedding's weights")
    run = parser.add_argument_group("how it runs")
    run.add_argument("--mode", default="train", choices=(*MODES, *MODE_ALIASES),
                     help="train (pretrain, finetune), lora, prefill, decode or serve")
    run.add_argument("--seq-len", type=_count, default=4096, metavar="N",
                     help="tokens per sequence; for serving, the prompt (default 4096)")
    run.add_argument("--micro-batch", type=_count, default=1, metavar="N",
                     help="sequences per step; for serving, requests in flight (default 1)")
    run.add_argument("--osl", type=_count, metavar="N",
                     help="serve: output tokens per request (decode runs at seq-len + osl/2)")
    run.add_argument("--precision", default="bf16", choices=PRECISIONS,
                     help="bf16 (default), fp16, fp8 where the GPU and torch have it; fp4 "
                     "and the MX and NVFP4 formats are measured at bf16 and say so")
    run.add_argument("--attention", default="auto", choices=ATTENTION_KERNELS,
                     help="auto/sdpa: SDPA's own choice (the record names it); or pin one")
    run.add_argument("--recompute", default="none", choices=RECOMPUTE,
                     help="full: activation checkpointing of every layer")
    run.add_argument("--lora-rank", type=_count, default=16, metavar="R",
                     help="lora mode: adapter rank (default 16)")
    run.add_argument("--depth", type=_count, metavar="N",
                     help="the deeper of the two depths run (default: up to 4 on a GPU, as "
                     "memory allows)")
    run.add_argument("--budget", type=float, metavar="S",
                     help="seconds of measuring, shared by the depths (default 40 on a GPU, "
                     "8 on a CPU)")
    from .cli import add_common_arguments

    add_common_arguments(parser)


def add_workload_parser(sub: Any) -> argparse.ArgumentParser:
    """The `workload` subcommand on `python -m probes`."""
    parser = sub.add_parser(
        "workload",
        help="your model's training or serving step, measured at fewer layers",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_workload_arguments(parser)
    return parser


def workload_config_from_args(args: argparse.Namespace) -> WorkloadConfig:
    """The config the flags describe; ShapeError (a ValueError) names a bad field."""
    data: dict[str, Any] = {}
    source = "flags"
    if args.shape:
        data = read_shape_file(args.shape)
        source = args.shape
    given = {field: getattr(args, flag) for flag, field in _SHAPE_FLAGS.items()
             if getattr(args, flag) is not None}
    if args.tie_embeddings:
        given["tie_embeddings"] = True
    if given and args.shape:
        source = f"{args.shape} with flags"
        if "head_dim" not in given and ("hidden" in given or "heads" in given):
            data.pop("head_dim", None)  # derived from the file's hidden and heads
    data.update(given)
    if not args.shape:
        missing = [f for f in ("hidden", "layers", "heads", "ffn", "vocab") if f not in data]
        if missing:
            flags = ", ".join(f"--{m}" for m in missing)
            raise ValueError(f"give the model's shape: --shape FILE, or {flags}")
    return WorkloadConfig(
        shape=shape_from_mapping(data, source),
        mode=args.mode,
        seq_len=args.seq_len,
        micro_batch=args.micro_batch,
        precision=args.precision,
        attention=args.attention,
        recompute=args.recompute,
        osl=args.osl,
        lora_rank=args.lora_rank,
        depth=args.depth,
        budget_s=args.budget,
        device=args.device,
        catalog_id=args.catalog_id,
        source=source,
    ).checked("flags")
