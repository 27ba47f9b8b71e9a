"""The headless renderer and the numbers it prints: fitting a table to the width, marks for
missing figures, data that is never markup, and human numbers."""

from __future__ import annotations

import io
import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from advisor.cli.render import emit
from advisor.cli.render.blocks import Bullets, Col, Heading, Para, Table, reword
from advisor.humanize import NA, UNKNOWN, band, count, duration, number, usd

SUFFIX = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}


def text(blocks: list, width: int) -> str:
    buffer = io.StringIO()
    emit.draw(blocks, emit.console(buffer, width=width))
    return buffer.getvalue()


TABLE = Table(
    [Col("GPU"), Col("tokens/s", "per GPU", numeric=True), Col("a long explanation", drop=2),
     Col("energy", "kWh", numeric=True, drop=1)],
    [["h200-sxm", "10,898", "the layout as you run it, re-tuned for the target", "17,628"],
     ["b200-sxm", "19,892", "the same", UNKNOWN],
     ["mi300x", NA, "does not fit", NA]])


def test_a_wide_table_keeps_every_column() -> None:
    out = text([TABLE], 200)
    assert "a long explanation" in out and "energy" in out
    assert "left out" not in out


def test_a_narrow_table_leaves_out_the_columns_marked_first_and_says_so() -> None:
    out = text([TABLE], 40)
    assert max(len(line) for line in out.splitlines()) <= 40
    head = out.splitlines()[0] + out.splitlines()[1]
    assert "explanation" not in head and "energy" in head  # drop=2 goes before drop=1
    assert "left out at this width: a long explanation" in " ".join(out.split())
    assert "energy" not in text([TABLE], 26).splitlines()[0]  # then the next
    assert "10,898" in out and "19,892" in out  # numbers are never cut


def test_numbers_are_right_aligned() -> None:
    lines = text([TABLE], 200).splitlines()
    row = next(line for line in lines if line.startswith("h200-sxm"))
    other = next(line for line in lines if line.startswith("b200-sxm"))
    assert row.index("10,898") + 6 == other.index("19,892") + 6  # same right edge


def test_missing_figures_have_two_marks_and_a_legend() -> None:
    out = text([TABLE], 200)
    assert f"{NA} does not apply or not supported" in out and f"{UNKNOWN} not known" in out


def test_data_in_brackets_is_never_markup() -> None:
    blocks = [Heading("[bold]x[/bold]"), Para("[red]y[/red]", lead="[b]lead[/b]"),
              Bullets(["[prices] in the answers", "[link=http://e]z[/link]"]),
              Table([Col("[i]h[/i]")], [["[blink]c[/blink]"]])]
    out = text(blocks, 100)
    for literal in ("[bold]x[/bold]", "[red]y[/red]", "[b]lead[/b]", "[prices]",
                    "[link=http://e]z[/link]", "[i]h[/i]", "[blink]c[/blink]"):
        assert literal in out


def test_control_characters_are_shown_not_obeyed() -> None:
    out = text([Para("evil\x1b]0;title\x07"), Table([Col("GPU")], [["a\x1b[2Jb"]])], 100)
    assert "\x1b" not in out and "\\x1b" in out


def test_markdown_escapes_and_keeps_every_column() -> None:
    md = emit.markdown([TABLE, Para("*not bold* | pipe")], "t")
    assert "| GPU | tokens/s per GPU | a long explanation | energy kWh |" in md
    assert "| --- | ---: | --- | ---: |" in md
    assert "\\*not bold\\* \\| pipe" in md


def test_print_text_leaves_no_trailing_blanks() -> None:
    buffer = io.StringIO()
    emit.print_text([Para("a short paragraph", indent=2), TABLE], buffer)
    assert all(line == line.rstrip() for line in buffer.getvalue().splitlines())


def test_reword_replaces_phrases_in_every_kind_of_block() -> None:
    blocks = reword([Para("quote one with --price"), Bullets(["quote one with --price GPU=USD"]),
                     Table([Col("x")], [["quote one with --price"]], notes=["--price"])],
                    {"quote one with --price GPU=USD": "B", "quote one with --price": "A"})
    assert [b.text for b in blocks[:1]] == ["A"]  # type: ignore[union-attr]
    assert blocks[1].items == ["B"]  # type: ignore[union-attr]
    assert blocks[2].rows == [["A"]]  # type: ignore[union-attr]


@pytest.mark.parametrize(("value", "expected"), [
    (1e12, "1.0T"), (1.5e9, "1.5B"), (8.03e9, "8.0B"), (350e6, "350M"), (405.9e9, "406B"),
    (12_345, "12.3K"), (512, "512"), (0.5, "0.5"), (None, UNKNOWN)])
def test_count(value: float | None, expected: str) -> None:
    assert count(value) == expected


@given(st.floats(min_value=0, max_value=1e15, allow_nan=False))
def test_count_reads_back_within_rounding(value: float) -> None:
    text_ = count(value)
    m = re.fullmatch(r"([\d,.]+)([KMBT]?)", text_)
    assert m is not None, text_
    back = float(m[1].replace(",", "")) * SUFFIX[m[2]]
    assert math.isclose(back, value, rel_tol=0.06, abs_tol=0.006)


@pytest.mark.parametrize(("hours", "expected"), [
    (10 / 3600, "10 s"), (0.2, "12 min"), (1.0, "60 min"), (3.2, "3.2 h"), (76.8, "3.2 days"),
    (1745.6, "72.7 days"), (24 * 365.25 * 3, "3.0 years"), (None, UNKNOWN)])
def test_duration(hours: float | None, expected: str) -> None:
    assert duration(hours) == expected


@pytest.mark.parametrize(("value", "expected"), [
    (89374.2, "$89,374"), (410.4, "$410"), (0.41, "$0.41"), (0.001, "<$0.01"), (0, "$0.00"),
    (None, UNKNOWN)])
def test_usd(value: float | None, expected: str) -> None:
    assert usd(value) == expected


def test_number_and_band() -> None:
    assert number(0.004, 2) == "0.004" and number(17628.4) == "17,628"
    assert band(1.83, 1.44, 2.31) == "1.83x (1.44-2.31)" and band(None, None, None) == NA
