"""`advisor catalog`: browse the GPU catalog and the source behind every figure, or pull the
team's own catalog over it."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from advisor.cli import COMMANDS
from advisor.cli.output import add_output_options, show
from advisor.cli.prices import PULL_HELP, add_pull_options, run_pull
from advisor.cli.schemas import CATALOG
from advisor.core import InputError
from advisor.present.blocks import Block, Bullets, Col, Heading, Para, Table
from advisor.present.humanize import NA, UNKNOWN, fmt_num, number, peak

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
    p = sub.add_parser(
        "catalog", help=COMMANDS["catalog"])
    csub = p.add_subparsers(dest="catalog_command", metavar="SUBCOMMAND", required=True)

    lst = csub.add_parser("list", help="one line per accelerator, with its sources")
    lst.add_argument("query", nargs="?", default="", help="loose id/name filter, e.g. h100")
    lst.add_argument("--vendor", help="NVIDIA, AMD, Intel, Google or AWS (case-insensitive)")
    add_output_options(lst)
    lst.set_defaults(handler=cmd_list)

    show_p = csub.add_parser("show", help="every figure of one accelerator, with source and date")
    show_p.add_argument("gpu", help="catalog id; loose: `h100` shows every H100 variant")
    add_output_options(show_p, json_help="machine-readable output, a list of every match "
                                         "(same as --format json)")
    show_p.set_defaults(handler=cmd_show)

    pull = csub.add_parser(
        "pull", help="fetch a team catalog (TOML or JSON) and merge it over the shipped one",
        description=CATALOG_PULL_HELP + "\n" + PULL_HELP,
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


def list_table(gpus: list[Gpu], catalog: Catalog) -> Table:
    rows = []
    for g in gpus:
        mem = g.memory
        mamf = g.mamf.get("bf16")
        formats = catalog.arch_of(g).formats
        rows.append([
            g.id, g.vendor, g.arch,
            number(mem.gib) if mem else UNKNOWN,
            number(mem.bandwidth_tbps, 2) if mem else UNKNOWN,
            *(peak(g, formats, d) for d in ("fp16", "bf16", "fp8")),
            number(mamf.tflops) if mamf else (UNKNOWN if "bf16" in formats else NA),
            number(g.power.tdp_w) if g.power and g.power.tdp_w else UNKNOWN,
            f"{_source_count(g)} ({_newest(g)})",
            *_price_cells(catalog, g),
        ])
    return Table(
        [Col("id"), Col("vendor", drop=7), Col("arch", drop=6),
         Col("memory", "GiB", numeric=True), Col("HBM", "TB/s", numeric=True),
         Col("fp16", "TFLOPS", numeric=True, drop=5), Col("bf16", "TFLOPS", numeric=True),
         Col("fp8", "TFLOPS", numeric=True, drop=1),
         Col("bf16 MAMF", "TFLOPS", numeric=True, drop=3),
         Col("TDP", "W", numeric=True, drop=4), Col("sources", "(newest)", drop=2),
         Col("price", "$/GPU-h", numeric=True), Col("quotes", "(newest)")],
        rows, notes=[f"{len(gpus)} accelerators, {sum(1 for r in rows if r[-1] != NONE)} with "
                     "a default price: the median of that many dated public on-demand quotes, "
                     "one per provider, newest dated (a default until you quote your own; `—` "
                     "none found). Peaks "
                     "are dense; `advisor catalog show ID` prints every figure and every "
                     "quote with its source and date."])


NONE = "—"


def _price_cells(catalog: Catalog, g: Gpu) -> list[str]:
    """[$/GPU-hour, quotes (newest)]: the default price and how many dated quotes it is the
    median of (a pulled sheet's price is one), or none."""
    price = catalog.default_price(g.id)
    if price is None:
        return [NONE, NONE]
    quotes = len(price.source) - 1 if price.source[0].startswith(PRICE_REFERENCE) else 1
    return [f"{price.usd_per_hour:.2f}", f"{quotes} ({price.retrieved.isoformat()})"]


PRICE_REFERENCE = "../shared/reference/gpu-prices-2026.md"


def cmd_list(args: argparse.Namespace) -> int:
    from advisor.io.catalog_store import effective_catalog

    catalog = effective_catalog()
    gpus = _filtered(catalog, args.query, args.vendor)
    show(args, lambda: [list_table(gpus, catalog)], "advisor catalog",
         lambda: {"gpus": [_with_price(g, catalog) for g in gpus]},
         lambda: [g.id for g in gpus], schema=CATALOG)
    return 0


def _with_price(g: Gpu, catalog: Catalog) -> dict[str, Any]:
    price = catalog.default_price(g.id)
    return {**g.model_dump(mode="json"),
            "default_price": price.model_dump(mode="json") if price else None}


def _figures(group: Any, fields: list[tuple[str, str]]) -> str:
    """`180 GiB, HBM3e, 8 TB/s`: each published figure with its unit, as precise as given."""
    parts = []
    for attr, unit in fields:
        v = getattr(group, attr)
        if v is None:
            continue
        text = fmt_num(v) if isinstance(v, float | int) and not isinstance(v, bool) else str(v)
        parts.append(f"{text} {unit}".strip())
    return ", ".join(parts)


def _cited(group: Any) -> str:
    return f"{'; '.join(group.source)} (retrieved {group.retrieved})"


def describe(g: Gpu, catalog: Catalog) -> list[Block]:
    """Every figure of one GPU with its source and retrieval date: one row per group."""
    arch = catalog.arch_of(g)
    price = catalog.default_price(g.id)
    cc = f", compute capability {g.compute_capability}" if g.compute_capability else ""
    rows: list[list[str]] = []
    notes: list[str] = []
    sources: dict[str, int] = {}  # cited text -> its number, each source listed once

    def add(title: str, group: Any, figures: str) -> None:
        if group is None:
            rows.append([title, f"{UNKNOWN} not published", ""])
            return
        number_of = sources.setdefault(_cited(group), len(sources) + 1)
        rows.append([title, figures, str(number_of)])
        if getattr(group, "note", ""):
            notes.append(f"{title}: {group.note}")

    add("memory", g.memory, _figures(g.memory, [("gib", "GiB"), ("kind", ""),
                                                ("bandwidth_tbps", "TB/s")]))
    ic = g.interconnect
    add("interconnect", ic, _figures(ic, [("kind", ""), ("gbps", "GB/s"), ("direction", ""),
                                          ("domain_gpus", "GPUs a domain"),
                                          ("host_link", "host link")]) if ic else "")
    add("power", g.power, _figures(g.power, [("tdp_w", "W TDP"), ("idle_w", "W idle")])
        if g.power else "")
    peaks = g.peak_tflops
    add("dense peak TFLOPS", peaks, ", ".join(f"{d} {fmt_num(v)}" for d, v in peaks.items())
        + ("  (published sparse; halved)" if peaks.sparse_halved else ""))
    for dtype, m in g.mamf.items():
        eff = g.mamf_efficiency(dtype)
        add(f"MAMF {dtype}", m, f"{fmt_num(m.tflops)} TFLOPS" + (f", {eff:.1%} of peak" if eff
                                                                 else "")
            + f" at {m.shape}" + (f", torch {m.torch}" if m.torch else ""))
    if not g.mamf:
        rows.append(["MAMF", f"{UNKNOWN} not published: projections use an efficiency "
                             "assumption", ""])
    if price:
        add("default price", price, f"${price.usd_per_hour:.2f}/GPU-hour ({price.label}; a "
                                    "default: quote your own)")
    else:
        rows.append(["default price", f"{UNKNOWN} none published: quote your own", ""])
    out: list[Block] = [
        Heading(f"{g.name} [{g.id}]"),
        Para(f"{g.vendor}, {g.form_factor}, {g.family} ({g.arch}{cc}); hardware formats: "
             f"{', '.join(arch.formats)}"),
        Table([Col("figure"), Col("value"), Col("source", numeric=True)], rows),
        Bullets([f"[{n}] {text}" for text, n in sources.items()], title="Sources"),
    ]
    if notes:
        out.append(Bullets(notes, title="Notes"))
    if g.uncertain:
        out.append(Bullets(g.uncertain, title="Open questions"))
    return out


def cmd_show(args: argparse.Namespace) -> int:
    from advisor.io.catalog_store import effective_catalog

    catalog = effective_catalog()
    gpus = catalog.match(args.gpu)
    if not gpus:
        catalog.gpu(args.gpu)  # raises with suggestions
    show(args, lambda: [b for g in gpus for b in describe(g, catalog)],
         f"advisor catalog: {args.gpu}",
         lambda: {"gpus": [_with_price(g, catalog) for g in gpus]},  # however many match
         lambda: [f"{g.id}: {g.name}" for g in gpus], schema=CATALOG)
    return 0
