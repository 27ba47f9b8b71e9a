"""`python -m probes run`, `advisor probe` and the record loader, end to end on the CPU."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.cli import main as advisor_main
from advisor.core.errors import InputError
from advisor.core.model.probe_record import parse_probe_record
from advisor.io.documents import load_probe_record
from probes.__main__ import main as probes_main
from probes.record import read_record

TINY = ["--quick", "--device", "cpu", "--budget", "0.3", "--seq-lens", "64", "--head-dims", "32"]
ROOT = Path(__file__).resolve().parents[2]


def test_probes_run_writes_the_record(tmp_path, capsys):
    out = tmp_path / "box.json"
    assert probes_main(["run", *TINY, "--out", str(out)]) == 0
    captured = capsys.readouterr()
    record = read_record(out)
    assert record["complete"] and record["stamp"]["device"]["kind"] == "cpu"
    assert "matmul bf16: MAMF" in captured.out and "no catalog figure for CPU" in captured.out
    assert "MSMF" in captured.out and "(burst)" in captured.out
    assert captured.out.startswith("NOTE: CPU run at toy sizes")  # and says so
    assert "[" in captured.err and "record written to" in captured.err  # progress lines
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp left
    mode = stat.S_IMODE(out.stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask  # what open() would give, not mkstemp's 0600


def test_probes_run_json_goes_to_stdout(capsys):
    assert probes_main(["run", *TINY, "--only", "matmul", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["schema"] == "advisor.probe-record" and record["attention"] == []


def test_probes_run_out_dash_is_stdout(capsys):
    assert probes_main(["run", *TINY, "--only", "matmul", "--out", "-"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out[out.index("{"):])["schema"] == "advisor.probe-record"
    assert not Path("-").exists()


def test_without_torch_one_line_and_exit_2(capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real(name, *a))
    assert probes_main(["run", "--quick"]) == 2
    assert capsys.readouterr().err == (
        "probes: error: torch is not installed here: install torch (2.4 or later) or "
        "gpu-upgrade-advisor[probe] to measure this box\n")


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
        ('{"schema": "advisor.probe-record", "version": 3}', "field 'version', value 3"),
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


# --- output paths: checked before measuring, written without harm


def run_probes(
    *args: str, cwd: Path = ROOT, timeout: float = 180, **kw
) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.update(kw.pop("env", {}))
    return subprocess.run(
        [sys.executable, "-m", "probes", *args], cwd=cwd, env=env, capture_output=True,
        text=True, timeout=timeout, **kw,
    )


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("DIR", "is a directory"),
        ("/proc/nope/r.json", "does not exist"),
        ("/proc/self/new.json", "cannot write in /proc/"),
        ("MISSING/r.json", "does not exist"),
    ],
)
def test_a_bad_out_path_is_one_line_and_exit_2_before_measuring(tmp_path, capsys, target, reason):
    path = str(tmp_path) if target == "DIR" else target.replace("MISSING", str(tmp_path / "no"))
    assert probes_main(["run", *TINY, "--out", path]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and reason in err and path in err
    assert "[" not in err  # no progress line: nothing was measured


def test_out_dev_null_stays_a_device(capsys):
    before = os.stat("/dev/null")
    assert probes_main(["run", *TINY, "--only", "bandwidth", "--out", "/dev/null"]) == 0
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino
    assert "record written to /dev/null" in capsys.readouterr().err


def test_out_through_a_symlink_updates_the_target_and_keeps_the_link(tmp_path, capsys):
    real = tmp_path / "real.json"
    real.write_text("old")
    real.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert probes_main(["run", *TINY, "--only", "bandwidth", "--out", str(link)]) == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert read_record(real)["bandwidth"] and stat.S_IMODE(real.stat().st_mode) == 0o640


def test_out_dev_stdout_gets_the_record_once(tmp_path):
    result = run_probes("run", *TINY, "--only", "bandwidth", "--out", "/dev/stdout")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)  # the record alone: no summary mixed in
    assert record["bandwidth"] and "Traceback" not in result.stderr


def test_a_write_that_fails_at_the_end_goes_to_a_fallback_file(tmp_path, capsys, monkeypatch):
    import tempfile

    import probes.output as output

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    real_write = output.write_text

    def failing(target, text):
        if target.path.name == "box.json":
            raise OSError(28, "No space left on device")
        return real_write(target, text)

    monkeypatch.setattr(output, "write_text", failing)
    out = tmp_path / "box.json"
    assert probes_main(["run", *TINY, "--only", "bandwidth", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err and "the record is saved in" in err
    saved = Path(err.rsplit("the record is saved in ", 1)[1].split()[0])
    assert saved.parent == tmp_path and read_record(saved)["bandwidth"]
    assert "Traceback" not in err


def test_a_broken_pipe_ends_quietly(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "probes", "run", *TINY, "--only", "bandwidth", "--json"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # like `| head -c 0`: the reader is gone before the record comes
    err = proc.stderr.read().decode()
    rc = proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipe" not in err
    assert rc == 141  # as a shell reports a coreutils tool ended by SIGPIPE
    # stdout was the only copy of the record, so it was kept
    assert "the record is saved in" in err and list(tmp_path.glob("probe-record-*.json"))


def test_a_copied_folder_runs_under_another_name_without_advisor(tmp_path):
    shutil.copytree(
        ROOT / "probes", tmp_path / "boxprobes", ignore=shutil.ignore_patterns("__pycache__")
    )
    out = tmp_path / "box.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-m", "boxprobes", "run", *TINY, "--only", "matmul", "--out", str(out)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text())["matmul"][0]["status"] == "ok"
    code = (
        "import sys, boxprobes.runner, boxprobes.cli, boxprobes.collectives, "
        "boxprobes.bench_search; print(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('advisor', 'probes')))"
    )
    check = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120, check=True)
    assert check.stdout.strip() == "[]"  # neither advisor nor a `probes` it was copied from


def test_probe_sources_import_only_relatively():
    for path in (ROOT / "probes").glob("*.py"):
        text = path.read_text()
        assert "from probes" not in text and "import probes" not in text, path.name
        assert "advisor" not in [
            line.split()[1].split(".")[0] for line in text.splitlines()
            if line.startswith(("import ", "from "))
        ], path.name
