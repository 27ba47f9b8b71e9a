"""`advisor probe --workload answers.toml`: the answers' model measured, one-line refusals,
Ctrl-C keeping what was measured, and the record filed by `advisor probe import`."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from advisor.cli import main
from advisor.core.model.probe_record import parse_probe_record
from advisor.io.probe_store import stored_probes, stored_workloads

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "answers.toml"


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path_factory.mktemp("workload") / "box.json"
    done = subprocess.run(
        [sys.executable, "-m", "advisor", "probe", "--workload", str(EXAMPLE), "--out",
         str(out)], capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    return done, out


def test_the_example_answers_are_measured_and_stamped(measured):
    done, out = measured
    assert done.returncode == 0, done.stderr
    record = parse_probe_record(json.loads(out.read_text()), str(out))
    w = record.measured_workload()
    assert w is not None and w.toy_sizes and w.source == str(EXAMPLE)
    # the preset resolved by advisor's loader, handed over as explicit dimensions
    assert w.shape.model_dump() == {
        "name": "llama-3.1-8b", "hidden": 4096, "layers": 32, "heads": 32, "kv_heads": 8,
        "head_dim": 128, "ffn": 14336, "vocab": 128256, "mlp": "swiglu",
        "tie_embeddings": False, "experts": 0, "active_experts": 0, "expert_ffn": 0,
        "shared_experts": 0}
    assert (w.mode, w.seq_len, w.micro_batch, w.precision) == ("train", 4096, 1, "bf16")
    assert record.stamp.probe is not None and record.stamp.run["preset"] == "workload"
    assert record.stamp.versions.torch and record.stamp.device.kind == "cpu"
    notes = " ".join(w.notes)
    assert "primary sequence length 4096 of 4096, 8192, 16384" in notes
    assert "8 GPUs' communication and ZeRO stage 1 are not measured" in notes
    assert "fused kernels" in notes
    assert record.complete and record.estimate_s and record.seconds_total
    plan = next(line for line in done.stderr.splitlines() if "plan:" in line)
    assert "CPU run at toy sizes" in plan and "llama-3.1-8b train at layers 1 and 4 of 32" in plan
    assert "about" in plan and "record written to" in done.stderr
    assert "workload llama-3.1-8b train at toy size (not GPU figures)" in done.stdout


def _answers(tmp_path: Path, model: str) -> Path:
    text = EXAMPLE.read_text().replace('model = "llama-3.1-8b"', f'model = "{model}"')
    path = tmp_path / "answers.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--quick"], "advisor: error: --quick/--full applies to the probe suite, not to "
                      "--workload"),
        (["--seq-lens", "1k"], "advisor: error: --seq-lens applies to the probe suite, not to "
                               "--workload"),
        (["--gqa-ratio", "4"], "advisor: error: --gqa-ratio applies to the probe suite, not to "
                               "--workload"),
    ],
)
def test_suite_flags_with_workload_are_refused(extra, message, capsys):
    assert main(["probe", "--workload", str(EXAMPLE), *extra]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [message]


def test_the_suite_only_flags_are_read_off_the_probes_parsers():
    from advisor.cli.probe import _suite_only

    flags = _suite_only()
    assert {"preset", "exhaustive", "dtype", "only", "health", "budget", "seq_lens",
            "head_dims", "gqa_ratio"} <= set(flags)
    assert not {"device", "json", "out", "catalog_id"} & set(flags), "every probe takes those"
    assert flags["preset"] == "default" and flags["gqa_ratio"] == 1


def test_models_the_probe_does_not_build_are_refused_in_one_line(tmp_path, capsys):
    answers = _answers(tmp_path, "deepseek-v3")
    assert main(["probe", "--workload", str(answers)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"advisor: error: {answers}, field 'workload.model', value 'deepseek-v3': the workload "
        "probe does not build multi-head latent attention (deepseek-v3)"]


@pytest.mark.parametrize(("preset", "what"), [
    ("llama-4-maverick", "MoE layers interleaved with dense ones"),
    ("gpt-oss-20b", "sliding-window attention"),
])
def test_shapes_the_probe_would_build_otherwise_are_refused(tmp_path, capsys, preset, what):
    """Built all-MoE or with full attention, the probe would time another model."""
    assert main(["probe", "--workload", str(_answers(tmp_path, preset))]) == 2
    assert capsys.readouterr().err.strip().endswith(f"does not build {what} ({preset})")


def test_a_bad_answers_file_is_one_line(tmp_path, capsys):
    answers = _answers(tmp_path, "llama-9")
    assert main(["probe", "--workload", str(answers)]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"advisor: error: {answers}") and "llama-9" in line
    assert main(["probe", "--workload", str(tmp_path / "none.toml")]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "none.toml" in line


def test_ctrl_c_keeps_the_steps_already_measured(tmp_path):
    out = tmp_path / "box.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "advisor", "probe", "--workload", str(EXAMPLE), "--out",
         str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL)
    assert proc.stderr is not None
    seen = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        if "workload 4 layers: building" in line:  # always printed: the stage's first line
            proc.send_signal(signal.SIGINT)  # the first: stop after the current step
            break
    assert seen and "building" in seen[-1], "".join(seen)
    _, err = proc.communicate(timeout=300)
    err = "".join(seen) + err
    assert proc.returncode == 130 and "Traceback" not in err, err
    record = parse_probe_record(json.loads(out.read_text()), str(out))
    w = record.workload
    assert w is not None
    first, second = w.phases[0].runs
    assert first.status == "ok" and first.split is not None  # the first depth, whole
    if record.complete:  # a fast machine finished the last step before the signal landed
        assert second.status == "ok" and not record.interrupted
        return
    assert "stopping after the current measurement" in err
    assert record.interrupted and w.status == "partial"
    assert second.status == "stopped" and second.steps_timed == len(second.steps_ms)
    assert [s.status for s in record.stages] == ["done", "stopped"]


def test_a_gpu_workload_record_is_imported_and_kept(measured, tmp_path, capsys):
    _, out = measured
    data = json.loads(out.read_text())
    data["stamp"]["device"].update(kind="cuda", name="NVIDIA H200", catalog_id="h200-sxm")
    data["workload"]["device"] = "cuda"
    gpu = tmp_path / "h200.json"
    gpu.write_text(json.dumps(data))
    assert main(["probe", "import", str(gpu)]) == 0
    assert "imported workload probe record for h200-sxm" in capsys.readouterr().out
    kept = stored_workloads()["h200-sxm"].measured_workload()
    assert kept is not None and kept == parse_probe_record(data, "x").workload
    assert stored_probes() == {}  # kept beside the suite's records, not among them
