"""`advisor catalog`: browse the GPU catalog and the source behind every figure, or pull the
team's own catalog over it."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from advisor.cli.prices import PULL_HELP, add_pull_options, run_pull
from advisor.core import InputError, clean_block
from advisor.textfmt import fmt_num, render_table

if TYPE_CHECKING:  # pydantic models: loaded when a command runs, not for `advisor --help`
    from advisor.core import Catalog, Gpu, Sourced

CATALOG_PULL_HELP = """\
A team catalog is TOML or JSON with any of the shipped tables: [[gpu]], [[arch]],
[[package]], [[support]], [[price]]. It is merged entry by entry: gpu, arch and
package by id, support by (package, arch, variant), price by (gpu, label). A
pulled entry replaces the shipped one with the same key, new keys are added and
nothing shipped is removed. A pulled price with default = true becomes its GPU's
default.
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("catalog", help="list and inspect the GPU catalog, or pull a team one")
    csub = p.add_subparsers(dest="catalog_command", metavar="SUBCOMMAND", required=True)

    lst = csub.add_parser("list", help="one line per accelerator, with its sources")
    lst.add_argument("query", nargs="?", default="", help="loose id/name filter, e.g. h100")
    lst.add_argument("--vendor", help="NVIDIA, AMD, Intel, Google or AWS (case-insensitive)")
    lst.add_argument("--json", action="store_true", help="machine-readable output")
    lst.set_defaults(handler=cmd_list)

    show = csub.add_parser("show", help="every figure of one accelerator, with source and date")
    show.add_argument("gpu", help="catalog id; loose: `h100` shows every H100 variant")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.set_defaults(handler=cmd_show)

    pull = csub.add_parser(
        "pull", help="fetch a team catalog (TOML or JSON) and merge it over the shipped one",
        description=CATALOG_PULL_HELP + "\n" + PULL_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_pull_options(pull)
    pull.set_defaults(handler=lambda args: run_pull("catalog", args))



def _filtered(catalog: Catalog, query: str, vendor: str | None) -> list[Gpu]:
    gpus = catalog.match(query) if query else list(catalog.gpus)
    if query and not gpus:
        catalog.gpu(query)  # raises with suggestions
    if vendor:
        vendors = {g.vendor.lower() for g in catalog.gpus}
        if vendor.lower() not in vendors:
            raise InputError(
                f"unknown vendor; known: {', '.join(sorted(vendors))}",
                field="--vendor", value=vendor,
            )
        gpus = [g for g in gpus if g.vendor.lower() == vendor.lower()]
    return gpus


def _sources(g: Gpu) -> list[Sourced | Any]:
    groups: list[Any] = [g.memory, g.interconnect, g.power, g.peak_tflops, *g.mamf.values()]
    return [s for s in groups if s is not None]


def _newest(g: Gpu) -> str:
    return max(s.retrieved for s in _sources(g)).isoformat()


def _source_count(g: Gpu) -> int:
    return len({c for s in _sources(g) for c in s.source})


def cmd_list(args: argparse.Namespace) -> int:
    from advisor.io.catalog_store import effective_catalog

    catalog = effective_catalog()
    gpus = _filtered(catalog, args.query, args.vendor)
    if args.json:
        print(json.dumps([g.model_dump(mode="json") for g in gpus], indent=2))
        return 0
    rows = []
    for g in gpus:
        mem = g.memory
        mamf = g.mamf.get("bf16")
        rows.append([
            g.id,
            g.vendor,
            g.arch,
            fmt_num(mem.gib if mem else None, 0),
            fmt_num(mem.bandwidth_tbps if mem else None, 2),
            fmt_num(g.peak_tflops.fp16, 0),
            fmt_num(g.peak_tflops.bf16, 0),
            fmt_num(g.peak_tflops.fp8, 0),
            fmt_num(mamf.tflops if mamf else None, 0),
            fmt_num(g.power.tdp_w if g.power else None, 0),
            f"{_source_count(g)} ({_newest(g)})",
        ])
    print(render_table(
        ["id", "vendor", "arch", "mem GB", "TB/s", "fp16 TF", "bf16 TF", "fp8 TF", "bf16 MAMF",
         "TDP W",
         "sources (newest)"],
        rows,
    ))
    print(f"\n{len(gpus)} accelerators. Peaks are dense TFLOPS; `advisor catalog show ID` "
          "prints every figure with its source and retrieval date.")
    return 0


def _group_lines(title: str, group: Any, fields: list[tuple[str, str]]) -> list[str]:
    if group is None:
        return [f"  {title}: not published (unknown)"]
    values = ", ".join(
        f"{label} {fmt_num(v) if isinstance(v, float | int) else v}".strip()
        for label, attr in fields
        if (v := getattr(group, attr)) is not None
    )
    out = [f"  {title}: {values}"]
    if getattr(group, "note", ""):
        out.append(f"      note: {group.note}")
    out.append(f"      source: {'; '.join(group.source)} (retrieved {group.retrieved})")
    return out


def describe(g: Gpu, catalog: Catalog) -> str:
    arch = catalog.arch_of(g)
    price = catalog.default_price(g.id)
    lines = [
        f"{g.name}  [{g.id}]",
        f"  vendor {g.vendor}, {g.form_factor}, {g.family} ({g.arch}"
        + (f", compute capability {g.compute_capability})" if g.compute_capability else ")"),
        f"  hardware formats: {', '.join(arch.formats)}",
    ]
    lines += _group_lines("memory", g.memory, [("GB", "gib"), ("type", "kind"),
                                               ("TB/s", "bandwidth_tbps")])
    if g.interconnect:
        ic = g.interconnect
        lines += _group_lines("interconnect", ic, [("kind", "kind"), ("GB/s", "gbps"),
                                                   ("", "direction"), ("host link", "host_link")])
    else:
        lines.append("  interconnect: not published (unknown)")
    lines += _group_lines("power", g.power, [("TDP W", "tdp_w"), ("idle W", "idle_w")])
    peaks = g.peak_tflops
    peak_txt = ", ".join(f"{d} {fmt_num(v)}" for d, v in peaks.items()) or "none published"
    lines.append(f"  dense peak TFLOPS: {peak_txt}"
                 + ("  (vendor published sparse; halved)" if peaks.sparse_halved else ""))
    if peaks.note:
        lines.append(f"      note: {peaks.note}")
    lines.append(f"      source: {'; '.join(peaks.source)} (retrieved {peaks.retrieved})")
    if g.mamf:
        for dtype, m in g.mamf.items():
            eff = g.mamf_efficiency(dtype)
            eff_txt = f", {eff:.1%} of peak" if eff else ""
            lines.append(f"  MAMF {dtype}: {fmt_num(m.tflops)} TFLOPS{eff_txt} at {m.shape}"
                         + (f", torch {m.torch}" if m.torch else ""))
            if m.note:
                lines.append(f"      note: {m.note}")
            lines.append(f"      source: {'; '.join(m.source)} (retrieved {m.retrieved})")
    else:
        lines.append("  MAMF: none published; projections fall back to an efficiency assumption")
    if price:
        lines.append(f"  default price: ${price.usd_per_hour:.2f}/GPU-hour ({price.label}; a "
                     f"default, replace with your quote) source: {'; '.join(price.source)} "
                     f"(retrieved {price.retrieved})")
    else:
        lines.append("  default price: none published; quote your own")
    for u in g.uncertain:
        lines.append(f"  open question: {u}")
    return "\n".join(lines)


def cmd_show(args: argparse.Namespace) -> int:
    from advisor.io.catalog_store import effective_catalog

    catalog = effective_catalog()
    gpus = catalog.match(args.gpu)
    if not gpus:
        catalog.gpu(args.gpu)  # raises with suggestions
    if args.json:
        out: Any = [g.model_dump(mode="json") for g in gpus]
        print(json.dumps(out[0] if len(out) == 1 else out, indent=2))
        return 0
    print(clean_block("\n\n".join(describe(g, catalog) for g in gpus)))
    return 0
