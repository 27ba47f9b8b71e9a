"""The same typed numbers, read by every front end: a command-line flag, an answers file and
the wizard's field agree on every one (the value, or that it is refused).

Issue 20's list (`8k`, `3.4x`, `1,000`, `1e3k`, `300G`, `-1`, `nan`) and a few more, in a
sequence length, a token budget, a GPU count and a target's price.
"""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import pytest

from advisor.cli import build_parser
from advisor.cli.compare import answers_from_args
from advisor.core import Answers, InputError, parse_answers_toml
from advisor.io.catalog_store import load_catalog
from advisor.tui.fields import field_for
from advisor.tui.numbers import parse_price
from advisor.tui.state import WizardState

STRINGS = ["8k", "3.4x", "1,000", "1e3k", "300G", "-1", "nan", "1.5B", "16", "4.5", "$4.50/h",
           "1_000", "inf", "2x"]
REFUSED = "refused"
CATALOG = load_catalog()
BASE = ["compare", "--current", "h200-sxm", "--target", "b200-sxm", "--model", "llama-3.1-8b"]

# field: (the flags for it, its place in an answers file, how the wizard reads it, the value)
FIELDS: dict[str, Any] = {
    "seq_len": (lambda s: ["--seq-len", s],
                lambda s: {"workload": {"seq_lens": [s]}},
                lambda s: field_for("seq_lens", "pretrain").parse(s)[0],  # type: ignore[union-attr]
                lambda a: a.workload.seq_lens[0]),
    "token_budget": (lambda s: ["--seq-len", "4096", "--token-budget", s],
                     lambda s: {"workload": {"token_budget": s}},
                     lambda s: field_for("token_budget", "pretrain").parse(s),  # type: ignore[union-attr]
                     lambda a: a.workload.token_budget),
    "gpus": (lambda s: ["--seq-len", "4096", "--gpus", s],
             lambda s: {"workload": {"gpus": s}},
             lambda s: field_for("gpus", "pretrain").parse(s),  # type: ignore[union-attr]
             lambda a: a.workload.gpus),
    "price": (lambda s: ["--seq-len", "4096", "--price", f"b200-sxm={s}"],
              lambda s: {"prices": {"b200-sxm": s}},
              lambda s: _wizard_price(s),
              lambda a: a.prices["b200-sxm"]),
}


def _wizard_price(text: str) -> float:
    state = WizardState(current="h200-sxm", targets=["b200-sxm"])
    state.set_quote("b200-sxm", parse_price(text, allow_ratio=True))
    return state.resolved_prices(CATALOG)["b200-sxm"]


def _flag(args: list[str], value_of: Any) -> Any:
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            parsed = build_parser([*BASE, *args]).parse_args([*BASE, *args])
        return value_of(answers_from_args(parsed, CATALOG))
    except (SystemExit, InputError):
        return REFUSED


def _file(data: dict[str, Any], value_of: Any) -> Any:
    doc: dict[str, Any] = {"current": "h200-sxm", "targets": ["b200-sxm"],
                           "workload": {"model": "llama-3.1-8b", "seq_lens": [4096]}}
    for key, value in data.items():
        doc[key] = {**doc.get(key, {}), **value} if isinstance(value, dict) else value
    text = "\n".join(_toml(k, v) for k, v in doc.items())
    try:
        answers: Answers = parse_answers_toml(text, "answers.toml", CATALOG)
    except InputError:
        return REFUSED
    return value_of(answers)


def _toml(key: str, value: Any) -> str:
    if isinstance(value, dict):
        body = ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in value.items())
        return f"{key} = {{ {body} }}"
    return f"{key} = {json.dumps(value)}"


def _wizard(read: Any, text: str) -> Any:
    try:
        return read(text)
    except ValueError:
        return REFUSED


@pytest.mark.parametrize("field", list(FIELDS))
@pytest.mark.parametrize("text", STRINGS)
def test_flag_file_and_wizard_agree(field: str, text: str) -> None:
    flags, place, wizard, value_of = FIELDS[field]
    seen = {"flag": _flag(flags(text), value_of), "answers file": _file(place(text), value_of),
            "wizard": _wizard(wizard, text)}
    assert len({json.dumps(v) for v in seen.values()}) == 1, seen


def test_what_the_agreement_holds() -> None:
    """The agreed answers themselves, so agreeing on refusing everything would fail."""
    assert _file({"workload": {"seq_lens": ["8k"]}}, FIELDS["seq_len"][3]) == 8192
    assert _file({"workload": {"token_budget": "300G"}}, FIELDS["token_budget"][3]) == 3e11
    assert _file({"workload": {"gpus": "1_000"}}, FIELDS["gpus"][3]) == 1000
    h200 = CATALOG.default_price("h200-sxm")
    assert h200 is not None
    assert _file({"prices": {"b200-sxm": "2x"}}, FIELDS["price"][3]) == round(
        2 * h200.usd_per_hour, 6)
    assert _file({"prices": {"b200-sxm": "$4.50/h"}}, FIELDS["price"][3]) == 4.5
    for text in ("1,000", "1e3k", "-1", "nan", "inf"):
        assert _file({"workload": {"token_budget": text}}, FIELDS["token_budget"][3]) == REFUSED


def test_a_price_ratio_is_to_the_current_gpus_price() -> None:
    from advisor.core import parse_answers

    base = {"current": "h200-sxm", "targets": ["b200-sxm", "h100-sxm"],
            "workload": {"model": "llama-3.1-8b", "seq_lens": [4096]}}
    quoted = parse_answers({**base, "prices": {"h200-sxm": "$2.00/h", "b200-sxm": "3x"}})
    assert quoted.prices == {"h200-sxm": 2.0, "b200-sxm": 6.0}  # the quote, not the default
    with pytest.raises(InputError, match="this is the current GPU"):
        parse_answers({**base, "prices": {"h200-sxm": "2x"}}, "answers.toml", CATALOG)
    with pytest.raises(InputError, match="which has none: quote one for it"):
        parse_answers({**base, "prices": {"b200-sxm": "2x"}})  # no catalog, no quote: no base
    with pytest.raises(InputError, match=r"prices\.b200-sxm.*at most 1,000"):
        parse_answers({**base, "prices": {"b200-sxm": "2000x"}}, "answers.toml", CATALOG)
