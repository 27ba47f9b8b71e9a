"""What people type into number fields, taken as typed or refused with a reason.

A field never edits the text: it either understands it ("4.5", "1e3", "1.5B", "8k",
"1_000", "$4.50", "3.4x") or says why not, in words that name the field and show an
example. The grammar is the core's (`advisor.core.numbers`: the flags, answers files and
pulled sheets read numbers with it too); this module adds how a value reads back into a
field and beside it. Nothing here touches widgets, so the form, the tests and the
property tests share one definition.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from advisor.core import RATIO, USD
from advisor.core import NumberSpec as NumberSpec
from advisor.core import Price as Price
from advisor.core import parse_int as parse_int
from advisor.core import parse_list as parse_list
from advisor.core import parse_number as parse_number
from advisor.core import parse_optional as parse_optional
from advisor.core import parse_price as _parse_price


def parse_price(text: str, allow_ratio: bool = True) -> Price:
    """ "4.5", "$4.50", "4.50/h" -> ("usd", 4.5); "3.4x" -> ("ratio", 3.4), where a ratio to
    the current GPU's price is meaningful (not for the current GPU itself)."""
    return _parse_price(text, USD, RATIO if allow_ratio else None)


def show_number(value: float | None, integer: bool = False) -> str:
    """How a value reads back into a field: plain digits, never a suffix the user did not
    type (a value the app fills in is shown in full)."""
    if value is None:
        return ""
    if integer or float(value).is_integer():
        return str(int(value))
    return f"{value:g}"


def show_count(value: float | None, spec: NumberSpec) -> str:
    """A value for a field, with a suffix where that reads back to exactly the same value
    (1e11 -> "100B"), else in full digits."""
    if value is None:
        return ""
    short = format_count(value)
    try:
        if parse_number(short, spec) == value:
            return short
    except ValueError:
        pass
    return show_number(value)


def echo(value: float, unit: str = "") -> str:
    """The value as understood, for the note beside the field: "= 1,500,000,000 tokens"."""
    text = f"{value:,.0f}" if float(value).is_integer() else f"{value:,.6g}"
    return f"= {text}{' ' + unit if unit else ''}"


def needs_echo(text: str) -> bool:
    """Whether the typed form differs from plain digits (a suffix, exponent or separator)."""
    return bool(re.search(r"[kmbgtKMBGTeE_]", text))


def format_count(value: float | None) -> str:
    """A count for reading (not for a field): 10_000_000_000 -> "10B"."""
    if value is None:
        return "none"
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale and (value / scale) == round(value / scale, 2):
            return f"{value / scale:g}{suffix}"
    return f"{value:,g}"


def format_seq_lens(values: Sequence[int]) -> str:
    """Sequence lengths as people write them: 8192 -> "8k", 1536 -> "1536"."""
    return ", ".join(f"{v // 1024}k" if v % 1024 == 0 and v >= 1024 else str(v) for v in values)
