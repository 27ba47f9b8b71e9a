"""Number fields take what was typed or refuse it with a reason; they never change it.

Property tests (hypothesis) on the parser, and on a real Input typed key by key: the
text shown is the text typed, and the field either holds the value that text means or
shows an error.
"""

from __future__ import annotations

import asyncio
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult
from textual.widgets import Input

from advisor.tui.numbers import (
    NumberSpec,
    parse_list,
    parse_number,
    parse_optional,
    parse_price,
)
from advisor.tui.widgets.field import FormField, text_input

GPUS = NumberSpec("GPUs", integer=True, low=1, high=100_000, example="8")
BUDGET = NumberSpec("token budget", low=0, low_open=True, example="300B")
SEQ = NumberSpec("sequence length", integer=True, low=16, binary_k=True, example="4k")


@pytest.mark.parametrize(("text", "spec", "value"), [
    ("4.5", BUDGET, 4.5), ("1e3", GPUS, 1000), ("1.5B", BUDGET, 1.5e9), ("8k", SEQ, 8192),
    ("8k", BUDGET, 8000), ("1,000,000", BUDGET, 1e6), ("1_000", GPUS, 1000),
    (" 16 ", GPUS, 16), ("2T", BUDGET, 2e12), ("1.5k", SEQ, 1536), (".5", BUDGET, 0.5),
])
def test_understood(text, spec, value):
    assert parse_number(text, spec) == value


@pytest.mark.parametrize(("text", "spec", "message"), [
    ("4.5", GPUS, "GPUs must be a whole number"),
    ("2,5", BUDGET, "a comma here is ambiguous"),
    ("0", GPUS, "GPUs must be at least 1"),
    ("0", BUDGET, "must be above 0"),
    ("-4", GPUS, "cannot be negative"),
    ("abc", GPUS, "not a number, e.g. 8"),
    ("", GPUS, "blank"),
    ("1e400", BUDGET, "too large"),
    ("1e3k", BUDGET, "not both"),
    ("200000", GPUS, "at most 100,000"),
])
def test_refused_with_a_reason(text, spec, message):
    with pytest.raises(ValueError, match=message):
        parse_number(text, spec)


def test_lists_and_prices():
    assert parse_list("32k, 4k", SEQ) == (4096, 32768)
    with pytest.raises(ValueError, match="listed twice"):
        parse_list("4k, 4096", SEQ)
    assert parse_price("$4.50/h") == ("usd", 4.5)
    assert parse_price("3.4x") == ("ratio", 3.4)
    assert parse_price("x3.4") == ("ratio", 3.4)
    with pytest.raises(ValueError, match="comma"):
        parse_price("2,5")
    with pytest.raises(ValueError, match="current GPU"):
        parse_price("3.4x", allow_ratio=False)
    assert parse_optional("  ", GPUS) is None


NUMBER_TEXT = st.one_of(
    st.text(alphabet="0123456789.,eE+-_kKmMbBtTx$ ", max_size=10),
    st.builds(lambda m, s: f"{m:g}{s}", st.floats(0, 1e6, allow_nan=False), st.sampled_from(
        ["", "k", "M", "B", "T"])),
)


@given(NUMBER_TEXT)
def test_parse_is_total_and_consistent(text):
    """Any text either parses to a finite value in range, or raises ValueError naming it."""
    for spec in (GPUS, BUDGET, SEQ):
        try:
            value = parse_number(text, spec)
        except ValueError as exc:
            assert str(exc)
            continue
        assert math.isfinite(value)
        assert spec.low is None or value >= spec.low
        assert spec.high is None or value <= spec.high
        if spec.integer:
            assert value == int(value)


class OneField(App[None]):
    def compose(self) -> ComposeResult:
        yield FormField("GPUs", text_input("", "n", lambda t: parse_optional(t, GPUS)))


def _keys(text: str) -> list[str]:
    names = {" ": "space", ",": "comma", ".": "full_stop", "$": "dollar_sign",
             "+": "plus", "-": "minus", "_": "underscore"}
    return [names.get(c, c) for c in text]


async def _typed(text: str) -> tuple[str, bool, str]:
    app = OneField()
    async with app.run_test() as pilot:
        field = app.query_one(Input)
        field.focus()
        await pilot.press(*_keys(text))
        await pilot.pause()
        row = app.query_one(FormField)
        return field.value, row.has_class("-invalid"), str(row.query_one(".field-note").render())


@settings(max_examples=30, deadline=None)
@given(st.text(alphabet="0123456789.,ekMB- ", max_size=8))
def test_what_is_shown_is_what_was_typed_or_an_error(text):
    shown, invalid, note = asyncio.run(_typed(text))
    assert shown == text, "the field never drops or adds a character"
    try:
        parse_optional(text, GPUS)
    except ValueError as exc:
        assert invalid and str(exc) in note
    else:
        assert not invalid
