"""The probe runner seam: the wizard talks to this protocol, never to torch.

`ProbeScreen` calls `run()` from a thread worker. Runners report each step
through `on_progress` and poll `should_stop` between steps, so a cancel keeps
what was measured so far. `FakeProbeRunner` is deterministic (tests and
screenshots); `PackageProbeRunner` imports the real `probes` package lazily.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from advisor.core.probe_record import (
    AttentionResult,
    BandwidthResult,
    Device,
    MatmulResult,
    ProbeRecord,
    Stamp,
    Versions,
)

ProbeMode = Literal["quick", "full"]


@dataclass(frozen=True)
class ProbePlan:
    mode: ProbeMode
    dtypes: tuple[str, ...] = ("bf16",)
    seq_lens: tuple[int, ...] = (4096,)
    head_dim: int = 128


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
    probe: str
    done: int
    total: int
    message: str
    row: ProbeRow | None = None


ProgressCallback = Callable[[ProbeProgress], None]
StopFlag = Callable[[], bool]


class ProbeRunner(Protocol):
    def probes(self, plan: ProbePlan) -> tuple[str, ...]:
        """The probe names, in run order, so the screen can list them before they start."""
        ...

    def run(self, plan: ProbePlan, on_progress: ProgressCallback, should_stop: StopFlag) -> ProbeRecord:
        """Run the plan; return the record so far (marked interrupted) if told to stop."""
        ...


def rows_of(record: ProbeRecord) -> list[ProbeRow]:
    """A record's figures as table rows: used for imported records and finished runs alike."""
    rows = [ProbeRow("matmul", f"MAMF {m.dtype}", m.mamf_tflops, "TFLOPS", m.status)
            for m in record.matmul]
    rows += [ProbeRow("attention", f"{a.backend} s={a.seq_len} {a.direction}", a.tflops_median,
                      "TFLOPS", a.status) for a in record.attention]
    rows += [ProbeRow("bandwidth", f"copy {b.kind}", b.gbps_median, "GB/s", b.status)
             for b in record.bandwidth]
    return rows


class FakeProbeRunner:
    """Canned, deterministic figures for tests and screenshots; `pause_at` simulates a slow step.

    `gate`, when given, is waited on before each step: a test sets it to let the
    run advance, and can cancel in the middle with results already posted.
    """

    def __init__(self, device: str = "NVIDIA H100 80GB HBM3", kind: str = "cuda",
                 step_delay: float = 0.0, gate: Callable[[int], None] | None = None) -> None:
        self.device = device
        self.kind = kind
        self.step_delay = step_delay
        self.gate = gate

    def probes(self, plan: ProbePlan) -> tuple[str, ...]:
        return ("matmul", "attention", "bandwidth")

    def _steps(self, plan: ProbePlan) -> list[tuple[str, ProbeRow, object]]:
        steps: list[tuple[str, ProbeRow, object]] = []
        for i, dtype in enumerate(plan.dtypes):
            tf = 720.0 / (1 + i) if self.kind == "cuda" else 1.2
            steps.append(("matmul", ProbeRow("matmul", f"MAMF {dtype}", tf, "TFLOPS"),
                          MatmulResult(status="ok", dtype=dtype, mode="quick" if plan.mode == "quick"
                                       else "exhaustive", mamf_tflops=tf, median_tflops=tf * 0.97)))
        for s in plan.seq_lens:
            tf = (410.0 + s / 512) if self.kind == "cuda" else 0.4
            steps.append(("attention", ProbeRow("attention", f"sdpa s={s} fwd_bwd", tf, "TFLOPS"),
                          AttentionResult(status="ok", backend="sdpa", seq_len=s,
                                          head_dim=plan.head_dim, heads=32, kv_heads=8, batch=1,
                                          causal=True, direction="fwd_bwd", tflops_median=tf)))
        gbps = 2900.0 if self.kind == "cuda" else 18.0
        steps.append(("bandwidth", ProbeRow("bandwidth", "copy d2d", gbps, "GB/s"),
                      BandwidthResult(status="ok", kind="d2d", bytes=1 << 30, gbps_median=gbps)))
        return steps

    def run(self, plan: ProbePlan, on_progress: ProgressCallback, should_stop: StopFlag) -> ProbeRecord:
        import time

        steps = self._steps(plan)
        done: list[object] = []
        for i, (probe, row, result) in enumerate(steps):
            if self.gate is not None:
                self.gate(i)
            if should_stop():
                break
            if self.step_delay:
                time.sleep(self.step_delay)
            done.append(result)
            on_progress(ProbeProgress(probe, i + 1, len(steps), row.what, row))
        return ProbeRecord.model_validate({
            "schema": "advisor.probe-record",
            "version": 1,
            "complete": len(done) == len(steps),
            "interrupted": len(done) < len(steps),
            "stamp": Stamp(hostname="fake-box", date="2026-01-01T00:00:00Z",
                           device=Device(kind=self.kind, name=self.device, count=1),  # type: ignore[arg-type]
                           versions=Versions(python="3.11", torch="2.13.0")),
            "matmul": [r for r in done if isinstance(r, MatmulResult)],
            "attention": [r for r in done if isinstance(r, AttentionResult)],
            "bandwidth": [r for r in done if isinstance(r, BandwidthResult)],
        })
