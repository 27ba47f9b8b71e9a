"""What changed between two decision reports: prices, inputs, stack, probe figures, verdicts.

Teams re-measure periodically (new drivers, new torch, new quotes), and what matters is
which of those moved the answer. Changes are grouped by topic so a reader can see, for
instance, that the verdict flipped in the same run where the stack changed, and suspect
the software before the hardware.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from advisor.core.formats import without_nulls
from advisor.core.model.probe_record import ProbeRecord
from advisor.core.report.document import Report
from advisor.core.result import GpuResult

ABSENT = "-"


@dataclass(frozen=True)
class Change:
    topic: str
    item: str
    old: str
    new: str
    ratio: float | None = None  # new / old, for numbers

    @property
    def delta(self) -> str:
        return f"{self.ratio - 1:+.1%}" if self.ratio is not None else ""


def _text(value: Any) -> str:
    if value is None:
        return ABSENT
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _compare(topic: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    """One Change per key whose value differs, with a ratio when both are numbers."""
    out = []
    for key in [*old, *(k for k in new if k not in old)]:
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (a, b))
        ratio = b / a if numbers and a else None
        out.append(Change(topic, key, _text(a), _text(b), ratio))
    return out


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    """Nested data as dotted keys: {"workload.model.layers": 32, ...}."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out
    return {prefix.rstrip("."): value}


def _results(r: Report) -> Iterable[GpuResult]:
    return (r.decision.current, *r.decision.targets)


def verdict_figures(r: Report) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for t in r.decision.targets:
        v = t.verdict
        out[f"{t.gpu} verdict"] = v.kind if v else None
        out[f"{t.gpu} speedup"] = v.speedup if v else None
        out[f"{t.gpu} cost ratio (target/current $/token)"] = v.cost_ratio if v else None
        out[f"{t.gpu} break-even $/h"] = t.break_even_usd_per_hour
    return out


def projection_figures(r: Report) -> dict[str, Any]:
    """Each GPU at each swept sequence length: the figures a verdict rests on."""
    out: dict[str, Any] = {}
    for g in _results(r):
        for p in g.sweep:
            at = f"{g.gpu} @{p.seq_len}"
            out[f"{at} tokens/s/GPU"] = p.tokens_per_s_per_gpu
            out[f"{at} $/Mtok"] = p.usd_per_mtok
            out[f"{at} binding"] = p.binding
    return out


def price_figures(r: Report) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for q in r.quotes:
        out[f"{q.gpu} $/GPU-hour"] = q.usd_per_hour
        out[f"{q.gpu} price source"] = f"{q.source}: {q.label}"
    return out


def input_figures(r: Report) -> dict[str, Any]:
    answers = without_nulls(r.decision.answers.model_dump(mode="json", exclude={"prices", "stack"}))
    flat = _flat(answers)
    flat["electricity source"] = r.decision.electricity_source
    return flat


def stack_figures(r: Report) -> dict[str, Any]:
    stack = r.decision.answers.stack
    return _flat(without_nulls(stack.model_dump(mode="json"))) if stack else {}


def probe_figures(record: ProbeRecord) -> dict[str, Any]:
    """A record's stamp and headline measurements, flat, for comparing two runs."""
    s = record.stamp
    out: dict[str, Any] = {"host": s.hostname, "date": s.date, "device": s.device.name,
                           "complete": record.complete}
    out.update({f"{k} version": v for k, v in s.versions.model_dump().items() if v is not None})
    for dtype in dict.fromkeys(m.dtype for m in record.matmul):
        out[f"MAMF {dtype} TFLOPS"] = record.mamf(dtype)
    for kind in ("d2d", "h2d", "d2h"):
        values = [b.gbps_median for b in record.bandwidth
                  if b.status == "ok" and b.kind == kind and b.gbps_median is not None]
        if values:
            out[f"{kind} GB/s"] = max(values)
    for shape in dict.fromkeys((a.seq_len, a.head_dim, a.causal, a.direction)
                               for a in record.attention):
        seq, hd, causal, direction = shape
        name = f"attention s{seq} d{hd}{' causal' if causal else ''} {direction} TFLOPS"
        out[name] = record.attention_tflops(*shape)
    for c in record.collectives:
        if c.status == "ok" and c.busbw_gbps is not None:
            key = f"{c.op} x{c.world_size} busbw GB/s"
            out[key] = max(out.get(key, 0.0), c.busbw_gbps)
    if record.node_health is not None and record.node_health.spread is not None:
        out["node spread"] = record.node_health.spread
    return out


def _probe_changes(old: Report, new: Report) -> list[Change]:
    out = []
    for gpu in [*old.probes, *(g for g in new.probes if g not in old.probes)]:
        a, b = old.probes.get(gpu), new.probes.get(gpu)
        if a is None or b is None:
            out.append(Change("probes", f"{gpu} record", "none" if a is None else a.stamp.date,
                              "none" if b is None else b.stamp.date))
            continue
        for c in _compare("probes", probe_figures(a), probe_figures(b)):
            out.append(Change(c.topic, f"{gpu} {c.item}", c.old, c.new, c.ratio))
    return out


def _provenance(r: Report) -> dict[str, Any]:
    p = r.provenance
    out: dict[str, Any] = {"advisor version": p.advisor_version,
                           "catalog version": p.catalog_version}
    for s in p.pulled:
        out[f"pulled {s.kind}"] = f"{s.url} ({s.fetched_at:%Y-%m-%d})"
    return out


def diff_reports(old: Report, new: Report) -> list[Change]:
    """Every change from `old` to `new`, grouped by topic, the verdict first."""
    return [
        *_compare("verdict", verdict_figures(old), verdict_figures(new)),
        *_compare("projection", projection_figures(old), projection_figures(new)),
        *_compare("prices", price_figures(old), price_figures(new)),
        *_compare("inputs", input_figures(old), input_figures(new)),
        *_compare("stack", stack_figures(old), stack_figures(new)),
        *_probe_changes(old, new),
        *_compare("provenance", _provenance(old), _provenance(new)),
    ]
