"""The probe-suite runner: the one API the CLIs (and later the TUI) call.

`run_suite(config, progress, stop, checkpoint)` returns the record. Progress
goes to a callback; a stop flag (anything with `is_set()`, e.g. a
threading.Event) is checked between measurements; the first Ctrl-C in the main
thread sets it too, the second raises. Either way the partial record comes back
with complete=false and interrupted=true. A probe that cannot run records why
and the suite carries on.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from probes import nvml
from probes.attention import run_attention
from probes.bandwidth import run_bandwidth
from probes.device import Device, detect
from probes.errors import describe
from probes.figures import CatalogMatch, match_device
from probes.health import run_health, throttle_warnings
from probes.matmul import run_matmul
from probes.plan import SuiteConfig, SuitePlan, plan_suite
from probes.record import new_record
from probes.stamp import collect_stamp, gpu_identity


@dataclass(frozen=True)
class Progress:
    stage: str  # "matmul bf16", "attention", "bandwidth", "node health"
    message: str
    fraction: float  # of the whole suite, 0..1


class StopFlag(Protocol):
    def is_set(self) -> bool: ...


class _Stop:
    """The caller's flag, or-ed with Ctrl-C."""

    def __init__(self, outer: StopFlag | None) -> None:
        self.outer = outer
        self.requested = False

    def __call__(self) -> bool:
        self.requested = self.requested or bool(self.outer is not None and self.outer.is_set())
        return self.requested


