"""The outputs a user reads on an odd terminal or hands to someone else: every JSON document
names its schema (and the README lists its keys), an ASCII-only stdout works, every help
page fits 80 columns, each unit has one spelling, narrow terminals get whole numbers,
serving tables keep what a user waits for, and completion offers GPU ids and presets."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from advisor.cli import schemas
from advisor.present.humanize import SPELLING

ROOT = Path(__file__).resolve().parents[2]
ANSWERS = str(ROOT / "examples" / "answers.toml")
DRAFTER = str(ROOT / "examples" / "drafter_pipeline.toml")
PIPELINE = str(ROOT / "examples" / "configs_pipeline.toml")
COMPARE = ["compare", "--current", "h100-sxm", "--target", "b200-sxm", "--model",
           "llama-3.1-8b", "--seq-len", "8k", "--seq-len", "32k"]
SERVE = ["compare", "--current", "h200-sxm@8", "--target", "b200-sxm@8", "--model",
         "llama-3.1-70b", "--mode", "serve", "--isl", "1000", "--osl", "1000",
         "--current-precision", "fp8", "--target-precision", "nvfp4"]
RANK_SERVE = ["rank", "--current", "h200-sxm@8", *SERVE[5:]]


def advisor(*args: str, columns: int = 80, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "advisor", *args], capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL,
                          env={**os.environ, "COLUMNS": str(columns), **env})


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("report") / "r.toml"
    r = advisor("decide", "--answers", ANSWERS, "--out", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    return str(out)


@pytest.fixture(scope="module")
def dearer(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The same decision with the h200-sxm quoted dearer: a report diff has rows."""
    folder = tmp_path_factory.mktemp("dearer")
    answers = folder / "a.toml"
    answers.write_text(Path(ANSWERS).read_text().replace("h200-sxm = 3.50", "h200-sxm = 4.50"))
    r = advisor("decide", "--answers", str(answers), "--out", str(folder / "r.toml"), "--quiet")
    assert r.returncode == 0, r.stderr
    return str(folder / "r.toml")


@pytest.fixture(scope="module")
def files(report: str, dearer: str) -> dict[str, str]:
    """What the REPORT and DEARER placeholders in a command line stand for."""
    return {"REPORT": report, "DEARER": dearer}


def filled(argv: list[str], files: dict[str, str]) -> list[str]:
    return [files.get(a, a) for a in argv]


# --- JSON: a schema name and version first, snake_case keys, the README's tables ---------------

JSON = {  # command -> the schema it prints
    "compare": ([*COMPARE, "--json"], schemas.DECISION_SUMMARY),
    "decide": (["decide", "--answers", ANSWERS, "--json"], schemas.DECISION_SUMMARY),
    "decide with a pipeline": (["decide", "--answers", DRAFTER, "--json"],
                               schemas.DECISION_SUMMARY),
    "report show": (["report", "show", "REPORT", "--json"], schemas.DECISION_REPORT),
    "report diff": (["report", "diff", "REPORT", "DEARER", "--json"], schemas.REPORT_DIFF),
    "rank": (["rank", "--answers", ANSWERS, "--json"], schemas.RANKING),
    "compare --target all": ([*COMPARE[:3], "--target", "all", *COMPARE[5:], "--json"],
                             schemas.RANKING),
    "configs sweep": (["configs", "sweep", "--answers", ANSWERS, "--json"], schemas.CONFIG_SWEEP),
    "configs pipeline": (["configs", "pipeline", PIPELINE, "--json"], schemas.PIPELINE),
    "catalog list": (["catalog", "list", "--json"], schemas.CATALOG),
    "catalog show": (["catalog", "show", "h100", "--format", "json"], schemas.CATALOG),
    "models": (["models", "--json"], schemas.MODELS),
    "validate": (["validate", "--json"], schemas.VALIDATION),
    "validate --anchored": (["validate", "--anchored", "--json"], schemas.ANCHORED_VALIDATION),
    "env": (["env", "--json"], schemas.ENV),
}


@pytest.fixture(scope="module")
def documents(files: dict[str, str]) -> dict[str, dict[str, Any]]:
    out = {}
    for name, (argv, _) in JSON.items():
        r = advisor(*filled(argv, files))
        assert r.returncode in (0, 1), (name, r.stderr)  # validate: 1 when a case misses
        out[name] = json.loads(r.stdout)
    return out


def keys(doc: Any, path: str = "") -> list[tuple[str, str]]:
    """Every (path, key) in a JSON value."""
    found = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            found += [(path, k), *keys(v, f"{path}.{k}")]
    elif isinstance(doc, list):
        for v in doc:
            found += keys(v, f"{path}[]")
    return found


