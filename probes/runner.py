"""The probe-suite runner: the one API the CLIs (and the TUI) call.

`run_suite(config, progress, stop, checkpoint)` returns the record. Progress
goes to a callback; a stop flag (anything with `is_set()`, e.g. a
threading.Event) is checked between measurements; from the main thread the
first Ctrl-C sets it too, the second raises (see probes.interrupts). Either way
the partial record comes back and says honestly how far it got: each stage's
status (done, stopped, failed, not run), its estimated and measured seconds,
complete=false and interrupted=true. A probe that cannot run records why and
the suite carries on.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from . import nvml
from .attention import run_attention
from .bandwidth import buffer_bytes_for, run_bandwidth
from .device import Device, detect
from .errors import describe
from .figures import CatalogMatch, match_device
from .health import run_health, throttle_warnings
from .interrupts import CONTROLLER, FINISHING, MEASURING, Interrupts
from .matmul import dtype_support, run_matmul
from .plan import TOY_NOTE, SuiteConfig, SuitePlan, plan_suite
from .record import new_record
from .stamp import collect_stamp, gpu_identity


@dataclass(frozen=True)
class Progress:
    stage: str  # "plan", "matmul bf16", "attention", "bandwidth", "node health", "done"
    message: str
    fraction: float  # of the whole suite, 0..1


class StopFlag(Protocol):
    def is_set(self) -> bool: ...


class _Stop:
    """The caller's flag, or-ed with Ctrl-C; counts how often a probe saw it set."""

    def __init__(self, outer: StopFlag | None) -> None:
        self.outer = outer
        self.requested = False
        self.observed = 0
        self.controller: Interrupts | None = None

    def __call__(self) -> bool:
        ctl = self.controller
        self.requested = (
            self.requested
            or bool(self.outer is not None and self.outer.is_set())
            or bool(ctl is not None and ctl.measuring_count > 0)
        )
        if self.requested:
            self.observed += 1
        return self.requested


