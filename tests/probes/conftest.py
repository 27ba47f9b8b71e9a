"""Fixtures for the probe tests: a CPU device, a synthetic matmul cost model and a fake clock.

Everything here runs on the CPU in well under a minute; real GPU checks are marked
`gpu` and skipped when no CUDA/ROCm device is present.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from probes.device import Device
from probes.plan import SuiteConfig
from probes.search import Sample, Shape, matmul_flops
from probes.timing import Effort


@pytest.fixture
def cpu() -> Device:
    return Device("cpu", "test CPU", 1)


@pytest.fixture
def tiny_config() -> SuiteConfig:
    """The whole suite at toy sizes: a few seconds on two cores. The attention budget is
    generous so that no case is skipped for time, however loaded the machine: at these
    sizes every case reaches its iteration cap long before its share of the budget."""
    return SuiteConfig(
        preset="quick",
        device="cpu",
        budget_s=0.3,
        seq_lens=(64,),
        head_dims=(32,),
        attention_budget_s=30.0,
        bandwidth_budget_s=0.1,
    )


class StepClock:
    """A clock that moves a fixed step each time it is read: budgets become deterministic."""

    def __init__(self, step: float = 1e-3) -> None:
        self.step = step
        self.now = 0.0

    def __call__(self) -> float:
        self.now += self.step
        return self.now


@pytest.fixture
def step_clock() -> Callable[..., StepClock]:
    return StepClock


def wave_model(shape: Shape) -> float:
    """Synthetic GPU-like TFLOPS: small dims starve the device, partial waves waste SMs."""
    m, n, k = shape
    saturation = (1 - math.exp(-m / 2000)) * (1 - math.exp(-n / 2000)) * (1 - math.exp(-k / 1000))
    waves = math.ceil(m / 128) * math.ceil(n / 256) / 132
    return 800.0 * saturation * waves / math.ceil(waves)


def power_model(shape: Shape) -> float:
    """The wave model where big outputs and long K cost clock (power-limited): the peak
    moves inside the space instead of sitting at its largest corner."""
    m, n, k = shape
    mn = 1 - 0.04 * math.log2(max(1.0, m * n / 4096**2))
    kk = 1 - 0.02 * math.log2(max(1.0, k / 8192))
    return wave_model(shape) * mn * kk


def rugged_model(shape: Shape) -> float:
    """The power model with dents every few lattice steps along M and K."""
    m, _n, k = shape
    dent = (1 - 0.03 * ((k // 1024) % 3 == 1)) * (1 - 0.02 * ((m // 1024) % 2))
    return power_model(shape) * dent


MODELS = {"wave": wave_model, "power": power_model, "rugged": rugged_model}


def bowl_model(shape: Shape, best: Shape = (3072, 5120, 2048)) -> float:
    """A single peak at `best`: a correct search must land on it exactly."""
    return 500.0 / (1 + sum(((d - b) / 16384) ** 2 for d, b in zip(shape, best, strict=True)))


@dataclass
class FakeDevice:
    """Measures a synthetic model and advances a fake clock by what the run would cost."""

    model: Callable[[Shape], float]
    per_shape_s: float = 0.01
    per_iter_s: float = 1e-4
    now: float = 0.0
    calls: int = 0
    costs: list[float] = field(default_factory=list)

    def clock(self) -> float:
        return self.now

    def measure(self, shape: Shape, effort: Effort) -> Sample | None:
        self.calls += 1
        tflops = self.model(shape)
        seconds = matmul_flops(shape) / (tflops * 1e12)
        cost = self.per_shape_s + effort.total * (seconds + self.per_iter_s)
        self.now += cost
        self.costs.append(cost)
        return Sample(median_tflops=tflops, max_tflops=tflops * 1.01)


@pytest.fixture
def fake_device() -> Callable[..., FakeDevice]:
    return FakeDevice


@pytest.fixture
def wave() -> Callable[[Shape], float]:
    return wave_model


@pytest.fixture
def bowl() -> Callable[[Shape], float]:
    return bowl_model


@pytest.fixture
def models() -> dict[str, Callable[[Shape], float]]:
    return dict(MODELS)
