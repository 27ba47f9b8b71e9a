"""`advisor compare` and `advisor validate` through a real subprocess, as a user types them."""

from __future__ import annotations

import json

BASE = ("compare", "--current", "h200-sxm", "--target", "b200-sxm", "--model", "llama-3.1-8b",
        "--seq-len", "8192", "--seq-len", "32768", "--zero", "3", "--checkpointing")
KEYS = {"speedup", "speedup_low", "speedup_high", "buckets", "tokens_per_s_per_gpu",
        "usd_per_mtok", "binding", "fits", "max_seq_len", "verdict", "reasons"}


def test_json_has_the_documented_keys_for_every_gpu(advisor_cli) -> None:
    r = advisor_cli(*BASE, "--target", "mi300x", "--price", "b200-sxm=6.0", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    for entry in (out["current"], *out["targets"]):
        assert set(entry) >= KEYS, KEYS - set(entry)
    b200 = out["targets"][0]
    assert b200["gpu"] == "b200-sxm"
    assert b200["speedup_low"] < b200["speedup"] < b200["speedup_high"]
    assert b200["buckets"]["attention"] > 1 and b200["price"]["source"] == "user"
    assert b200["verdict"] in {"upgrade", "upgrade-for-time", "break-even", "hold",
                               "blocked-by-gate", "capability"}
    assert out["current"]["speedup"] == 1.0 and out["current"]["verdict"] is None
    assert [p["seq_len"] for p in b200["sweep"]] == [8192, 32768]


def test_human_output_shows_inputs_and_assumptions(advisor_cli) -> None:
    r = advisor_cli(*BASE, "--token-budget", "1e10")
    assert r.returncode == 0, r.stderr
    text = r.stdout
    assert text.startswith("Verdict:")  # the verdict leads
    for needle in ("Workload: llama-3.1-8b", "GEMMs at", "Defaults (values you did not give)",
                   "re-tuned layout", "your layout", "default", "What flips it", "GPU-days",
                   "attention on b200-sxm"):
        assert needle in text, needle
    shared = advisor_cli(*BASE, "--token-budget", "1e10", "--format", "md").stdout
    for needle in ("catalog-measured", "published-kernel-curve"):  # every column in a file
        assert needle in shared, needle


def test_custom_model_from_params(advisor_cli) -> None:
    r = advisor_cli("compare", "--current", "a100-sxm", "--target", "h100-sxm", "--params", "7B",
                    "--layers", "32", "--seq-len", "4096", "--zero", "3", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["workload"]["model"]["layers"] == 32


def test_bad_input_is_one_line_and_exit_2(advisor_cli) -> None:
    r = advisor_cli("compare", "--current", "h200-sxm", "--target", "zz-9000", "--model",
                    "llama-3.1-8b", "--seq-len", "4096")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "unknown GPU id" in r.stderr
    r = advisor_cli("compare", "--current", "h200-sxm", "--target", "b200-sxm", "--model",
                    "llama-9", "--seq-len", "4096")
    assert r.returncode == 2 and "unknown model preset" in r.stderr


def test_validate_prints_errors_ours_and_naive(advisor_cli) -> None:
    r = advisor_cli("validate")
    out = r.stdout
    missed = "outside their tolerance" in out
    assert r.returncode == (1 if missed else 0), r.stdout + r.stderr  # 1: a case left its band
    assert out.startswith("Validation against published measurements")
    for needle in ("training", "serving", "dtype switch", "naive", "90% band", "holds",
                   "in-sample", "pass-through", "held out"):
        assert needle in out, needle
