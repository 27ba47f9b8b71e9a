"""Every modelling constant of the projection lives in calibration.py with its provenance.

A numeric literal anywhere else in `advisor/core/projection/` fails this test. What is
allowed: small counts (0-4, a half), float guards against division by zero, unit scales,
slice indices, and the named search bounds and numerics below, which say how far a
re-tune looks rather than what the hardware does.
"""

from __future__ import annotations

import ast
from pathlib import Path

import advisor.core.projection as projection_pkg

COUNTS = {0, 1, 2, 3, 4, 0.5}
GUARDS = {1e-9, 1e-12, 1e-30}
UNITS = {1e3, 1e6, 1e9, 1e12, 1e15, 1024}
SEARCH_AND_NUMERICS = {
    ("layout.py", "MAX_DEGREE"), ("layout.py", "MAX_LAYOUTS"), ("layout.py", "MAX_MICRO_BATCH"),
    ("layout.py", "MAX_VIRTUAL_STAGES"), ("layout.py", "MIN_CP_SEQ"),
    ("layout.py", "SERVING_BATCHES"), ("retune.py", "SEQ_GRANULE"),
    ("anchor.py", "BISECTION_STEPS"),
}
PROJECTION = Path(projection_pkg.__file__).parent


def _exempt_nodes(tree: ast.Module, filename: str) -> set[int]:
    """Ids of constants inside slices and inside the named search bounds."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Slice):
            skip |= {id(c) for c in ast.walk(node)}
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else (
            [stmt.target] if isinstance(stmt, ast.AnnAssign) else [])
        names = {t.id for t in targets if isinstance(t, ast.Name)}
        if any((filename, n) in SEARCH_AND_NUMERICS for n in names):
            skip |= {id(c) for c in ast.walk(stmt)}
    return skip


def stray_literals(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    skip = _exempt_nodes(tree, path.name)
    allowed = COUNTS | GUARDS | UNITS
    return [f"{path.name}:{n.lineno}: {n.value!r}" for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and type(n.value) in (int, float)
            and n.value not in allowed and id(n) not in skip]


def test_no_modelling_literal_outside_calibration() -> None:
    files = [p for p in sorted(PROJECTION.glob("*.py")) if p.name != "calibration.py"]
    assert len(files) >= 6  # the scan found the package
    stray = [hit for p in files for hit in stray_literals(p)]
    assert stray == [], "move these into calibration.py with a Note:\n" + "\n".join(stray)


def test_the_scan_catches_a_new_literal(tmp_path: Path) -> None:
    planted = tmp_path / "engine.py"
    planted.write_text("def f(x):\n    return x * 0.73 + 2 + x[:10]\n")
    assert stray_literals(planted) == ["engine.py:2: 0.73"]
    bound = tmp_path / "layout.py"
    bound.write_text("MAX_DEGREE = 64\nOTHER = 7\n")
    assert stray_literals(bound) == ["layout.py:2: 7"]
