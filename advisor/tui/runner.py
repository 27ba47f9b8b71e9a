"""The probe runner seam: the wizard talks to this protocol, never to torch.

`ProbesScreen` calls `run()` from a thread worker. Runners report each stage
through `on_progress` and poll `should_stop` between measurements, so a cancel
keeps what was measured so far. `PackageProbeRunner` wraps `advisor.probes` (the repo's
`probes/`), imported only when a run starts, and says what to install where torch is
missing; the deterministic demo runner (screenshots, benchmarks, tests) is in
`advisor.tui.demo`.
"""

from __future__ import annotations

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