def readme_keys() -> dict[str, set[str]]:
    """The keys the README's "JSON output" tables list (their first column), by schema."""
    section = (ROOT / "README.md").read_text().split("### JSON output", 1)[1]
    out: dict[str, set[str]] = {}
    for name, table in re.findall(r"^`(advisor\.[a-z-]+)` \d+:.*?\n\n(\|.*?)\n\n", section,
                                  re.M | re.S):
        cells = [row.split("|")[1] for row in table.splitlines()[2:]]
        out[name] = {k for cell in cells for k in re.findall(r"`([a-z_]+)`", cell)}
    return out


def test_every_json_output_opens_with_its_schema_and_version(
        documents: dict[str, dict[str, Any]]) -> None:
    for name, doc in documents.items():
        schema = JSON[name][1]
        assert list(doc)[:2] == ["schema", "version"], name
        assert (doc["schema"], doc["version"]) == (schema.name, schema.version), name


CORE_KEYED = ".decision.current.assumptions.rate_sources", \
    ".decision.targets[].assumptions.rate_sources"
"""The report document is core's Report as its TOML holds it: its `rate_sources` are keyed
by the quantity's name (`HBM bandwidth`), as the TOML is; the summary's are snake_case."""


def test_no_json_key_has_a_space(documents: dict[str, dict[str, Any]]) -> None:
    for name, doc in documents.items():
        spaced = {(p, k) for p, k in keys(doc) if re.search(r"\s", k)
                  and not (name == "report show" and p in CORE_KEYED)}
        assert not spaced, (name, sorted(spaced)[:5])


def test_the_readme_lists_every_documents_keys(documents: dict[str, dict[str, Any]]) -> None:
    """Each schema has its table, and its key column is exactly the top-level keys its
    commands print (a key printed only sometimes, such as `configs`, is listed too)."""
    listed = readme_keys()
    printed: dict[str, set[str]] = {}
    for name, doc in documents.items():
        printed.setdefault(JSON[name][1].name, set()).update(set(doc) - {"schema", "version"})
    named = {s.name for s in vars(schemas).values() if isinstance(s, schemas.Schema)}
    assert set(listed) == named == set(printed)
    for name, top in printed.items():
        assert listed[name] == top, (name, top ^ listed[name])


# --- an ASCII-only stdout: plain rules and stand-ins, never a traceback -------------------------

FAMILIES = {
    "catalog list": ["catalog", "list"],
    "catalog show": ["catalog", "show", "h100"],
    "compare": COMPARE,
    "compare serving": SERVE,
    "decide": ["decide", "--answers", ANSWERS],
    "report show": ["report", "show", "REPORT"],
    "report diff": ["report", "diff", "REPORT", "DEARER"],
    "rank": RANK_SERVE,
    "configs sweep": ["configs", "sweep", "--answers", ANSWERS],
    "configs pipeline": ["configs", "pipeline", PIPELINE],
    "validate": ["validate"],
    "models": ["models"],
    "env": ["env"],
    "completion": ["completion", "bash"],
    "help": ["compare", "--help"],
    "an error": ["catalog", "show", "h1000-sxm"],
}


@pytest.mark.parametrize("name", list(FAMILIES))
def test_an_ascii_only_stdout_gets_plain_text(name: str, files: dict[str, str]) -> None:
    r = advisor(*filled(FAMILIES[name], files), PYTHONIOENCODING="ascii")
    assert "Traceback" not in r.stderr and "UnicodeEncodeError" not in r.stderr, r.stderr
    assert r.returncode == {"validate": r.returncode, "an error": 2}.get(name, 0), r.stderr
    assert r.stdout.isascii() and r.stderr.isascii()
    assert name in ("env", "completion", "help", "an error") or "-" * 20 in r.stdout


def test_an_ascii_only_stdout_gets_documents_with_character_references(report: str) -> None:
    for fmt in ("html", "svg"):
        r = advisor("report", "show", report, "--format", fmt, PYTHONIOENCODING="ascii")
        assert r.returncode == 0 and r.stdout.isascii(), r.stderr
        assert "&#9608;" in r.stdout or "&#x2588;" in r.stdout  # a chart's full block, kept


# --- help pages, spellings, narrow terminals, serving tables, completion ------------------------


