"""What is shown agrees: the same decision gives the same verdict, reasons, flips and
warnings, in the same words, and the same figures of the summary table, in the CLI's text
and in the wizard's verdict card; the same answers give the same cells in the ranking (^k,
`advisor rank`) and the configurations (step 8, `advisor configs sweep`). Only where core
asks for an input do they differ, and then only in where to give it (a flag or an answers
key against a wizard step)."""

from __future__ import annotations

import io
import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text

from advisor.cli.render import emit
from advisor.cli.render.emit import print_text
from advisor.core import Answers, Catalog, Decision, answers_to_toml
from advisor.core.comparison import decide
from advisor.core.model.answers import parse_answers
from advisor.io.documents import load_answers
from advisor.present import decision as cli_decision
from advisor.present.blocks import Bullets
from advisor.present.decision import summary_table
from advisor.present.verdict import VerdictView, statement, verdict_headline, verdict_view
from advisor.present.words import ASKS, Dialect
from advisor.tui.demo import settle
from advisor.tui.screens.configs import ConfigsScreen
from advisor.tui.screens.ranking import RankingScreen
from advisor.tui.screens.verdict import VerdictScreen, card
from advisor.tui.widgets.blocks import BlockTable

from .conftest import WIDE, open_ranking

EXAMPLE = Path(__file__).parents[2] / "examples" / "answers.toml"


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def decision(shipped: Catalog) -> Decision:
    """A priced target, an unpriced one (core asks for a price) and one the software gate
    blocks (a CUDA stack on an AMD GPU): every kind of line a verdict shows."""
    answers = load_answers(EXAMPLE, shipped)
    return decide(answers.model_copy(update={"targets": ["b200-sxm", "rtx-a6000", "mi300x"]}),
                  shipped)


def _lines(view: VerdictView) -> list[str]:
    return [*view.reasons, *view.flips, *view.warnings]


def _strip(line: str, dialect: Dialect) -> str:
    for said in ASKS.values():
        line = line.replace(f"; {said[dialect]}", "")
    return line


def test_the_cli_and_the_wizard_show_the_same_lines(decision: Decision) -> None:
    buffer = io.StringIO()
    print_text(cli_decision.blocks(decision, "flags"), buffer)
    cli = _flat(buffer.getvalue())
    asked = 0
    for t in decision.targets:
        assert t.verdict is not None
        wizard = _flat(Text.from_markup(card(decision, t)).plain)
        flags, ours = (verdict_view(decision.current, t, d) for d in ("flags", "wizard"))
        assert _lines(flags), t.gpu
        missing_cli = [x for x in _lines(flags) if _flat(x) not in cli]
        missing_wizard = [x for x in _lines(ours) if _flat(x) not in wizard]
        assert missing_cli == [] and missing_wizard == [], t.gpu
        assert [_strip(x, "flags") for x in _lines(flags)] == \
            [_strip(x, "wizard") for x in _lines(ours)]
        asked += sum(ASKS["price"]["wizard"] in x for x in _lines(ours))
        assert _flat(statement(t.verdict.kind, t.verdict.headline, t.gpu)) in wizard
        assert _flat(verdict_headline(t.verdict, t.gpu)) in cli
    assert asked, "no line asked for a price: the case no longer covers an ask"


def _cells(line: str) -> list[str]:
    """A drawn table row's cells: columns stand two or more blanks apart, words one."""
    return re.split(r"\s{2,}", line.strip())


@pytest.fixture(scope="module")
def serving(shipped: Catalog) -> Decision:
    """Serving with a TPOT limit: the waits (requests in flight and what set them, TTFT,
    TPOT, tokens/s per user) join the table, each GPU in its own format."""
    return decide(parse_answers({
        "current": "h100-sxm@8", "targets": ["b200-sxm@8"], "layouts": {
            "b200-sxm": {"precision": "nvfp4"}},
        "workload": {"model": "llama-3.1-70b", "mode": "serve", "seq_lens": [2048],
                     "osl": 512, "precision": "fp8", "tpot_ms": 50.0}}), shipped)


@pytest.mark.parametrize("case", ["decision", "serving"])
def test_the_cli_and_the_wizard_show_the_same_figures(case: str, request: Any) -> None:
    """The summary table the CLI prints (one row per GPU) and each verdict card's figures
    (the current GPU beside the target, one row per figure) hold the same cells."""
    decision = request.getfixturevalue(case)
    buffer = io.StringIO()
    emit.draw(cli_decision.blocks(decision, "flags"), emit.console(buffer, width=250))
    cli = buffer.getvalue()
    table = summary_table(decision)
    names = [c.title() for c in table.cols]
    assert "left out" not in cli.split(table.title, 1)[1].split("\n\n", 1)[0], "every column"
    drawn = {cells[0]: cells for cells in map(_cells, cli.splitlines())
             if cells[0] in [row[0] for row in table.rows]}
    assert len(drawn) == len(table.rows) == len(decision.targets) + 1
    shown = 0
    for t in decision.targets:
        assert t.verdict is not None
        if t.verdict.kind == "blocked-by-gate":
            continue
        wizard = [_cells(line) for line in Text.from_markup(card(decision, t)).plain.splitlines()]
        head = next(i for i, cells in enumerate(wizard) if cells[0].startswith("at "))
        assert wizard[head][1:] == [f"{decision.current.label} (now)", t.label]
        rows = {cells[0]: cells[1:] for cells in wizard[head + 2:] if len(cells) == 3}
        for i, name in enumerate(names[1:], 1):
            assert rows[name] == [drawn[decision.current.label][i], drawn[t.label][i]], name
            shown += 1
    assert shown, "no card showed figures: the case no longer covers them"


