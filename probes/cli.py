"""Command-line plumbing shared by `python -m probes run` and `advisor probe`.

Stdlib only at import (torch loads when a run starts), so both CLIs start fast
and define the same flags in one place. `run_command` checks the output path
before anything is measured, takes over Ctrl-C before torch is imported, and
never loses a finished measurement: if the named file cannot be written at the
end, the record goes to a fallback file whose path it prints.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from .interrupts import EXIT_INTERRUPTED, command_scope
from .output import (
    OutputError,
    Saved,
    Target,
    check_target,
    save_fallback,
    save_record_text,
    write_text,
)
from .plan import PROBES, TOY_NOTE, SuiteConfig

EXIT_INPUT_ERROR = 2
EXIT_BROKEN_PIPE = 141  # what a shell reports for a coreutils tool ended by SIGPIPE


def _csv(text: str | None) -> tuple[str, ...] | None:
    if not text:
        return None
    return tuple(p.strip() for p in text.split(",") if p.strip())


def _ints(text: str | None, flag: str) -> tuple[int, ...] | None:
    parts = _csv(text)
    if parts is None:
        return None
    try:
        values = tuple(
            int(p.lower().removesuffix("k")) * (1024 if p.lower().endswith("k") else 1)
            for p in parts
        )
    except ValueError:
        raise ValueError(
            f"{flag} takes comma-separated integers, e.g. 1024,4096 or 1k,4k"
        ) from None
    if any(v <= 0 or v > 2**20 for v in values):
        raise ValueError(f"{flag} takes integers between 1 and 1048576")
    return values


def add_suite_arguments(parser: argparse.ArgumentParser) -> None:
    preset = parser.add_mutually_exclusive_group()
    preset.add_argument(
        "--quick",
        dest="preset",
        action="store_const",
        const="quick",
        help="bf16 MAMF, one attention length and bandwidth (about 30 s on a GPU)",
    )
    preset.add_argument(
        "--full",
        dest="preset",
        action="store_const",
        const="full",
        help="every dtype, the 1k-32k attention sweep, node health (about 5 min on a GPU)",
    )
    parser.set_defaults(preset="default")
    parser.add_argument(
        "--exhaustive",
        action="store_true",
        help="matmul: measure every shape of the search space (8,000 shapes, mamf-finder's "
        "50+100 iterations each: 1-2 h per dtype on a GPU) instead of the quick search",
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
        help="matmul on every local GPU at once for seconds, and the spread (default: on "
        "with --full, and in the default preset on multi-GPU nodes)",
    )
    parser.add_argument(
        "--budget", type=float, metavar="S", help="seconds per matmul dtype (quick search)"
    )
    parser.add_argument(
        "--seq-lens", metavar="LIST", help="attention sequence lengths, e.g. 1k,4k,16k"
    )
    parser.add_argument("--head-dims", metavar="LIST", help="attention head dims, e.g. 64,128")
    parser.add_argument(
        "--gqa-ratio", type=int, default=1, help="query heads per KV head (default 1)"
    )
    add_common_arguments(parser)


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags every measuring command shares: the device, the catalog entry, the output."""
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
        "--out",
        metavar="FILE",
        help="write the record here (a file is rewritten after each stage; a FIFO or "
        "character device such as /dev/stdout gets it once, at the end)",
    )


Start = Callable[..., dict[str, Any]]


def measurement_from_args(args: argparse.Namespace) -> Start:
    """What the flags ask to measure, checked before anything loads: the workload probe
    (`python -m probes workload`, or the config `advisor probe --workload` put on args as
    `workload_config`), else the suite. torch loads only when the returned call runs."""
    workload = getattr(args, "workload_config", None)
    if workload is None and getattr(args, "command", None) == "workload":
        from .workload_cli import workload_config_from_args

        workload = workload_config_from_args(args)
    if workload is not None:
        checked = workload.checked()

        def run_workload(**kwargs: Any) -> dict[str, Any]:
            from .workload import run_workload

            return run_workload(checked, **kwargs)

        return run_workload
    config = config_from_args(args)

    def run_suite(**kwargs: Any) -> dict[str, Any]:
        from .runner import run_suite

        return run_suite(config, **kwargs)

    return run_suite


def config_from_args(args: argparse.Namespace) -> SuiteConfig:
    dtypes = _csv(",".join(args.dtype)) if args.dtype else None
    budget = args.budget
    if budget is not None and not (math.isfinite(budget) and 0 < budget <= 86400):
        raise ValueError("--budget takes seconds between 0 and 86400")
    return SuiteConfig(
        preset=args.preset,
        exhaustive=args.exhaustive,
        dtypes=dtypes,
        only=_csv(args.only),
        health=args.health,
        catalog_id=args.catalog_id,
        device=args.device,
        budget_s=budget,
        seq_lens=_ints(args.seq_lens, "--seq-lens"),
        head_dims=_ints(args.head_dims, "--head-dims"),
        gqa_ratio=args.gqa_ratio,
    )


