"""What is shown agrees: the same decision gives the same verdict, reasons, flips and
warnings, in the same words, in the CLI's text and in the wizard's verdict card. Only where
core asks for an input do they differ, and then only in where to give it (a flag or an
answers key against a wizard step)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.text import Text

from advisor.cli.render.emit import print_text
from advisor.core import Catalog, Decision
from advisor.core.comparison import decide
from advisor.io.documents import load_answers
from advisor.present import decision as cli_decision
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
