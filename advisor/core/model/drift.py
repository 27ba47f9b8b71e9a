"""Stack drift: the fields on which probe records compared in one decision differ.

Records compared in one decision should come from the same software and settings: in one
published comparison, stack drift alone (torch, CUDA, kernels) moved the result by
+16-23%, more than many GPU upgrades are worth. Every field that changes measured speed
is compared: versions (torch and its local build tag, driver, CUDA/HIP, cuDNN, cuBLAS,
NCCL, the kernel libraries), clocks and the power limit, ECC, MIG and the PCIe link, the
run settings, the kernel-changing environment and torch switches, and the probe code.
Vendor libraries are compared only between records of one device kind, and clocks, power
limits and PCIe links only between records of one GPU model: an H100 and a B200 differ in
them by nature, not by drift (across models, whether each sits at its default is compared).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from advisor.core.model.probe_record import ProbeRecord
from advisor.core.model.stack import try_parse_version

COMMON_FIELDS = (
    "torch", "flash_attn", "flash_attn_3", "flash_attn_4", "flash_attn_cute", "cute_dsl",
    "transformer_engine", "triton",
)
KIND_FIELDS: Mapping[str, tuple[str, ...]] = {
    "cuda": ("driver", "cuda", "cudnn", "cublas", "nccl"),
    "rocm": ("driver", "hip", "nccl", "aiter"),
}
# Packages: a missing version means "not installed". Elsewhere it means "not recorded"
# (an older record, or a reading the box did not give), which is unknown, not a difference.
PACKAGE_FIELDS = frozenset(
    {"flash_attn", "flash_attn_3", "flash_attn_4", "flash_attn_cute", "cute_dsl",
     "transformer_engine", "triton", "aiter"}
)
# Fields version 1 records never wrote: there a missing value is "not recorded".
_V2_FIELDS = frozenset({"cublas", "flash_attn_4", "cute_dsl", "triton", "aiter"})
DRIFT_NOTE = (
    "Figures measured on different software compare the software as much as the GPUs: "
    "in one published comparison, stack drift alone moved the result by +16-23%. "
    "Re-run the probes with the same torch, CUDA/ROCm and kernel versions, clocks, power "
    "limit and probe settings on both boxes."
)
NOT_RECORDED = "not recorded"


@dataclass(frozen=True)
class Drift:
    """One field that differs between records, keyed by the record's label."""

    field: str
    values: Mapping[str, str | None]
    missing: str = "not installed"  # how a None value reads

    def line(self) -> str:
        shown = ", ".join(f"{v or self.missing} ({k})" for k, v in self.values.items())
        return f"{self.field}: {shown}"


def _same_version(a: str | None, b: str | None) -> bool:
    """Equal public versions, spelled any way; a torch build tag is compared on its own
    ("torch local build"), and only between records of one device kind."""
    if a is None or b is None:
        return a is b
    ka, kb = try_parse_version(a), try_parse_version(b)
    if ka is None or kb is None:
        return a.strip() == b.strip()
    from packaging.version import Version  # loaded by try_parse_version above

    return Version(ka.public) == Version(kb.public)


def _differ(values: Mapping[str, str | None], unknown: frozenset[str] = frozenset(),
            same: Callable[[str | None, str | None], bool] | None = None) -> bool:
    """Whether the known values disagree; labels in `unknown` do not take part."""
    known = [v for k, v in values.items() if k not in unknown]
    if len(known) < 2:
        return False
    eq = same or (lambda a, b: a == b)
    return not all(eq(known[0], v) for v in known[1:])


def _local_tag(record: ProbeRecord) -> str | None:
    v = record.stamp.versions
    if v.torch_local:
        return v.torch_local
    return v.torch.split("+", 1)[1] if v.torch and "+" in v.torch else None


def _model(record: ProbeRecord) -> str:
    d = record.stamp.device
    return d.catalog_id or d.name


