"""What is shown agrees: the same decision gives the same verdict, reasons, flips and
warnings, in the same words, and the same figures of the summary table, in the CLI's text
and in the wizard's verdict card. Only where core asks for an input do they differ, and then
only in where to give it (a flag or an answers key against a wizard step)."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text

from advisor.cli.render import emit
from advisor.cli.render.emit import print_text
from advisor.core import Catalog, Decision
from advisor.core.comparison import decide
from advisor.core.model.answers import parse_answers
from advisor.io.documents import load_answers
from advisor.present import decision as cli_decision
from advisor.present.decision import summary_table
from advisor.present.verdict import VerdictView, statement, verdict_headline, verdict_view
from advisor.present.words import ASKS, Dialect
from advisor.tui.screens.verdict import card

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
