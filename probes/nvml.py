"""NVML (nvidia-ml-py) readings: clocks, power limit, and a throttling sampler.

Optional: without the `pynvml` module, or off NVIDIA, every function returns
None or an empty reading and says why; the probes still run. GPUs are looked up
by UUID so CUDA_VISIBLE_DEVICES reordering cannot mix up readings.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

# Clock-event (throttle) reason bits from nvml.h that mean the GPU ran slower than it could.
THROTTLE_BITS = {
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
}


def open_nvml() -> tuple[ModuleType | None, str | None]:
    """The initialised pynvml module, or None and the reason."""
    try:
        import pynvml
    except ImportError:
        return None, "nvidia-ml-py is not installed (pip install nvidia-ml-py)"
    try:
        pynvml.nvmlInit()
    except Exception as exc:
        return None, f"NVML did not initialise: {exc}"
    return pynvml, None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def handle(nvml: ModuleType, uuid: str | None, index: int) -> Any:
    if uuid:
        try:
            return nvml.nvmlDeviceGetHandleByUUID(uuid)
        except Exception:
            pass
    return nvml.nvmlDeviceGetHandleByIndex(index)


def driver_version(nvml: ModuleType) -> str | None:
    try:
        return _text(nvml.nvmlSystemGetDriverVersion())
    except Exception:
        return None


def _call(fn: Any, *args: Any) -> float | None:
    try:
        return float(fn(*args))
    except Exception:
        return None


def clocks(nvml: ModuleType, h: Any) -> dict[str, float | None]:
    """Current and maximum SM and memory clocks, MHz."""
    sm, mem = nvml.NVML_CLOCK_SM, nvml.NVML_CLOCK_MEM
    return {
        "sm_mhz": _call(nvml.nvmlDeviceGetClockInfo, h, sm),
        "sm_max_mhz": _call(nvml.nvmlDeviceGetMaxClockInfo, h, sm),
        "mem_mhz": _call(nvml.nvmlDeviceGetClockInfo, h, mem),
        "mem_max_mhz": _call(nvml.nvmlDeviceGetMaxClockInfo, h, mem),
    }


def power_limit_w(nvml: ModuleType, h: Any) -> float | None:
    mw = _call(nvml.nvmlDeviceGetEnforcedPowerLimit, h)
    return mw / 1000 if mw is not None else None


def _throttle_mask(nvml: ModuleType, h: Any) -> int:
    for name in ("EventReasons", "ThrottleReasons"):  # the newer NVML name first
        fn = getattr(nvml, f"nvmlDeviceGetCurrentClocks{name}", None)
        if fn is not None:
            try:
                return int(fn(h))
            except Exception:
                return 0
    return 0


@dataclass
class _Track:
    index: int
    clock_min: float | None = None
    clock_max: float | None = None
    temp_max: float | None = None
    power_max: float | None = None
    reasons: set[str] = field(default_factory=set)

    def add(self, clock: float | None, temp: float | None, power: float | None, mask: int) -> None:
        if clock is not None:
            self.clock_min = clock if self.clock_min is None else min(self.clock_min, clock)
            self.clock_max = clock if self.clock_max is None else max(self.clock_max, clock)
        if temp is not None:
            self.temp_max = temp if self.temp_max is None else max(self.temp_max, temp)
        if power is not None:
            self.power_max = power if self.power_max is None else max(self.power_max, power)
        self.reasons |= {name for bit, name in THROTTLE_BITS.items() if mask & bit}

    def summary(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "sm_clock_mhz_min": self.clock_min,
            "sm_clock_mhz_max": self.clock_max,
            "temp_c_max": self.temp_max,
            "power_w_max": self.power_max,
            "throttle_reasons": sorted(self.reasons),
        }


class Sampler:
    """Samples SM clock, temperature, power and throttle reasons in a background thread."""

    def __init__(self, nvml: ModuleType, uuids: list[str | None], interval_s: float = 0.25):
        self._nvml = nvml
        self._handles = [handle(nvml, u, i) for i, u in enumerate(uuids)]
        self._tracks = [_Track(i) for i in range(len(uuids))]
        self._interval = interval_s
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="nvml-sampler", daemon=True)

    def _sample(self) -> None:
        m = self._nvml
        for h, track in zip(self._handles, self._tracks, strict=True):
            power_mw = _call(m.nvmlDeviceGetPowerUsage, h)
            track.add(
                _call(m.nvmlDeviceGetClockInfo, h, m.NVML_CLOCK_SM),
                _call(m.nvmlDeviceGetTemperature, h, m.NVML_TEMPERATURE_GPU),
                power_mw / 1000 if power_mw is not None else None,
                _throttle_mask(m, h),
            )

    def _loop(self) -> None:
        while not self._done.is_set():
            self._sample()
            self._done.wait(self._interval)

    def start(self) -> Sampler:
        self._thread.start()
        return self

    def stop(self) -> list[dict[str, Any]]:
        self._done.set()
        self._thread.join(timeout=5)
        return [t.summary() for t in self._tracks]
