"""Reports in and out of the wizard: export a decision as report TOML, resume from one.

The report format is the core's (`advisor.core.report.document`); this module only adds
what the wizard knows (provenance, probe records) and maps a report back onto
the wizard's state.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from advisor import __version__
from advisor.core import clean
from advisor.core.decide import Decision
from advisor.core.economics.configs import ConfigSweep, sweep_configs
from advisor.core.economics.stages import analyse_pipeline
from advisor.core.model.catalog import Catalog
from advisor.core.model.probe_record import ProbeRecord
from advisor.core.report.document import (
    Provenance,
    PulledSource,
    Report,
    build_report,
    parse_report,
    report_to_toml,
)
from advisor.io.atomic import write_output
from advisor.io.files import read_text
from advisor.tui.forms import form_from_workload
from advisor.tui.state import STEPS, WizardState


def provenance(now: datetime | None = None) -> Provenance:
    from advisor.io.catalog_store import pulled_sources, shipped_catalog_version

    pulled = [PulledSource(kind=c.kind, url=c.url, etag=c.etag, last_modified=c.last_modified,
                           fetched_at=c.fetched_at) for c in pulled_sources()]
    return Provenance(advisor_version=__version__, catalog_version=shipped_catalog_version(),
                      pulled=pulled, created=now or datetime.now(UTC))


def export_report(decision: Decision, catalog: Catalog, probes: dict[str, ProbeRecord],
                  path: Path, sweep: ConfigSweep | None = None,
                  now: datetime | None = None) -> Path:
    """Write the report atomically: an interrupted export never leaves half a file.

    Like `advisor decide`, the report gets a [configs] sweep when the answers have
    options for one (and a token budget to sweep), and a [pipeline] balance when they
    have stages; `sweep` is the one already computed from these answers, if any.
    """
    answers = decision.answers
    if sweep is None and answers.configs is not None and answers.workload.token_budget:
        sweep = sweep_configs(answers, catalog, probes)
    pipeline = analyse_pipeline(answers.pipeline, catalog, probes=probes) \
        if answers.pipeline is not None else None
    report = build_report(decision, catalog, probes, provenance(now), configs=sweep,
                          pipeline=pipeline)
    return write_output(path, report_to_toml(report))


def load_report(path: Path) -> Report:
    """A saved report; InputError (one line, exit 2) when it is missing or malformed."""
    return parse_report(read_text(path), str(path))


def state_from_report(report: Report) -> WizardState:
    """The wizard's answers as the report recorded them, with its decision and sweep
    attached; the answers themselves are kept too, for what the wizard has no field for."""
    d = report.decision
    a = d.answers
    probes = report.probes
    record = probes.get(a.current) or next(iter(probes.values()), None)
    return WizardState(
        current=a.current, workload=form_from_workload(a.workload), targets=list(a.targets),
        quotes=dict(a.prices),
        electricity_usd_per_kwh=a.electricity_usd_per_kwh if d.electricity_source == "user"
        else None,
        power_cap_kw=a.power_cap_kw, stack=a.stack,
        probe_source="import" if record else "catalog", probe_record=record,
        probe_note=f"from the report: {clean(record.stamp.device.name)}, {clean(record.stamp.date)}"
        if record
        else "the report used catalog figures",
        decision=d, configs=a.configs, sweep=report.configs, pipeline=a.pipeline, loaded=a,
        reached=len(STEPS) - 1)
