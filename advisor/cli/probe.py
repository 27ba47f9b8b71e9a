"""`advisor probe`: measure what this box achieves and write a probe record.

The same suite and flags as `python -m probes run` (the standalone path for a
rented box): the flags are defined once in probes.cli, a stdlib-only module.
torch and the probes themselves load only when the command runs.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from advisor.cli import COMMANDS
from advisor.core import InputError

DESCRIPTION = """\
Runs the on-device probes: matmul burst MAMF and sustained MSMF (a time-budgeted
shape search, or the full grid with --exhaustive), attention TFLOPS per kernel,
memory and host-link bandwidth, and with --health the spread across local GPUs.
The default suite takes about a minute on a datacenter GPU; on a CPU it runs at
toy sizes and says so. Ctrl-C stops after the current measurement and keeps the
partial record (a second Ctrl-C stops at once). For all-reduce bandwidth run
`torchrun --standalone --nproc-per-node N -m probes collectives --out FILE`.

With --workload ANSWERS it measures your own model instead: the answers file's
workload (its model preset or [workload.model] table, first sequence length,
micro-batch, precision, attention kernel, mode) built with torch at fewer layers,
training steps or prefill and decode steps, with the time split into attention,
GEMM and the rest (the same probe as `python -m probes workload` on a rented box).
"""

# The answers' attention kernels, as the workload probe names them.
_KERNELS = {"auto": "auto", "sdpa": "sdpa", "fa2": "flash-attn-2", "fa3": "flash-attn-3",
            "fa4": "flash-attn-4", "cudnn": "sdpa-cudnn", "ck": "flash-attn-2-ck",
            "vendor": "auto"}


def _suite_only() -> dict[str, Any]:
    """The suite's flags that mean nothing to the workload probe, with their defaults, read
    off the probes' own parsers (the suite's flags less those every probe takes)."""
    from advisor.probes.cli import add_common_arguments, add_suite_arguments

    def defaults(add: Callable[[argparse.ArgumentParser], None]) -> dict[str, Any]:
        parser = argparse.ArgumentParser(add_help=False)
        add(parser)
        return vars(parser.parse_args([]))

    common = defaults(add_common_arguments)
    return {k: v for k, v in defaults(add_suite_arguments).items() if k not in common}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from advisor.probes.cli import add_suite_arguments

    p = sub.add_parser(
        "probe", help=COMMANDS["probe"],
        description=DESCRIPTION,
    )
    add_suite_arguments(p)
    p.add_argument("--workload", metavar="ANSWERS",
                   help="measure the answers file's own model (preset or [workload.model], "
                   "sequence length, micro-batch, precision, attention kernel) at fewer layers "
                   "instead of the suite")
    p.set_defaults(handler=cmd_probe, keeps_partial=True)  # Ctrl-C is a KeyboardInterrupt
    psub = p.add_subparsers(dest="probe_command", metavar="import")
    imp = psub.add_parser("import", help="file a probe record made on another box, by GPU")
    imp.add_argument("file", help="a record from `advisor probe` or `python -m probes`")
    imp.add_argument("--gpu", help="catalog id to file it under, when the record names none")
    imp.set_defaults(handler=cmd_import)


def cmd_import(args: argparse.Namespace) -> int:
    from advisor.io.probe_store import import_command

    return import_command(args.file, args.gpu)


EXIT_INTERRUPTED = 130


@contextlib.contextmanager
def _sigint_held() -> Iterator[None]:
    """Hold Ctrl-C for the few milliseconds of a record write; it is delivered right after.

    The write is atomic anyway; holding it keeps the record on disk and what we say about
    it in step (no "written" for a write that a second Ctrl-C cut short)."""
    main = threading.current_thread() is threading.main_thread()
    if main:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        if main:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def cmd_probe(args: argparse.Namespace) -> int:
    """Run the suite. Ctrl-C is exit 130 with no traceback at every moment: during a
    measurement the suite stops after it and keeps the partial record (probes.runner); at
    any other moment (torch loading, the last write, the summary) we land here and say
    honestly what is on disk, rewriting the last checkpoint as interrupted if need be."""
    from advisor.io.measure import torch_missing

    missing = torch_missing()
    if missing:
        raise InputError(missing)
    from advisor.core import parse_probe_record
    from advisor.io.atomic import check_output_path, is_stream
    from advisor.probes.cli import run_command

    if args.workload:
        args.workload_config = workload_config(args)
    if args.out:
        check_output_path(args.out, example="box.json")  # before measuring, not after
    write = RecordWriter(stream=bool(args.out) and is_stream(args.out))

    def check(record: dict[str, Any]) -> None:
        write.final = record
        parse_probe_record(record, args.out or "probe run")  # the mirror must accept our own record

    try:
        return run_command(args, write, check, prog="advisor")
    except KeyboardInterrupt:
        return _interrupted(args.out, write)


def workload_config(args: argparse.Namespace) -> Any:
    """The workload probe's explicit shape and settings from an answers file, read with
    advisor's own loader (presets resolved, defaults filled); what the one-device probe
    cannot run is carried into the record's notes."""
    from advisor.io.documents import load_answers
    from advisor.probes.workload_shape import ShapeError, WorkloadConfig, shape_from_mapping

    for flag, default in _suite_only().items():
        if getattr(args, flag, default) != default:
            name = "--quick/--full" if flag == "preset" else "--" + flag.replace("_", "-")
            raise InputError(f"{name} applies to the probe suite, not to --workload")
    file = args.workload
    w = load_answers(file).workload
    m = w.model
    unbuilt = [what for what, has in (
        ("multi-head latent attention", m.mla is not None),
        ("leading dense layers in an MoE", m.dense_layers > 0),
        ("MoE layers interleaved with dense ones", m.moe_every > 1),
        ("sliding-window attention", m.sliding_window is not None)) if has]
    if unbuilt:
        raise InputError(f"the workload probe does not build {unbuilt[0]} ({m.name})",
                         file=file, field="workload.model", value=m.name)
    shape = {"name": m.name, "hidden": m.hidden, "layers": m.layers, "heads": m.heads,
             "kv_heads": m.kv_heads, "head_dim": m.d_head, "ffn": m.ffn, "vocab": m.vocab,
             "mlp": "swiglu" if m.gated_mlp else "gelu", "tie_embeddings": m.tie_embeddings,
             "experts": m.experts, "active_experts": m.active_experts,
             "expert_ffn": m.expert_ffn if m.experts else 0,
             "shared_experts": m.shared_experts}
    try:
        return WorkloadConfig(
            shape=shape_from_mapping(shape, f"{file}: workload.model"),
            mode=w.mode, seq_len=w.seq_lens[0], micro_batch=w.micro_batch,
            precision=w.precision, attention=_KERNELS[w.attention_kernel],
            recompute=w.recompute, osl=w.osl, device=args.device, lora_rank=w.lora_rank,
            catalog_id=args.catalog_id, source=file, notes=tuple(_not_run(w)),
        ).checked(file)
    except ShapeError as exc:
        raise InputError(str(exc)) from None


