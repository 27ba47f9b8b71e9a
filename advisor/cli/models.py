"""`advisor models`: the model presets `--model` and answers files name, with their sizes.

The presets copy each model's published `config.json` (the source column); any other model
is `--model PATH/config.json` (its Hugging Face config), or `--params N` with its dimensions.
"""

from __future__ import annotations

import argparse

from advisor.cli import COMMANDS
from advisor.cli.output import add_output_options, chosen, show
from advisor.cli.schemas import MODELS


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("models", help=COMMANDS["models"],
                       description="Every model preset with its parameter count (total and, "
                                   "for a mixture of experts, active per token), shape, "
                                   "context length and source.")
    p.add_argument("query", nargs="?", default="", help="only presets whose name holds this")
    add_output_options(p)
    p.set_defaults(handler=cmd_models)


def cmd_models(args: argparse.Namespace) -> int:
    from advisor.core import PRESETS
    from advisor.present.blocks import Col, Table
    from advisor.present.humanize import NA, count

    chosen(args)
    specs = [m for name, m in PRESETS.items() if args.query.lower() in name]
    rows = [[m.name, count(m.params_total), count(m.params_active) if m.experts else NA,
             str(m.layers), f"{m.hidden:,}", f"{m.heads}/{m.kv_heads}",
             f"{m.active_experts}/{m.experts}" if m.experts else NA, f"{m.vocab:,}",
             f"{m.max_context:,}" if m.max_context else NA, m.source]
            for m in specs]
    table = Table(
        [Col("preset"), Col("parameters", numeric=True), Col("active", "per token", numeric=True),
         Col("layers", numeric=True, drop=4), Col("hidden", numeric=True, drop=3),
         Col("heads", "q/kv", numeric=True, drop=5),
         Col("experts", "active/all", numeric=True, drop=2),
         Col("vocab", numeric=True, drop=6), Col("context", "tokens", numeric=True, drop=1),
         Col("source", drop=7)],
        rows, notes=[f"{len(specs)} presets. Context: the longest the model supports (with "
                     "YaRN where its model card says so); a serving input is capped there, a "
                     "training length is not (context extension trains past it).",
                     "Another model: --model PATH/config.json (or its folder, or a hub id "
                     "org/name) reads its Hugging Face config."])
    show(args, lambda: [table], "advisor models",
         lambda: {"models": [m.model_dump(mode="json") | {"params_total": m.params_total,
                                                          "params_active": m.params_active}
                             for m in specs]},
         lambda: [m.name for m in specs], schema=MODELS)
    return 0
