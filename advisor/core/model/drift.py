"""Stack drift: the software versions on which probe records compared in one decision differ.

Records compared in one decision should come from the same software: in one published
comparison, stack drift alone (torch, CUDA, kernels) moved the result by +16-23%, more
than many GPU upgrades are worth.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from packaging.version import Version

from advisor.core.model.probe_record import ProbeRecord
from advisor.core.model.stack import try_parse_version

# Versions that change measured speed. CUDA-side and ROCm-side libraries are only
# compared between records of the same device kind: an H100 and an MI300X differ in
# them by nature, not by drift.
COMMON_FIELDS = ("torch", "flash_attn", "transformer_engine")
KIND_FIELDS: Mapping[str, tuple[str, ...]] = {
    "cuda": ("cuda", "cudnn", "nccl"),
    "rocm": ("hip", "nccl"),
}
DRIFT_NOTE = (
    "Figures measured on different software compare the software as much as the GPUs: "
    "in one published comparison, stack drift alone moved the result by +16-23%. "
    "Re-run the probes with the same torch, CUDA/ROCm and kernel versions on both boxes."
)


@dataclass(frozen=True)
class Drift:
    """One version that differs between records, keyed by the record's label."""

    field: str
    values: Mapping[str, str | None]

    def line(self) -> str:
        shown = ", ".join(f"{v or 'not installed'} ({k})" for k, v in self.values.items())
        return f"{self.field}: {shown}"


def _same_version(a: str | None, b: str | None, builds: bool) -> bool:
    """Equal versions, spelled any way; with `builds`, and the same build where both say
    which ("2.7.1+cu128" is not "2.7.1+cu130"; a bare "2.7.1" says nothing either way)."""
    if a is None or b is None:
        return a is b
    ka, kb = try_parse_version(a), try_parse_version(b)
    if ka is None or kb is None:
        return a.strip() == b.strip()
    if builds and ka.local and kb.local:
        return ka == kb
    return Version(ka.public) == Version(kb.public)


def stack_drift(records: Mapping[str, ProbeRecord]) -> list[Drift]:
    """Every stack version on which these records disagree (none for fewer than two)."""
    if len(records) < 2:
        return []
    kinds = {r.stamp.device.kind for r in records.values()}
    one_kind = len(kinds) == 1  # a CUDA and a ROCm torch are different builds by nature
    fields = COMMON_FIELDS + (KIND_FIELDS.get(kinds.pop(), ()) if one_kind else ())
    drifts = []
    for name in fields:
        values = {label: getattr(r.stamp.versions, name) for label, r in records.items()}
        first = next(iter(values.values()))
        if not all(_same_version(first, v, builds=one_kind) for v in values.values()):
            drifts.append(Drift(name, values))
    return drifts


def drift_warning(drifts: list[Drift]) -> str:
    """The loud multi-line warning printed whenever compared records drift."""
    lines = ["WARNING: STACK DRIFT between probe records:"]
    lines += [f"  {d.line()}" for d in drifts]
    lines.append(DRIFT_NOTE)
    return "\n".join(lines)