def _not_run(w: Any) -> list[str]:
    """What of the answers' workload one device running the model does not reproduce."""
    notes = []
    if len(w.seq_lens) > 1:
        notes.append(f"answers: measured at the primary sequence length {w.seq_lens[0]} of "
                     f"{', '.join(map(str, w.seq_lens))}")
    layout = [f"{k} {v}" for k, v in (("tp", w.tp), ("pp", w.pp), ("cp", w.cp), ("ep", w.ep))
              if v > 1]
    if w.training and w.zero_stage:
        layout.append(f"ZeRO stage {w.zero_stage}")
    if w.training and w.offload_optimizer:
        layout.append("optimizer offload")
    if w.gpus > 1 or layout:
        notes.append(f"answers: one device runs the whole micro-batch; the {w.gpus} GPUs' "
                     f"communication{' and ' + ', '.join(layout) if layout else ''} are not "
                     "measured")
    if w.training and w.accumulation > 1:
        notes.append(f"answers: {w.accumulation} micro-steps per optimizer step; the probe "
                     "steps the optimizer every micro-step")
    if w.training and w.optimizer != "adamw":
        notes.append(f"answers: optimizer {w.optimizer} measured as AdamW")
    if w.fused_kernels:
        notes.append("answers: fused kernels (Liger-style) are not built; norms, RoPE and the "
                      "MLP activation run as eager torch ops")
    if w.mode == "lora" and (w.base_format != "bf16" or w.offload_frozen_weights):
        notes.append(f"answers: the frozen base is built in 16 bits on the device, not "
                     f"{w.base_format}{', offloaded' if w.offload_frozen_weights else ''}: "
                     "no dequantisation or host streaming is measured")
    if w.mode == "lora" and w.lora_targets != ("all-linear",):
        notes.append(f"answers: adapters on every linear layer (the fused QKV, output, "
                     f"gate-up and down projections), not only {', '.join(w.lora_targets)}")
    if w.packed_doc_len:
        notes.append(f"answers: packed documents of {w.packed_doc_len} tokens are not built; "
                     "attention is causal over the whole sequence")
    if not w.training and w.kv_dtype not in ("auto", "bf16"):
        notes.append(f"answers: KV cache in {w.kv_dtype} is not built; it is held in the "
                     "compute precision")
    return notes


