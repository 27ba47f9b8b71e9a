"""`python -m probes workload`: the shape from flags or a shape file, one-line errors, a record.

The flags are tested through the parser `probes/__main__.py` builds, with the workload
subcommand registered by `probes.workload_cli.add_workload_parser` (what __main__ calls).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.core.model.probe_record import parse_probe_record
from probes.__main__ import build_parser
from probes.cli import measurement_from_args, run_command
from probes.record import read_record
from probes.workload_cli import add_workload_parser, workload_config_from_args

ROOT = Path(__file__).resolve().parents[2]
LLAMA = ["--hidden", "4096", "--layers", "32", "--heads", "32", "--kv-heads", "8",
         "--ffn", "14336", "--vocab", "128256", "--name", "llama-3.1-8b"]


def parser() -> argparse.ArgumentParser:
    p = build_parser()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    if "workload" not in sub.choices:
        add_workload_parser(sub)
    return p


def parse(*argv: str) -> argparse.Namespace:
    return parser().parse_args(["workload", *argv])


def test_python_m_probes_lists_workload() -> None:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == {"run", "collectives", "workload"}


def test_flags_give_an_explicit_shape_and_settings():
    c = workload_config_from_args(parse(*LLAMA, "--seq-len", "8k", "--micro-batch", "2",
                                        "--mode", "pretrain", "--precision", "fp8",
                                        "--attention", "flash-attn-3", "--depth", "2",
                                        "--budget", "30", "--device", "cpu"))
    assert c.shape.head_dim == 128 and c.shape.kv_heads == 8 and c.shape.name == "llama-3.1-8b"
    assert (c.mode, c.seq_len, c.micro_batch, c.precision) == ("train", 8192, 2, "fp8")
    assert (c.attention, c.depth, c.budget_s, c.device) == ("flash-attn-3", 2, 30.0, "cpu")
    assert c.source == "flags"


def test_a_shape_file_and_flags_that_override_it(tmp_path):
    shape = tmp_path / "m.toml"
    shape.write_text('name = "m"\nhidden = 2048\nlayers = 48\nheads = 32\nkv_heads = 4\n'
                     'head_dim = 128\nffn = 6144\nvocab = 151936\nexperts = 128\n'
                     'active_experts = 8\nexpert_ffn = 768\n')
    c = workload_config_from_args(parse("--shape", str(shape)))
    assert c.shape.experts == 128 and c.shape.expert_ffn == 768 and c.source == str(shape)
    c = workload_config_from_args(parse("--shape", str(shape), "--layers", "24",
                                        "--mlp", "gelu", "--tie-embeddings"))
    assert c.shape.layers == 24 and c.shape.mlp == "gelu" and c.shape.tie_embeddings
    assert c.source == f"{shape} with flags"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--hidden", "4096"], "give the model's shape: --shape FILE, or --layers, --heads, "
                               "--ffn, --vocab"),
        ([*LLAMA, "--kv-heads", "5"], "flags: field 'kv_heads', value 5: must divide heads (32)"),
        ([*LLAMA, "--mode", "serve"], "flags: field 'osl', value None: is required"),
        (["--shape", "/nonexistent/m.json"], "/nonexistent/m.json: cannot read"),
        ([*LLAMA, "--depth", "64"], "field 'depth', value 64: must be 1 to 32"),
    ],
)
def test_bad_flags_are_one_line_and_exit_2_before_anything_runs(argv, message, capsys):
    args = parse(*argv, "--device", "cpu")
    assert run_command(args) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("probes: error: ") and message in line


def test_an_unwritable_out_is_refused_before_measuring(tmp_path, capsys):
    args = parse(*LLAMA, "--device", "cpu", "--out", str(tmp_path))
    assert run_command(args) == 2
    assert "is a directory; name a file in it" in capsys.readouterr().err


def test_the_suite_is_still_what_run_measures():
    start = measurement_from_args(parser().parse_args(["run", "--quick", "--device", "cpu"]))
    assert start.__name__ == "run_suite"
    start = measurement_from_args(parse(*LLAMA, "--device", "cpu"))
    assert start.__name__ == "run_workload"


def test_the_workload_command_writes_a_record_and_a_summary(tmp_path, capsys):
    out = tmp_path / "w.json"
    args = parse(*LLAMA, "--seq-len", "8k", "--device", "cpu", "--budget", "1",
                 "--out", str(out))
    assert run_command(args) == 0
    captured = capsys.readouterr()
    record = read_record(out)  # the probes' own reader, as collectives --merge uses
    w = parse_probe_record(record, str(out)).measured_workload()
    assert w is not None and w.seq_len == 8192 and w.seq_len_run == 256 and w.toy_sizes
    assert "workload llama-3.1-8b train at toy size (not GPU figures)" in captured.out
    assert "plan: CPU run at toy sizes" in captured.err and "record written to" in captured.err
    assert "USDT:" not in captured.err  # the profiler's C++ chatter is held back


def test_python_m_probes_workload_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "w.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "probes", "workload", *LLAMA, "--device", "cpu", "--budget",
         "1", "--json"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
        stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["workload"]["status"] in ("ok", "partial") and "Traceback" not in done.stderr
    assert not out.exists()
