"""`advisor probe --out`: checked before measuring, and no measurement is ever lost."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.cli.probe import RecordWriter
from advisor.core.errors import InputError


def test_a_folder_is_refused_before_measuring(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "advisor", "probe", "--quick", "--device", "cpu",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"advisor: error: {tmp_path}: is a folder; name a file in it, e.g. {tmp_path}/box.json"]
    assert done.stdout == ""


def record(final: bool, n: int) -> dict[str, object]:
    return {"complete": final, "interrupted": False, "matmul": list(range(n))}


def test_checkpoints_and_the_final_record_go_to_the_file(tmp_path: Path) -> None:
    out = tmp_path / "box.json"
    write = RecordWriter()
    write(record(False, 1), str(out))
    assert json.loads(out.read_text())["matmul"] == [0]
    write(record(True, 2), str(out))
    assert json.loads(out.read_text())["matmul"] == [0, 1]


def test_a_stream_gets_the_final_record_only(tmp_path: Path, capfd) -> None:
    write = RecordWriter(stream=True)
    write(record(False, 1), "/dev/stdout")
    assert capfd.readouterr().out == ""
    write(record(True, 2), "/dev/stdout")
    assert json.loads(capfd.readouterr().out)["matmul"] == [0, 1]


def test_a_file_that_cannot_be_written_keeps_the_record_elsewhere(
        tmp_path: Path, advisor_home: Path, capsys) -> None:
    folder = tmp_path / "gone"
    folder.mkdir()
    out = folder / "box.json"
    write = RecordWriter()
    write(record(False, 1), str(out))
    folder.joinpath("box.json").unlink()
    folder.rmdir()  # the folder went away mid-run
    write(record(False, 2), str(out))
    [kept] = (advisor_home / "unsaved").glob("probe-*.json")
    assert "keeping the record in" in capsys.readouterr().err
    with pytest.raises(InputError) as err:
        write(record(True, 3), str(out))
    assert json.loads(kept.read_text())["matmul"] == [0, 1, 2]
    assert err.value.one_line() == (f"{out}: cannot write: folder {folder} does not exist; "
                                    f"the record is saved in {kept}")
