"""Command-line plumbing shared by `python -m probes run` and `advisor probe`.

Stdlib only at import (torch loads when a run starts), so both CLIs start fast
and define the same flags in one place.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from probes.plan import PROBES, SuiteConfig

EXIT_INPUT_ERROR = 2
EXIT_INTERRUPTED = 130


def _csv(text: str | None) -> tuple[str, ...] | None:
    if not text:
        return None
    return tuple(p.strip() for p in text.split(",") if p.strip())


def _ints(text: str | None, flag: str) -> tuple[int, ...] | None:
    parts = _csv(text)
    if parts is None:
        return None
    try:
        return tuple(
            int(p.lower().removesuffix("k")) * (1024 if p.lower().endswith("k") else 1)
            for p in parts
        )
    except ValueError:
        raise ValueError(
            f"{flag} takes comma-separated integers, e.g. 1024,4096 or 1k,4k"
        ) from None


def add_suite_arguments(parser: argparse.ArgumentParser) -> None:
    preset = parser.add_mutually_exclusive_group()
    preset.add_argument(
        "--quick",
        dest="preset",
        action="store_const",
        const="quick",
        help="bf16 MAMF, one attention length and bandwidth (about 25 s on a GPU)",
    )
    preset.add_argument(
        "--full",
        dest="preset",
        action="store_const",
        const="full",
        help="every dtype, the 1k-32k attention sweep, node health",
    )
    parser.set_defaults(preset="default")
    parser.add_argument(
        "--exhaustive",
        action="store_true",
        help="matmul: sweep the full mamf-finder grid (15-30 min per dtype on a GPU) "
        "instead of the time-budgeted search",
    )
    parser.add_argument(
        "--dtype",
        action="append",
        metavar="DTYPE",
        help="matmul dtypes: bf16, fp16, tf32, fp32, fp8 (repeat, or comma-separate)",
    )
    parser.add_argument("--only", metavar="PROBES", help=f"run only these: {','.join(PROBES)}")
    parser.add_argument(
        "--health",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="matmul on every local GPU at once and report the spread (default: on with --full, "
        "and in the default preset on multi-GPU nodes)",
    )
    parser.add_argument("--budget", type=float, metavar="S", help="seconds per matmul dtype search")
    parser.add_argument(
        "--seq-lens", metavar="LIST", help="attention sequence lengths, e.g. 1k,4k,16k"
    )
    parser.add_argument("--head-dims", metavar="LIST", help="attention head dims, e.g. 64,128")
    parser.add_argument(
        "--gqa-ratio", type=int, default=1, help="query heads per KV head (default 1)"
    )
    parser.add_argument(
        "--catalog-id", help="catalog entry to compare with, when the name does not match"
    )
    parser.add_argument(
        "--device",
        choices=("auto", "cuda", "rocm", "mps", "cpu"),
        default="auto",
        help="force a device kind (default: the best available)",
    )
    parser.add_argument("--json", action="store_true", help="print the record as JSON on stdout")
    parser.add_argument(
        "--out", metavar="FILE", help="write the record here (also after each probe)"
    )


def config_from_args(args: argparse.Namespace) -> SuiteConfig:
    dtypes = _csv(",".join(args.dtype)) if args.dtype else None
    return SuiteConfig(
        preset=args.preset,
        exhaustive=args.exhaustive,
        dtypes=dtypes,
        only=_csv(args.only),
        health=args.health,
        catalog_id=args.catalog_id,
        device=args.device,
        budget_s=args.budget,
        seq_lens=_ints(args.seq_lens, "--seq-lens"),
        head_dims=_ints(args.head_dims, "--head-dims"),
        gqa_ratio=args.gqa_ratio,
    )


class ProgressPrinter:
    """Plain progress lines on stderr: each stage's start, then at most one line per interval."""

    def __init__(self, stream: TextIO | None = None, interval_s: float = 1.0) -> None:
        self.stream = stream or sys.stderr
        self.interval = interval_s
        self.stage: str | None = None
        self.last = 0.0

    def __call__(self, event: Any) -> None:
        now = time.monotonic()
        if event.stage == self.stage and now - self.last < self.interval:
            return
        self.stage, self.last = event.stage, now
        print(
            f"[{event.fraction:4.0%}] {event.stage}: {event.message}", file=self.stream, flush=True
        )


