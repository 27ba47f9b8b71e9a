"""The headless renderer and the numbers it prints: fitting a table to the width, marks for
missing figures, data that is never markup, and human numbers."""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

import pytest
from hypothesis import given
from hypothesis import strategies as st

from advisor.cli.render import emit
from advisor.present import markdown
from advisor.present.blocks import (
    Bar,
    BarChart,
    Block,
    Bullets,
    Col,
    Heading,
    Para,
    Point,
    Scatter,
    Table,
)
from advisor.present.humanize import (
    NA,
    UNKNOWN,
    band,
    count,
    duration,
    fmt_num,
    number,
    price,
    usd,
)

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
    md = markdown.document([TABLE, Para("*not bold* | pipe")], "t")
    assert "| GPU | tokens/s per GPU | a long explanation | energy kWh |" in md
    assert "| --- | ---: | --- | ---: |" in md
    assert "\\*not bold\\* \\| pipe" in md


def test_print_text_leaves_no_trailing_blanks() -> None:
    buffer = io.StringIO()
    emit.print_text([Para("a short paragraph", indent=2), TABLE], buffer)
    assert all(line == line.rstrip() for line in buffer.getvalue().splitlines())


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


def test_a_missing_figure_has_one_spelling() -> None:
    """Not known is "?" whichever function says it; a dash is a range's, never a figure's."""
    assert fmt_num(None) == number(None) == usd(None) == duration(None) == UNKNOWN
    assert fmt_num(float("nan")) == UNKNOWN and fmt_num(1234.0) == "1,234"
    assert price(None, None) == UNKNOWN and price(3.5, "user") == "3.50 quote"


# --- fitting a table: a number is shown whole or its column is left out and named -----------


def left_out(out: str) -> set[str]:
    """The column titles the note says were left out."""
    m = re.search(r"left out at this width: (.*?) \(a wider terminal", " ".join(out.split()))
    return set(m[1].split(", ")) if m else set()


FIGURE = re.compile(r"[$<]?\d[\d,]*(\.\d+)?[x%KMBT]?(-\d[\d,]*(\.\d+)?[x%]?)?")
"""A number as a cell or a text shows it: 9,780, 1.97x, $34.20, 1.56-2.50, 12%, 2.2M."""


def survives(t: Table, width: int) -> None:
    """Every cell of every column drawn is whole on one line (a number column's) or figure
    by figure (the numbers among a text column's words); every other column is named as
    left out. (A long name in a text column may fold; a number may not.)"""
    out = text([t], width)
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= width, out
    gone = left_out(out)
    for i, col in enumerate(t.cols):
        if col.title() in gone:
            continue
        for row in t.rows:
            pieces = [row[i]] if col.numeric else \
                [w.strip("(),;:") for w in row[i].split() if FIGURE.fullmatch(w.strip("(),;:"))]
            for piece in pieces:
                assert any(piece in line for line in lines), (piece, width, out)


NUMBER = st.builds(lambda v, lo, hi: f"{v:.2f}x ({lo:.2f}-{hi:.2f})",
                   st.floats(0, 99), st.floats(0, 9), st.floats(0, 99)) | \
    st.integers(0, 10**9).map(lambda n: f"{n:,}") | st.sampled_from([NA, UNKNOWN])
WORDS = st.lists(st.sampled_from(["8 GPUs,", "micro-batch", "1,", "ZeRO-0", "(does", "not",
                                  "fit:", "tp", "1", "->", "8)", "fa3", "catalog-measured"]),
                 min_size=1, max_size=8).map(" ".join)


@st.composite
def tables(draw: st.DrawFn) -> Table:
    n = draw(st.integers(1, 8))
    numeric = [draw(st.booleans()) for _ in range(n)]
    cols = [Col(f"col{i}", draw(st.sampled_from(["", "ms", "tokens/s", "per GPU"])),
                numeric=numeric[i], drop=draw(st.integers(0, 4)) if i else 0)
            for i in range(n)]
    rows = [[draw(NUMBER if numeric[i] else WORDS) for i in range(n)]
            for _ in range(draw(st.integers(1, 4)))]
    return Table(cols, rows)


@given(tables(), st.sampled_from([40, 60, 80, 120]))
def test_a_table_never_cuts_a_number_at_any_width(t: Table, width: int) -> None:
    survives(t, width)


def test_the_issue_s_band_is_never_cut() -> None:
    """What the issue saw at 40 columns: "1.97x (1.56-2.5", a wrong number."""
    t = Table([Col("GPUs"), Col("tokens/s", "per GPU", numeric=True),
               Col("speedup", "(90% band)", numeric=True), Col("job", "$", numeric=True)],
              [["8x h100-sxm", "9,780", "1.00x (1.00-1.00)", "$34.20"],
               ["8x b200-sxm", "19,304", "1.97x (1.56-2.50)", "$58.91"]])
    out = text([t], 40)
    assert "1.97x (1.56-2.50)" in out or "speedup (90% band)" in left_out(out)
    assert "(1.56-2.5\n" not in out and "(1.56-2.5 " not in out
    survives(t, 40)


