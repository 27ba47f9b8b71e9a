"""`advisor --help` starts on the standard library and advisor alone: no pydantic, tomlkit,
textual, numpy or torch, read from the interpreter's own `-X importtime` report."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

# The repo's own top-level packages: an editable install puts them on sys.path beside
# advisor (the wheel ships them as advisor.catalog and advisor.probes).
OWN = {"advisor", "catalog", "probes"}


def imported(*args: str) -> set[str]:
    """Every module the interpreter imported for `python -X importtime ARGS`."""
    r = subprocess.run([sys.executable, "-X", "importtime", *args], capture_output=True,
                       text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr[-2000:]
    names = set()
    for line in r.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.add(name)
    assert names, "no -X importtime report"
    return names


def third_party(names: set[str]) -> list[str]:
    """Top-level packages outside the standard library and this repo. A name that does not
    exist here (copy.py tries `org.python.core`, for Jython) was an attempt, not a load."""
    tops = {n.split(".")[0] for n in names}
    stdlib = {t for t in tops if t in sys.stdlib_module_names or t.startswith("_sysconfigdata")}
    return sorted(t for t in tops - stdlib - OWN if importlib.util.find_spec(t) is not None)


@pytest.fixture(scope="module")
def bare() -> set[str]:
    """What any interpreter in this environment imports anyway (site, .pth hooks)."""
    return imported("-c", "pass")


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["catalog", "--help"],
                                  ["decide", "--help"], ["probe", "--help"]])
def test_help_imports_only_the_standard_library_and_advisor(bare: set[str],
                                                            args: list[str]) -> None:
    names = imported("-m", "advisor", *args)
    assert "advisor.cli" in names  # the report is really about advisor's start
    assert third_party(names - bare) == []


def test_the_parser_finds_what_a_heavy_import_looks_like(bare: set[str]) -> None:
    """The check itself can fail: importing the engine shows pydantic and numpy."""
    names = imported("-c", "import advisor.core.comparison")
    assert {"pydantic", "numpy"} <= set(third_party(names - bare))


def test_cli_formats_match_the_core() -> None:
    from advisor.cli.prices import FORMATS
    from advisor.core.formats import FORMATS as CORE_FORMATS

    assert FORMATS == CORE_FORMATS
