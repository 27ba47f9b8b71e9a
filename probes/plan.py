"""What each preset runs, sized per device class.

The default GPU suite is designed to finish in about 60 s on a datacenter GPU
(target: at most 90 s): bf16 and fp8 MAMF searches with fixed time budgets,
attention at 4 sequence lengths, and bandwidth. CPU and MPS get the same probes
at toy sizes so the suite runs anywhere in seconds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from probes.attention import AttentionPlan
from probes.device import Device
from probes.matmul import MATMUL_DTYPES
from probes.timing import Effort, flush_bytes_for

PRESETS = ("quick", "default", "full")
PROBES = ("matmul", "attention", "bandwidth", "health")

# Seconds the estimate allows per attention case and for fixed costs (CUDA init, allocations).
_ATTENTION_CASE_S = {"gpu": 0.35, "small": 0.25}
_BANDWIDTH_S = 3.0
_HEALTH_S = 8.0
_OVERHEAD_S = 8.0


@dataclass(frozen=True)
class SuiteConfig:
    """What the caller asked for; plan_suite() turns it into concrete sizes for the device."""

    preset: str = "default"
    exhaustive: bool = False
    dtypes: tuple[str, ...] | None = None
    only: tuple[str, ...] | None = None
    health: bool | None = None
    catalog_id: str | None = None
    device: str | None = None
    budget_s: float | None = None
    seq_lens: tuple[int, ...] | None = None
    head_dims: tuple[int, ...] | None = None
    gqa_ratio: int = 1


@dataclass(frozen=True)
class _Preset:
    dtypes: tuple[str, ...]
    budget_s: dict[str, float]
    seq_lens: tuple[int, ...]
    head_dims: tuple[int, ...]
    attention_effort: Effort
    bandwidth_mib: int
    bandwidth_effort: Effort


_GPU = {
    "quick": _Preset(("bf16",), {"bf16": 8.0}, (4096,), (128,), Effort(2, 5), 512, Effort(2, 10)),
    "default": _Preset(
        ("bf16", "fp8"),
        {"bf16": 20.0, "fp8": 15.0},
        (1024, 4096, 16384, 32768),
        (64, 128),
        Effort(3, 10),
        1024,
        Effort(3, 20),
    ),
    "full": _Preset(
        MATMUL_DTYPES,
        dict.fromkeys(MATMUL_DTYPES, 30.0),
        (1024, 2048, 4096, 8192, 16384, 32768),
        (64, 128),
        Effort(5, 20),
        1024,
        Effort(5, 30),
    ),
}
_SMALL = {
    "quick": _Preset(("bf16",), {"bf16": 1.0}, (256,), (64,), Effort(1, 2), 32, Effort(1, 3)),
    "default": _Preset(
        ("bf16", "fp8"),
        {"bf16": 2.0, "fp8": 2.0},
        (128, 256, 512, 1024),
        (64,),
        Effort(1, 3),
        64,
        Effort(1, 5),
    ),
    "full": _Preset(
        MATMUL_DTYPES,
        dict.fromkeys(MATMUL_DTYPES, 4.0),
        (128, 256, 512, 1024, 2048),
        (32, 64),
        Effort(1, 5),
        64,
        Effort(2, 8),
    ),
}
# Attention batch/heads: the flash-attention benchmarks' 16k tokens and hidden 2048 on GPUs.
_ATTENTION_SIZES = {"gpu": (16384, 2048), "small": (2048, 256)}


@dataclass(frozen=True)
class SuitePlan:
    preset: str
    dtypes: tuple[str, ...]
    budget_s: dict[str, float]
    exhaustive: bool
    attention: AttentionPlan | None
    bandwidth_bytes: int | None
    bandwidth_effort: Effort
    health: bool
    health_effort: Effort
    flush_bytes: int

    def estimates(self, device: Device) -> dict[str, float]:
        """Expected seconds per stage, keyed by stage name (also the progress weights)."""
        out = {f"matmul {d}": b for d, b in self.budget_s.items()}
        if self.attention is not None:
            per_case = _ATTENTION_CASE_S["gpu" if device.is_gpu else "small"]
            out["attention"] = per_case * len(self.attention.cases())
        if self.bandwidth_bytes:
            out["bandwidth"] = _BANDWIDTH_S
        if self.health:
            out["node health"] = _HEALTH_S
        return out

    def estimate_s(self, device: Device) -> float:
        """Expected wall time; the default GPU plan must stay within 90 s."""
        return _OVERHEAD_S + sum(self.estimates(device).values())

    def settings(self) -> dict[str, Any]:
        out = asdict(self)
        out["mode"] = "exhaustive" if self.exhaustive else "quick"
        return out


def plan_suite(config: SuiteConfig, device: Device) -> SuitePlan:
    if config.preset not in PRESETS:
        raise ValueError(f"unknown preset {config.preset!r}; choose one of {', '.join(PRESETS)}")
    unknown = set(config.only or ()) - set(PROBES)
    if unknown:
        raise ValueError(f"unknown probe {sorted(unknown)[0]!r}; choose from {', '.join(PROBES)}")
    bad = [d for d in config.dtypes or () if d not in MATMUL_DTYPES]
    if bad:
        raise ValueError(f"unknown dtype {bad[0]!r}; choose from {', '.join(MATMUL_DTYPES)}")
    cls = "gpu" if device.is_gpu else "small"
    preset = (_GPU if device.is_gpu else _SMALL)[config.preset]
    only = set(config.only or PROBES)
    dtypes = tuple(config.dtypes or preset.dtypes) if "matmul" in only else ()
    fallback = max(preset.budget_s.values())
    budget = {d: config.budget_s or preset.budget_s.get(d, fallback) for d in dtypes}
    attention = None
    if "attention" in only:
        tokens, hidden = _ATTENTION_SIZES[cls]
        attention = AttentionPlan(
            seq_lens=config.seq_lens or preset.seq_lens,
            head_dims=config.head_dims or preset.head_dims,
            effort=preset.attention_effort,
            gqa_ratio=config.gqa_ratio,
            tokens=tokens,
            hidden=hidden,
        )
        attention.cases()  # a bad GQA ratio fails here, before anything runs
    if config.health is not None:
        health = config.health
    else:
        health = config.preset == "full" or (config.preset == "default" and device.count > 1)
    return SuitePlan(
        preset=config.preset,
        dtypes=dtypes,
        budget_s=budget,
        exhaustive=config.exhaustive,
        attention=attention,
        bandwidth_bytes=preset.bandwidth_mib * 2**20 if "bandwidth" in only else None,
        bandwidth_effort=preset.bandwidth_effort,
        health=health and device.is_gpu and ("health" in only or config.health is True),
        health_effort=Effort(5, 20) if device.is_gpu else Effort(1, 3),
        flush_bytes=flush_bytes_for(device),
    )