@contextmanager
def _ctrl_c_stops(stop: _Stop) -> Iterator[None]:
    """First Ctrl-C: finish the current measurement and stop. Second: raise at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    owned = not CONTROLLER.installed  # called from Python, not from a probe command
    CONTROLLER.install()
    CONTROLLER.measuring_count = 0
    CONTROLLER.raised = False
    CONTROLLER.enter(MEASURING)
    stop.controller = CONTROLLER
    try:
        yield
    finally:
        CONTROLLER.enter(FINISHING)
        if owned:
            CONTROLLER.uninstall()


@dataclass(frozen=True)
class Context:
    """What every stage needs about the box."""

    device: Device
    identity: dict[str, Any]
    match: CatalogMatch
    plan: SuitePlan
    telemetry: Any = None  # nvml.DeviceTelemetry for the first GPU, when NVML reads it


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
                telemetry=ctx.telemetry,
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
    def run(record: dict[str, Any], report: Report, stop: _Stop) -> None:
        nbytes = buffer_bytes_for(ctx.device, ctx.plan.bandwidth_bytes)
        record["bandwidth"].extend(
            run_bandwidth(
                ctx.device,
                nbytes,
                ctx.plan.bandwidth_effort,
                gpu=ctx.match.gpu,
                catalog_note=ctx.match.note,
                should_stop=stop,
                report=report,
                budget_s=ctx.plan.bandwidth_budget_s,
            )
        )

    return "bandwidth", run


def _health_shape(record: dict[str, Any], device: Device) -> tuple[int, int, int]:
    """The bf16 sustained best shape if the matmul probe found one, else a large square."""
    for entry in record["matmul"]:
        if entry["dtype"] == "bf16" and entry["status"] == "ok":
            shape = entry.get("msmf_shape") or entry.get("best_shape")
            if shape:
                m, n, k = shape
                return m, n, k
    side = 8192 if device.is_gpu else 512
    return side, side, side


def _health_stage(ctx: Context) -> Stage:
    def run(record: dict[str, Any], report: Report, stop: _Stop) -> None:
        devices = [ctx.device.at(i) for i in range(ctx.device.count)]
        shape = _health_shape(record, ctx.device)
        report(0.0, f"bf16 {'x'.join(map(str, shape))} on {len(devices)} GPU(s) at once for "
               f"{ctx.plan.health_s:g} s")
        record["node_health"] = run_health(
            devices, "bf16", shape, ctx.plan.health_s, ctx.identity["uuids"]
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
    if ctx.plan.run_bandwidth:
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
    capped = sorted(
        t["index"] for t in telemetry if "sw_power_cap" in t.get("clock_event_reasons", [])
    )
    health.update(
        telemetry_source="nvml" if telemetry else None,
        telemetry=telemetry,
        throttling=throttling,
        power_capped_gpus=capped if telemetry else None,
        warnings=[*health.get("warnings", []), *notes],
    )
    if telemetry_note:
        health["warnings"].append(telemetry_note)
    record["node_health"] = health


@dataclass(frozen=True)
class Box:
    """This box as every run starts from it: the device, its identity, its catalog entry
    and NVML (opened on NVIDIA, else the reason it is not)."""

    device: Device
    identity: dict[str, Any]
    match: CatalogMatch
    nvml_module: Any
    nvml_reason: str | None


def open_box(device_kind: str | None, catalog_id: str | None) -> Box:
    device = detect(device_kind)
    identity = gpu_identity(device)
    match = match_device(device, identity["capability"], identity["memory_gib"], catalog_id)
    if device.kind == "cuda":
        nvml_module, nvml_reason = nvml.open_nvml()
    else:
        nvml_module, nvml_reason = None, f"NVML telemetry is NVIDIA-only; none on {device.kind}"
    return Box(device, identity, match, nvml_module, nvml_reason)


def begin_record(
    box: Box,
    settings: dict[str, Any],
    run_settings: dict[str, Any],
    estimates: dict[str, float],
    estimate_s: float,
) -> dict[str, Any]:
    """A stamped record with every planned stage `not run` and its estimate."""
    stamp = collect_stamp(box.device, box.identity, box.match, box.nvml_module, box.nvml_reason,
                          run_settings)
    record = new_record(stamp, settings)
    record["stages"] = [
        {"name": name, "status": "not run", "estimate_s": round(seconds, 2), "seconds": None}
        for name, seconds in estimates.items()
    ]
    record["estimate_s"] = round(estimate_s, 1)
    return record


def prepare(config: SuiteConfig) -> tuple[Context, dict[str, Any], Any, str | None]:
    """Detect the device, match the catalog, plan, stamp; also opens NVML on NVIDIA."""
    box = open_box(config.device, config.catalog_id)
    device, identity = box.device, box.identity
    plan = plan_suite(config, device)
    skip = {
        d: why
        for d in plan.dtypes
        if (why := dtype_support(device, d, identity["capability"], identity["gcn_arch"]))
    }
    plan = dataclasses.replace(plan, skip_dtypes=skip)
    ctx = Context(device, identity, box.match, plan)
    estimates = plan.estimates(device)
    record = begin_record(
        box, plan.settings(), plan.run_settings(),
        {name: estimates.get(name, 0.0) for name in plan.stage_names()},
        plan.estimate_s(device),
    )
    if plan.toy:
        record["notes"].append(TOY_NOTE)
    return ctx, record, box.nvml_module, box.nvml_reason


def execute(
    record: dict[str, Any],
    plan_stages: list[Stage],
    weights: dict[str, float],
    announce: str,
    progress: Callable[[Progress], None] | None,
    stop_flag: _Stop,
    checkpoint: Callable[[dict[str, Any]], None] | None,
    t0: float,
) -> None:
    """Run the stages in order under the Ctrl-C policy, keeping each stage's status and
    time in the record; a stage that raises is noted and the next one still runs."""
    total = sum(weights.values()) or 1.0
    by_name = {s["name"]: s for s in record["stages"]}
    done = 0.0
    current: dict[str, Any] | None = None
    started = time.perf_counter()
    with _ctrl_c_stops(stop_flag):
        try:
            if progress is not None:  # from here on, a Ctrl-C keeps a (partial) record
                progress(Progress("plan", announce, 0.0))
            for name, run in plan_stages:
                if stop_flag():
                    break
                current = by_name[name]
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

                seen = stop_flag.observed
                started = time.perf_counter()
                try:
                    run(record, report, stop_flag)
                    status = "stopped" if stop_flag.observed > seen else "done"
                except KeyboardInterrupt:
                    raise
                except Exception as exc:  # a bug in one probe must not lose the others
                    record["notes"].append(f"{name} failed: {describe(exc)}")
                    status = "failed"
                current.update(status=status, seconds=round(time.perf_counter() - started, 3))
                current = None
                done += weight
                record["seconds_total"] = round(time.perf_counter() - t0, 3)
                if checkpoint is not None:
                    checkpoint(record)
        except KeyboardInterrupt:
            stop_flag.requested = True
            if current is not None:
                current.update(
                    status="stopped", seconds=round(time.perf_counter() - started, 3)
                )


def conclude(
    record: dict[str, Any],
    stop_flag: _Stop,
    t0: float,
    progress: Callable[[Progress], None] | None,
) -> dict[str, Any]:
    """Say how far the run got: complete, interrupted, the stages that finished."""
    statuses = [s["status"] for s in record["stages"]]
    cut = any(s in ("stopped", "not run") for s in statuses)
    record["interrupted"] = bool(stop_flag.requested and cut)
    record["complete"] = not cut
    record["stages_finished"] = [s["name"] for s in record["stages"] if s["status"] == "done"]
    record["seconds_total"] = round(time.perf_counter() - t0, 3)
    if progress is not None:
        progress(Progress("done", "stopped early" if record["interrupted"] else "finished", 1.0))
    return record


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
    weights = ctx.plan.estimates(ctx.device)
    sampler = None
    if nvml_module is not None:
        try:
            sampler = nvml.Sampler(nvml_module, list(ctx.identity["uuids"]) or [None]).start()
            uuid = ctx.identity["uuids"][0] if ctx.identity["uuids"] else None
            h = nvml.handle(nvml_module, uuid, ctx.device.index)
            ctx = dataclasses.replace(
                ctx, telemetry=nvml.DeviceTelemetry(nvml_module, h, sampler, 0)
            )
        except Exception as exc:
            record["notes"].append(f"NVML telemetry unavailable: {describe(exc)}")
    shown = ", ".join(f"{k} ~{v:.0f} s" for k, v in weights.items())
    head = f"{TOY_NOTE}. " if ctx.plan.toy else ""
    announce = f"{head}about {record['estimate_s']:.0f} s: {shown}"
    try:
        execute(record, stages(ctx), weights, announce, progress, stop_flag, checkpoint, t0)
    finally:
        telemetry = sampler.stop() if sampler is not None else []
    telemetry_note = nvml_reason if ctx.device.is_gpu and not telemetry else None
    _finish_health(record, ctx, telemetry, telemetry_note)
    return conclude(record, stop_flag, t0, progress)
