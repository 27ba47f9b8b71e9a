"""`advisor --help` starts on the standard library and advisor alone: no pydantic, tomlkit,
textual, numpy or torch, read from the interpreter's own `-X importtime` report."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

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


def loaded_by(*args: str) -> set[str]:
    """sys.modules after `advisor ARGS` (importlib.import_module leaves no -X importtime
    line for the module it loads, so the subcommand modules are read off sys.modules)."""
    code = ("import contextlib, io, json, sys\n"
            "from advisor.cli import main\n"
            "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main({list(args)!r})\n"
            "print(json.dumps(sorted(sys.modules)))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr[-2000:]
    import json

    return set(json.loads(r.stdout))


SUBCOMMANDS = {f"advisor.cli.{c}" for c in ("catalog", "prices", "probe", "compare", "decide",
                                            "report", "validate", "configs", "models", "env",
                                            "completion")}


def test_help_imports_no_subcommand_module() -> None:
    """`advisor --help` and `--version` list every command by name alone: none of their
    modules load, the probes' command line least of all."""
    for args in (["--help"], ["--version"]):
        names = loaded_by(*args)
        assert "advisor.cli" in names  # the check can see the CLI
        assert not names & SUBCOMMANDS and "advisor.probes.cli" not in names, args


def test_a_command_loads_its_own_module_only() -> None:
    names = loaded_by("catalog", "--help")
    assert names & SUBCOMMANDS == {"advisor.cli.catalog", "advisor.cli.prices"}  # pull options
    assert "advisor.probes.cli" not in names


def test_compare_loads_nothing_it_does_not_call() -> None:
    """A `compare` from flags reads no TOML, parses no version, suggests no name and writes
    nothing: those modules load where they are used, not with the models that use them."""
    args = ("compare", "--current", "h100-sxm", "--target", "b200-sxm", "--model",
            "llama-3.1-8b", "--seq-len", "8192")
    assert "tomllib" in loaded_by(*args)  # a fresh home: the shipped TOML is decoded once
    names = loaded_by(*args)  # then read from the decoded catalog's cache, as every start
    assert "advisor.cli.compare" in names  # the check can see the command
    unused = {"tomllib", "packaging", "difflib", "statistics", "tomlkit", "httpx", "textual",
              "torch", "advisor.core.validation", "advisor.core.report.diff",
              "advisor.core.economics.ranking"}
    assert not names & unused, names & unused


def test_the_command_name_is_found_past_the_global_options() -> None:
    from advisor.cli import command_named

    assert command_named(["--resume", "catalog", "decide"]) == "decide"
    assert command_named(["--version"]) is None
    assert command_named(["--", "compare"]) == "compare"
    assert command_named(["report", "show", "x"]) == "report"


def test_output_formats_match_the_renderer() -> None:
    from typing import get_args

    from advisor.cli.output import FORMATS
    from advisor.cli.render.emit import Format

    assert get_args(Format) == FORMATS


def test_a_clone_maps_catalog_and_probes_into_advisor() -> None:
    """`python -m advisor` in a clone's root, where the source folder shadows any install:
    advisor.catalog and advisor.probes are the repo's catalog/ and probes/ (no editable
    import hook needed)."""
    root = Path(__file__).resolve().parents[2]
    code = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path "
            "if type(f).__name__ != 'SubpackageFinder']; "
            "import advisor.probes, advisor.catalog; "
            "print(advisor.probes.__file__); print(advisor.catalog.__file__)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=root, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(root / "probes" / "__init__.py"),
                                str(root / "catalog" / "__init__.py")]
