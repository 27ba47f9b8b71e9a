"""The decision report: a Decision and what it rests on, as commented TOML.

A report is the record of one decision: the inputs (workload, every quote with its
source, the stack), the probe records used with their stamps, the projection of each
GPU at each swept sequence length, the gate results, each verdict with its reasons and
the assumptions that would flip it, and provenance (advisor and catalog versions,
pulled team data, the date). It is what teams keep and re-measure against, so it must
read back exactly: stdlib `tomllib` reads it and `parse_report` rebuilds an equal
Report. The schema is versioned; a report of another version is refused, not guessed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from advisor.core.economics.configs import ConfigSweep
from advisor.core.economics.stages import PipelineReport
from advisor.core.errors import InputError, not_ours
from advisor.core.formats import (
    assert_finite,
    load_model,
    model_data,
    normalize,
    parse_json,
    parse_toml,
    toml_document,
)
from advisor.core.model.catalog import Catalog
from advisor.core.model.probe_record import ProbeRecord
from advisor.core.redact import redact_url
from advisor.core.report.answers_toml import answers_data
from advisor.core.result import Decision

SCHEMA = "advisor.decision-report"
VERSION = 2
"""2: a verdict's headline is the facts it rests on (`Headline`), worded by each front end;
1 wrote it as a sentence, which a version-1 report keeps (`_from_version_1`)."""
V1_KINDS = ("upgrade for time: ", "upgrade: ", "break-even: ", "hold: ", "blocked: ",
            "blocked ", "capability: ")
"""How version 1 began a headline with its verdict's kind, which the kind field now says."""


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PulledSource(_Frozen):
    """A team catalog or price sheet the effective catalog included."""

    kind: str
    url: Annotated[str, AfterValidator(redact_url)] = Field(
        description="as pulled, with every secret-looking part redacted (also when read)")
    etag: str | None = None
    last_modified: str | None = None
    fetched_at: datetime


class Provenance(_Frozen):
    advisor_version: str
    catalog_version: str = Field(description="digest of the shipped catalog files")
    pulled: list[PulledSource] = Field(default_factory=list)
    created: datetime


class Quote(_Frozen):
    """The price each GPU was costed at, and whose figure it is."""

    gpu: str
    usd_per_hour: float | None
    source: Literal["user", "default", "none"]
    label: str
    cited: list[str] = Field(default_factory=list, description="where a default comes from")
    retrieved: str | None = None


class Report(_Frozen):
    schema_: Literal["advisor.decision-report"] = Field(alias="schema")
    version: Literal[2]
    provenance: Provenance
    quotes: list[Quote]
    warnings: list[str] = Field(default_factory=list, description="e.g. stack drift")
    probes: dict[str, ProbeRecord] = Field(default_factory=dict, description="by catalog id")
    decision: Decision
    configs: ConfigSweep | None = Field(default=None, description="the [configs] sweep")
    pipeline: PipelineReport | None = Field(default=None, description="the [pipeline] balance")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


HEADER = (
    "advisor decision report. `advisor report show FILE` summarises it;",
    "`advisor report diff OLD NEW` says what changed between two runs.",
    "Figures marked default (prices, electricity) were not given by you.",
)
# The Decision's fields are written at the top level beside the report's own, in this order.
SECTIONS: dict[str, str] = {
    "schema": "",
    "version": "report schema version",
    "primary_seq_len": "the sequence length the headline figures are for",
    "electricity_source": "user: your $/kWh; default: advisor's",
    "band_level": "confidence level of every speedup_low/high and cost_ratio_low/high band",
    "basis": "retuned: each GPU in the layout re-tuned for it; as_run: your layout on both",
    "notes": "",
    "warnings": "read these first",
    "provenance": "what produced this report",
    "quotes": "the $/GPU-hour each GPU was costed at; source user = your quote",
    "answers": "the inputs: workload, your prices, the stack (re-run with `advisor decide`)",
    "defaults": "values you did not give, and where the ones used came from",
    "current": (
        "the GPU the workload runs on now: gates, rates and their evidence, and the\n"
        "projection at each swept sequence length, re-tuned ([[current.sweep]]) and as run"
    ),
    "targets": (
        "each target: gates, projection per sweep point, job cost, and the verdict\n"
        "with its ranked reasons and flips (the assumption values that would change it)"
    ),
    "configs": (
        "GPU-count sweep ([configs] in the answers): throughput with communication, ETA,\n"
        "$ and energy per configuration, the Pareto front and the best under your limits"
    ),
    "pipeline": (
        "producer/consumer pipeline ([pipeline] in the answers): stage rates, bottleneck,\n"
        "queue behaviour, the best split and the neighbouring splits"
    ),
    "probes": "probe records used, with their stamps (host, date, device, versions)",
}


