"""`advisor compare --mode serve` at an interactivity target, and the curve without one, at
80 columns and in every export."""

from __future__ import annotations

import json

SERVE = ("compare", "--current", "h200-sxm@8", "--target", "b200-sxm@8", "--model",
         "llama-3.1-70b", "--mode", "serve", "--isl", "1000", "--osl", "1000",
         "--current-precision", "fp8", "--target-precision", "nvfp4")


def test_the_verdict_is_at_the_users_target(advisor_cli) -> None:
    r = advisor_cli(*SERVE, "--min-tokens-per-user", "50", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    for side in (out["current"], out["targets"][0]):
        assert 1000 / side["tpot_ms"] >= 50 and side["batch_cap"] == "tpot"
    assert out["workload"]["min_tokens_per_user"] == 50


def test_without_a_target_the_curve_is_printed_at_80_columns(advisor_cli) -> None:
    r = advisor_cli(*SERVE, env={"COLUMNS": "80"})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert max(len(x) for x in lines) <= 80
    start = lines.index("Throughput against interactivity")
    rows = [x.split() for x in lines[start + 4:start + 12] if x[:1] == " " and x.split()]
    assert rows and all(row[0].replace(",", "").isdigit() for row in rows)
    assert any(line.startswith("  - b200-sxm from ") for line in lines)
    assert "Tokens/s per GPU against tokens/s per user at 1,000 tokens" in r.stdout
    summary = lines.index("At 1,000 tokens, the current GPU first")
    assert {"TTFT", "TPOT", "tokens/s"} <= set(lines[summary + 1].split())


def test_the_curve_is_exported(advisor_cli) -> None:
    md = advisor_cli(*SERVE, "--format", "md")
    assert "| tokens/s per user | h200-sxm tokens/s per GPU |" in md.stdout
    html = advisor_cli(*SERVE, "--format", "html")
    assert "Throughput against interactivity" in html.stdout
    out = json.loads(advisor_cli(*SERVE, "--json").stdout)
    curve = out["targets"][0]["curve"]
    assert len(curve) > 5 and {"tokens_per_s_per_user", "tokens_per_s_per_gpu", "batch", "tp",
                               "usd_per_mtok"} <= set(curve[0])
    assert out["interactivity"] and out["interactivity"][0]["by"] in ("cost", "throughput")


def test_a_bad_target_is_one_line(advisor_cli) -> None:
    r = advisor_cli(*SERVE, "--min-tokens-per-user", "-5")
    assert r.returncode == 2 and "--min-tokens-per-user" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