class ProgressPrinter:
    """Plain progress lines on stderr: each stage's start, then at most one line per interval.
    A closed stderr silences it; it never stops a measurement."""

    def __init__(self, stream: TextIO | None = None, interval_s: float = 1.0) -> None:
        self.stream = stream or sys.stderr
        self.interval = interval_s
        self.stage: str | None = None
        self.last = 0.0
        self.dead = False

    def __call__(self, event: Any) -> None:
        if self.dead:
            return
        now = time.monotonic()
        if event.stage == self.stage and now - self.last < self.interval:
            return
        self.stage, self.last = event.stage, now
        try:
            print(
                f"[{event.fraction:4.0%}] {event.stage}: {event.message}",
                file=self.stream,
                flush=True,
            )
        except (OSError, ValueError):
            self.dead = True


def _fmt(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:.4g}{unit}"


def _seq(n: int) -> str:
    return f"{n // 1024}k" if n % 1024 == 0 else str(n)


def _shape(shape: list[int] | None) -> str:
    return "x".join(map(str, shape)) if shape else "-"


def _matmul_line(m: dict[str, Any]) -> str:
    if m["status"] != "ok":
        return f"matmul {m['dtype']}: {m['status']}: {m['reason']}"
    clock = f" at {m['mamf_clock_mhz']:.0f} MHz" if m.get("mamf_clock_mhz") else ""
    if m.get("mamf_power_w"):
        clock += f", {m['mamf_power_w']:.0f} W"
    state = m.get("msmf_state") or {}
    sustained = ""
    if state.get("sm_clock_mhz_median"):
        sustained = f" at {state['sm_clock_mhz_median']:.0f} MHz"
    if state.get("power_w_median"):
        sustained += f", {state['power_w_median']:.0f} W"
    eff = f", {m['efficiency']:.0%} of peak" if m.get("efficiency") is not None else ""
    search = m.get("search") or {}
    how = f"{m['mode']}, {m['shapes_tried']} shapes, {search.get('stopped_by', '?')}"
    line = (
        f"matmul {m['dtype']}: MAMF {_fmt(m.get('mamf_tflops'))} TFLOPS (burst) at "
        f"{_shape(m.get('mamf_shape'))}{clock}; MSMF {_fmt(m.get('msmf_tflops'))} TFLOPS "
        f"(sustained, spread {_fmt(m.get('msmf_spread_pct'))}%) at "
        f"{_shape(m.get('msmf_shape'))}{sustained}; {how}, {m['seconds']:.1f} s{eff}"
    )
    if m.get("verdict"):
        line += f"; {m['verdict']}"
    if m.get("reason"):
        line += f" ({m['reason']})"
    return line


def format_summary(record: dict[str, Any]) -> str:
    """A short human-readable account of a record."""
    dev = record["stamp"]["device"]
    catalog = dev["catalog_id"] or dev["catalog_note"]
    lines = []
    if dev["kind"] in ("cpu", "mps"):
        if record.get("workload"):
            from .workload_record import WORKLOAD_TOY_NOTE

            lines.append(f"NOTE: {WORKLOAD_TOY_NOTE}")
        else:
            lines.append(f"NOTE: {TOY_NOTE}")
    lines.append(f"{dev['name']} ({dev['kind']} x{dev['count']}); catalog: {catalog}")
    lines.extend(_matmul_line(m) for m in record["matmul"])
    rows: dict[tuple[Any, ...], list[str]] = {}
    for a in record["attention"]:
        kernel = a.get("kernel") or a["backend"]
        key = (kernel, a["head_dim"], a["causal"], a["direction"])
        value = _fmt(a["tflops_median"]) if a["status"] == "ok" else a["status"]
        rows.setdefault(key, []).append(f"{_seq(a['seq_len'])} {value}")
    for (kernel, d, causal, direction), cells in rows.items():
        mask = "causal" if causal else "full"
        lines.append(f"attention {kernel} d={d} {mask} {direction} TFLOPS: {' | '.join(cells)}")
    for b in record["bandwidth"]:
        if b["status"] != "ok":
            lines.append(f"bandwidth {b['kind']}: {b['status']}: {b['reason']}")
            continue
        frac = (
            f", {b['fraction']:.0%} of {b['catalog_gbps']:g}" if b["fraction"] is not None else ""
        )
        size = b.get("buffer_bytes") or b["bytes"]
        lines.append(
            f"bandwidth {b['kind']}: {_fmt(b['gbps_median'])} GB/s "
            f"({size / 2**20:.0f} MiB buffers){frac}"
        )
    for c in record["collectives"]:
        shown = f"busbw {_fmt(c['busbw_gbps'])} GB/s" if c["status"] == "ok" else c["reason"]
        lines.append(f"all_reduce {c['bytes'] / 2**20:g} MiB x{c['world_size']}: {shown}")
    if record.get("workload"):
        from .workload_record import workload_lines

        lines.extend(workload_lines(record["workload"]))
    health = record.get("node_health")
    if health:
        if health["status"] == "ok":
            slowest = f"GPU {health['slowest_index']} at {_fmt(health['node_tflops'])} TFLOPS"
            lines.append(f"node health: spread {health['spread']:.1%}, slowest {slowest}")
        lines.extend(f"warning: {w}" for w in health.get("warnings", []))
    stages = record.get("stages") or []
    if stages:
        shown = ", ".join(
            f"{s['name']} {s['seconds']:.1f} s (planned {s['estimate_s']:.1f})"
            if s["seconds"] is not None
            else f"{s['name']} {s['status']}"
            for s in stages
        )
        lines.append(f"stages: {shown}")
    if record["complete"]:
        state = "complete"
    elif record["interrupted"]:
        done = ", ".join(record.get("stages_finished", [])) or "none"
        state = f"INTERRUPTED: partial record (stages finished: {done})"
    else:
        state = "incomplete"
    lines.append(f"{record['seconds_total']:.1f} s, {state}")
    return "\n".join(lines)


