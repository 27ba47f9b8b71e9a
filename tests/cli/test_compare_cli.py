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


STACKED = """\
current = "h100-sxm"
targets = ["b200-sxm", "tpu-v5p", "trainium2"]

[workload]
model = "llama-3.1-8b"
seq_lens = [8192]

[stack]
source = "declared"
packages = { torch = "2.5.1+cu124", flash-attn = "2.7.4" }

[stacks.tpu-v5p]
source = "declared"
packages = { torch = "2.8.0", torch-xla = "2.8.0" }
"""


def test_compare_with_a_stack_says_what_decide_says(advisor_cli, tmp_path) -> None:
    """`compare --stack` is the answers file's [stack]: the same gate per target (its own
    stack where one is given), the same framework read off the stack, the same verdicts.
    Without it, compare judged no stack at all ('upgrade for time' where decide blocks)."""
    path = tmp_path / "answers.toml"
    path.write_text(STACKED)
    decided = advisor_cli("decide", "--answers", str(path), "--json")
    assert decided.returncode == 0, decided.stderr
    flags = ("compare", "--current", "h100-sxm", "--target", "b200-sxm", "--target", "tpu-v5p",
             "--target", "trainium2", "--model", "llama-3.1-8b", "--seq-len", "8192")
    compared = advisor_cli(*flags, "--stack", "torch==2.5.1+cu124 flash-attn==2.7.4",
                           "--target-stack", "tpu-v5p=torch==2.8.0 torch-xla==2.8.0", "--json")
    assert compared.returncode == 0, compared.stderr
    a, b = json.loads(decided.stdout), json.loads(compared.stdout)
    keys = ("gpu", "framework", "software_gate", "verdict", "headline", "tokens_per_s_per_gpu")
    for x, y in zip((a["current"], *a["targets"]), (b["current"], *b["targets"]), strict=True):
        assert {k: x[k] for k in keys} == {k: y[k] for k in keys}
    by_gpu = {t["gpu"]: t for t in b["targets"]}
    assert by_gpu["b200-sxm"]["verdict"] == "blocked-by-gate"  # torch 2.5 has no sm_100
    assert by_gpu["trainium2"]["verdict"] == "blocked-by-gate"
    assert "Neuron" in by_gpu["trainium2"]["headline"]
    assert by_gpu["tpu-v5p"]["software_gate"] == "ok"  # its own stack
    assert b["current"]["framework"] == "fsdp"  # read off the stack, as decide does
    bare = json.loads(advisor_cli(*flags, "--json").stdout)
    assert bare["current"]["framework"] == "megatron"
    assert {t["gpu"]: t["software_gate"] for t in bare["targets"]}["b200-sxm"] is None


