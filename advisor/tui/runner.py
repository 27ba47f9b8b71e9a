"""The probe runner seam: the wizard talks to this protocol, never to torch.

`ProbesScreen` calls `run()` from a thread worker. Runners report each stage
through `on_progress` and poll `should_stop` between measurements, so a cancel
keeps what was measured so far. `FakeProbeRunner` is deterministic (tests and
screenshots); `PackageProbeRunner` wraps `advisor.probes` (the repo's `probes/`),
imported only when a run starts, and says what to install where torch is missing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from advisor.core import ProbeRecord

ProbeMode = Literal["quick", "full"]


@dataclass(frozen=True)
class ProbeRow:
    """One measured figure, as the results table shows it."""

    probe: str
    what: str
    value: float | None
    unit: str
    status: str = "ok"


@dataclass(frozen=True)
class ProbeProgress:
    stage: str
    fraction: float
    """Of the whole run, 0..1."""
    message: str
    rows: tuple[ProbeRow, ...] = ()
    """Results that became available with this update."""


ProgressCallback = Callable[[ProbeProgress], None]
StopFlag = Callable[[], bool]


class ProbeRunner(Protocol):
    def run(self, mode: ProbeMode, on_progress: ProgressCallback,
            should_stop: StopFlag) -> ProbeRecord:
        """Run the suite; if told to stop, return the record so far (marked interrupted)."""
        ...

    def estimate_s(self, mode: ProbeMode, gpu: bool) -> float | None:
        """Expected seconds for a run on a GPU box or a CPU-only one; None if unknown."""
        ...


def plan_estimate_s(mode: ProbeMode, gpu: bool) -> float:
    """The probes package's own estimate for its plan (the same one its progress bar is
    weighted by); `advisor.probes.plan` needs no torch."""
    from advisor.probes.device import Device
    from advisor.probes.plan import SuiteConfig, plan_suite

    device = Device("cuda" if gpu else "cpu", "estimate", 1)
    return plan_suite(SuiteConfig(preset=mode), device).estimate_s(device)


def rows_of(record: ProbeRecord) -> list[ProbeRow]:
    """A record's figures as table rows: for imported records and live runs alike."""
    rows = [ProbeRow("matmul", f"MAMF {m.dtype}", m.mamf_tflops, "TFLOPS", m.status)
            for m in record.matmul]
    rows += [ProbeRow("attention", f"{a.backend} s={a.seq_len} d={a.head_dim} {a.direction}"
                      + (" causal" if a.causal else ""), a.tflops_median, "TFLOPS", a.status)
             for a in record.attention]
    rows += [ProbeRow("bandwidth", f"copy {b.kind}", b.gbps_median, "GB/s", b.status)
             for b in record.bandwidth]
    return rows


class ProbesUnavailable(RuntimeError):
    """The probes cannot run on this box; the message says what to install."""


class PackageProbeRunner:
    """The real suite (`advisor.probes.runner.run_suite`); torch loads in the worker thread,
    not at startup. New results are read from each checkpoint so the table fills stage by
    stage. Without torch, `run` fails at once with what to install."""

    @staticmethod
    def unavailable() -> str | None:
        """Why the probes cannot run here (torch is missing), else None."""
        from advisor.io.measure import torch_missing

        return torch_missing()

    def run(self, mode: ProbeMode, on_progress: ProgressCallback,
            should_stop: StopFlag) -> ProbeRecord:
        missing = self.unavailable()
        if missing:
            raise ProbesUnavailable(missing)
        from advisor.core import parse_probe_record
        from advisor.probes.plan import SuiteConfig
        from advisor.probes.runner import Progress, run_suite

        shown = 0
        last = ProbeProgress("starting", 0.0, "loading torch")
        on_progress(last)

        def progress(p: Progress) -> None:
            nonlocal last
            last = ProbeProgress(p.stage, p.fraction, p.message)
            on_progress(last)

        def checkpoint(record: dict[str, Any]) -> None:
            nonlocal shown
            rows = rows_of(parse_probe_record(record, "probe run"))
            on_progress(ProbeProgress(last.stage, last.fraction, last.message,
                                      tuple(rows[shown:])))
            shown = len(rows)

        class Flag:
            def is_set(self) -> bool:
                return should_stop()

        record = run_suite(SuiteConfig(preset=mode), progress, Flag(), checkpoint)
        return parse_probe_record(record, "probe run")

    def estimate_s(self, mode: ProbeMode, gpu: bool) -> float | None:
        return plan_estimate_s(mode, gpu)


