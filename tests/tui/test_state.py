"""The wizard's answers have one owner: `WizardState` changes only through its own methods.

Frozen fields and read-only containers make a direct change fail where it runs; the scan
finds one in code no test drives (an assignment through `.state`, or a write that goes
around the methods)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from advisor.core import ConfigOptions, Stack
from advisor.tui.state import WizardState

TUI = Path(__file__).resolve().parents[2] / "advisor" / "tui"
MUTATORS = frozenset({"append", "extend", "insert", "remove", "pop", "popitem", "clear",
                      "update", "setdefault", "add", "discard", "__setitem__"})


def read_only(value: object) -> bool:
    """Not a dict, list or set, and not a pydantic model that can be changed."""
    if isinstance(value, dict | list | set):
        return False
    config = getattr(value, "model_config", None)
    return config is None or bool(config.get("frozen"))


def edited() -> WizardState:
    """A state through every one of its methods."""
    state = WizardState(current="h100-sxm", targets=["b200-sxm"],
                        layouts={"b200-sxm": {"precision": "fp8"}})
    state.set_current("h200-sxm")
    state.give("gpus", 16)
    state.keep_example("model")
    state.keep_example()
    state.set_measured("tokens_per_s_per_gpu", 9000.0)
    state.set_invalid("GPUs on Workload", "not a number")
    state.set_invalid("GPUs on Workload", None)
    state.toggle_target("mi300x")
    state.set_count("mi300x", 4)
    state.set_quote("mi300x", ("usd", 3.0))
    state.set_own("mi300x", {"tp": 2}, Stack(source="declared", packages={"torch": "2.7.1"}))
    state.set_electricity(0.2)
    state.set_power_cap(40.0)
    state.set_time_premium(0.1)
    state.declare_stack(None, False)
    state.use_probes({}, "none")
    state.set_use_stored(False)
    state.set_budget(1e11)
    state.set_configs(ConfigOptions(counts=[8, 16]))
    state.set_pipeline(None)
    state.reach(4)
    return state


def test_every_field_stays_read_only_through_every_edit():
    state = edited()
    assert state.targets == ("b200-sxm", "mi300x") and state.counts == {"mi300x": 4}
    assert state.given["gpus"] == 16 and state.given["token_budget"] == 1e11
    assert state.layouts == {"b200-sxm": {"precision": "fp8"}, "mi300x": {"tp": 2}}
    for f in dataclasses.fields(state):
        assert read_only(getattr(state, f.name)), f.name


def test_a_direct_change_fails():
    state = edited()
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.current = "b200-sxm"  # type: ignore[misc]
    with pytest.raises(TypeError):
        state.given["gpus"] = 8  # type: ignore[index]
    with pytest.raises(TypeError):
        state.layouts["mi300x"]["tp"] = 4  # type: ignore[index]
    with pytest.raises(AttributeError):
        state.targets.append("h100-sxm")  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        state.examples.add("model")  # type: ignore[attr-defined]


def reached_through_state(node: ast.AST) -> bool:
    """Whether an attribute or item is reached through a `.state` (or a `state`)."""
    inner = node.value if isinstance(node, ast.Attribute | ast.Subscript) else None
    while isinstance(inner, ast.Attribute | ast.Subscript):
        if isinstance(inner, ast.Attribute) and inner.attr == "state":
            return True
        inner = inner.value
    return isinstance(inner, ast.Name) and inner.id == "state"


def direct_changes(source: str) -> list[str]:
    """Lines that change a state other than through its methods: an assignment to, or a
    mutating call on, anything reached through `.state`, or a write around the methods."""
    found = []
    for node in ast.walk(ast.parse(source)):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):  # `a.state.x, a.state.y = ...` too
            targets = [e for t in node.targets
                       for e in (t.elts if isinstance(t, ast.Tuple | ast.List) else [t])]
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "__setattr__":
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
            elif node.func.attr in MUTATORS | {"_set", "_put"}:
                targets = [node.func.value]
        found += [f"line {node.lineno}: {ast.unparse(t)}" for t in targets
                  if reached_through_state(t) or (isinstance(node, ast.Call)
                                                  and isinstance(t, ast.Name)
                                                  and t.id == "state")]
    return found


def test_no_module_changes_the_state_around_its_methods():
    changes = {str(p.relative_to(TUI)): direct_changes(p.read_text(encoding="utf-8"))
               for p in TUI.rglob("*.py") if p.name != "state.py"}
    assert {p: c for p, c in changes.items() if c} == {}


def test_the_scan_finds_each_kind_of_direct_change():
    assert direct_changes("self.state.targets.append(gpu)")
    assert direct_changes("self.state.invalid[where] = message")
    assert direct_changes("self.state.current = gpu")
    assert direct_changes("self.state.stack, self.state.box_stack = new, box")
    assert direct_changes("app.state.reached += 1")
    assert direct_changes("self.ctx.state.given.pop(key, None)")
    assert direct_changes("state.examples.discard(key)")
    assert direct_changes("object.__setattr__(state, 'current', gpu)")
    assert not direct_changes("self.state = ctx.state")
    assert not direct_changes("self.state.toggle_target(gpu)")
    assert not direct_changes("rows = dict(self.state.given); rows['x'] = 1")
