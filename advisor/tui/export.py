"""Resume: the wizard's state from a saved report (`advisor --resume report.toml`).

Export needs nothing here: the wizard writes `report_to_toml` of the Report it shows.
A resumed report's answers come back as given answers, except the values its decision
lists as defaults, which stay defaults; the records it used come back as the wizard's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from advisor.tui.fields import FIELDS, core_default
from advisor.tui.state import STEPS, WizardState

if TYPE_CHECKING:
    from advisor.core import Report
    from advisor.tui.numbers import Price

TRACKED = frozenset({"micro_batch", "global_batch", "precision", "optimizer", "zero_stage",
                     "recompute", "fused_kernels", "gpus", "attention_kernel", "token_budget",
                     "tp", "kv_dtype", "max_batch"})
"""The workload fields a decision lists when they are defaults (its `defaults`)."""


def state_from_report(report: Report) -> WizardState:
    from advisor.core import PRESETS, split_count

    d = report.decision
    a = d.answers
    w = a.workload
    defaulted = {x.field.removeprefix("workload.") for x in d.defaults}
    given: dict[str, Any] = {}
    preset = PRESETS.get(w.model.name)
    given["model"] = w.model.name if preset == w.model else w.model.model_dump()
    given["seq_lens"] = tuple(w.seq_lens)
    if "mode" in w.model_fields_set and w.mode != core_default("mode"):
        given["mode"] = w.mode
    for key in dict.fromkeys(f.key for f in FIELDS):
        if key in ("mode", "seq_lens") or key in defaulted:
            continue
        value = getattr(w, key)
        if value is None:
            continue
        # A field the decision tracks as a default and did not list was given, even at the
        # default's value; any other field counts as given when it differs from it.
        if value != core_default(key) or key in TRACKED:
            given[key] = value
    targets, counts = [], {}
    for text in a.targets:
        gpu, count = split_count(text)
        targets.append(gpu)
        if count is not None:
            counts[gpu] = count
    quotes: dict[str, Price] = {g: ("usd", p) for g, p in a.prices.items()}
    current, current_count = split_count(a.current)  # quotes are keyed by id, not `id@N`
    return WizardState(
        current=current, current_count=current_count, given=given, examples=frozenset(),
        targets=tuple(targets), counts=counts,
        layouts={g: o.fields_given() for g, o in a.layouts.items()},
        measured=a.measured.model_dump(exclude_unset=True) if a.measured else {},
        quotes=quotes,
        electricity_usd_per_kwh=a.electricity_usd_per_kwh if d.electricity_source == "user"
        else None,
        power_cap_kw=a.power_cap_kw,
        time_premium=a.time_premium if "time_premium" in a.model_fields_set else None,
        stack=a.stack, stacks=dict(a.stacks), box_stack=False, sweep=a.configs is not None,
        probe_choice="report" if report.probes else "none",
        probe_records=dict(report.probes), use_stored=False,
        configs=a.configs, pipeline=a.pipeline, loaded=a, reached=len(STEPS) - 1)
