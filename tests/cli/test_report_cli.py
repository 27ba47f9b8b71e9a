"""`advisor report show` and `advisor report diff` on reports made from the shipped example."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from advisor.core.comparison import decide
from advisor.core.report.answers_toml import parse_answers_toml
from advisor.core.report.document import Provenance, build_report, report_to_toml
from advisor.io.catalog_store import load_catalog

EXAMPLE = (Path(__file__).resolve().parents[2] / "examples" / "answers.toml").read_text()


def write_report(path: Path, answers_text: str = EXAMPLE) -> str:
    catalog = load_catalog()
    decision = decide(parse_answers_toml(answers_text, "answers.toml"), catalog)
    provenance = Provenance(advisor_version="0.1.0", catalog_version="aaaa",
                            created=datetime(2026, 3, 2, 8, 0, tzinfo=UTC))
    path.write_text(report_to_toml(build_report(decision, catalog, {}, provenance,
                                                ["stack drift: torch differs"])))
    return str(path)


@pytest.fixture
def reports(tmp_path: Path) -> tuple[str, str]:
    old = write_report(tmp_path / "march.toml")
    new = write_report(tmp_path / "april.toml",
                       EXAMPLE.replace("h200-sxm = 3.50", "h200-sxm = 4.50"))
    return old, new


def test_show(advisor_cli, reports: tuple[str, str]) -> None:
    r = advisor_cli("report", "show", reports[0])
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "Report of 2026-03-02 08:00 UTC by advisor 0.1.0, shipped catalog aaaa" in out
    assert "Prices" in out and "your quote" in out and "default" in out
    assert "Probe records used: none" in out and "- stack drift: torch differs" in out
    assert out.startswith("Verdict:") and "b200-sxm" in out

    r = advisor_cli("report", "show", "--json", reports[0])
    assert r.returncode == 0 and json.loads(r.stdout)["schema"] == "advisor.decision-report"


def test_diff(advisor_cli, reports: tuple[str, str]) -> None:
    old, new = reports
    r = advisor_cli("report", "diff", old, new)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[:2] == ["topic", "what"]
    assert any(ln.startswith("verdict") and "b200-sxm verdict" in ln for ln in lines)
    assert any(ln.startswith("prices") and "+28.6%" in ln for ln in lines)

    r = advisor_cli("report", "diff", "--json", old, new)
    changes = json.loads(r.stdout)["changes"]
    assert {"topic": "prices", "item": "h200-sxm $/GPU-hour", "old": "3.5", "new": "4.5",
            "ratio": pytest.approx(4.5 / 3.5), "delta": "+28.6%"} in changes

    r = advisor_cli("report", "diff", old, old)
    assert r.returncode == 0 and r.stdout.startswith("No changes")


def test_bad_reports_are_one_line(advisor_cli, reports: tuple[str, str], tmp_path: Path) -> None:
    newer = tmp_path / "newer.toml"
    newer.write_text(Path(reports[0]).read_text().replace("version = 2", "version = 3", 1))
    r = advisor_cli("report", "show", str(newer))
    assert r.returncode == 2 and "unsupported report version" in r.stderr
    assert r.stderr.count("\n") == 1

    broken = tmp_path / "broken.toml"
    broken.write_text(Path(reports[0]).read_text()[:-300])
    r = advisor_cli("report", "diff", reports[0], str(broken))
    assert r.returncode == 2 and "broken.toml" in r.stderr and r.stderr.count("\n") == 1