Writer = Callable[[dict[str, Any], str], Any]


def _say(prog: str, message: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(f"{prog}: {message}", file=sys.stderr, flush=True)


def _quiet_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the exit-time flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _save(record: dict[str, Any], target: Target, write: Writer | None) -> Saved:
    from .record import to_json

    text = to_json(record)
    if write is not None and target.atomic:
        try:
            write(record, str(target.path))  # the resolved path: a symlink stays a symlink
            return Saved(target.path)
        except OSError as exc:
            path = save_fallback(text)
            return Saved(path, f"{target.given}: {exc.strerror or exc}", fallback=True)
    return save_record_text(target, text)


def _torch_missing() -> bool:
    """Whether torch cannot be found; finding its spec imports nothing."""
    import importlib.util

    try:
        return importlib.util.find_spec("torch") is None
    except (ImportError, ValueError):  # a broken or half-removed install
        return True


def run_command(
    args: argparse.Namespace,
    write: Writer | None = None,
    check: Callable[[dict[str, Any]], Any] | None = None,
    prog: str = "probes",
) -> int:
    """Run the suite from parsed flags: progress on stderr, record to --out and/or stdout."""
    with command_scope(prog) as interrupts:
        try:
            start = measurement_from_args(args)
        except ValueError as exc:
            _say(prog, f"error: {exc}")
            return EXIT_INPUT_ERROR
        target: Target | None = None
        if args.out:
            try:
                target = check_target(args.out)  # before anything is measured
            except OutputError as exc:
                _say(prog, f"error: {exc}")
                return EXIT_INPUT_ERROR
        if _torch_missing():
            _say(prog, "error: torch is not installed here: install torch (2.4 or later) or "
                 "gpu-upgrade-advisor[probe] to measure this box")
            return EXIT_INPUT_ERROR

        problems: list[str] = []

        def checkpoint(record: dict[str, Any]) -> None:
            """After each stage, so a killed run keeps what it had; a failure here only warns
            (the final write falls back to another file if it fails too)."""
            assert target is not None
            if not target.repeatable:
                return
            try:
                if write is not None:
                    write(record, str(target.path))
                else:
                    from .record import to_json

                    write_text(target, to_json(record))
            except OSError as exc:
                if not problems:
                    problems.append(str(exc))
                    _say(prog, f"warning: could not update {target.given} "
                         f"({exc.strerror or exc}); carrying on")

        try:
            record = start(  # torch loads here; Ctrl-C still exits 130 cleanly
                progress=ProgressPrinter(),
                checkpoint=checkpoint if target is not None else None,
            )
        except ValueError as exc:  # no such device, unknown --catalog-id: nothing measured
            _say(prog, f"error: {exc}")
            return EXIT_INPUT_ERROR
        status = 0
        if target is not None:
            saved = _save(record, target, write)
            if saved.error is None:
                if target.kind not in ("stdout", "stderr"):
                    _say(prog, f"record written to {target.given}")
            elif saved.path is not None:
                _say(prog, f"error: {saved.error}; the record is saved in {saved.path}")
                status = EXIT_INPUT_ERROR
            else:
                _say(prog, f"error: {saved.error}, and no fallback file could be written")
                status = EXIT_INPUT_ERROR
        if check is not None:
            check(record)
        try:
            if args.json:
                print(json.dumps(record, indent=2, ensure_ascii=False))
            elif target is None or target.kind != "stdout":
                print(format_summary(record))
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_stdout()
            if target is None and args.json:  # stdout was the only copy: keep it
                from .record import to_json

                path = save_fallback(to_json(record))
                if path is not None:
                    _say(prog, f"output pipe closed; the record is saved in {path}")
            return EXIT_INTERRUPTED if interrupts.requested else EXIT_BROKEN_PIPE
        if interrupts.requested or record["interrupted"]:
            if record["complete"]:
                _say(prog, "interrupted after the last stage; the record is complete")
            return EXIT_INTERRUPTED
        return status
