"""Untrusted input, round three: the audit's reproductions, as a user types them.

Each ends in one line and exit 2, or succeeds correctly (Ctrl-C: tests/cli/
test_interrupt_startup.py; the N -> 4N scaling of every list: benchmarks/fuzz_loaders.py).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from advisor.io.catalog_store import load_catalog

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "examples" / "answers.toml").read_text()
DRAFTER = (ROOT / "examples" / "drafter_pipeline.toml").read_text()
COMPARE = ["compare", "--model", "llama-3.1-8b", "--seq-len", "4096"]


def one_line_exit_2(r, *needles: str) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout[-500:], r.stderr[-2000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def write(tmp_path: Path, text: str, old: str, new: str, name: str = "answers.toml") -> str:
    assert old in text, old
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1))
    return str(path)


# --- 1. GPU@0 -------------------------------------------------------------------------------

def test_a_count_of_zero_in_an_answers_file(advisor_cli, tmp_path) -> None:
    path = write(tmp_path, EXAMPLE, 'targets = ["b200-sxm"]', 'targets = ["b200-sxm@0"]')
    one_line_exit_2(advisor_cli("decide", "--answers", path), "answers.toml", "targets.0",
                    "b200-sxm@0", "at least 1")


@pytest.mark.parametrize(("sides", "field"), [
    (["--current", "h200-sxm", "--target", "b200-sxm@0"], "targets.0"),
    (["--current", "h200-sxm@0", "--target", "b200-sxm"], "current"),
    (["--current", "h200-sxm", "--current-gpus", "0", "--target", "b200-sxm"], "current"),
    (["--current", "h200-sxm", "--target", "b200-sxm@-2"], "targets.0"),
    (["--current", "h200-sxm", "--target", "b200-sxm@1,000"], "targets.0"),
])
def test_a_count_of_zero_on_the_command_line(advisor_cli, sides, field) -> None:
    one_line_exit_2(advisor_cli(*COMPARE, *sides), "command line", field)


def test_a_count_in_the_number_grammar_is_read(advisor_cli) -> None:
    r = advisor_cli(*COMPARE, "--current", "h200-sxm@8", "--target", "b200-sxm@1k", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["targets"][0]["gpus"] == 1000


# --- 2. pipeline alternatives, validated at load -------------------------------------------

@pytest.mark.parametrize(("new", "needles"), [
    ("stages.targets = { flops_per_token = 54e9, mfu = 0.00001",
     ["pipeline.alternatives.0.stages.targets.mfu", "1e-05", "greater than or equal to 0.001"]),
    ("stages.targets = { mfu = 0.45",
     ["pipeline.alternatives.0.stages.targets", "flops_per_token and mfu go together"]),
    ("stages.targets = { active_w = 0.5, flops_per_token = 54e9, mfu = 0.45",
     ["pipeline.alternatives.0.stages.targets.active_w", "greater than or equal to 10"]),
], ids=["mfu", "no-flops", "watts"])
@pytest.mark.parametrize("command", ["decide", "configs"])
def test_pipeline_alternatives_are_refused_at_load(advisor_cli, tmp_path, new, needles,
                                                  command) -> None:
    path = write(tmp_path, DRAFTER, "stages.targets = { flops_per_token = 54e9, mfu = 0.45",
                 new)
    args = ["decide", "--answers", path] if command == "decide" else ["configs", "pipeline",
                                                                       path]
    one_line_exit_2(advisor_cli(*args), "answers.toml", *needles)


# --- 4. physically absurd values ------------------------------------------------------------

@pytest.mark.parametrize("watts", ["1e-9", "150", "1500"])
def test_a_power_limit_outside_the_parts_range(advisor_cli, tmp_path, watts) -> None:
    path = write(tmp_path, EXAMPLE, "[prices]", f"power_limits_w = {{ b200-sxm = {watts} }}\n"
                 "[prices]")
    one_line_exit_2(advisor_cli("decide", "--answers", path), "answers.toml",
                    "power_limits_w.b200-sxm", "250 to 1,000 W", "of its 1,000 W TDP")


def test_a_power_limit_on_the_command_line_is_checked_too(advisor_cli) -> None:
    r = advisor_cli(*COMPARE, "--current", "h200-sxm", "--target", "b200-sxm",
                    "--power-limit", "b200-sxm=1e-9")
    one_line_exit_2(r, "power_limits_w.b200-sxm", "250 to 1,000 W")


def test_a_power_limit_in_range_is_used(advisor_cli, tmp_path) -> None:
    path = write(tmp_path, EXAMPLE, "[prices]", "power_limits_w = { b200-sxm = 600 }\n[prices]")
    r = advisor_cli("decide", "--answers", path)
    assert r.returncode == 0, r.stderr


def _team_gpu(**changes) -> dict:
    b200 = load_catalog().gpu("b200-sxm").model_dump(mode="json", exclude_none=True)
    return {**b200, "id": "team-b200", "name": "Team B200", "aliases": ["Team B200"], **changes}


@pytest.mark.parametrize(("gpu", "needles"), [
    (_team_gpu(peak_tflops={**_team_gpu()["peak_tflops"], "bf16": 1e5, "fp8": 1e5, "fp4": 1e5}),
     ["team-b200", "peak_tflops.bf16", "more than 10x from the Blackwell family's"]),
    (_team_gpu(aliases=["H200"]), ["team-b200", "aliases", "'H200'", "h200-sxm"]),
    (_team_gpu(aliases=["h100"]), ["team-b200", "aliases", "'h100'", "h100-sxm"]),
    (_team_gpu(aliases=[f"alias {i}" for i in range(200)]), ["aliases", "at most 32"]),
], ids=["1e5-tflops", "alias-h200", "alias-h100", "200-aliases"])
def test_a_pulled_catalog_with_absurd_figures(advisor_cli, www, advisor_home, gpu,
                                              needles) -> None:
    root, base = www
    (root / "team.json").write_text(json.dumps({"gpu": [gpu]}))
    r = advisor_cli("catalog", "pull", "--allow-http", f"{base}/team.json")
    one_line_exit_2(r, "team.json", *needles)
    assert not (advisor_home / "pulled" / "catalog.json").exists()


# --- 5. results no real pair of GPUs can produce -------------------------------------------

@pytest.mark.parametrize(("old", "new", "needles"), [
    ("token_budget = 1.0e12", "token_budget = 1e18",
     ["workload.token_budget", "years on 8x", "check the token budget"]),
    ("h200-sxm = 3.50", "h200-sxm = 0.001",
     ["prices.h200-sxm", "6,400x the price of h200-sxm", "wrong unit"]),
])
def test_an_implausible_result_is_an_input_problem(advisor_cli, tmp_path, old, new,
                                                   needles) -> None:
    out = tmp_path / "report.toml"
    r = advisor_cli("decide", "--answers", write(tmp_path, EXAMPLE, old, new), "--out", str(out))
    one_line_exit_2(r, "answers.toml", *needles)
    assert not out.exists() and "Verdicts" not in r.stdout


def test_an_implausible_speedup_names_the_probe_record(advisor_cli, tmp_path) -> None:
    record = {
        "schema": "advisor.probe-record", "version": 1, "complete": True,
        "interrupted": False,
        "stamp": {"hostname": "box", "date": "2026-03-01T10:00:00Z",
                  "device": {"kind": "cuda", "name": "NVIDIA B200", "count": 8,
                             "catalog_id": "b200-sxm"},
                  "versions": {"python": "3.11.9", "torch": "2.7.1+cu128"}},
        "matmul": [{"status": "ok", "dtype": "bf16", "mode": "quick", "mamf_tflops": 1e-5}],
        "bandwidth": [{"status": "ok", "kind": "d2d", "bytes": 1 << 30, "gbps_median": 1e-5}],
    }
    probe = tmp_path / "b200.json"
    probe.write_text(json.dumps(record))
    r = advisor_cli("decide", "--answers", write(tmp_path, EXAMPLE, "gpus = 8\n", "gpus = 8\n"),
                    "--probe", str(probe))
    one_line_exit_2(r, "answers.toml", "b200-sxm", "x slower than h200-sxm per GPU",
                    "check the probe record of b200-sxm")


# --- 3, 5, 6: pulls -------------------------------------------------------------------------

def test_a_sheet_with_thousands_of_citations_is_refused_at_the_cap(advisor_cli, www,
                                                                   advisor_home) -> None:
    root, base = www
    cites = ";".join(f"https://example.com/c{i}" for i in range(4000))
    (root / "s.csv").write_text(f"gpu,usd_per_hour,source\nh100-sxm,2.5,{cites}\n")
    r = advisor_cli("prices", "pull", "--allow-http", f"{base}/s.csv")
    one_line_exit_2(r, f"{base}/s.csv", "line 2", "source", "at most 32")
    assert not (advisor_home / "pulled" / "prices.json").exists()


JWT = ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")


@pytest.mark.parametrize(("tail", "secret"), [
    (f"p.csv?jwt={JWT}", JWT),
    ("p.csv?bearer=Zx81kQ9wLr72mPq4VbN3", "Zx81kQ9wLr72mPq4VbN3"),
    ("p.csv?pass=hunter2hunter2", "hunter2hunter2"),
    ("p.csv?code=4/0AX4XfWh-Hn8y3k2Lq9", "0AX4XfWh-Hn8y3k2Lq9"),
    ("p.csv?s=9f86d081884c7d659a2feaa0c55ad015", "9f86d081884c7d659a2feaa0c55ad015"),
    ("sk_live_4eC39HqLyjWDarjtT1zdp7dc/p.csv", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("p.csv?a=1;token=Zx81kQ9wLr72mPq4VbN3", "Zx81kQ9wLr72mPq4VbN3"),
    ("p.csv?format=csv&auth=Bearer%20Zx81kQ9wLr72", "Zx81kQ9wLr72"),
], ids=["jwt", "bearer", "pass", "code", "s", "path", "semicolon", "scheme"])
def test_secrets_are_redacted_by_shape(advisor_cli, www, tmp_path, advisor_home, tail,
                                       secret) -> None:
    root, base = www
    (root / "p.csv").write_text("gpu,usd_per_hour\nh200-sxm,3.05\nb200-sxm,5.5\n")
    folder = tail.split("/")[0] if "/" in tail.split("?")[0] else None
    if folder:
        (root / folder).mkdir()
        (root / folder / "p.csv").write_text((root / "p.csv").read_text())
    r = advisor_cli("prices", "pull", "--allow-http", f"{base}/{tail}")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "report.toml"
    r2 = advisor_cli("decide", "--answers", write(tmp_path, EXAMPLE, "h200-sxm = 3.50", ""),
                     "--out", str(out))
    assert r2.returncode == 0, r2.stderr
    r3 = advisor_cli("report", "show", str(out))
    texts = {"pull output": r.stdout + r.stderr,
             "cache": (advisor_home / "pulled" / "prices.json").read_text(),
             "report": out.read_text(), "decide output": r2.stdout, "report show": r3.stdout}
    for where, text in texts.items():
        assert secret not in text, where
    assert "REDACTED" in texts["report"]


def test_a_refused_catalog_pull_names_the_url_not_the_cached_sheet(advisor_cli, www) -> None:
    root, base = www
    (root / "ok.csv").write_text("gpu,usd_per_hour\nh100-sxm,2.5\n")
    assert advisor_cli("prices", "pull", "--allow-http", f"{base}/ok.csv").returncode == 0
    (root / "cat.toml").write_text('[[price]]\ngpu = "no-such-gpu"\nusd_per_hour = 2.0\n'
                                   'label = "team"\ndefault = true\nsource = ["x"]\n'
                                   "retrieved = 2026-01-01\n")
    line = one_line_exit_2(advisor_cli("catalog", "pull", "--allow-http", f"{base}/cat.toml"),
                           f"{base}/cat.toml", "no-such-gpu")
    assert "prices.json" not in line


def test_a_price_sheet_reads_prices_as_typed(advisor_cli, www) -> None:
    root, base = www
    (root / "p.csv").write_text('gpu,usd_per_hour\nh100-sxm,$2.50/h\nb200-sxm,"1,000"\n')
    one_line_exit_2(advisor_cli("prices", "pull", "--allow-http", f"{base}/p.csv"),
                    "line 3", "usd_per_hour", "comma")


# --- 7. output paths ------------------------------------------------------------------------

def test_an_empty_out_is_refused_before_the_work(advisor_cli) -> None:
    r = advisor_cli("decide", "--answers", str(ROOT / "examples" / "answers.toml"), "--out", "")
    one_line_exit_2(r, "no output file named")


def test_the_success_line_escapes_the_path(advisor_cli, tmp_path) -> None:
    out = tmp_path / "a\x1b[31m\x07b.toml"
    r = advisor_cli("decide", "--answers", str(ROOT / "examples" / "answers.toml"), "--out",
                    str(out))
    assert r.returncode == 0, r.stderr
    assert out.exists()
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("report written to"))
    assert "\x1b" not in line and "\x07" not in line and "a\\x1b[31m\\x07b.toml" in line


def test_a_fifo_without_a_reader_fails_in_bounded_time_and_keeps_the_report(
        advisor_cli, tmp_path, advisor_home) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    r = advisor_cli("decide", "--answers", str(ROOT / "examples" / "answers.toml"), "--out",
                    str(fifo), timeout=120)
    line = one_line_exit_2(r, str(fifo), "no reader opened this FIFO", "the report is saved in")
    assert time.monotonic() - started < 110
    kept = Path(line.rsplit("saved in ", 1)[1])
    assert kept.parent == advisor_home / "unsaved" and "[answers]" in kept.read_text()