def test_every_help_page_fits_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from advisor.cli import build_parser

    monkeypatch.setenv("COLUMNS", "80")

    def parsers(p: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        return [p, *(q for s in subs for c in s.choices.values() for q in parsers(c))]

    pages = parsers(build_parser(full=True))
    assert len(pages) > 15
    wide = [(p.prog, line) for p in pages for line in p.format_help().splitlines()
            if len(line) > 80]
    assert wide == []
    r = advisor("configs", "sweep", "--help")  # and as a user sees it
    assert r.returncode == 0 and max(len(line) for line in r.stdout.splitlines()) <= 80
    assert "[--framework FRAMEWORK]" in r.stdout  # a long choice list, named in the usage
    assert "{auto,megatron,fsdp,deepspeed,vllm,sglang,trtllm}" in r.stdout  # listed below


@pytest.fixture(scope="module")
def rendered(files: dict[str, str]) -> dict[str, str]:
    """What a user reads: text at a wide terminal, and the shared documents."""
    out = {}
    for name, argv in FAMILIES.items():
        if name not in ("help", "an error", "completion"):
            out[name] = advisor(*filled(argv, files), columns=200).stdout
    for fmt in ("md", "html"):
        out[fmt] = advisor("report", "show", files["REPORT"], "--format", fmt).stdout
        out[f"serving {fmt}"] = advisor(*SERVE, "--format", fmt).stdout
    out["drafter"] = advisor("decide", "--answers", DRAFTER, columns=200).stdout
    return out


def test_each_unit_has_one_spelling(rendered: dict[str, str]) -> None:
    for name, text in rendered.items():
        assert text, name
        for used, variants in SPELLING.items():
            for variant in variants:
                assert variant not in text, (name, variant, used)
    assert "K tokens/s" in rendered["drafter"] and "tokens/s per user" in rendered["serving md"]


@pytest.mark.parametrize("columns", [60, 40])
@pytest.mark.parametrize("argv", [COMPARE, SERVE, RANK_SERVE], ids=["compare", "serving", "rank"])
def test_a_narrow_terminal_gets_whole_lines_and_says_what_it_left_out(argv: list[str],
                                                                     columns: int) -> None:
    r = advisor(*argv, columns=columns)
    assert r.returncode == 0, r.stderr
    assert max(len(line) for line in r.stdout.splitlines()) <= columns
    assert "left out at this width" in r.stdout
    assert "(1.56-2.5\n" not in r.stdout and "…" not in r.stdout  # nothing cut or ellipsised


@pytest.mark.parametrize("argv", [SERVE, RANK_SERVE], ids=["compare", "rank"])
def test_serving_tables_keep_what_a_user_waits_for_at_80_columns(argv: list[str]) -> None:
    lines = advisor(*argv, columns=80).stdout.splitlines()
    title = next(i for i, line in enumerate(lines) if line.startswith(("At 1,000", "Ranked by")))
    header = " ".join(lines[title + 1:title + 3])
    assert {"TTFT", "TPOT", "tokens/s", "user"} <= set(header.split()), header


def complete(script: str, *words: str) -> list[str]:
    """What bash offers after `words` (the last one is being typed)."""
    probe = (script + f"\nCOMP_WORDS=({' '.join(map(repr, words))}); "
             f"COMP_CWORD={len(words) - 1}; _advisor; echo \"${{COMPREPLY[*]}}\"\n")
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_completion_offers_gpu_ids_counts_and_presets_not_flags() -> None:
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    script = advisor("completion", "bash").stdout
    assert complete(script, "advisor", "compare", "--current", "h1") == [
        "h100-sxm", "h100-pcie", "h100-nvl"]
    assert complete(script, "advisor", "compare", "--target", "b200-sxm@")[:4] == [
        "b200-sxm@1", "b200-sxm@2", "b200-sxm@4", "b200-sxm@8"]
    assert "all" in complete(script, "advisor", "rank", "--target", "")
    assert complete(script, "advisor", "compare", "--model", "llama-3.1-") == [
        "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b"]
    assert complete(script, "advisor", "catalog", "show", "b20") == ["b200-sxm"]
    assert "AMD" in complete(script, "advisor", "catalog", "list", "--vendor", "")
    assert complete(script, "advisor", "compare", "--seq-len", "") == []  # a value: files
    assert "--current" in complete(script, "advisor", "compare", "--cur")  # flags still


def test_fish_completion_offers_the_same() -> None:
    if shutil.which("fish") is None:
        pytest.skip("fish is not installed here")
    script = advisor("completion", "fish").stdout

    def offered(line: str) -> list[str]:
        done = subprocess.run(["fish", "-c", f"{script}\ncomplete -C {line!r}"],
                              capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        return [row.split("\t")[0] for row in done.stdout.splitlines()]

    assert set(offered("advisor compare --current h10")) == {"h100-sxm", "h100-pcie",
                                                             "h100-nvl"}
    assert "h100-sxm@8" in offered("advisor compare --target h100-sxm@")
    assert offered("advisor rank --model llama-3.1-7") == ["llama-3.1-70b"]
