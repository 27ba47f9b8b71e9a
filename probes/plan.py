"""What each preset runs, sized per device class, with a time budget per stage.

The default GPU suite is designed to finish in about 90 s on a datacenter GPU:
bf16 and fp8 MAMF/MSMF within fixed budgets, attention per kernel at 4
sequence lengths within its own budget, and bandwidth. Each stage keeps to its
budget (the matmul search stops early enough to confirm its finalists; the
attention and bandwidth stages share their budget out per case), so the
estimates below are what the progress bar shows and what the record compares
with the measured time. CPU and MPS get the same probes at toy sizes, and say so.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .attention import AttentionPlan
from .device import Device
from .matmul import MATMUL_DTYPES
from .timing import Effort, flush_bytes_for

PRESETS = ("quick", "default", "full")
PROBES = ("matmul", "attention", "bandwidth", "health")
TOY_NOTE = (
    "CPU run at toy sizes: these figures check that the probes work, they say nothing "
    "about a GPU; run `python -m probes run` on the GPU box"
)

# Fixed costs per stage (allocations, first calls, library start-up), seconds.
_STAGE_OVERHEAD_S = {
    "gpu": {"matmul": 1.5, "attention": 2.0, "bandwidth": 1.5, "health": 1.5},
    "small": {"matmul": 0.0, "attention": 0.4, "bandwidth": 0.2, "health": 0.5},
}
_OVERHEAD_S = {"gpu": 6.0, "small": 1.0}  # detection and the stamp, before any stage


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
    attention_budget_s: float | None = None  # None: the preset's
    bandwidth_budget_s: float | None = None


@dataclass(frozen=True)
class _Preset:
    dtypes: tuple[str, ...]
    budget_s: dict[str, float]
    seq_lens: tuple[int, ...]
    head_dims: tuple[int, ...]
    attention_effort: Effort
    attention_budget_s: float
    bandwidth_effort: Effort
    bandwidth_budget_s: float
    health_s: float


_GPU = {
    "quick": _Preset(
        ("bf16",), {"bf16": 11.0}, (4096,), (128,), Effort(2, 10, 2), 6.0, Effort(2, 200, 3),
        1.5, 5.0,
    ),
    "default": _Preset(
        ("bf16", "fp8"),
        {"bf16": 24.0, "fp8": 18.0},
        (1024, 4096, 16384, 32768),
        (64, 128),
        Effort(2, 10, 2),
        22.0,
        Effort(3, 200, 3),
        1.5,
        6.0,
    ),
    "full": _Preset(
        MATMUL_DTYPES,
        dict.fromkeys(MATMUL_DTYPES, 40.0),
        (1024, 2048, 4096, 8192, 16384, 32768),
        (64, 128),
        Effort(3, 20, 3),
        90.0,
        Effort(5, 400, 5),
        3.0,
        20.0,
    ),
}
_SMALL = {
    "quick": _Preset(
        ("bf16",), {"bf16": 1.5}, (256,), (64,), Effort(1, 10, 1), 3.0, Effort(1, 1000, 3), 0.5,
        2.0,
    ),
    "default": _Preset(
        ("bf16", "fp8"),
        {"bf16": 3.0, "fp8": 3.0},
        (128, 256, 512, 1024),
        (64,),
        Effort(1, 10, 1),
        8.0,
        Effort(1, 1000, 3),
        1.5,
        2.0,
    ),
    "full": _Preset(
        MATMUL_DTYPES,
        dict.fromkeys(MATMUL_DTYPES, 4.0),
        (128, 256, 512, 1024, 2048),
        (32, 64),
        Effort(1, 10, 1),
        15.0,
        Effort(1, 1000, 3),
        3.0,
        2.0,
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
    bandwidth_bytes: int | None  # None: sized for the device (CPU: from its cache)
    bandwidth_effort: Effort
    bandwidth_budget_s: float | None
    health: bool
    health_s: float
    flush_bytes: int
    device_class: str = "gpu"
    run_bandwidth: bool = True
    skip_dtypes: dict[str, str] = field(default_factory=dict)

    @property
    def toy(self) -> bool:
        return self.device_class == "small"

    def stage_names(self) -> list[str]:
        out = [f"matmul {d}" for d in self.dtypes]
        if self.attention is not None:
            out.append("attention")
        if self.run_bandwidth:
            out.append("bandwidth")
        if self.health:
            out.append("node health")
        return out

    def estimates(self, device: Device | None = None) -> dict[str, float]:
        """Expected seconds per stage, keyed by stage name (also the progress weights)."""
        cls = self.device_class
        over = _STAGE_OVERHEAD_S[cls]
        out = {}
        for d, b in self.budget_s.items():
            out[f"matmul {d}"] = 0.05 if d in self.skip_dtypes else b + over["matmul"]
        if self.attention is not None:
            out["attention"] = (self.attention.budget_s or 0.0) + over["attention"]
        if self.run_bandwidth:
            out["bandwidth"] = (self.bandwidth_budget_s or 0.0) + over["bandwidth"]
        if self.health:
            out["node health"] = self.health_s + over["health"]
        return out

    def estimate_s(self, device: Device | None = None) -> float:
        """Expected wall time; the default GPU plan must stay within 90 s."""
        return _OVERHEAD_S[self.device_class] + sum(self.estimates(device).values())

    def settings(self) -> dict[str, Any]:
        out = asdict(self)
        out["mode"] = "exhaustive" if self.exhaustive else "quick"
        out["toy_sizes"] = self.toy
        return out

    def run_settings(self) -> dict[str, Any]:
        """What the stamp keeps: the settings that change the figures."""
        att = self.attention
        return {
            "preset": self.preset,
            "mode": "exhaustive" if self.exhaustive else "quick",
            "budget_s": dict(self.budget_s),
            "attention_budget_s": att.budget_s if att else None,
            "toy_sizes": self.toy,
        }


def plan_suite(config: SuiteConfig, device: Device) -> SuitePlan:
    if config.preset not in PRESETS:
        raise ValueError(f"unknown preset {config.preset!r}; choose one of {', '.join(PRESETS)}")
    unknown = set(config.only or ()) - set(PROBES)
    if unknown:
        raise ValueError(f"unknown probe {sorted(unknown)[0]!r}; choose from {', '.join(PROBES)}")
    bad = [d for d in config.dtypes or () if d not in MATMUL_DTYPES]
    if bad:
        raise ValueError(f"unknown dtype {bad[0]!r}; choose from {', '.join(MATMUL_DTYPES)}")
    if config.budget_s is not None and not 0 < config.budget_s <= 86400:
        raise ValueError("--budget takes seconds between 0 and 86400")
    cls = "gpu" if device.is_gpu else "small"
    preset = (_GPU if device.is_gpu else _SMALL)[config.preset]
    only = set(config.only or PROBES)
    dtypes = tuple(dict.fromkeys(config.dtypes or preset.dtypes)) if "matmul" in only else ()
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
            budget_s=config.attention_budget_s or preset.attention_budget_s,
        )
        if any(s <= 0 for s in attention.seq_lens) or any(d <= 0 for d in attention.head_dims):
            raise ValueError("--seq-lens and --head-dims take positive integers")
        if config.gqa_ratio < 1:
            raise ValueError("--gqa-ratio takes a positive integer")
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
        bandwidth_bytes=None,
        bandwidth_effort=preset.bandwidth_effort,
        bandwidth_budget_s=config.bandwidth_budget_s or preset.bandwidth_budget_s,
        health=health and device.is_gpu and ("health" in only or config.health is True),
        health_s=preset.health_s,
        flush_bytes=flush_bytes_for(device),
        device_class=cls,
        run_bandwidth="bandwidth" in only,
    )
