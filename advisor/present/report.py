"""A whole decision report as blocks: the decision, the sweep and the pipeline it holds,
then what a kept report needs beyond `compare`: provenance, quotes with their sources,
the probe records used and the warnings. Also the short form the wizard copies, and a diff
of two reports."""

from __future__ import annotations

from typing import TYPE_CHECKING

from advisor.present import configs, decision
from advisor.present.blocks import Block, Bullets, Col, Heading, Para, Table
from advisor.present.humanize import NA, UNKNOWN, number
from advisor.present.words import Dialect

if TYPE_CHECKING:
    from advisor.core import Change, Report


def title(r: Report) -> str:
    d = r.decision
    targets = ", ".join(t.label for t in d.targets)
    return f"advisor: {d.current.label} against {targets}, {d.answers.workload.model.name}"


def blocks(r: Report, *, provenance: bool = True, dialect: Dialect = "answers") -> list[Block]:
    """The decision first; `provenance` adds the prices, probes and where the data came from
    (a kept report's; `compare` has nothing of it to say). `dialect`: the answers came from
    a file (decide, report show) or from compare's flags."""
    out = decision.blocks(r.decision, dialect)
    if r.configs is not None:
        out += configs.sweep_blocks(r.configs, r.decision.answers, dialect)
    if r.pipeline is not None:
        out += configs.pipeline_blocks(r.pipeline)
    if provenance:
        out += provenance_blocks(r)
    elif r.warnings:
        out.append(Bullets(r.warnings, title="Warnings"))
    return out


def summary_blocks(r: Report, dialect: Dialect = "wizard") -> list[Block]:
    """The short form of `blocks` the wizard copies (^y): the verdict lines and the figures,
    each target's reasons, flips, warnings and costs, the report's warnings, the inputs and
    defaults, and whose report it is; the charts, rates, layouts and notes stay in the whole
    report (`advisor report show`)."""
    d = r.decision
    out = decision.verdict_blocks(d, dialect)
    for t in d.targets:
        out += decision.target_details(d, t, dialect)
    if r.warnings:
        out.append(Bullets(r.warnings, title="Warnings"))
    out += decision.inputs(d, dialect)
    return [*out, Para(made(r), dim=True)]


def made(r: Report) -> str:
    p = r.provenance
    return (f"Report of {p.created:%Y-%m-%d %H:%M} UTC by advisor {p.advisor_version}, "
            f"shipped catalog {p.catalog_version}")


def provenance_blocks(r: Report) -> list[Block]:
    p = r.provenance
    out: list[Block] = [
        Heading("Where this comes from"),
        Para(made(r)),
    ]
    if p.pulled:
        out.append(Bullets([f"pulled {s.kind}: {s.url} (fetched {s.fetched_at:%Y-%m-%d})"
                            for s in p.pulled]))
    out.append(Table(
        [Col("GPU"), Col("price", "$/GPU-h", numeric=True), Col("from"), Col("label", drop=2),
         Col("cited", drop=1)],
        [[q.gpu, number(q.usd_per_hour, 2), q.source, q.label,
          "; ".join(q.cited) + (f" ({q.retrieved})" if q.retrieved else "")] for q in r.quotes],
        title="Prices"))
    if r.probes:
        d = r.decision
        own = {g.gpu: g.precision for g in (d.current, *d.targets) if g.precision}
        fmt = {gpu: own.get(gpu, d.answers.workload.precision) for gpu in r.probes}
        out.append(Table(
            [Col("GPU"), Col("host", drop=1), Col("date"), Col("torch"), Col("CUDA/HIP"),
             Col("format"), Col("MAMF", "TFLOPS", numeric=True)],
            [[gpu, rec.stamp.hostname, rec.stamp.date, rec.stamp.versions.torch or UNKNOWN,
              rec.stamp.versions.cuda or rec.stamp.versions.hip or UNKNOWN, fmt[gpu],
              number(rec.mamf(fmt[gpu])) if rec.mamf(fmt[gpu]) is not None else NA]
             for gpu, rec in r.probes.items()],
            title="Probe records used"))
    else:
        out.append(Para("Probe records used: none (catalog figures only)"))
    if r.warnings:
        out.append(Bullets(r.warnings, title="Warnings"))
    return out


def changes_blocks(changes: list[Change]) -> list[Block]:
    if not changes:
        return [Para("No changes: same verdicts, projections, prices, inputs, stack and probe "
                     "figures.")]
    out: list[Block] = [Table([Col("topic"), Col("what"), Col("old"), Col("new"),
                               Col("change")],
                              [[c.topic, c.item, c.old, c.new, c.delta] for c in changes])]
    topics = {c.topic for c in changes}
    if "verdict" in topics and topics & {"stack", "probes"}:
        out.append(Para("The stack or the probe records changed too: part of the difference "
                        "may be software, not hardware. Re-measure both GPUs on the same stack "
                        "to tell."))
    return out
