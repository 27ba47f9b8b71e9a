"""One set of defaults (core's), given answers only, and user words for engine names."""

from __future__ import annotations

import re

import pytest

from advisor.core import Answers, Workload
from advisor.present.words import ASKS, field_label
from advisor.tui.demo import cpu_box, gpu_box
from advisor.tui.fields import FIELDS, applies, core_default, is_required
from advisor.tui.state import EXAMPLE_WORKLOAD, STEPS, WizardState


@pytest.mark.parametrize("f", FIELDS, ids=[f"{f.key}-{sorted(f.modes)[0]}" for f in FIELDS])
def test_every_field_default_is_the_engine_s(f):
    info = Workload.model_fields[f.key]
    assert is_required(f.key) == info.is_required()
    if not info.is_required():
        assert core_default(f.key) == info.default
    mode = "pretrain" if "pretrain" in f.modes else sorted(f.modes)[0]
    for value in (v for _, v in f.choices):
        data = {"model": "llama-3.1-8b", "seq_lens": [4096], "mode": mode, f.key: value}
        if data["mode"] == "serve":
            data["osl"] = 64
        Workload.model_validate(data)  # every choice is one the engine takes


def test_a_new_wizard_gives_only_what_the_engine_requires(catalog):
    state = WizardState(current="h100-sxm", targets=["b200-sxm"])
    answers = state.to_answers(catalog, cpu_box())
    assert answers.workload.model_fields_set == {"model", "seq_lens"}
    assert answers.model_fields_set == {"current", "targets", "workload", "configs"}
    assert answers.stack is None, "a CPU box's torch is not the GPU job's"
    assert answers.electricity_is_default
    assert state.to_answers(catalog, gpu_box()).stack == gpu_box().stack


def test_serving_leaves_out_what_it_does_not_take(catalog):
    state = WizardState(current="h100-sxm", targets=["b200-sxm"],
                        given={**EXAMPLE_WORKLOAD, "zero_stage": 3, "mode": "serve", "osl": 256})
    assert not applies("zero_stage", "serve")
    answers = state.to_answers(catalog, cpu_box())
    assert answers.workload.mode == "serve" and "zero_stage" not in \
        answers.workload.model_fields_set


def test_counts_ratios_and_refusals(catalog):
    state = WizardState(current="h100-sxm", targets=["b200-sxm"], counts={"b200-sxm": 4},
                        quotes={"b200-sxm": ("ratio", 2.0)})
    default = catalog.default_price("h100-sxm").usd_per_hour
    answers = state.to_answers(catalog, cpu_box())
    assert answers.targets == ["b200-sxm@4"] and answers.prices == {"b200-sxm": 2 * default}
    state.set_invalid("GPUs on Workload", "4.5: GPUs must be a whole number")
    with pytest.raises(ValueError, match="fix GPUs on Workload first"):
        state.to_answers(catalog, cpu_box())


def test_preview_is_the_current_gpu_against_itself(catalog):
    state = WizardState(current="h100-sxm")
    answers = state.preview_answers(catalog, cpu_box())
    assert isinstance(answers, Answers) and answers.targets == ["h100-sxm@16"]


@pytest.mark.parametrize("ask", sorted(ASKS))
def test_each_ask_names_a_wizard_step_by_its_title(ask):
    """The wizard's words for an input core asks for name the step it is given on, as the
    stepper titles it: a renamed or moved step fails here, not in a user's hands."""
    steps = re.findall(r"on step (\d+) \(([^)]+)\)", ASKS[ask]["wizard"])
    assert steps
    for number, title in steps:
        assert STEPS[int(number) - 1][1] == title


def test_field_labels():
    assert field_label("workload.micro_batch") == "micro-batch"
    assert field_label("workload.micro_batch", "serve") == "requests in flight"
    assert field_label("prices.b200-sxm") == "price of b200-sxm"


@pytest.mark.parametrize("f", FIELDS, ids=[f"{f.key}-{sorted(f.modes)[0]}" for f in FIELDS])
def test_the_wizard_s_words_name_each_field_as_its_form_does(f):
    """What the wizard says of a field (a default used, in the card and in ^y; an error)
    names it as the form labels it, in each mode the form shows it."""
    for mode in f.modes:
        assert field_label(f"workload.{f.key}", mode) == f.label, mode
