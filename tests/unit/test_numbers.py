"""The one number grammar (advisor.core.numbers): what it reads, what it refuses and why,
and property tests over generated text (hypothesis)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from advisor.core.numbers import (
    NumberSpec,
    is_ratio,
    number_reader,
    parse_list,
    parse_number,
    parse_price,
)

GPUS = NumberSpec("GPUs", integer=True, low=1, high=100_000, example="8")
BUDGET = NumberSpec("token budget", low=0, low_open=True, example="300B")
SEQ = NumberSpec("sequence length", integer=True, low=16, binary_k=True, example="4k")
PLAIN = NumberSpec("a price", low=0, low_open=True, suffixes=False)
RATIO = NumberSpec("a price ratio", low=0.001, high=1000, suffixes=False)
SUFFIXES = {"": 1, "k": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}
BINARY = {"": 1, "k": 2**10, "M": 2**20, "B": 2**30, "G": 2**30, "T": 2**40}


@pytest.mark.parametrize(("text", "spec", "value"), [
    ("4.5", BUDGET, 4.5), ("1e3", GPUS, 1000), ("1.5B", BUDGET, 1.5e9), ("8k", SEQ, 8192),
    ("8k", BUDGET, 8000), ("300G", BUDGET, 3e11), ("1_000", GPUS, 1000), (" 16 ", GPUS, 16),
    ("2T", BUDGET, 2e12), ("1.5k", SEQ, 1536), (".5", BUDGET, 0.5), ("5.", BUDGET, 5.0),
    ("2.5e-1", BUDGET, 0.25), ("1E3", GPUS, 1000),
])
def test_understood(text: str, spec: NumberSpec, value: float) -> None:
    assert parse_number(text, spec) == value


@pytest.mark.parametrize(("text", "spec", "message"), [
    ("1,000", GPUS, "a comma in a number is ambiguous"),
    ("1,000,000", BUDGET, "comma"),
    ("2,5", BUDGET, "comma"),
    ("1e3k", BUDGET, "not both"),
    ("-1", GPUS, "cannot be negative"),
    ("-4.5", BUDGET, "cannot be negative"),
    ("nan", BUDGET, "not a number"),
    ("inf", BUDGET, "not a number"),
    ("Infinity", BUDGET, "not a number"),
    ("3.4x", GPUS, "not a number"),
    ("4.5", GPUS, "GPUs must be a whole number"),
    ("0", GPUS, "GPUs must be at least 1"),
    ("0", BUDGET, "must be above 0"),
    ("abc", GPUS, "not a number, e.g. 8"),
    ("", GPUS, "blank"),
    ("1e400", BUDGET, "too large"),
    ("1" + "0" * 400, BUDGET, "too large"),
    ("200000", GPUS, "at most 100,000"),
    ("8k", PLAIN, "takes a plain number"),
    ("8 k", BUDGET, "not a number"),
])
def test_refused_with_a_reason(text: str, spec: NumberSpec, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_number(text, spec)


def test_lists_and_prices() -> None:
    assert parse_list("32k, 4k", SEQ) == (4096, 32768)
    assert parse_list("4k 8k", SEQ) == (4096, 8192)
    with pytest.raises(ValueError, match="listed twice"):
        parse_list("4k, 4096", SEQ)
    assert parse_price("$4.50/h", PLAIN, RATIO) == ("usd", 4.5)
    assert parse_price("4.50/hr", PLAIN, RATIO) == ("usd", 4.5)
    assert parse_price("3.4x", PLAIN, RATIO) == ("ratio", 3.4)
    assert parse_price("x3.4", PLAIN, RATIO) == ("ratio", 3.4)
    assert parse_price("3.4×", PLAIN, RATIO) == ("ratio", 3.4)
    with pytest.raises(ValueError, match="current GPU"):
        parse_price("3.4x", PLAIN, None)
    with pytest.raises(ValueError, match=r"^\$2,5: a comma"):  # the message quotes what was typed
        parse_price("$2,5", PLAIN, RATIO)
    assert is_ratio(" 2X ") and not is_ratio("$2")


def test_a_reader_for_files_reads_text_and_leaves_numbers_to_the_field() -> None:
    read = number_reader(SEQ)
    assert read("8k") == 8192 and isinstance(read("8k"), int)
    assert read(8192) == 8192 and read(2.5) == 2.5  # the field's own type and range judge it
    assert read("4") == 4  # the range is not the reader's: the model's Field checks it
    with pytest.raises(ValueError, match="comma"):
        read("1,000")


# --- properties ----------------------------------------------------------------------

NUMBER_TEXT = st.one_of(
    st.text(alphabet="0123456789.,eE+-_kKmMbBgGtTx$/h ", max_size=12),
    st.builds(lambda m, s: f"{m:g}{s}", st.floats(0, 1e6, allow_nan=False),
              st.sampled_from(list(SUFFIXES))),
    st.sampled_from(["nan", "NaN", "inf", "-inf", "infinity", "1e3k", "1,000", "-1", "0x10"]),
)


@given(NUMBER_TEXT)
def test_parse_is_total_and_in_range(text: str) -> None:
    """Any text parses to a finite value in the field's range (whole where the field is
    whole), or raises ValueError with a message: nothing else, ever."""
    for spec in (GPUS, BUDGET, SEQ, PLAIN):
        try:
            value = parse_number(text, spec)
        except ValueError as exc:
            assert str(exc)
            continue
        assert math.isfinite(value)
        assert spec.low is None or value >= spec.low
        assert spec.high is None or value <= spec.high
        assert not spec.integer or value == int(value)


@given(st.integers(0, 10**12))
def test_whole_numbers_read_back_exactly(n: int) -> None:
    spec = NumberSpec("n", integer=True)
    assert parse_number(str(n), spec) == n
    assert parse_number(f"{n:_}", spec) == n
    assert parse_number(f" {n} ", spec) == n


@given(st.integers(0, 10**6), st.sampled_from(list(SUFFIXES)))
def test_a_suffix_scales_by_a_thousand_or_by_1024_for_tokens(n: int, suffix: str) -> None:
    assert parse_number(f"{n}{suffix}", NumberSpec("n")) == n * SUFFIXES[suffix]
    assert parse_number(f"{n}{suffix.lower()}", NumberSpec("n")) == n * SUFFIXES[suffix]
    assert parse_number(f"{n}{suffix}", NumberSpec("n", binary_k=True)) == n * BINARY[suffix]


@given(st.text(alphabet="0123456789.,ekMB_", max_size=10).filter(lambda t: "," in t))
def test_every_comma_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_number(text, BUDGET)


@given(st.floats(0, 1e9, allow_nan=False), st.sampled_from(["k", "M", "B", "G", "T"]))
def test_a_sign_or_an_exponent_with_a_suffix_is_refused(x: float, suffix: str) -> None:
    with pytest.raises(ValueError, match="negative"):
        parse_number(f"-{x:g}", BUDGET)
    with pytest.raises(ValueError, match="not both"):
        parse_number(f"{x:e}{suffix}", BUDGET)


@given(st.floats(0.01, 999, allow_nan=False).map(lambda x: round(x, 2)))
def test_prices_read_as_dollars_or_ratios(x: float) -> None:
    assert parse_price(f"${x}/h", PLAIN, RATIO) == ("usd", x)
    assert parse_price(f"{x}", PLAIN, RATIO) == ("usd", x)
    assert parse_price(f"{x}x", PLAIN, RATIO) == ("ratio", x)