def test_a_target_takes_its_own_count_and_layout(advisor_cli) -> None:
    """EP 8 on the current side and EP 4 on a 4-GPU target, as an answers file's
    layouts.<gpu> says it."""
    r = advisor_cli("compare", "--current", "h200-sxm@8", "--target", "b200-sxm",
                    "--model", "mixtral-8x7b", "--seq-len", "4096", "--ep", "8", "--as-run",
                    "--target-layout", "b200-sxm=gpus=4,ep=4", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    mine, theirs = out["current"]["as_run"]["layout"], out["targets"][0]["as_run"]["layout"]
    assert (mine["gpus"], mine["ep"]) == (8, 8) and (theirs["gpus"], theirs["ep"]) == (4, 4)
    bad = advisor_cli("compare", "--current", "h200-sxm", "--target", "b200-sxm", "--model",
                      "llama-3.1-8b", "--seq-len", "4096", "--target-layout", "b200-sxm=tq=2")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--target-layout" in bad.stderr


def test_target_all_ranks_the_catalog_at_each_targets_count(advisor_cli, tmp_path) -> None:
    """`--target all` printed 1,329 lines in catalog order with every target at 8 GPUs; it is
    the ranking: by $/token, each GPU at the current side's count (a counted target at its
    own), the rest out with why. `advisor rank --answers` prints the same."""
    flags = ("--current", "rtx-4090@1", "--model", "llama-3.1-8b", "--mode", "finetune",
             "--seq-len", "4096")
    r = advisor_cli("compare", *flags, "--target", "all", "--target", "b200-sxm@2", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["order"] == "cost"
    costs = [x["usd_per_mtok"] for x in out["ranked"] if x["usd_per_mtok"] is not None]
    assert len(costs) >= 10 and costs == sorted(costs)
    counts = {x["gpu"]: x["gpus"] for x in out["ranked"] + out["out"]}
    assert counts.pop("b200-sxm") == 2 and set(counts.values()) == {1}
    why = {x["gpu"]: x["why"] for x in out["out"]}
    assert why["rtx-4090"].startswith("does not fit")
    text = advisor_cli("compare", *flags, "--target", "all:AMD")
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("Which GPU for llama-3.1-8b?")
    assert "mi300x" in text.stdout and "h100-sxm" not in text.stdout
    assert len(text.stdout.splitlines()) < 120
    path = tmp_path / "a.toml"
    path.write_text('current = "rtx-4090@1"\ntargets = ["b200-sxm@2"]\n[workload]\n'
                    'model = "llama-3.1-8b"\nmode = "finetune"\nseq_lens = [4096]\n')
    ranked = advisor_cli("rank", "--answers", str(path), "--json")
    assert ranked.returncode == 0, ranked.stderr
    assert json.loads(ranked.stdout)["ranked"] == out["ranked"]


def test_the_ranking_at_80_columns_names_what_it_could_not_weigh(advisor_cli, tmp_path,
                                                               monkeypatch) -> None:
    """At 80 columns a GPU id is never cut in two ('rtx-pro-6000-bw-wo / rkstation'); the
    ranked GPUs with no price and those no stack was checked on are named, with the flag (or
    the answers table) that gives one."""
    flags = ("--current", "rtx-4090@1", "--model", "llama-3.1-8b", "--mode", "serve",
             "--isl", "1000", "--osl", "500", "--target", "all")
    monkeypatch.setenv("COLUMNS", "80")
    r = advisor_cli("compare", *flags)
    assert r.returncode == 0, r.stderr
    assert max(len(line) for line in r.stdout.splitlines()) <= 80
    assert "rtx-pro-6000-bw-workstation" in r.stdout
    prose = " ".join(r.stdout.split())
    assert "no price for rtx-a6000" in prose and "quote one with --price GPU=USD" in prose
    assert "software not checked: no stack given, so every GPU is ranked on the hardware" \
        in prose and "--stack 'torch==" in prose
    stacked = advisor_cli("compare", *flags, "--stack", "torch==2.9.0+cu128")
    assert stacked.returncode == 0, stacked.stderr
    assert "software not checked" not in " ".join(stacked.stdout.split())
    path = tmp_path / "a.toml"
    path.write_text('current = "rtx-4090@1"\ntargets = ["l40"]\n[workload]\n'
                    'model = "llama-3.1-8b"\nmode = "serve"\nseq_lens = [1000]\nosl = 500\n')
    filed = " ".join(advisor_cli("rank", "--answers", str(path)).stdout.split())
    assert "quote one under [prices] in the answers file" in filed
    assert "[stack] in the answers file, or a target's own as stacks.<id>" in filed


def test_the_stated_layout_is_the_current_sides(advisor_cli) -> None:
    """Issue 29's two reproductions, typed as flags. `--current h200-sxm@2 --target
    b200-sxm@1 --tp 2` was refused as "field 'layouts.b200-sxm', value 1: gpus 1 is not a
    multiple of TP x PP x CP = 2" (a field never written): TP 2 runs on the two H200s, the
    one B200 runs its own layout and says why it cannot take TP 2. `--current gb200@512
    --target gb300@512 --tp 4 --pp 8 --cp 2` was refused as "gpus 8 is not a multiple of
    TP x PP x CP = 64": the layout is checked on the 512 GPUs after @."""
    r = advisor_cli("compare", "--current", "h200-sxm@2", "--target", "b200-sxm@1", "--tp", "2",
                    "--model", "llama-3.1-70b", "--mode", "serve", "--isl", "1000", "--osl",
                    "1000", "--precision", "fp8", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    cur, tgt = out["current"], out["targets"][0]
    assert (cur["gpus"], cur["as_run"]["layout"]["tp"]) == (2, 2)
    assert (tgt["gpus"], tgt["layout"]["gpus"], tgt["layout"]["tp"]) == (1, 1, 1)
    assert 1.2 < tgt["speedup"] < 3.0  # per GPU, fp8 on both
    assert any("b200-sxm: 1 GPU cannot hold the current side's TP 2" in n for n in out["notes"])
    r = advisor_cli("compare", "--current", "gb200@512", "--target", "gb300@512", "--tp", "4",
                    "--pp", "8", "--cp", "2", "--model", "llama-3.1-70b", "--seq-len", "8192",
                    "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    mine = out["current"]["as_run"]["layout"]
    assert (mine["gpus"], mine["tp"], mine["pp"], mine["cp"]) == (512, 4, 8, 2)
    tgt = out["targets"][0]
    assert tgt["gpus"] == 512 and tgt["as_run"]["layout"]["gpus"] == 512
    assert 0.9 < tgt["speedup"] < 2.0
