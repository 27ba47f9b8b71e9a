"""Pure decision model: no front end, no disk or network, no textual, no torch.

This package's namespace is its public face: the front ends import from
`advisor.core` only (import-linter keeps them to it), chiefly `run`, which turns
answers into a Report. Names load on first use, so `advisor --help` and the first
wizard screen stay light.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_PUBLIC: dict[str, str] = {
    # the one entry point, and what it returns
    "run": "advisor.core.entry",
    "run_pipeline": "advisor.core.entry",
    "Report": "advisor.core.report.document",
    "Provenance": "advisor.core.report.document",
    "PulledSource": "advisor.core.report.document",
    "report_to_toml": "advisor.core.report.document",
    "parse_report": "advisor.core.report.document",
    "Decision": "advisor.core.result",
    "GpuResult": "advisor.core.result",
    "InteractivityPoint": "advisor.core.result",
    "InteractivityLead": "advisor.core.result",
    "at_interactivity": "advisor.core.projection.interactivity",
    "SweepPoint": "advisor.core.result",
    "SensitivityRow": "advisor.core.result",
    "DefaultUsed": "advisor.core.result",
    "Verdict": "advisor.core.economics.verdict",
    "Headline": "advisor.core.economics.verdict",
    "Flip": "advisor.core.economics.verdict",
    "Reason": "advisor.core.economics.verdict",
    "diff_reports": "advisor.core.report.diff",
    "Change": "advisor.core.report.diff",
    "answers_to_toml": "advisor.core.report.answers_toml",
    "parse_answers_toml": "advisor.core.report.answers_toml",
    # inputs
    "Answers": "advisor.core.model.answers",
    "parse_answers": "advisor.core.model.answers",
    "split_count": "advisor.core.model.gpu_name",
    "DEFAULT_ELECTRICITY_USD_PER_KWH": "advisor.core.model.answers",
    "Workload": "advisor.core.model.workload",
    "TRAINING_MODES": "advisor.core.model.vocabulary",
    "SERVING_MODES": "advisor.core.model.vocabulary",
    "Precision": "advisor.core.model.vocabulary",
    "RECIPE_FORMATS": "advisor.core.model.vocabulary",
    "KV_BYTES": "advisor.core.model.vocabulary",
    "ModelSpec": "advisor.core.model.transformer",
    "PRESETS": "advisor.core.model.presets",
    "LayoutOverride": "advisor.core.model.layout",
    "LayoutChoice": "advisor.core.model.layout",
    "BASE_WORDS": "advisor.core.model.layout",
    "BaseOption": "advisor.core.model.lora",
    "BASE_ACCURACY": "advisor.core.model.lora",
    "BASE_FORMATS": "advisor.core.model.vocabulary",
    "ConfigOptions": "advisor.core.model.options",
    "PipelineSpec": "advisor.core.model.options",
    "StageSpec": "advisor.core.model.options",
    "Stack": "advisor.core.model.stack",
    "ATTENTION_KERNELS": "advisor.core.model.stack",
    "parse_stack": "advisor.core.model.stack",
    "format_stack": "advisor.core.model.stack",
    "ProbeRecord": "advisor.core.model.probe_record",
    "parse_probe_record": "advisor.core.model.probe_record",
    "stack_drift": "advisor.core.model.drift",
    "drift_warning": "advisor.core.model.drift",
    "Catalog": "advisor.core.model.catalog",
    "Gpu": "advisor.core.model.catalog",
    "Sourced": "advisor.core.model.catalog",
    # results the front ends render beside the decision
    "ConfigSweep": "advisor.core.economics.configs",
    "ConfigPoint": "advisor.core.economics.configs",
    "PipelineReport": "advisor.core.economics.stages",
    "PipelineBalance": "advisor.core.economics.pipeline",
    "rank": "advisor.core.economics.ranking",
    "ranking_answers": "advisor.core.economics.ranking",
    "Ranking": "advisor.core.economics.ranking",
    "Remedy": "advisor.core.economics.ranking",
    "Evidence": "advisor.core.projection.rates",
    "SoftwareGate": "advisor.core.gates.software",
    "DtypeGate": "advisor.core.gates.dtype",
    # validation against the published cases
    "validate": "advisor.core.validation",
    "validate_anchored": "advisor.core.validation",
    "anchored_groups": "advisor.core.validation",
    "refit": "advisor.core.validation",
    "CaseSpec": "advisor.core.validation",
    "Accuracy": "advisor.core.validation",
    "CaseResult": "advisor.core.validation",
    "Summary": "advisor.core.validation",
    "PipelineAlternative": "advisor.core.model.options",
    # text codecs and errors
    "InputError": "advisor.core.errors",
    "in_file": "advisor.core.errors",
    "EXIT_INPUT_ERROR": "advisor.core.errors",
    "FORMATS": "advisor.core.formats",
    "load_model": "advisor.core.formats",
    "parse_toml": "advisor.core.formats",
    # terminal-safe text and the bounds a front end states
    "clean": "advisor.core.text",
    "clean_block": "advisor.core.text",
    "MAX_GPUS": "advisor.core.model.bounds",
    "MAX_RETRIES": "advisor.core.model.bounds",
    "MAX_TIMEOUT_S": "advisor.core.model.bounds",
    # the one number grammar every front end reads typed numbers with
    "NumberSpec": "advisor.core.numbers",
    "WHOLE": "advisor.core.numbers",
    "TOKENS": "advisor.core.numbers",
    "AMOUNT": "advisor.core.numbers",
    "PLAIN": "advisor.core.numbers",
    "USD": "advisor.core.numbers",
    "RATIO": "advisor.core.numbers",
    "Price": "advisor.core.numbers",
    "parse_number": "advisor.core.numbers",
    "parse_int": "advisor.core.numbers",
    "parse_optional": "advisor.core.numbers",
    "parse_list": "advisor.core.numbers",
    "parse_price": "advisor.core.numbers",
    "is_ratio": "advisor.core.numbers",
}
_MODULES: dict[str, str] = {
    # every bound, for a front end that states one (`bounds.MAX_SEQ_LEN`)
    "bounds": "advisor.core.model.bounds",
    # every choice list a front end offers (`vocabulary.PRECISIONS`)
    "vocabulary": "advisor.core.model.vocabulary",
}

__all__ = sorted([*_PUBLIC, *_MODULES])


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if name in _MODULES:
        value = import_module(_MODULES[name])
    elif module is None:
        raise AttributeError(f"module 'advisor.core' has no attribute {name!r}")
    else:
        value = getattr(import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:  # the names above, for type checkers
    from advisor.core.economics.configs import ConfigPoint, ConfigSweep
    from advisor.core.economics.pipeline import PipelineBalance
    from advisor.core.economics.ranking import Ranking, Remedy, rank, ranking_answers
    from advisor.core.economics.stages import PipelineReport
    from advisor.core.economics.verdict import Flip, Headline, Reason, Verdict
    from advisor.core.entry import run, run_pipeline
    from advisor.core.errors import EXIT_INPUT_ERROR, InputError, in_file
    from advisor.core.formats import FORMATS, load_model, parse_toml
    from advisor.core.gates.dtype import DtypeGate
    from advisor.core.gates.software import SoftwareGate
    from advisor.core.model import bounds, vocabulary
    from advisor.core.model.answers import (
        DEFAULT_ELECTRICITY_USD_PER_KWH,
        Answers,
        parse_answers,
    )
    from advisor.core.model.bounds import MAX_GPUS, MAX_RETRIES, MAX_TIMEOUT_S
    from advisor.core.model.catalog import Catalog, Gpu, Sourced
    from advisor.core.model.drift import drift_warning, stack_drift
    from advisor.core.model.gpu_name import split_count
    from advisor.core.model.layout import BASE_WORDS, LayoutChoice, LayoutOverride
    from advisor.core.model.lora import BASE_ACCURACY, BaseOption
    from advisor.core.model.options import (
        ConfigOptions,
        PipelineAlternative,
        PipelineSpec,
        StageSpec,
    )
    from advisor.core.model.presets import PRESETS
    from advisor.core.model.probe_record import ProbeRecord, parse_probe_record
    from advisor.core.model.stack import ATTENTION_KERNELS, Stack, format_stack, parse_stack
    from advisor.core.model.transformer import ModelSpec
    from advisor.core.model.vocabulary import (
        BASE_FORMATS,
        KV_BYTES,
        RECIPE_FORMATS,
        SERVING_MODES,
        TRAINING_MODES,
        Precision,
    )
    from advisor.core.model.workload import Workload
    from advisor.core.numbers import (
        AMOUNT,
        PLAIN,
        RATIO,
        TOKENS,
        USD,
        WHOLE,
        NumberSpec,
        Price,
        is_ratio,
        parse_int,
        parse_list,
        parse_number,
        parse_optional,
        parse_price,
    )
    from advisor.core.projection.interactivity import at_interactivity
    from advisor.core.projection.rates import Evidence
    from advisor.core.report.answers_toml import answers_to_toml, parse_answers_toml
    from advisor.core.report.diff import Change, diff_reports
    from advisor.core.report.document import (
        Provenance,
        PulledSource,
        Report,
        parse_report,
        report_to_toml,
    )
    from advisor.core.result import (
        Decision,
        DefaultUsed,
        GpuResult,
        InteractivityLead,
        InteractivityPoint,
        SensitivityRow,
        SweepPoint,
    )
    from advisor.core.text import clean, clean_block
    from advisor.core.validation import (
        Accuracy,
        CaseResult,
        CaseSpec,
        Summary,
        anchored_groups,
        refit,
        validate,
        validate_anchored,
    )
