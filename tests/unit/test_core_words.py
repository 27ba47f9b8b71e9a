"""Core states facts; the front ends word them. So core names no flag of advisor's, and no
text it builds holds a phrase of the wording table (`advisor.present.words`): a phrase a
front end would have to rewrite for its own dialect."""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path
from typing import Any

import pytest

import advisor.core
from advisor.cli import build_parser
from advisor.core.comparison import decide
from advisor.core.economics.configs import sweep_configs
from advisor.core.validation.predict import answers_for, at_primary
from advisor.io.cases import load_cases
from advisor.io.catalog_store import build_effective
from advisor.io.documents import load_answers
from advisor.present.words import ASKS, BASE_INPUTS

CORE = Path(advisor.core.__file__).parent
EXAMPLES = Path(__file__).parents[2] / "examples"


def _flags() -> set[str]:
    """Every long option of every advisor command."""
    def parsers(p: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        return [p, *(q for s in subs for c in s.choices.values() for q in parsers(c))]

    return {o for p in parsers(build_parser(full=True)) for a in p._actions
            for o in a.option_strings if o.startswith("--") and o != "--help"}


FLAGS = _flags()
FLAG = re.compile(r"--[a-z][a-z0-9-]*")


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    """Every string constant but docstrings (those explain to a developer)."""
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and n.body and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_the_scan_knows_the_flags() -> None:
    assert {"--price", "--base-format", "--allow-quantized-base", "--moe-ffn", "--stack",
            "--answers", "--out"} <= FLAGS


def test_core_names_no_flag_of_advisor() -> None:
    """Another tool's flag (pip's --index-url, Megatron's) is a fact about that tool."""
    found = [f"{path.relative_to(CORE)}:{line}: {flag}"
             for path in sorted(CORE.rglob("*.py"))
             for line, text in _strings(ast.parse(path.read_text(encoding="utf-8")))
             for flag in FLAG.findall(text) if flag in FLAGS]
    assert found == []


PHRASES = sorted({p for table in (ASKS, BASE_INPUTS) for said in table.values()
                  for p in said.values()} | {"quote one"})


def _texts(node: Any, out: list[str]) -> list[str]:
    if isinstance(node, str):
        out.append(node)
    elif isinstance(node, dict):
        for v in node.values():
            _texts(v, out)
    elif isinstance(node, list | tuple):
        for v in node:
            _texts(v, out)
    return out


@pytest.fixture(scope="module")
def said() -> list[str]:
    """Everything core said deciding the published cases and the shipped examples (their
    sweeps included): verdicts, reasons, flips, notes, warnings, assumptions."""
    catalog = build_effective([])
    out: list[str] = []
    answers = [answers_for(c, at_primary(c)) for c in load_cases()
               if c.workload is not None and c.target is not None]
    shipped = [load_answers(p, catalog) for p in sorted(EXAMPLES.glob("*.toml"))
               if "pipeline" not in p.name]
    unpriced = shipped[0].model_copy(update={"targets": ["rtx-a6000"]})  # no default price
    answers += [*shipped, unpriced]
    for a in answers:
        # the answers are the user's text, not core's
        _texts(decide(a, catalog).model_dump(mode="json", exclude={"answers"}), out)
        if a.configs is not None and a.workload.token_budget is not None:
            _texts(sweep_configs(a, catalog).model_dump(mode="json"), out)
    return out


def test_core_says_much(said: list[str]) -> None:
    """Enough to scan, the asks included (a GPU with no price, said as data: the reason's
    code, the GPU and what to ask for)."""
    assert len(set(said)) > 500
    assert {"no-price", "rtx-a6000", "price"} <= set(said)


def test_nothing_core_says_is_a_front_end_s_to_rewrite(said: list[str]) -> None:
    """No flag, and no phrase of the wording table: those are each front end's to say."""
    flagged = sorted({t for t in said for f in FLAG.findall(t) if f in FLAGS})
    worded = sorted({t for t in said for p in PHRASES if p in t})
    assert flagged == [] and worded == []


def test_layout_changes_read_as_words(said: list[str]) -> None:
    """A re-tune's change names its knob as a reader does ("TP 1 -> 8", "ZeRO stage 0 ->
    1"), never as the field is spelt in code ("zero stage", "micro batch", "tp 1")."""
    changes = [t for t in said if re.search(r"\b\w+ \S+ -> \S+", t)]
    assert changes
    spelt = [t for t in changes if re.search(r"\b(tp|pp|cp|ep|vp|zero stage|micro batch) ", t)]
    assert spelt == []
