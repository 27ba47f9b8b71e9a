"""Reading records back (bounded, total), the stamp, and the output writer's edge cases."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import probes.output as output
import probes.record as record_mod
from probes.device import Device
from probes.figures import CatalogMatch
from probes.output import OutputError, check_target, clean_stale_temps, write_text
from probes.record import RecordError, new_record, read_record, stamp_differences, to_json
from probes.stamp import (
    code_fingerprint,
    collect_stamp,
    gpu_identity,
    kernel_env,
    pcie_from_sysfs,
    torch_local_tag,
)


def good_record() -> dict:
    return new_record({"hostname": "h", "device": {"kind": "cpu"}, "versions": {}}, {})


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\xef\xbb\xbf" + to_json(good_record()).encode(), "byte-order mark"),
        (b'{"schema": "advisor.probe-record", "x": "\xff"}', "not UTF-8 (byte 41)"),
        (b"[" * 100000 + b"]" * 100000, "nested too deeply"),
        (b'{"schema": "advisor.probe-record", "version": 2, "x": NaN}', "NaN is not a number"),
        (b"{not json", "not valid JSON"),
        (b"[]", "not a probe record"),
        (b'{"schema": "advisor.probe-record", "version": 1}', "version 1, not 2"),
        (
            b'{"schema": "advisor.probe-record", "version": 2, "stamp": {}, "matmul": {}}',
            "field 'matmul' is not a list",
        ),
        (b'{"schema": "advisor.probe-record", "version": 2}', "field 'stamp' is missing"),
        (
            b'{"schema": "advisor.probe-record", "version": 2, "stamp": {}, "workload": []}',
            "field 'workload' is not an object",
        ),
    ],
)
def test_bad_bytes_give_one_line(tmp_path, data, message):
    path = tmp_path / "r.json"
    path.write_bytes(data)
    with pytest.raises(RecordError) as info:
        read_record(path)
    text = str(info.value)
    assert text.startswith(str(path)) and message in text and "\n" not in text


def test_reads_are_capped_and_only_of_regular_files(tmp_path, monkeypatch):
    monkeypatch.setattr(record_mod, "MAX_RECORD_BYTES", 16 * 1024)
    big = tmp_path / "big.json"
    big.write_text(" " * 32 * 1024)
    with pytest.raises(RecordError, match="larger than"):
        read_record(big)
    with pytest.raises(RecordError, match="not a regular file"):
        read_record("/dev/zero")
    with pytest.raises(RecordError, match="cannot read"):
        read_record(tmp_path / "missing.json")
    good = tmp_path / "good.json"
    good.write_text(to_json(good_record()))
    assert read_record(good)["version"] == 2


def test_records_never_hold_nan_or_infinity():
    rec = good_record()
    rec["matmul"] = [{"mamf_tflops": float("nan"), "x": [float("inf"), 1.5]}]
    text = to_json(rec)
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text)["matmul"] == [{"mamf_tflops": None, "x": [None, 1.5]}]


def test_stamp_differences_name_the_fields_that_change_speed():
    a = {"hostname": "a", "date": "1", "device": {"name": "H100", "uuids": ["x"]},
         "versions": {"torch": "2.8.0+cu128", "flash_attn": None},
         "clocks": {"sm_mhz": 345.0, "sm_app_mhz": 1980.0}, "env": {},
         "run": {"preset": "default"}, "power": None}
    b = json.loads(json.dumps(a))
    b.update(hostname="b", date="2", run={"preset": "full"})
    b["device"]["uuids"] = ["y"]
    b["clocks"]["sm_mhz"] = 1980.0  # what the clock read at idle: not a difference
    b["power"] = {"limit_w": 700.0}  # read on one side only: unknown, not a difference
    assert stamp_differences(a, b) == []
    b["versions"]["torch"] = "2.8.0+cu130"
    b["versions"]["flash_attn"] = "2.8.3"  # installed on one side only: a difference
    b["env"] = {"PYTORCH_TUNABLEOP_ENABLED": "1"}
    assert stamp_differences(a, b) == [
        "env.PYTORCH_TUNABLEOP_ENABLED: None vs '1'",
        "versions.flash_attn: None vs '2.8.3'",
        "versions.torch: '2.8.0+cu128' vs '2.8.0+cu130'",
    ]


def test_cpu_stamp_records_everything_it_can_and_says_why_not(cpu):
    identity = gpu_identity(cpu)
    stamp = collect_stamp(cpu, identity, CatalogMatch(None, "no catalog figure for CPU"), None,
                          "n/a", {"preset": "quick", "mode": "quick"})
    for key in ("versions", "clocks", "power", "pcie", "ecc", "mig", "env", "torch_settings",
                "probe", "run", "host"):
        assert key in stamp, key
    assert stamp["versions"]["torch_local"] == torch_local_tag(stamp["versions"]["torch"])
    assert "cublas" in stamp["versions"] and "cute_dsl" in stamp["versions"]
    assert "NVML" in stamp["clocks_note"] and stamp["probe"]["version"]
    assert stamp["run"] == {"preset": "quick", "mode": "quick"}
    assert stamp["host"]["llc_bytes"] > 0 and stamp["torch_settings"]["float32_matmul_precision"]
    json.dumps(stamp)


def test_kernel_changing_environment_is_recorded_and_nothing_else():
    env = {
        "PYTORCH_TUNABLEOP_ENABLED": "1", "NVIDIA_TF32_OVERRIDE": "0",
        "TORCH_CUDNN_V8_API_DISABLED": "1", "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
        "TORCH_BLAS_PREFER_CUBLASLT": "1", "NCCL_ALGO": "Ring", "HOME": "/root",
        "AWS_SECRET_ACCESS_KEY": "x", "OMP_NUM_THREADS": "1",
    }
    assert kernel_env(env) == {
        "CUBLAS_WORKSPACE_CONFIG": ":4096:8", "NCCL_ALGO": "Ring", "NVIDIA_TF32_OVERRIDE": "0",
        "PYTORCH_TUNABLEOP_ENABLED": "1", "TORCH_BLAS_PREFER_CUBLASLT": "1",
        "TORCH_CUDNN_V8_API_DISABLED": "1",
    }


def test_local_build_tags_and_pcie_from_sysfs(tmp_path):
    assert torch_local_tag("2.7.1+cu128") == "cu128" and torch_local_tag("2.7.1") is None
    dev = tmp_path / "0000:1b:00.0"
    dev.mkdir()
    for name, value in (("current_link_speed", "16.0 GT/s PCIe"), ("current_link_width", "16"),
                        ("max_link_speed", "32.0 GT/s PCIe"), ("max_link_width", "16")):
        (dev / name).write_text(value + "\n")
    assert pcie_from_sysfs("0000:1b:00.0", tmp_path) == {
        "gen": 4, "width": 16, "max_gen": 5, "max_width": 16, "source": "sysfs"
    }
    assert pcie_from_sysfs("0000:ff:00.0", tmp_path) is None


def test_the_code_fingerprint_follows_the_sources(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    first = code_fingerprint(tmp_path)
    (tmp_path / "a.py").write_text("x = 2\n")
    assert code_fingerprint(tmp_path) != first and len(first) == 16


# --- the writer


def test_an_existing_file_keeps_its_mode_and_a_new_one_gets_the_umask(tmp_path):
    old = tmp_path / "old.json"
    old.write_text("x")
    old.chmod(0o604)
    write_text(check_target(old), "new\n")
    assert old.read_text() == "new\n" and stat.S_IMODE(old.stat().st_mode) == 0o604
    new = tmp_path / "new.json"
    write_text(check_target(new), "y\n")
    assert stat.S_IMODE(new.stat().st_mode) == 0o666 & ~output._UMASK


def test_a_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    target = check_target(fifo)
    assert target.kind == "stream" and not target.repeatable
    write_text(target, "record\n")
    reader.join(10)
    assert got == [b"record\n"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.parametrize("kind", ["block", "socket"])
def test_nodes_that_are_not_files_are_refused(tmp_path, kind):
    if kind == "socket":
        import socket

        path = tmp_path / "s.sock"
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        try:
            with pytest.raises(OutputError, match="is a socket"):
                check_target(path)
        finally:
            s.close()
    else:
        blocks = [p for p in Path("/dev").glob("loop*") if stat.S_ISBLK(p.stat().st_mode)]
        if not blocks:
            pytest.skip("no block device to point at")
        with pytest.raises(OutputError, match="is a block device"):
            check_target(blocks[0])


def test_stale_temporary_files_from_a_killed_writer_are_removed(tmp_path):
    # A writer killed with -9 leaves its temporary file; the next write to the folder cleans it.
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
    dead = int(child.stdout)
    stale = tmp_path / f".box.json.probe-tmp-{output._HOST}-{dead}-abcd1234"
    stale.write_text("half a record")
    old_other_host = tmp_path / ".box.json.probe-tmp-0badc0de-1-abcd1234"
    old_other_host.write_text("x")
    os.utime(old_other_host, (time.time() - 3 * 86400,) * 2)
    live = tmp_path / f".box.json.probe-tmp-{output._HOST}-{os.getppid()}-abcd1234"
    live.write_text("someone is writing this")
    unrelated = tmp_path / ".something-else"
    unrelated.write_text("keep")
    write_text(check_target(tmp_path / "box.json"), "{}\n")
    assert not stale.exists() and not old_other_host.exists()
    assert live.exists() and unrelated.exists()
    assert clean_stale_temps(tmp_path) == []


def test_a_killed_write_leaves_the_old_record_whole(tmp_path):
    """kill -9 in the middle of a write: the target still holds the previous record."""
    target = tmp_path / "box.json"
    target.write_text('{"old": true}\n')
    script = (
        "import os, sys; sys.path.insert(0, sys.argv[2]);"
        "import probes.output as o;"
        "real = os.write\n"
        "def slow(fd, data):\n"
        "    n = real(fd, bytes(data[:10]))\n"
        "    print('writing', flush=True); import time; time.sleep(60); return n\n"
        "os.write = slow\n"
        "o.write_text(o.check_target(sys.argv[1]), 'x' * 100000)"
    )
    root = str(Path(__file__).resolve().parents[2])
    proc = subprocess.Popen([sys.executable, "-c", script, str(target), root],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
    proc.kill()
    proc.wait(10)
    assert target.read_text() == '{"old": true}\n'
    assert len(list(tmp_path.glob(".box.json.probe-tmp-*"))) == 1  # left behind...
    write_text(check_target(target), "{}\n")
    assert not list(tmp_path.glob(".box.json.probe-tmp-*"))  # ...and cleaned by the next write


def test_odd_names_are_refused(tmp_path):
    for name in ("", " lead", "nul\x00byte"):
        with pytest.raises(OutputError):
            check_target(name)
    assert check_target("/dev/stdout").kind == "stdout"
    assert check_target(Device("cpu", "x", 1).kind and str(tmp_path / "a.json")).kind == "new"


class FakeNVML:
    """The slice of pynvml the probes call, with an H100-like reading."""

    NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU = 1, 2, 0

    def nvmlDeviceGetHandleByUUID(self, uuid):
        return "h"

    def nvmlDeviceGetHandleByIndex(self, i):
        return "h"

    def nvmlSystemGetDriverVersion(self):
        return b"580.65.06"

    def nvmlDeviceGetClockInfo(self, h, kind):
        return {1: 1980, 2: 2619}[kind]

    def nvmlDeviceGetMaxClockInfo(self, h, kind):
        return {1: 1980, 2: 2619}[kind]

    def nvmlDeviceGetApplicationsClock(self, h, kind):
        return {1: 1755, 2: 2619}[kind]

    def nvmlDeviceGetDefaultApplicationsClock(self, h, kind):
        return {1: 1980, 2: 2619}[kind]

    def nvmlDeviceGetCurrentClocksEventReasons(self, h):
        return 0x1 | 0x2

    def nvmlDeviceGetEnforcedPowerLimit(self, h):
        return 500000

    def nvmlDeviceGetPowerManagementDefaultLimit(self, h):
        return 700000

    def nvmlDeviceGetPowerManagementLimitConstraints(self, h):
        return (200000, 700000)

    def nvmlDeviceGetCurrPcieLinkGeneration(self, h):
        return 5

    def nvmlDeviceGetCurrPcieLinkWidth(self, h):
        return 16

    def nvmlDeviceGetMaxPcieLinkGeneration(self, h):
        return 5

    def nvmlDeviceGetMaxPcieLinkWidth(self, h):
        return 16

    def nvmlDeviceGetEccMode(self, h):
        return (1, 1)

    def nvmlDeviceGetMigMode(self, h):
        raise RuntimeError("NVML_ERROR_NOT_SUPPORTED")

    def nvmlDeviceGetPersistenceMode(self, h):
        return 1

    def nvmlDeviceGetComputeMode(self, h):
        return 0

    def nvmlDeviceGetPowerUsage(self, h):
        return 650000

    def nvmlDeviceGetTemperature(self, h, kind):
        return 61


def test_nvml_readings_with_a_fake_nvml():
    from probes import nvml

    m, h = FakeNVML(), "h"
    clocks = nvml.clocks(m, h)  # type: ignore[arg-type]
    assert clocks["sm_app_mhz"] == 1755 and clocks["app_clocks_default"] is False
    assert clocks["clock_setting_limits"] is True  # the applications_clocks_setting bit
    power = nvml.power(m, h)  # type: ignore[arg-type]
    assert power == {"limit_w": 500.0, "default_limit_w": 700.0, "min_limit_w": 200.0,
                     "max_limit_w": 700.0, "at_default": False}
    pcie = nvml.pcie(m, h)  # type: ignore[arg-type]
    assert pcie == {"gen": 5, "width": 16, "max_gen": 5, "max_width": 16, "source": "nvml"}
    assert nvml.ecc(m, h) == {"enabled": True, "pending": True}  # type: ignore[arg-type]
    assert nvml.mig(m, h) is None  # not supported on this GPU: not read, not False
    misc = nvml.misc(m, h)  # type: ignore[arg-type]
    assert misc["clock_event_reasons"] == ["gpu_idle", "applications_clocks_setting"]
    assert nvml.driver_version(m) == "580.65.06"  # type: ignore[arg-type]
    sampler = nvml.Sampler(m, ["GPU-x"], interval_s=0.01).start()  # type: ignore[arg-type]
    time.sleep(0.05)
    tel = nvml.DeviceTelemetry(m, h, sampler, 0)  # type: ignore[arg-type]
    assert tel.read() == (1980.0, 650.0)
    window = tel.window(0.0, time.perf_counter())
    assert window["samples"] >= 1 and window["power_w_median"] == 650.0
    assert window["power_limit_w"] == 500.0
    (summary,) = sampler.stop()
    assert summary["throttle_reasons"] == [] and summary["temp_c_max"] == 61.0
    assert "applications_clocks_setting" in summary["clock_event_reasons"]