def quotes_for(decision: Decision, catalog: Catalog) -> list[Quote]:
    """Each compared GPU's price with its source; catalog citations name pulled sheets."""
    out = []
    for r in (decision.current, *decision.targets):
        user = decision.answers.prices.get(r.gpu)
        if user is not None:
            out.append(Quote(gpu=r.gpu, usd_per_hour=user, source="user", label="your quote"))
            continue
        p = catalog.default_price(r.gpu)
        if p is None:
            out.append(Quote(gpu=r.gpu, usd_per_hour=None, source="none",
                             label="no price: quote your own"))
        else:
            out.append(Quote(gpu=r.gpu, usd_per_hour=p.usd_per_hour, source="default",
                             label=p.label, cited=list(p.source),
                             retrieved=p.retrieved.isoformat()))
    return out


def build_report(
    decision: Decision,
    catalog: Catalog,
    probes: dict[str, ProbeRecord],
    provenance: Provenance,
    warnings: list[str] | None = None,
    configs: ConfigSweep | None = None,
    pipeline: PipelineReport | None = None,
) -> Report:
    """The report of a decision; probe records are kept as they will read back.

    Raises NonFiniteError (a bug) if any figure in it is NaN or infinite: every input is
    finite and bounded at load, so one here means the engine divided by zero somewhere.
    """
    report = Report(
        schema_=SCHEMA, version=VERSION, provenance=provenance,
        quotes=quotes_for(decision, catalog), warnings=warnings or [],
        probes={gpu: normalize(rec) for gpu, rec in sorted(probes.items())},
        decision=decision,
        configs=normalize(configs) if configs is not None else None,
        pipeline=normalize(pipeline) if pipeline is not None else None,
    )
    assert_finite(model_data(report), "decision report")
    return report


def _top_level(report: Report) -> dict[str, Any]:
    data = model_data(report)
    decision = data.pop("decision")
    decision["answers"] = answers_data(report.decision.answers)
    return {**data, **decision}


def report_to_toml(report: Report) -> str:
    data = _top_level(report)
    assert_finite(data, "decision report")
    order = [*SECTIONS, *(k for k in data if k not in SECTIONS)]
    return toml_document(HEADER, [(k, data[k], SECTIONS.get(k, "")) for k in order if k in data])


def parse_report(text: str, file: str) -> Report:
    """A report's TOML (or the JSON `advisor report show --format json` prints) back to the
    Report; other schemas and versions are refused."""
    data = parse_json(text, file) if text.lstrip().startswith("{") else parse_toml(text, file)
    if isinstance(data.get("decision"), dict):  # the JSON nests what the TOML lays out flat
        data = {**data, **data.pop("decision")}
    if data.get("schema") != SCHEMA:
        raise not_ours("an advisor decision report", SCHEMA, data.get("schema"), file)
    version = data.get("version")
    if version == 1:
        data = _from_version_1(data)
    elif version != VERSION:
        raise InputError(f"unsupported report version (this advisor reads versions 1 and "
                         f"{VERSION})", file=file, field="version",
                         value=version if isinstance(version, int) else None,
                         has_value=isinstance(version, int))
    decision_fields = set(Decision.model_fields)
    decision = {k: data.pop(k) for k in list(data) if k in decision_fields}
    try:
        report = load_model(Report, {**data, "decision": decision}, file, strict=True)
    except InputError as exc:  # the decision's fields sit at the top level of the file
        if exc.field and exc.field.startswith("decision."):
            exc.field = exc.field.removeprefix("decision.")
        raise
    check_consistent(report, file)
    return report