def _fmt(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:.4g}{unit}"


def _seq(n: int) -> str:
    return f"{n // 1024}k" if n % 1024 == 0 else str(n)


def format_summary(record: dict[str, Any]) -> str:
    """A short human-readable account of a record."""
    dev = record["stamp"]["device"]
    catalog = dev["catalog_id"] or dev["catalog_note"]
    lines = [f"{dev['name']} ({dev['kind']} x{dev['count']}); catalog: {catalog}"]
    for m in record["matmul"]:
        if m["status"] != "ok":
            lines.append(f"matmul {m['dtype']}: {m['status']}: {m['reason']}")
            continue
        shape = "x".join(map(str, m["best_shape"]))
        eff = f", {m['efficiency']:.0%} of peak" if m["efficiency"] is not None else ""
        lines.append(
            f"matmul {m['dtype']}: MAMF {_fmt(m['mamf_tflops'])} TFLOPS (median "
            f"{_fmt(m['median_tflops'])}) at {shape}, {m['shapes_tried']} shapes in "
            f"{m['seconds']:.1f} s{eff}; {m['verdict']}"
        )
    rows: dict[tuple[Any, ...], list[str]] = {}
    for a in record["attention"]:
        key = (a["backend"], a["head_dim"], a["causal"], a["direction"])
        value = _fmt(a["tflops_median"]) if a["status"] == "ok" else a["status"]
        rows.setdefault(key, []).append(f"{_seq(a['seq_len'])} {value}")
    for (backend, d, causal, direction), cells in rows.items():
        mask = "causal" if causal else "full"
        lines.append(f"attention {backend} d={d} {mask} {direction} TFLOPS: {' | '.join(cells)}")
    for b in record["bandwidth"]:
        if b["status"] != "ok":
            lines.append(f"bandwidth {b['kind']}: {b['status']}: {b['reason']}")
            continue
        frac = (
            f", {b['fraction']:.0%} of {b['catalog_gbps']:g}" if b["fraction"] is not None else ""
        )
        lines.append(f"bandwidth {b['kind']}: {_fmt(b['gbps_median'])} GB/s{frac}")
    for c in record["collectives"]:
        shown = f"busbw {_fmt(c['busbw_gbps'])} GB/s" if c["status"] == "ok" else c["reason"]
        lines.append(f"all_reduce {c['bytes'] / 2**20:g} MiB x{c['world_size']}: {shown}")
    health = record.get("node_health")
    if health:
        if health["status"] == "ok":
            slowest = f"GPU {health['slowest_index']} at {_fmt(health['node_tflops'])} TFLOPS"
            lines.append(f"node health: spread {health['spread']:.1%}, slowest {slowest}")
        lines.extend(f"warning: {w}" for w in health.get("warnings", []))
    state = "complete" if record["complete"] else "INTERRUPTED: partial record"
    lines.append(f"{record['seconds_total']:.1f} s, {state}")
    return "\n".join(lines)


Writer = Callable[[dict[str, Any], str], Any]


def run_command(
    args: argparse.Namespace,
    write: Writer,
    check: Callable[[dict[str, Any]], Any] | None = None,
    prog: str = "probes",
) -> int:
    """Run the suite from parsed flags: progress on stderr, record to --out and/or stdout."""
    from probes.runner import run_suite

    try:
        config = config_from_args(args)
        record = run_suite(
            config,
            progress=ProgressPrinter(),
            checkpoint=(lambda r: write(r, args.out)) if args.out else None,
        )
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    if args.out:
        write(record, args.out)
        print(f"{prog}: record written to {args.out}", file=sys.stderr)
    if check is not None:
        check(record)
    if args.json:
        print(json.dumps(record, indent=2, ensure_ascii=False))
    else:
        print(format_summary(record))
    return EXIT_INTERRUPTED if record["interrupted"] else 0
