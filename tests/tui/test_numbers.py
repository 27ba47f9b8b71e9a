"""Number fields take what was typed or refuse it with a reason; they never change it.

Property tests (hypothesis) on the parser, and on a real Input typed key by key: the
text shown is the text typed, and the field either holds the value that text means or
shows an error.
"""

from __future__ import annotations

import asyncio

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
# The grammar itself (what is read, what is refused) is core's: tests/unit/test_numbers.py.


def test_the_wizard_reads_with_the_core_grammar() -> None:
    """The wizard's parser is the core's, with the price bounds of bounds.py."""
    from advisor.core import bounds
    from advisor.core import parse_number as core_parse

    assert parse_number is core_parse
    assert parse_price("$4.50/h") == ("usd", 4.5)
    assert parse_price("3.4x") == ("ratio", 3.4)
    with pytest.raises(ValueError, match="comma"):
        parse_price("2,5")
    with pytest.raises(ValueError, match="current GPU"):
        parse_price("3.4x", allow_ratio=False)
    with pytest.raises(ValueError, match=f"at most {bounds.MAX_PRICE_RATIO:,.0f}"):
        parse_price(f"{bounds.MAX_PRICE_RATIO * 2:g}x")
    assert parse_list("32k, 4k", NumberSpec("n", integer=True, binary_k=True)) == (4096, 32768)
    assert parse_optional("  ", GPUS) is None


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