class FakeProbeRunner:
    """Canned, deterministic figures for tests and screenshots.

    `hold_at`, when set, makes the run wait before that step until it is told
    to stop, so a test can cancel in the middle with results already shown;
    `holding` is set once it waits there.
    """

    def __init__(self, device: str = "NVIDIA H100 80GB HBM3", kind: str = "cuda",
                 hold_at: int | None = None) -> None:
        self.device = device
        self.kind = kind
        self.hold_at = hold_at
        self.holding = threading.Event()

    def estimate_s(self, mode: ProbeMode, gpu: bool) -> float | None:
        """The real plan's estimate: only the figures are canned, not the labels."""
        return plan_estimate_s(mode, gpu)

    def _steps(self, mode: ProbeMode) -> list[tuple[str, ProbeRow, dict[str, Any]]]:
        gpu = self.kind == "cuda"
        dtypes = ("bf16", "fp8") if mode == "full" else ("bf16",)
        steps = []
        for i, dtype in enumerate(dtypes):
            tf = (720.0 * (1 + i)) if gpu else 1.2
            steps.append((f"matmul {dtype}", ProbeRow("matmul", f"MAMF {dtype}", tf, "TFLOPS"),
                          {"matmul": {"status": "ok", "dtype": dtype, "mode": "quick",
                                      "mamf_tflops": tf, "median_tflops": tf * 0.97}}))
        for s in (1024, 4096, 16384):
            tf = (380.0 + s / 256) if gpu else 0.4
            steps.append(("attention", ProbeRow("attention", f"sdpa s={s} d=128 fwd_bwd", tf,
                                                "TFLOPS"),
                          {"attention": {"status": "ok", "backend": "sdpa", "seq_len": s,
                                         "head_dim": 128, "heads": 16, "kv_heads": 16,
                                         "batch": 1, "causal": True, "direction": "fwd_bwd",
                                         "tflops_median": tf}}))
        gbps = 2900.0 if gpu else 18.0
        steps.append(("bandwidth", ProbeRow("bandwidth", "copy d2d", gbps, "GB/s"),
                      {"bandwidth": {"status": "ok", "kind": "d2d", "bytes": 1 << 30,
                                     "gbps_median": gbps}}))
        return steps

    def run(self, mode: ProbeMode, on_progress: ProgressCallback,
            should_stop: StopFlag) -> ProbeRecord:
        from advisor.core import parse_probe_record

        steps = self._steps(mode)
        record: dict[str, Any] = {
            "schema": "advisor.probe-record", "version": 1, "complete": False,
            "interrupted": False, "matmul": [], "attention": [], "bandwidth": [],
            "stamp": {"hostname": "fake-box", "date": "2026-01-01T00:00:00Z",
                      "device": {"kind": self.kind, "name": self.device, "count": 1},
                      "versions": {"python": "3.11", "torch": "2.13.0"}},
        }
        done = 0
        for i, (stage, row, result) in enumerate(steps):
            if i == self.hold_at:
                self.holding.set()
                while not should_stop():
                    time.sleep(0.01)
            if should_stop():
                break
            for kind, entry in result.items():
                record[kind].append(entry)
            done += 1
            on_progress(ProbeProgress(stage, done / len(steps), row.what, (row,)))
        record["complete"] = done == len(steps)
        record["interrupted"] = not record["complete"]
        return parse_probe_record(record, "fake probe run")
