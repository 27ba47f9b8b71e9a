"""NVML (nvidia-ml-py) readings: clocks, power, PCIe, ECC/MIG, and a throttling sampler.

Optional: without the `pynvml` module, or off NVIDIA, every function returns
None or an empty reading and says why; the probes still run. GPUs are looked up
by UUID so CUDA_VISIBLE_DEVICES reordering cannot mix up readings.
"""

from __future__ import annotations

import bisect
import statistics
import threading
import time
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

# Clock-event (throttle) reason bits from nvml.h.
REASON_BITS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
# The reasons that mean trouble. sw_power_cap is not one: a full GEMM load on a Hopper
# part sits at its power limit by design, so it is recorded but never flagged.
TROUBLE_REASONS = frozenset(
    {"hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown"}
)


def reasons(mask: int) -> list[str]:
    return [name for bit, name in REASON_BITS.items() if mask & bit]


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


def _pair(fn: Any, *args: Any) -> tuple[Any, Any] | None:
    try:
        a, b = fn(*args)
        return a, b
    except Exception:
        return None


def clocks(nvml: ModuleType, h: Any) -> dict[str, Any]:
    """SM and memory clocks, MHz: current, maximum, application (set and default)."""
    sm, mem = nvml.NVML_CLOCK_SM, nvml.NVML_CLOCK_MEM
    out: dict[str, Any] = {
        "sm_mhz": _call(nvml.nvmlDeviceGetClockInfo, h, sm),
        "sm_max_mhz": _call(nvml.nvmlDeviceGetMaxClockInfo, h, sm),
        "mem_mhz": _call(nvml.nvmlDeviceGetClockInfo, h, mem),
        "mem_max_mhz": _call(nvml.nvmlDeviceGetMaxClockInfo, h, mem),
        "sm_app_mhz": _call(getattr(nvml, "nvmlDeviceGetApplicationsClock", None), h, sm),
        "mem_app_mhz": _call(getattr(nvml, "nvmlDeviceGetApplicationsClock", None), h, mem),
        "sm_app_default_mhz": _call(
            getattr(nvml, "nvmlDeviceGetDefaultApplicationsClock", None), h, sm
        ),
        "mem_app_default_mhz": _call(
            getattr(nvml, "nvmlDeviceGetDefaultApplicationsClock", None), h, mem
        ),
    }
    app, default = out["sm_app_mhz"], out["sm_app_default_mhz"]
    out["app_clocks_default"] = None if app is None or default is None else app == default
    # NVML has no getter for `nvidia-smi -lgc` locked clocks; this bit says a clock setting
    # (application or locked clocks) holds the GPU below what it could run.
    mask = _throttle_mask(nvml, h)
    out["clock_setting_limits"] = None if mask is None else bool(mask & 0x2)
    return out


def power(nvml: ModuleType, h: Any) -> dict[str, Any]:
    """Enforced and default power limits and the allowed range, watts."""

    def watts(fn_name: str) -> float | None:
        mw = _call(getattr(nvml, fn_name, None), h)
        return round(mw / 1000, 1) if mw is not None else None

    out: dict[str, Any] = {
        "limit_w": watts("nvmlDeviceGetEnforcedPowerLimit"),
        "default_limit_w": watts("nvmlDeviceGetPowerManagementDefaultLimit"),
        "min_limit_w": None,
        "max_limit_w": None,
    }
    rng = _pair(getattr(nvml, "nvmlDeviceGetPowerManagementLimitConstraints", None), h)
    if rng is not None:
        out["min_limit_w"], out["max_limit_w"] = (round(float(v) / 1000, 1) for v in rng)
    limit, default = out["limit_w"], out["default_limit_w"]
    out["at_default"] = None if limit is None or default is None else abs(limit - default) < 1
    return out


def power_limit_w(nvml: ModuleType, h: Any) -> float | None:
    return power(nvml, h)["limit_w"]


def pcie(nvml: ModuleType, h: Any) -> dict[str, Any] | None:
    out = {
        "gen": _call(getattr(nvml, "nvmlDeviceGetCurrPcieLinkGeneration", None), h),
        "width": _call(getattr(nvml, "nvmlDeviceGetCurrPcieLinkWidth", None), h),
        "max_gen": _call(getattr(nvml, "nvmlDeviceGetMaxPcieLinkGeneration", None), h),
        "max_width": _call(getattr(nvml, "nvmlDeviceGetMaxPcieLinkWidth", None), h),
    }
    if all(v is None for v in out.values()):
        return None
    clean: dict[str, Any] = {k: int(v) if v is not None else None for k, v in out.items()}
    clean["source"] = "nvml"
    return clean


def _feature(nvml: ModuleType, fn_name: str, h: Any) -> dict[str, Any] | None:
    pair = _pair(getattr(nvml, fn_name, None), h)
    if pair is None:
        return None
    current, pending = pair
    return {"enabled": bool(current), "pending": bool(pending)}


def ecc(nvml: ModuleType, h: Any) -> dict[str, Any] | None:
    return _feature(nvml, "nvmlDeviceGetEccMode", h)


def mig(nvml: ModuleType, h: Any) -> dict[str, Any] | None:
    return _feature(nvml, "nvmlDeviceGetMigMode", h)


def misc(nvml: ModuleType, h: Any) -> dict[str, Any]:
    persistence = _call(getattr(nvml, "nvmlDeviceGetPersistenceMode", None), h)
    compute = _call(getattr(nvml, "nvmlDeviceGetComputeMode", None), h)
    mask = _throttle_mask(nvml, h)
    return {
        "persistence_mode": None if persistence is None else bool(persistence),
        "compute_mode": None if compute is None else int(compute),
        "clock_event_reasons": reasons(mask) if mask is not None else None,
    }