class RecordWriter:
    """Writes each checkpoint and the final record to --out; no measurement is ever lost.

    A device, FIFO or descriptor gets only the final record (one document). When --out
    cannot be written after all (the disk filled, the folder went), the record goes on to
    a fallback file in the advisor data folder, and the final write fails with one line
    that says where the record is. It remembers the last record on disk and the one the
    suite returned, so a Ctrl-C between them can be described honestly.
    """

    def __init__(self, stream: bool = False) -> None:
        self.stream = stream
        self.fallback: Path | None = None
        self.failure: InputError | None = None
        self.last: dict[str, Any] | None = None  # the last record on disk
        self.final: dict[str, Any] | None = None  # the record the suite returned

    def __call__(self, record: dict[str, Any], path: str) -> None:
        final = bool(record.get("complete") or record.get("interrupted"))
        if self.stream and not final:
            return
        with _sigint_held():
            self._write(record, path, final)
            self.last = copy.deepcopy(record)

    def _write(self, record: dict[str, Any], path: str, final: bool) -> None:
        from advisor.io.atomic import write_output
        from advisor.io.paths import unsaved_path
        from advisor.probes.record import to_json

        text = to_json(record)
        if self.fallback is None:
            try:
                write_output(path, text)
                return
            except InputError as exc:
                self.failure = exc
                self.fallback = unsaved_path("probe", ".json")
                print(f"advisor: warning: {exc.one_line()}; keeping the record in "
                      f"{self.fallback} instead", file=sys.stderr)
        write_output(self.fallback, text, create_parents=True)
        if final and self.failure is not None:
            raise InputError(f"{self.failure.message}; the record is saved in {self.fallback}",
                             file=self.failure.file)

    def where(self, out: str) -> str:
        return str(self.fallback or out)


def _interrupted(out: str | None, writer: RecordWriter) -> int:
    final, last = writer.final, writer.last
    if final is not None:  # the suite had finished and the record was written
        state = "complete" if final.get("complete") else "partial (the run was interrupted)"
        where = f"; the record in {writer.where(out)} is {state}" if out else ""
        print(f"advisor: interrupted after the probes finished{where}", file=sys.stderr)
    elif last is not None and out:  # a checkpoint is on disk: say that it is partial
        done = {**last, "complete": False, "interrupted": True}
        done["notes"] = [*done.get("notes", []), "interrupted (Ctrl-C) between measurements"]
        writer(done, out)
        counts = ", ".join(f"{len(done.get(k) or [])} {k}" for k in
                           ("matmul", "attention", "bandwidth") if done.get(k))
        runs = [r for p in (done.get("workload") or {}).get("phases", []) for r in p["runs"]
                if r.get("step_ms_median")]
        if runs:
            counts = f"{len(runs)} workload run{'s' if len(runs) > 1 else ''}"
        print(f"advisor: interrupted; partial record ({counts or 'no results yet'}) written to "
              f"{writer.where(out)}", file=sys.stderr)
    else:
        print("advisor: interrupted before any measurement; nothing was written",
              file=sys.stderr)
    return EXIT_INTERRUPTED