def test_a_chart_that_does_not_fit_is_left_out_and_said() -> None:
    chart = Scatter("Time against cost", ["h100-sxm"],
                    [Point(0, float(x), float(x)) for x in range(60)], notes=["a note"],
                    width=60)
    wide = text([chart], 80)
    assert "a note" in wide and "left out" not in wide and wide.count(" o") >= 9
    narrow = text([chart], 40)
    assert "o" * 10 not in narrow and "left out at this width" in narrow
    assert max(len(line) for line in narrow.splitlines()) <= 40


def test_a_bar_chart_wraps_its_words_under_themselves() -> None:
    why = "does not fit at 32,768 tokens on 8 GPUs: needs more memory than each holds"
    chart = BarChart("Speedup", [Bar("b200-sxm", "4,096", 1.5, 1.2, 1.9, "compute"),
                                 Bar("b200-sxm", "32,768", note=why)], scale=2.0)
    out = text([chart], 80)
    assert "1.50x (1.20-1.90) compute" in out and max(map(len, out.splitlines())) <= 80
    rows = out.splitlines()[1:]
    start = rows[1].index("does")
    assert all(line[:start].strip() == "" for line in rows[2:]), "wrapped under itself"


def test_a_stream_that_cannot_show_a_rule_gets_ascii() -> None:
    buffer = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    con = emit.console(buffer, width=60)
    with con.capture() as captured:
        emit.draw([Heading("Verdict"), TABLE], con)
    out = captured.get()
    assert "─" not in out and "Verdict " + "-" * 20 in out  # the heading's rule, and ...
    assert "-" * 20 in out.split("GPU", 1)[1] and "|" not in out and "+" not in out  # the table's


# --- documents to share -------------------------------------------------------------------------


def test_html_is_headings_and_tables_and_fetches_nothing() -> None:
    from html.parser import HTMLParser

    page = emit.render([Heading("Verdict <b>"), Para("x & y", lead="b200:"), TABLE,
                        Bullets(["[prices] in the answers"], title="Notes"),
                        BarChart("Speedup", [Bar("b200", "4,096", 1.97)], 2.0)], "html",
                       "a <title>")

    class Tags(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tags: list[str] = []
            self.cells: list[str] = []
            self.urls: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.tags.append(tag)
            self.urls += [v or "" for k, v in attrs if k in ("src", "href")]

        def handle_data(self, data: str) -> None:
            if self.tags and self.tags[-1] in ("td", "th"):
                self.cells.append(data)

    parsed = Tags()
    parsed.feed(page)
    assert page.startswith("<!DOCTYPE html>")
    assert {"h1", "h2", "table", "thead", "th", "td", "ul", "li", "pre"} <= set(parsed.tags)
    assert {"10,898", "19,892", "h200-sxm", "tokens/s"} <= set(parsed.cells)
    assert '<td class="num">10,898</td>' in page  # number columns are right-aligned
    assert parsed.urls == [] and "@import" not in page and "url(" not in page
    assert "Verdict &lt;b&gt;" in page and "x &amp; y" in page  # data is never markup
    assert "█████" in page and "1.97x" in page


def test_svg_draws_in_the_systems_monospace_and_fetches_nothing() -> None:
    svg = emit.render([Heading("Verdict"), TABLE], "svg", "t")
    assert svg.lstrip().startswith("<svg")
    assert "@font-face" not in svg and "cdnjs" not in svg and "woff" not in svg
    assert f"font-family: {emit.MONOSPACE}" in svg
    urls = re.findall(r"url\(([^)]*)\)", svg)
    assert urls and all(u.startswith("#") for u in urls)  # its own clip paths only


ROOT = Path(__file__).resolve().parents[2]
SERVE = ["compare", "--current", "h200-sxm@8", "--target", "b200-sxm@8", "--target",
         "mi300x@8", "--model", "llama-3.1-70b", "--mode", "serve", "--isl", "1000", "--osl",
         "1000", "--current-precision", "fp8", "--target-precision", "nvfp4"]
COMMANDS = {
    "compare": ["compare", "--current", "h100-sxm", "--target", "b200-sxm", "--target",
                "h200-sxm", "--model", "llama-3.1-8b", "--seq-len", "8k", "--seq-len", "32k"],
    "compare serving": SERVE,
    "decide with a sweep": ["decide", "--answers", str(ROOT / "examples" / "answers.toml")],
    "decide with a pipeline": ["decide", "--answers",
                               str(ROOT / "examples" / "drafter_pipeline.toml")],
    "rank serving": ["rank", *SERVE[1:3], *SERVE[7:]],
    "catalog list": ["catalog", "list"],
    "catalog show": ["catalog", "show", "h100"],
    "models": ["models"],
    "validate": ["validate"],
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_table_a_command_prints_keeps_its_numbers_at_80_60_and_40_columns(
        name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from advisor.cli import main

    drawn: list[Block] = []
    real = emit.print_text

    def keep(blocks: Iterable[Block], file: TextIO | None = None) -> None:
        drawn.extend(blocks)
        real(drawn, file)

    monkeypatch.setattr(emit, "print_text", keep)
    assert main(COMMANDS[name]) in (0, 1), capsys.readouterr().err  # validate: 1 on a miss
    tables = [b for b in drawn if isinstance(b, Table)]
    assert tables
    for width in (80, 60, 40):
        for t in tables:
            survives(t, width)