def _throttle_mask(nvml: ModuleType, h: Any) -> int | None:
    for name in ("EventReasons", "ThrottleReasons"):  # the newer NVML name first
        fn = getattr(nvml, f"nvmlDeviceGetCurrentClocks{name}", None)
        if fn is not None:
            try:
                return int(fn(h))
            except Exception:
                return None
    return None


@dataclass
class _Track:
    index: int
    times: list[float] = field(default_factory=list)
    clock: list[float | None] = field(default_factory=list)
    temp: list[float | None] = field(default_factory=list)
    power: list[float | None] = field(default_factory=list)
    masks: list[int] = field(default_factory=list)

    def add(
        self, t: float, clock: float | None, temp: float | None, power: float | None, mask: int
    ) -> None:
        self.times.append(t)
        self.clock.append(clock)
        self.temp.append(temp)
        self.power.append(power)
        self.masks.append(mask)

    def span(self, t0: float, t1: float) -> range:
        return range(bisect.bisect_left(self.times, t0), bisect.bisect_right(self.times, t1))

    def state(self, t0: float, t1: float) -> dict[str, Any]:
        idx = self.span(t0, t1)
        clocks = [c for i in idx if (c := self.clock[i]) is not None]
        powers = [p for i in idx if (p := self.power[i]) is not None]
        temps = [x for i in idx if (x := self.temp[i]) is not None]
        mask = 0
        for i in idx:
            mask |= self.masks[i]
        seen = reasons(mask)
        return {
            "samples": len(idx),
            "sm_clock_mhz_median": statistics.median(clocks) if clocks else None,
            "sm_clock_mhz_min": min(clocks) if clocks else None,
            "power_w_median": round(statistics.median(powers), 1) if powers else None,
            "temp_c_max": max(temps) if temps else None,
            "clock_event_reasons": seen,
            "trouble": sorted(TROUBLE_REASONS.intersection(seen)),
        }

    def summary(self) -> dict[str, Any]:
        clocks = [c for c in self.clock if c is not None]
        temps = [t for t in self.temp if t is not None]
        powers = [p for p in self.power if p is not None]
        mask = 0
        for m in self.masks:
            mask |= m
        seen = reasons(mask)
        return {
            "index": self.index,
            "samples": len(self.times),
            "sm_clock_mhz_min": min(clocks) if clocks else None,
            "sm_clock_mhz_max": max(clocks) if clocks else None,
            "temp_c_max": max(temps) if temps else None,
            "power_w_max": max(powers) if powers else None,
            # What NVML reported at some sample, informational (sw_power_cap included).
            "clock_event_reasons": [r for r in seen if r != "gpu_idle"],
            # What counts as throttling: hardware slowdown, thermal and power-brake only.
            "throttle_reasons": sorted(TROUBLE_REASONS.intersection(seen)),
        }


class Sampler:
    """Samples SM clock, temperature, power and clock-event reasons in a background thread,
    with timestamps, so a probe can ask what the GPU did while it measured."""

    def __init__(
        self,
        nvml: ModuleType,
        uuids: list[str | None],
        interval_s: float = 0.1,
        clock: Any = time.perf_counter,
    ):
        self._nvml = nvml
        self._handles = [handle(nvml, u, i) for i, u in enumerate(uuids)]
        self._tracks = [_Track(i) for i in range(len(uuids))]
        self._interval = interval_s
        self._clock = clock
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="nvml-sampler", daemon=True)

    def _sample(self) -> None:
        m = self._nvml
        for h, track in zip(self._handles, self._tracks, strict=True):
            power_mw = _call(m.nvmlDeviceGetPowerUsage, h)
            reading = (
                _call(m.nvmlDeviceGetClockInfo, h, m.NVML_CLOCK_SM),
                _call(m.nvmlDeviceGetTemperature, h, m.NVML_TEMPERATURE_GPU),
                power_mw / 1000 if power_mw is not None else None,
                _throttle_mask(m, h) or 0,
            )
            with self._lock:
                track.add(self._clock(), *reading)

    def _loop(self) -> None:
        while not self._done.is_set():
            self._sample()
            self._done.wait(self._interval)

    def start(self) -> Sampler:
        self._thread.start()
        return self

    def state(self, index: int, t0: float, t1: float) -> dict[str, Any]:
        with self._lock:
            if index >= len(self._tracks):
                return {}
            return self._tracks[index].state(t0, t1)

    def stop(self) -> list[dict[str, Any]]:
        self._done.set()
        self._thread.join(timeout=5)
        with self._lock:
            return [t.summary() for t in self._tracks]


class DeviceTelemetry:
    """One GPU's readings for the matmul probe: a synchronous SM clock read (to bracket
    burst iterations) and the sampler's state over a time window."""

    def __init__(self, nvml: ModuleType, h: Any, sampler: Sampler | None, index: int) -> None:
        self._nvml = nvml
        self._h = h
        self._sampler = sampler
        self._index = index

    def sm_clock_mhz(self) -> float | None:
        return _call(self._nvml.nvmlDeviceGetClockInfo, self._h, self._nvml.NVML_CLOCK_SM)

    def read(self) -> tuple[float | None, float | None]:
        mw = _call(self._nvml.nvmlDeviceGetPowerUsage, self._h)
        return self.sm_clock_mhz(), (mw / 1000 if mw is not None else None)

    def window(self, t0: float, t1: float) -> dict[str, Any]:
        out = self._sampler.state(self._index, t0, t1) if self._sampler is not None else {}
        out["power_limit_w"] = power_limit_w(self._nvml, self._h)
        return out
