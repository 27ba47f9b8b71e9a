"""`advisor catalog` through a real subprocess, as a user would type it."""

from __future__ import annotations

import json
import re
import subprocess
import sys

from advisor import __version__


def test_version(advisor_cli):
    r = advisor_cli("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"advisor {__version__}"


def test_help_lists_commands(advisor_cli):
    r = advisor_cli("--help")
    assert r.returncode == 0
    assert "catalog" in r.stdout


def test_list_shows_at_least_30_with_sources(advisor_cli):
    r = advisor_cli("catalog", "list")
    assert r.returncode == 0, r.stderr
    assert "h200-sxm" in r.stdout and "mi300x" in r.stdout
    md = advisor_cli("catalog", "list", "--format", "md")  # every column
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in md.stdout.splitlines()
            if ln.startswith("| ") and not ln.startswith(("| id ", "| ---"))]
    assert len(rows) >= 30
    assert all(re.fullmatch(r"\d+ \(20\d\d-\d\d-\d\d\)", row[10]) for row in rows)


def test_list_shows_a_dated_default_price_for_most_gpus(advisor_cli):
    """At the default width too: the default $/GPU-hour, how many dated quotes it is the
    median of and the newest quote's date, for at least 25 GPUs."""
    r = advisor_cli("catalog", "list")
    assert r.returncode == 0, r.stderr
    priced = re.findall(r"(\d+\.\d\d)\s+(\d+) \((20\d\d-\d\d-\d\d)\)\s*$", r.stdout, re.M)
    assert len(priced) >= 25
    assert "29 with a default price" in r.stdout
    rows = json.loads(advisor_cli("catalog", "list", "--json").stdout)["gpus"]
    b200 = next(row for row in rows if row["id"] == "b200-sxm")
    assert b200["default_price"]["label"].startswith("median of 10 on-demand quotes")


def test_list_vendor_filter(advisor_cli):
    r = advisor_cli("catalog", "list", "--vendor", "amd", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["gpus"]
    assert rows and {row["vendor"] for row in rows} == {"AMD"}


def test_loose_id_lists_variants(advisor_cli):
    r = advisor_cli("catalog", "show", "h100")
    assert r.returncode == 0, r.stderr
    for gid in ("h100-sxm", "h100-pcie", "h100-nvl"):
        assert f"[{gid}]" in r.stdout


def test_show_prints_sources_and_dates(advisor_cli):
    r = advisor_cli("catalog", "show", "h200-sxm")
    assert r.returncode == 0, r.stderr
    assert "MAMF bf16" in r.stdout and "794.5 TFLOPS" in r.stdout
    assert "retrieved 20" in r.stdout and "Sources" in r.stdout
    assert "default price" in r.stdout and "$5.20/GPU-hour" in r.stdout
    assert "median of 12 on-demand quotes" in r.stdout and "2026-10-10" in r.stdout


def test_show_json(advisor_cli):
    r = advisor_cli("catalog", "show", "b200-sxm", "--json")
    assert r.returncode == 0, r.stderr
    [doc] = json.loads(r.stdout)["gpus"]  # a list, however many match
    assert doc["id"] == "b200-sxm" and doc["peak_tflops"]["bf16"] == 2250.0


def test_unknown_id_is_one_line_exit_2(advisor_cli):
    r = advisor_cli("catalog", "show", "h1000-sxm")
    assert r.returncode == 2
    assert r.stdout == ""
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1
    assert "h1000-sxm" in err and "did you mean" in err


def test_unknown_vendor_is_one_line_exit_2(advisor_cli):
    r = advisor_cli("catalog", "list", "--vendor", "acme")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "acme" in r.stderr and "--vendor" in r.stderr


def test_no_tty_wizard_points_to_headless(advisor_cli):
    r = advisor_cli()
    assert r.returncode == 2
    assert "advisor decide" in r.stderr


def test_help_and_catalog_do_not_import_torch_or_textual():
    code = (
        "import sys\n"
        "from advisor.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "main(['catalog', 'list'])\nmain(['catalog', 'show', 'h100'])\n"
        "heavy = [m for m in ('torch', 'textual') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_importtime_shows_neither_torch_nor_textual():
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", "import advisor.cli"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0
    modules = {ln.split("|")[-1].strip().split(".")[0] for ln in r.stderr.splitlines() if "|" in ln}
    assert "advisor" in modules
    assert "torch" not in modules and "textual" not in modules
