"""`python -m probes run`, `advisor probe` and the record loader, end to end on the CPU."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from advisor.cli import main as advisor_main
from advisor.core.errors import InputError
from advisor.core.model.probe_record import parse_probe_record
from advisor.io.documents import load_probe_record
from probes.__main__ import main as probes_main
from probes.record import read_record

TINY = ["--quick", "--device", "cpu", "--budget", "0.3", "--seq-lens", "64", "--head-dims", "32"]


def test_probes_run_writes_the_record(tmp_path, capsys):
    out = tmp_path / "box.json"
    assert probes_main(["run", *TINY, "--out", str(out)]) == 0
    captured = capsys.readouterr()
    record = read_record(out)
    assert record["complete"] and record["stamp"]["device"]["kind"] == "cpu"
    assert "matmul bf16: MAMF" in captured.out and "no catalog figure for CPU" in captured.out
    assert "[" in captured.err and "record written to" in captured.err  # progress lines
    assert not list(tmp_path.glob(".*.tmp"))  # atomic write left nothing behind


def test_probes_run_json_goes_to_stdout(capsys):
    assert probes_main(["run", *TINY, "--only", "matmul", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["schema"] == "advisor.probe-record" and record["attention"] == []


def test_bad_flags_exit_2(capsys):
    assert probes_main(["run", "--device", "cpu", "--dtype", "bf16,fp9"]) == 2
    assert "unknown dtype 'fp9'" in capsys.readouterr().err
    assert probes_main(["run", "--device", "cpu", "--seq-lens", "lots"]) == 2


def test_collectives_outside_torchrun_names_the_command(capsys, monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    assert probes_main(["collectives", "--backend", "gloo"]) == 2
    assert "torchrun --standalone" in capsys.readouterr().err


def test_advisor_probe_json_is_a_valid_record(tmp_path, capsys):
    out = tmp_path / "adv.json"
    assert (
        advisor_main(["probe", *TINY, "--only", "matmul,bandwidth", "--json", "--out", str(out)])
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert load_probe_record(out).mamf("bf16") == printed["matmul"][0]["mamf_tflops"]


def test_help_does_not_import_torch():
    code = (
        "import sys; from probes.__main__ import build_parser; build_parser(); "
        "print('torch' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def _record() -> dict:
    return {
        "schema": "advisor.probe-record",
        "version": 1,
        "complete": True,
        "interrupted": False,
        "stamp": {
            "hostname": "h",
            "date": "2026-01-01T00:00:00+00:00",
            "device": {"kind": "cuda", "name": "NVIDIA H100 80GB HBM3", "count": 8},
            "versions": {"python": "3.11"},
        },
        "matmul": [
            {"dtype": "bf16", "status": "ok", "mode": "quick", "mamf_tflops": 790.0},
            {"dtype": "bf16", "status": "ok", "mode": "exhaustive", "mamf_tflops": 801.0},
            {"dtype": "bf16", "status": "failed", "mode": "quick", "mamf_tflops": 999.0},
        ],
        "attention": [
            {
                "backend": "sdpa-flash",
                "seq_len": 4096,
                "head_dim": 128,
                "heads": 16,
                "kv_heads": 16,
                "batch": 4,
                "causal": True,
                "direction": "fwd",
                "status": "ok",
                "tflops_median": 400.0,
            },
            {
                "backend": "flash-attn-3",
                "seq_len": 4096,
                "head_dim": 128,
                "heads": 16,
                "kv_heads": 16,
                "batch": 4,
                "causal": True,
                "direction": "fwd",
                "status": "ok",
                "tflops_median": 520.0,
            },
        ],
        "bandwidth": [
            {"kind": "d2d", "bytes": 2, "status": "ok", "gbps_median": 2900.0},
            {"kind": "h2d", "bytes": 1, "status": "ok", "gbps_median": 50.0},
        ],
    }


def test_record_accessors_pick_the_best_ok_entry():
    r = parse_probe_record(_record(), "r.json")
    assert r.mamf("bf16") == 801.0 and r.mamf("fp8") is None
    assert r.attention_tflops(4096, 128, True, "fwd") == 520.0
    assert r.attention_tflops(4096, 128, False, "fwd") is None
    assert r.d2d_gbps() == 2900.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{not json", "r.json: not valid JSON"),
        ("[]", "r.json: a probe record must be a JSON object"),
        ('{"schema": "other", "version": 1}', "r.json, field 'schema': not a probe record"),
        ('{"schema": "advisor.probe-record", "version": 2}', "field 'version', value 2"),
    ],
)
def test_loader_errors_are_one_line(tmp_path, text, expected):
    path = tmp_path / "r.json"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_probe_record(path)
    line = info.value.one_line()
    assert line.startswith(str(tmp_path)) and expected.split("r.json")[-1] in line
    assert "\n" not in line


def test_loader_names_the_bad_field(tmp_path):
    data = _record()
    data["matmul"][0]["status"] = "great"
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"field 'matmul\.0\.status', value 'great'"):
        load_probe_record(path)
    with pytest.raises(InputError, match="cannot read"):
        load_probe_record(tmp_path / "missing.json")