def _md_table(text: str, title: str) -> tuple[list[str], list[list[str]]]:
    """The headers and rows of the Markdown table under `title` (`--format md`: every
    column, its cells escaped)."""
    lines = text.split(f"**{title}**", 1)[1].strip().splitlines()
    body = list(itertools.takewhile(lambda line: line.startswith("|"), lines))

    def cells(line: str) -> list[str]:
        return [re.sub(r"\\(.)", r"\1", c).strip()
                for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]

    return cells(body[0]), [cells(line) for line in body[2:]]


def _same_cells(grid: BlockTable, headers: list[str], rows: list[list[str]]) -> int:
    """Each row the wizard draws holds the CLI's cells in every column it shows, rows in the
    same order; returns the number of cells compared."""
    assert grid.row_count == len(rows) > 0
    shown = [str(c.label).replace("\n", " ") for c in grid.columns.values()]
    assert shown == [h for h in headers if h in shown], "the CLI's columns, in its order"
    assert len(shown) >= 5, shown
    for i, row in enumerate(rows):
        drawn = [str(c) for c in grid.get_row_at(i)]
        assert drawn == [row[headers.index(h)] for h in shown], (i, shown)
    return len(rows) * len(shown)


def _cli_md(capfd: pytest.CaptureFixture[str], tmp_path: Path, answers: Answers,
            *argv: str) -> str:
    from advisor.cli import main

    path = tmp_path / "answers.toml"
    path.write_text(answers_to_toml(answers), encoding="utf-8")
    capfd.readouterr()
    assert main([*argv, "--answers", str(path), "--format", "md"]) == 0
    return capfd.readouterr().out


async def test_the_ranking_s_cells_are_the_cli_s(make_app, ready_state, shipped, tmp_path,
                                                capfd) -> None:
    """^k and `advisor rank` on the same answers: the same rows, in the same order, and in
    each column the wizard shows the same cell (the price's "quote" or "default", "?" where
    a figure is not known)."""
    state = ready_state(targets=["b200-sxm"], reached=VerdictScreen.STEP)
    app = make_app(state=state, start=VerdictScreen.STEP, with_catalog=shipped)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        await open_ranking(pilot)
        assert isinstance(app.screen, RankingScreen)
        grid = app.screen.query_one("#rank-table", BlockTable)
        answers = app.state.to_answers(app.ctx.catalog, app.ctx.hardware)
        text = _cli_md(capfd, tmp_path, answers, "rank")
        assert grid.shown is not None
        headers, rows = _md_table(text, grid.shown.title)
        assert _same_cells(grid, headers, rows)
        assert [row[headers.index("GPU")].removesuffix(" (now)") for row in rows] == \
            [str(k.value) for k in grid.rows]


async def test_the_configurations_cells_are_the_cli_s(make_app, ready_state, shipped,
                                                     tmp_path, capfd) -> None:
    """The Configurations step and `advisor configs sweep` on the same answers: the same
    configurations, and the same cells in every column the step shows."""
    state = ready_state(targets=["b200-sxm", "h200-sxm"], reached=ConfigsScreen.STEP,
                        given={"token_budget": 1e11})
    app = make_app(state=state, start=ConfigsScreen.STEP, with_catalog=shipped)
    async with app.run_test(size=WIDE) as pilot:
        await settle(pilot)
        grid = app.screen.query_one("#cfg-table", BlockTable)
        answers = app.state.to_answers(app.ctx.catalog, app.ctx.hardware)
        text = _cli_md(capfd, tmp_path, answers, "configs", "sweep")
        headers, rows = _md_table(text, "Configurations")
        assert _same_cells(grid, headers, rows)
        assert any("pick" in row[headers.index("marks")] for row in rows)


@pytest.mark.parametrize("case", ["decision", "serving"])
def test_a_default_reads_the_same_but_for_where_it_is_given(case: str, request: Any) -> None:
    """The verdict card and ^y (the wizard's words) and the CLI (an answers file's keys)
    say each default used alike: only its name differs, as each reader gives it."""
    from advisor.present.decision import defaults_used
    from advisor.present.markdown import document

    decision = request.getfixturevalue(case)
    said = {d: defaults_used(decision, d) for d in ("wizard", "answers", "flags")}
    lines = {d: list(b.items) for d, b in said.items() if isinstance(b, Bullets)}
    assert len(lines) == 3 and lines["wizard"], "the case has defaults"
    for d in ("answers", "flags"):
        assert [x.split(": ", 1)[1] for x in lines[d]] == \
            [x.split(": ", 1)[1] for x in lines["wizard"]]
    assert not any(x.endswith((": True", ": False")) or ": True (" in x or ": False (" in x
                   for x in lines["wizard"])
    copied = document([said["wizard"]], "")
    assert all(_flat(x) in _flat(copied.replace("\\", "")) for x in lines["wizard"])