@contextmanager
def _ctrl_c_stops(stop: _Stop) -> Iterator[None]:
    """First Ctrl-C: finish the current measurement and stop. Second: raise at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        if stop.requested:
            raise KeyboardInterrupt
        stop.requested = True

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:  # None: the old handler was not set from Python; fall back to the default
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)


@dataclass(frozen=True)
class Context:
    """What every stage needs about the box."""

    device: Device
    identity: dict[str, Any]
    match: CatalogMatch
    plan: SuitePlan


Report = Callable[[float, str], None]
Stage = tuple[str, Callable[[dict[str, Any], Report, _Stop], None]]


def _matmul_stage(ctx: Context, dtype: str) -> Stage:
    def run(record: dict[str, Any], report: Report, stop: _Stop) -> None:
        record["matmul"].append(
            run_matmul(
                ctx.device,
                dtype,
                exhaustive=ctx.plan.exhaustive,
                budget_s=ctx.plan.budget_s[dtype],
                capability=ctx.identity["capability"],
                gcn_arch=ctx.identity["gcn_arch"],
                gpu=ctx.match.gpu,
                catalog_note=ctx.match.note,
                should_stop=stop,
                report=report,
            )
        )

    return f"matmul {dtype}", run


def _attention_stage(ctx: Context) -> Stage:
    plan = ctx.plan.attention
    assert plan is not None

    def run(record: dict[str, Any], report: Report, stop: _Stop) -> None:
        entries, notes = run_attention(ctx.device, plan, should_stop=stop, report=report)
        record["attention"].extend(entries)
        record["notes"].extend(f"attention: {n}" for n in notes)

    return "attention", run


def _bandwidth_stage(ctx: Context) -> Stage:
    nbytes = ctx.plan.bandwidth_bytes
    assert nbytes is not None

    def run(record: dict[str, Any], report: Report, stop: _Stop) -> None:
        record["bandwidth"].extend(
            run_bandwidth(
                ctx.device,
                nbytes,
                ctx.plan.bandwidth_effort,
                gpu=ctx.match.gpu,
                catalog_note=ctx.match.note,
                should_stop=stop,
                report=report,
            )
        )

    return "bandwidth", run


def _health_shape(record: dict[str, Any], device: Device) -> tuple[int, int, int]:
    """The bf16 best shape if the matmul probe found one, else a large square."""
    for entry in record["matmul"]:
        if entry["dtype"] == "bf16" and entry["status"] == "ok":
            m, n, k = entry["best_shape"]
            return m, n, k
    side = 8192 if device.is_gpu else 512
    return side, side, side


def _health_stage(ctx: Context) -> Stage:
    def run(record: dict[str, Any], report: Report, stop: _Stop) -> None:
        devices = [ctx.device.at(i) for i in range(ctx.device.count)]
        shape = _health_shape(record, ctx.device)
        report(0.0, f"bf16 {'x'.join(map(str, shape))} on {len(devices)} GPU(s) at once")
        record["node_health"] = run_health(
            devices, "bf16", shape, ctx.plan.health_effort, ctx.identity["uuids"]
        )

    return "node health", run


def _health_skip_reason(ctx: Context) -> str:
    if not ctx.device.is_gpu:
        return f"node health compares GPUs; this is a {ctx.device.kind.upper()} run"
    if ctx.device.count < 2:
        return "one GPU: no spread to measure"
    return f"not part of the {ctx.plan.preset} preset (use --health)"


def stages(ctx: Context) -> list[Stage]:
    out = [_matmul_stage(ctx, d) for d in ctx.plan.dtypes]
    if ctx.plan.attention is not None:
        out.append(_attention_stage(ctx))
    if ctx.plan.bandwidth_bytes:
        out.append(_bandwidth_stage(ctx))
    if ctx.plan.health and ctx.device.is_gpu:
        out.append(_health_stage(ctx))
    return out


def _finish_health(
    record: dict[str, Any],
    ctx: Context,
    telemetry: list[dict[str, Any]],
    telemetry_note: str | None,
) -> None:
    health = record["node_health"] or {
        "status": "skipped",
        "reason": _health_skip_reason(ctx),
        "gpus": [],
        "warnings": [],
    }
    throttling, notes = throttle_warnings(telemetry)
    health.update(
        telemetry_source="nvml" if telemetry else None,
        telemetry=telemetry,
        throttling=throttling,
        warnings=[*health.get("warnings", []), *notes],
    )
    if telemetry_note:
        health["warnings"].append(telemetry_note)
    record["node_health"] = health


def prepare(config: SuiteConfig) -> tuple[Context, dict[str, Any], Any, str | None]:
    """Detect the device, match the catalog, plan, stamp; also opens NVML on NVIDIA."""
    device = detect(config.device)
    identity = gpu_identity(device)
    match = match_device(device, identity["capability"], identity["memory_gib"], config.catalog_id)
    plan = plan_suite(config, device)
    if device.kind == "cuda":
        nvml_module, nvml_reason = nvml.open_nvml()
    else:
        nvml_module, nvml_reason = None, f"NVML telemetry is NVIDIA-only; none on {device.kind}"
    stamp = collect_stamp(device, identity, match, nvml_module, nvml_reason)
    ctx = Context(device, identity, match, plan)
    return ctx, new_record(stamp, plan.settings()), nvml_module, nvml_reason


def run_suite(
    config: SuiteConfig | None = None,
    progress: Callable[[Progress], None] | None = None,
    stop: StopFlag | None = None,
    checkpoint: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Run the planned probes and return the record (partial if stopped)."""
    t0 = time.perf_counter()
    ctx, record, nvml_module, nvml_reason = prepare(config or SuiteConfig())
    stop_flag = _Stop(stop)
    plan_stages = stages(ctx)
    weights = ctx.plan.estimates(ctx.device)
    total = sum(weights.values()) or 1.0
    sampler = None
    if nvml_module is not None:
        sampler = nvml.Sampler(nvml_module, list(ctx.identity["uuids"]) or [None]).start()
    done = 0.0
    with _ctrl_c_stops(stop_flag):
        try:
            for name, run in plan_stages:
                if stop_flag():
                    break
                weight = weights.get(name, 1.0)

                def report(
                    fraction: float,
                    message: str,
                    name: str = name,
                    w: float = weight,
                    base: float = done,
                ) -> None:
                    if progress is not None:
                        progress(Progress(name, message, min(1.0, (base + fraction * w) / total)))

                try:
                    run(record, report, stop_flag)
                except Exception as exc:  # a bug in one probe must not lose the others
                    record["notes"].append(f"{name} failed: {describe(exc)}")
                done += weight
                record["seconds_total"] = round(time.perf_counter() - t0, 3)
                if checkpoint is not None:
                    checkpoint(record)
        except KeyboardInterrupt:
            stop_flag.requested = True
        finally:
            telemetry = sampler.stop() if sampler is not None else []
    telemetry_note = nvml_reason if ctx.device.is_gpu and not telemetry else None
    _finish_health(record, ctx, telemetry, telemetry_note)
    record["interrupted"] = stop_flag.requested
    record["complete"] = not stop_flag.requested
    record["seconds_total"] = round(time.perf_counter() - t0, 3)
    if progress is not None:
        progress(Progress("done", "stopped early" if stop_flag.requested else "finished", 1.0))
    return record
