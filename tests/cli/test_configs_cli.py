"""`advisor configs sweep | pipeline` and the drafter pipeline example as a user runs them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
EXAMPLE = str(ROOT / "examples" / "configs_pipeline.toml")
SWEEP = ["configs", "sweep", "--current", "h100-sxm", "--target", "b200-sxm",
         "--model", "llama-3.1-8b", "--seq-len", "4096", "--zero", "3", "--checkpointing",
         "--token-budget", "2e10", "--price", "h100-sxm=3.9", "--counts", "4,8,16"]


def test_sweep_text_shows_inputs_prices_front_and_choice(advisor_cli):
    r = advisor_cli(*SWEEP, "--power-cap", "12", "--deadline-days", "5")
    assert r.returncode == 0, r.stderr
    out = " ".join(r.stdout.split())
    assert out.startswith("GPU-count sweep")
    assert "Best (cost):" in out and "meeting a 12 kW power cap and a 5-day deadline" in out
    assert "Workload: llama-3.1-8b" in out and "20.0B tokens" in out
    assert "Pareto front" in out and "Sweep assumptions" in out and "Time against cost" in out
    md = advisor_cli(*SWEEP, "--power-cap", "12", "--deadline-days", "5", "--format", "md")
    # every column in a file: the quoted price and the catalog's dated default, each labelled
    assert "3.90 quote" in md.stdout and re.search(r"\| \d+\.\d\d default \|", md.stdout)


def test_sweep_json_matches_the_answers_file(advisor_cli):
    flags = advisor_cli(*SWEEP, "--power-cap", "12", "--deadline-days", "5", "--json")
    case = ROOT / "advisor" / "published_cases" / "configs_sweep.toml"
    answers = advisor_cli("configs", "sweep", "--answers", str(case), "--json")
    assert flags.returncode == answers.returncode == 0, flags.stderr + answers.stderr
    a, b = json.loads(flags.stdout), json.loads(answers.stdout)
    assert a["points"] == b["points"] and a["choice"] == b["choice"]
    assert a["counts"] == [4, 8, 16] and a["choice"]["best"]["power_kw"] <= 12


def test_sweep_input_errors_are_one_line(advisor_cli):
    r = advisor_cli("configs", "sweep", "--current", "h100-sxm", "--seq-len", "4096")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "--model or --params required" in r.stderr
    r = advisor_cli(*SWEEP[:-2], "--counts", "0,8")
    assert r.returncode == 2 and "positive integers" in r.stderr
    r = advisor_cli("configs", "sweep", "--answers", EXAMPLE, "--model", "llama-3.1-8b")
    assert r.returncode == 2 and "not both" in r.stderr


def test_pipeline_text_walks_the_published_neighbours(advisor_cli):
    r = advisor_cli("configs", "pipeline", EXAMPLE)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "Now (7+1): 34.7K tokens/s, 3.7 days, 4.70-4.70 kW" in out
    assert "Now: 7+1 in a box of 8 GPUs" in out
    five = next(line for line in out.splitlines() if line.startswith("5+1"))
    assert "24.8" in five and "5.2 days" in five and "1.06-1.21" in five
    md = advisor_cli("configs", "pipeline", EXAMPLE, "--format", "md").stdout
    assert "measured: 34.7K tokens/s on 7 GPU(s)" in md
    five = next(line for line in md.splitlines() if line.startswith("| 5+1"))
    assert "drafter starve" in five


def test_pipeline_json_best_split_of_four(advisor_cli):
    r = advisor_cli("configs", "pipeline", EXAMPLE, "--gpus", "4", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["best"][0]["split"] == [3, 1]
    assert abs(report["best"][0]["tokens_per_s"] / 14_800 - 1) < 0.01
    assert [s["source"] for s in report["stages"]] == ["measured", "measured"]


def test_pipeline_errors_name_file_and_field(advisor_cli, tmp_path):
    bad = tmp_path / "p.toml"
    bad.write_text("[other]\nx = 1\n")
    r = advisor_cli("configs", "pipeline", str(bad))
    assert r.returncode == 2 and "no [pipeline] section" in r.stderr
    bad.write_text(Path(EXAMPLE).read_text().replace("gpus = 7", "gpus = 0"))
    r = advisor_cli("configs", "pipeline", str(bad))
    assert r.returncode == 2 and "pipeline.stages.0.gpus" in r.stderr
    assert r.stderr.count("\n") == 1


def test_the_drafter_pipeline_example_runs_through_decide(advisor_cli, tmp_path):
    """The published RTX PRO 6000 -> B200 drafter projection, through the one engine."""
    out = tmp_path / "r.toml"
    r = advisor_cli("decide", "--answers", str(ROOT / "examples" / "drafter_pipeline.toml"),
                    "--out", str(out), "--json")
    assert r.returncode == 0, r.stderr
    alt = json.loads(r.stdout)["pipeline"]["alternatives"][0]
    three, seven = alt["splits"]
    assert alt["stages"][0]["tokens_per_s_per_gpu"] == pytest.approx(37_500)
    assert three["tokens_per_s"] == pytest.approx(112_500)
    assert three["gpu_days_equiv"] == pytest.approx(15.7, abs=0.05)
    assert seven["gpu_days_equiv"] == pytest.approx(13.5, abs=0.05)
    assert three["engine_tokens_per_s"] < three["tokens_per_s"]  # the engine is less rosy
    assert "The engine projects" in alt["differences"][0]
    assert out.exists()


def test_the_example_and_the_validation_case_are_the_same_answers():
    a = (ROOT / "examples" / "drafter_pipeline.toml").read_text()
    b = (ROOT / "advisor" / "published_cases" / "answers" / "drafter_pipeline.toml").read_text()
    assert a == b
