"""`advisor decide`: the headless run from the shipped example answers to a TOML report."""

from __future__ import annotations

import json
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from advisor.io.documents import load_report

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "answers.toml"
Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run(advisor_cli) -> Run:
    """The CLI in a fresh interpreter with no TTY; its data folder is the test's ADVISOR_HOME."""
    return advisor_cli


def record(path: Path, gpu: str, torch: str) -> str:
    path.write_text(json.dumps({
        "schema": "advisor.probe-record", "version": 1, "complete": True, "interrupted": False,
        "stamp": {"hostname": f"{gpu}-box", "date": "2026-03-01T10:00:00Z",
                  "device": {"kind": "cuda", "name": gpu, "count": 8, "catalog_id": gpu},
                  "versions": {"python": "3.11.9", "torch": torch, "cuda": "12.8"}},
        "matmul": [{"status": "ok", "dtype": "bf16", "mode": "quick", "mamf_tflops": 700.0}],
    }))
    return str(path)


def test_example_answers_to_report(run: Run, tmp_path: Path) -> None:
    out = tmp_path / "reports" / "report.toml"
    out.parent.mkdir()  # a missing folder is refused (tests/cli/test_outputs_cli.py)
    r = run("decide", "--answers", str(EXAMPLE), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Verdict:") and "b200-sxm vs h200-sxm" in r.stdout
    assert f"report written to {out}" in r.stdout
    doc = tomllib.loads(out.read_text())
    assert doc["answers"]["current"] == "h200-sxm" and doc["targets"][0]["verdict"]["kind"]
    report = load_report(out)
    assert report.provenance.advisor_version and len(report.provenance.catalog_version) == 12
    assert report.probes == {} and report.warnings == []
    assert [p.name for p in out.parent.iterdir()] == ["report.toml"]  # no temp files left


def test_json_summary(run: Run, tmp_path: Path) -> None:
    r = run("decide", "--answers", str(EXAMPLE), "--json", "--out", str(tmp_path / "r.toml"))
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["current"]["gpu"] == "h200-sxm" and summary["targets"][0]["verdict"]
    assert "report written" in r.stderr


def test_bad_answers_leave_the_old_report(run: Run, tmp_path: Path) -> None:
    bad = tmp_path / "answers.toml"
    bad.write_text(EXAMPLE.read_text().replace("gpus = 8", "gpus = 'eight'"))
    out = tmp_path / "report.toml"
    out.write_text("previous report")
    r = run("decide", "--answers", str(bad), "--out", str(out))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert str(bad) in r.stderr and "workload.gpus" in r.stderr and "'eight'" in r.stderr
    assert out.read_text() == "previous report"


def test_stored_probes_are_used_and_drift_is_loud(run: Run, tmp_path: Path) -> None:
    for gpu, torch in (("h200-sxm", "2.7.1+cu128"), ("b200-sxm", "2.4.0+cu124")):
        r = run("probe", "import", record(tmp_path / f"{gpu}.json", gpu, torch))
        assert r.returncode == 0, r.stderr
    assert "STACK DRIFT" in r.stderr and "torch: 2.4.0+cu124 (new b200-sxm)" in r.stderr

    out = tmp_path / "report.toml"
    r = run("decide", "--answers", str(EXAMPLE), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "WARNING: STACK DRIFT" in r.stderr and "+16-23%" in r.stderr
    report = load_report(out)
    assert sorted(report.probes) == ["b200-sxm", "h200-sxm"]
    assert any(w.startswith("stack drift: torch") for w in report.warnings)

    r = run("decide", "--answers", str(EXAMPLE), "--out", str(out), "--no-stored-probes")
    assert r.returncode == 0 and "STACK DRIFT" not in r.stderr
    assert load_report(out).probes == {}


def test_without_a_terminal_advisor_points_to_headless_mode(run: Run) -> None:
    r = run()
    assert r.returncode == 2 and "advisor decide --answers" in r.stderr


def test_counted_ids_and_per_gpu_keys_are_checked_against_the_catalog(run: Run,
                                                                       tmp_path: Path) -> None:
    answers = tmp_path / "answers.toml"
    body = ('current = "h100-sxm@64"\ntargets = ["b200-sxm@32"]\n{extra}'
            '[workload]\nmodel = "llama-3.1-8b"\nseq_lens = [8192]\n')
    answers.write_text(body.format(extra='power_limits_w = { "h100-sxm" = 500.0 }\n'))
    ok = run("decide", "--answers", str(answers), "--json")
    assert ok.returncode == 0, ok.stderr
    answers.write_text(body.format(extra='power_limits_w = { "h100-sxmm" = 500.0 }\n'))
    bad = run("decide", "--answers", str(answers))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "field 'power_limits_w.h100-sxmm'" in bad.stderr and str(answers) in bad.stderr
