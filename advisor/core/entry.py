"""run(): the one entry point both front ends call, answers in, a Report out.

It owns every policy, so the wizard and `advisor decide` cannot disagree: the gates
(a failing target stays in the report, blocked, with its remedy), which probe records
are used and whether their stacks drift, the defaults, the projection as run and
re-tuned, the GPU-count sweep, the pipeline balance and the report's provenance. The
front ends gather answers and render the Report; neither computes, filters or
re-phrases a result.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from advisor.core.anchored import resolve_anchored
from advisor.core.comparison import decide
from advisor.core.economics.configs import sweep_configs
from advisor.core.economics.sanity import check_configs, check_pipeline, check_plausible
from advisor.core.economics.stages import PipelineReport, analyse_pipeline
from advisor.core.model.answers import Answers, check_against_catalog
from advisor.core.model.catalog import Catalog
from advisor.core.model.drift import DRIFT_NOTE, stack_drift
from advisor.core.model.options import PipelineSpec
from advisor.core.model.probe_record import ProbeRecord
from advisor.core.projection.calibration import CAL, Calibration
from advisor.core.report.document import Provenance, Report, build_report


def run(answers: Answers, catalog: Catalog, probes: Mapping[str, ProbeRecord] | None = None,
        provenance: Provenance | None = None, cal: Calibration = CAL,
        workloads: Mapping[str, ProbeRecord] | None = None) -> Report:
    """The whole decision for these answers, as the report both front ends render.

    Answers that ask only for a GPU-count sweep or a pipeline may name no target besides
    the current GPU; the decision then holds the current GPU alone. `workloads` are
    workload-probe records by GPU: the current GPU's anchors the decision when the answers
    give no measurement of their own."""
    check_against_catalog(answers, catalog)
    answers = answers.by_catalog_id(catalog)
    alone = answers.configs is not None or answers.pipeline is not None
    compared = {s.gpu for s in answers.compared(catalog, alone=alone)}
    used = {catalog.gpu(k).id: v for k, v in (probes or {}).items()}
    used = {k: v for k, v in used.items() if k in compared}
    current = answers.compared(catalog, alone=alone)[0].gpu
    mine = {catalog.gpu(k).id: v for k, v in (workloads or {}).items()}.get(current)
    resolved = resolve_anchored(answers, catalog, used, cal, alone=alone, workload_probe=mine)
    decision = decide(answers, catalog, used, cal, alone=alone, resolved=resolved)
    check_plausible(decision, used, mine)  # what no real pair of GPUs gives: an input problem
    configs = sweep_configs(answers, catalog, used, cal, sides=resolved.sides) \
        if answers.configs is not None and answers.workload.token_budget else None
    if configs is not None:
        check_configs(configs)
    tuned = resolved.sides[0].tuned  # engine-projected stages run your stack, as targets do
    pipeline = analyse_pipeline(answers.pipeline, catalog, probes=used, cal=tuned or cal,
                                prices=answers.prices, anchor=resolved.anchor) \
        if answers.pipeline is not None else None
    if pipeline is not None and answers.pipeline is not None:
        check_pipeline(pipeline, answers.pipeline, catalog)
    drift = stack_drift(used)
    warnings = [f"stack drift: {d.line()}" for d in drift] + ([DRIFT_NOTE] if drift else [])
    prov = provenance or Provenance(advisor_version="unknown", catalog_version="unknown",
                                    created=datetime.now(UTC).replace(microsecond=0))
    return build_report(decision, catalog, used, prov, warnings, configs=configs,
                        pipeline=pipeline)


def run_pipeline(spec: PipelineSpec, catalog: Catalog, gpus: int | None = None,
                 probes: Mapping[str, ProbeRecord] | None = None,
                 prices: Mapping[str, float] | None = None,
                 cal: Calibration = CAL) -> PipelineReport:
    """A staged workload on its own (a [pipeline] file with no decision around it): each
    stage resolved like a decision's side, gates included, then balanced."""
    report = analyse_pipeline(spec, catalog, gpus=gpus, probes=probes, cal=cal, prices=prices)
    check_pipeline(report, spec, catalog)  # the rules of every other path's results
    return report