def _fmt(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _run_settings(record: ProbeRecord) -> dict[str, Any] | None:
    """Quick or exhaustive, preset and budget: the stamp's, or a version 1 record's settings."""
    run = dict(record.stamp.run)
    if not run and record.settings:
        s = record.settings
        run = {"preset": s.get("preset"), "budget_s": s.get("budget_s"),
               "mode": "exhaustive" if s.get("exhaustive") else "quick"}
    return run or None


def _version_drift(records: Mapping[str, ProbeRecord], fields: Sequence[str],
                   one_kind: bool) -> list[Drift]:
    out = []
    for name in fields:
        values = {label: getattr(r.stamp.versions, name) for label, r in records.items()}
        unknown = frozenset(
            label for label, r in records.items()
            if values[label] is None and (
                (r.version < 2 and name in _V2_FIELDS)
                or (name not in PACKAGE_FIELDS and name != "torch")
            )
        )
        if _differ(values, unknown, _same_version):
            missing = "not installed" if name in PACKAGE_FIELDS else NOT_RECORDED
            out.append(Drift(name, {k: v if k not in unknown else None for k, v in values.items()},
                             missing))
        if name == "torch":
            tags = {label: _local_tag(r) for label, r in records.items()}
            if one_kind and _differ(tags):  # +cu128 and +rocm6.3 differ by nature
                out.append(Drift("torch local build", tags, "no local tag"))
            gits = {label: r.stamp.versions.torch_git for label, r in records.items()}
            unknown_git = frozenset(k for k, v in gits.items() if v is None)
            if _differ(gits, unknown_git) and not _differ(
                {k: v for k, v in values.items()}, frozenset(), _same_version
            ):
                out.append(Drift("torch commit", gits, NOT_RECORDED))
    return out


def _state_drift(name: str, values: Mapping[str, str | None]) -> list[Drift]:
    unknown = frozenset(k for k, v in values.items() if v is None)
    return [Drift(name, values, NOT_RECORDED)] if _differ(values, unknown) else []


def _hardware_drift(records: Mapping[str, ProbeRecord]) -> list[Drift]:
    """Clocks, power limit, ECC, MIG and PCIe: exact values within one GPU model, and
    whether each sits at its default across models."""
    out: list[Drift] = []
    stamps = {label: r.stamp for label, r in records.items()}

    def limit(st: Any) -> float | None:
        return (st.power or {}).get("limit_w") or st.power_limit_w

    out += _state_drift("power limit at default",
                        {k: _fmt((st.power or {}).get("at_default")) for k, st in stamps.items()})
    out += _state_drift("application clocks at default",
                        {k: _fmt(st.clocks.get("app_clocks_default")) for k, st in stamps.items()})
    out += _state_drift("clocks held by a clock setting",
                        {k: _fmt(st.clocks.get("clock_setting_limits"))
                         for k, st in stamps.items()})
    out += _state_drift("ECC", {k: _fmt((st.ecc or {}).get("enabled")) for k, st in stamps.items()})
    out += _state_drift("MIG", {k: _fmt((st.mig or {}).get("enabled")) for k, st in stamps.items()})
    groups: dict[str, list[str]] = {}
    for label, r in records.items():
        groups.setdefault(_model(r), []).append(label)
    for labels in groups.values():
        if len(labels) < 2:
            continue
        group = {k: stamps[k] for k in labels}
        out += _state_drift("power limit (W)", {k: _fmt(limit(st)) for k, st in group.items()})
        for key, title in (("sm_app_mhz", "SM application clock (MHz)"),
                           ("mem_app_mhz", "memory application clock (MHz)"),
                           ("sm_max_mhz", "SM max clock (MHz)")):
            out += _state_drift(title, {k: _fmt(st.clocks.get(key)) for k, st in group.items()})

        def link(st: Any) -> str | None:
            p = st.pcie or {}
            if p.get("max_gen") is None and p.get("max_width") is None:
                return None
            return f"Gen{p.get('max_gen')} x{p.get('max_width')}"

        out += _state_drift("PCIe link", {k: link(st) for k, st in group.items()})
    return out


def _settings_drift(records: Mapping[str, ProbeRecord]) -> list[Drift]:
    out: list[Drift] = []
    runs = {label: _run_settings(r) for label, r in records.items()}
    for key, title in (("mode", "run mode"), ("preset", "run preset"),
                       ("budget_s", "run budget (s per dtype)")):
        values = {k: (_fmt(v.get(key)) if v is not None else None) for k, v in runs.items()}
        out += _state_drift(title, values)
    recorded = {label: r for label, r in records.items() if r.version >= 2}
    env_keys = sorted({k for r in recorded.values() for k in r.stamp.env})
    for key in env_keys:
        values = {label: r.stamp.env.get(key) for label, r in recorded.items()}
        if _differ(values):
            out.append(Drift(f"env {key}", values, "unset"))
    switch_keys = sorted({k for r in recorded.values() for k in r.stamp.torch_settings})
    for key in switch_keys:
        values = {label: _fmt(r.stamp.torch_settings.get(key)) for label, r in recorded.items()}
        out += _state_drift(f"torch setting {key}", values)
    code = {
        label: (f"{r.stamp.probe.version} ({r.stamp.probe.code})" if r.stamp.probe else None)
        for label, r in records.items()
    }
    if _differ(code):  # a version 1 record has none: a different probe by definition
        out.append(Drift("probe code", code, "version 1 probe"))
    return out


def stack_drift(records: Mapping[str, ProbeRecord]) -> list[Drift]:
    """Every speed-relevant field on which these records disagree (none for fewer than two)."""
    if len(records) < 2:
        return []
    kinds = {r.stamp.device.kind for r in records.values()}
    one_kind = len(kinds) == 1
    fields = COMMON_FIELDS + (KIND_FIELDS.get(kinds.pop(), ()) if one_kind else ())
    return [*_version_drift(records, fields, one_kind), *_hardware_drift(records),
            *_settings_drift(records)]


def drift_warning(drifts: list[Drift]) -> str:
    """The loud multi-line warning printed whenever compared records drift."""
    lines = [f"WARNING: STACK DRIFT between probe records ({len(drifts)} field(s) differ: "
             f"{', '.join(d.field for d in drifts)}):"]
    lines += [f"  {d.line()}" for d in drifts]
    lines.append(DRIFT_NOTE)
    return "\n".join(lines)