def _from_version_1(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 report as version 2: each verdict's headline, reasons and flips are kept
    as they were said (the headline less the kind it began with: "blocked on X ..." is said
    "blocked: on X ...")."""
    def said(items: Any) -> Any:
        return [{**x, "code": "said"} if isinstance(x, dict) else x for x in items] \
            if isinstance(items, list) else items

    def migrated(result: Any) -> Any:
        verdict = result.get("verdict") if isinstance(result, dict) else None
        if not isinstance(verdict, dict) or not isinstance(verdict.get("headline"), str):
            return result
        headline: str = verdict["headline"]
        kind = next((k for k in V1_KINDS if headline.startswith(k)), "")
        flips = [{k: v for k, v in f.items() if k != "assumption"} if isinstance(f, dict)
                 else f for f in verdict.get("flips", [])] \
            if isinstance(verdict.get("flips"), list) else verdict.get("flips")
        return {**result, "verdict": {**verdict, "headline": {"said": headline[len(kind):]},
                                      "reasons": said(verdict.get("reasons")),
                                      "flips": said(flips)}}

    out = {**data, "version": VERSION}
    if "current" in data:
        out["current"] = migrated(data["current"])
    if isinstance(data.get("targets"), list):
        out["targets"] = [migrated(t) for t in data["targets"]]
    return out


def check_consistent(report: Report, file: str) -> None:
    """What every reader of a report relies on beyond each field's own type, checked once at
    load: a hand-edited report that breaks it is one line here, not a crash in `report
    show` or inside the wizard (`advisor --resume`)."""
    d = report.decision
    seqs = d.answers.workload.seq_lens
    if d.primary_seq_len not in seqs:
        raise InputError("is not one of the swept sequence lengths (answers.workload.seq_lens "
                         f"= {seqs})", file=file, field="primary_seq_len",
                         value=d.primary_seq_len)
    results = [("current", d.current), *((f"targets.{i}", t) for i, t in enumerate(d.targets))]
    for where, r in results:
        swept = [p.seq_len for p in r.sweep]
        if swept != seqs:
            raise InputError(f"the sweep's sequence lengths {swept} are not those of "
                             f"answers.workload.seq_lens {seqs}", file=file,
                             field=f"{where}.sweep")
        for part in ("sweep", "as_run"):  # no result above its GPU's peak, as when decided
            for i, p in enumerate(getattr(r, part)):
                _within_peak(p.mfu, file, f"{where}.{part}.{i}.mfu")
    if report.configs is not None:
        _configs_consistent(report.configs, file)


def _configs_consistent(sweep: ConfigSweep, file: str) -> None:
    """The GPU-count sweep's points are of the GPUs it swept, and within their peaks."""
    points = [*((f"points.{i}", p) for i, p in enumerate(sweep.points)),
              *((f"choice.{n}", p) for n in ("best", "closest_miss")
                if (p := getattr(sweep.choice, n)) is not None)]
    for where, p in points:
        if p.gpu not in sweep.gpus:
            raise InputError(f"is not one of the swept GPUs (configs.gpus = {sweep.gpus})",
                             file=file, field=f"configs.{where}.gpu", value=p.gpu)
        _within_peak(p.mfu, file, f"configs.{where}.mfu")


def _within_peak(mfu: float | None, file: str, field: str) -> None:
    if mfu is not None and mfu > 1:
        raise InputError("an MFU above 1 is above the GPU's peak: no run reaches it",
                         file=file, field=field, value=mfu)
