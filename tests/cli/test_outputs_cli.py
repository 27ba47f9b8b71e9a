"""Output trouble never prints a traceback: a reader that stops early (`| head -c 10`), an
--out that cannot be written, Ctrl-C. And --out respects what is already on disk."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from advisor.cli import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, main

ROOT = Path(__file__).resolve().parents[2]
ANSWERS = str(ROOT / "examples" / "answers.toml")
PIPELINE = str(ROOT / "examples" / "configs_pipeline.toml")

COMMANDS = {
    "help": ["--help"],
    "version": ["--version"],
    "catalog list": ["catalog", "list"],
    "catalog list --json": ["catalog", "list", "--json"],
    "catalog show": ["catalog", "show", "h100"],
    "catalog show --json": ["catalog", "show", "h100-sxm", "--json"],
    "compare": ["compare", "--current", "h200-sxm", "--target", "b200-sxm", "--model",
                "llama-3.1-8b", "--seq-len", "8192"],
    "compare --json": ["compare", "--current", "h200-sxm", "--target", "b200-sxm", "--model",
                       "llama-3.1-8b", "--seq-len", "8192", "--json"],
    "decide": ["decide", "--answers", ANSWERS],
    "decide --json": ["decide", "--answers", ANSWERS, "--json"],
    "configs sweep": ["configs", "sweep", "--current", "h100-sxm", "--target", "b200-sxm",
                      "--model", "llama-3.1-8b", "--seq-len", "4096", "--token-budget", "2e10",
                      "--counts", "4,8"],
    "configs pipeline": ["configs", "pipeline", PIPELINE],
    "validate": ["validate"],
    "probe --help": ["probe", "--help"],
}


def run(*args: str, stdout: int | None = subprocess.PIPE,
        stdin: int = subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "advisor", *args], stdout=stdout,
                          stderr=subprocess.PIPE, stdin=stdin, text=True, timeout=120)


ARGPARSE_PRINTS = {"help", "version", "probe --help"}
"""argparse writes these itself and ignores a failed write: they end 0, quietly too."""


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_reader_that_went_away_ends_it_quietly(name: str) -> None:
    """stdout is a pipe whose reader is already gone: the first write fails with EPIPE,
    as it does for `| head -c 10` once head has its bytes, but with no race."""
    r, w = os.pipe()
    os.close(r)
    try:
        done = run(*COMMANDS[name], stdout=w)
    finally:
        os.close(w)
    assert done.stderr == ""
    # 128 + SIGPIPE, what a shell reports for coreutils killed by SIGPIPE
    assert done.returncode == (0 if name in ARGPARSE_PRINTS else EXIT_BROKEN_PIPE)


def test_decide_writes_its_report_before_a_reader_goes_away(tmp_path: Path) -> None:
    """`advisor decide --out r.toml | head` keeps the report: it is written before the
    summary that the closed pipe refuses."""
    out = tmp_path / "r.toml"
    r, w = os.pipe()
    os.close(r)
    try:
        done = run("decide", "--answers", ANSWERS, "--out", str(out), stdout=w)
    finally:
        os.close(w)
    assert done.returncode == EXIT_BROKEN_PIPE and done.stderr == ""
    assert "[answers]" in out.read_text()


def test_head_c_10_gets_its_bytes(tmp_path: Path) -> None:
    shell = f"{sys.executable} -m advisor catalog list --json | head -c 10"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", shell], capture_output=True,
                          text=True, timeout=120)
    assert done.stdout == '{\n  "schema": '[:10]  # every JSON document opens with its schema
    assert "Traceback" not in done.stderr and "Error" not in done.stderr
    assert done.returncode in (0, EXIT_BROKEN_PIPE)  # 0 when all fit in the pipe buffer


@pytest.mark.parametrize("out", ["/proc/x/y", "{tmp}", "{tmp}/missing/r.toml"],
                         ids=["proc", "folder", "missing folder"])
def test_a_bad_out_is_one_line_before_any_work(tmp_path: Path, out: str) -> None:
    out = out.format(tmp=tmp_path)
    done = run("decide", "--answers", ANSWERS, "--out", out)
    assert done.returncode == 2
    assert done.stdout == "", "refused before deciding: no summary printed"
    [line] = done.stderr.splitlines()
    assert line.startswith(f"advisor: error: {out}: ")
    assert list(tmp_path.iterdir()) == []


def test_out_through_a_link_updates_its_target(tmp_path: Path) -> None:
    real = tmp_path / "reports" / "h200-b200.toml"
    real.parent.mkdir()
    real.write_text("old")
    os.chmod(real, 0o640)
    link = tmp_path / "latest.toml"
    link.symlink_to(real)
    done = run("decide", "--answers", ANSWERS, "--out", str(link))
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and Path(os.readlink(link)) == real
    assert real.read_text().startswith("#") and "[answers]" in real.read_text()
    assert stat.S_IMODE(real.stat().st_mode) == 0o640


def test_out_to_a_fifo_writes_through(tmp_path: Path) -> None:
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    done = run("decide", "--answers", ANSWERS, "--out", str(fifo))
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    reader.join()
    assert "[answers]" in got[0]


def test_out_to_dev_stdout_precedes_the_summary() -> None:
    """The report is written first (a reader that stops early cannot lose it), then the
    summary: both arrive, whole, on the one stream."""
    done = run("decide", "--answers", ANSWERS, "--json", "--out", "/dev/stdout")
    assert done.returncode == 0, done.stderr
    report, _, summary = done.stdout.partition("\n{\n")
    assert report.startswith("#") and "[answers]" in report
    assert json.loads("{\n" + summary)["targets"]


def test_ctrl_c_is_exit_130_without_a_traceback(tmp_path: Path) -> None:
    """advisor blocks reading a FIFO; once our end is open it is surely there, and SIGINT
    lands while it waits (no sleeping, no guessing). Our end is closed right after: a signal
    that lands just before advisor's read() starts (the process preempted there, as under
    load) is noticed by Python only when the read returns, and the end of the file makes it
    return."""
    fifo = tmp_path / "report.toml"
    os.mkfifo(fifo)
    child = subprocess.Popen([sys.executable, "-m", "advisor", "report", "show", str(fifo)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    writer = os.open(fifo, os.O_WRONLY)  # returns once advisor has opened it for reading
    try:
        child.send_signal(signal.SIGINT)
    finally:
        os.close(writer)
    out, err = child.communicate(timeout=60)
    assert child.returncode == EXIT_INTERRUPTED
    assert err == "advisor: interrupted\n" and out == ""


def test_an_oserror_on_a_path_is_one_line(monkeypatch, capsys) -> None:
    from advisor.cli import build_parser

    def unreadable(args: object) -> int:
        raise PermissionError(13, "Permission denied", "/srv/reports/r.toml")

    monkeypatch.setattr("advisor.cli.build_parser",
                        lambda argv=None: _Fixed(build_parser(argv), unreadable))
    assert main(["report", "show", "x"]) == 2
    assert capsys.readouterr().err == "advisor: error: /srv/reports/r.toml: Permission denied\n"


class _Fixed:
    """A parser whose parsed arguments run `handler`."""

    def __init__(self, parser, handler) -> None:
        self.parser, self.handler = parser, handler

    def parse_args(self, argv):
        args = self.parser.parse_args(argv)
        args.handler = self.handler
        return args


def test_an_oserror_without_a_path_is_a_bug_and_keeps_its_traceback(monkeypatch) -> None:
    from advisor.cli import build_parser

    def broken(args: object) -> int:
        raise OSError("something inside advisor")

    monkeypatch.setattr("advisor.cli.build_parser",
                        lambda argv=None: _Fixed(build_parser(argv), broken))
    with pytest.raises(OSError, match="something inside advisor"):
        main(["report", "show", "x"])


def test_probe_without_torch_says_how_to_get_it(monkeypatch, capsys) -> None:
    import advisor.io.measure as measure

    real = measure.importlib.util.find_spec
    monkeypatch.setattr(measure.importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real(name, *a))
    assert main(["probe", "--quick"]) == 2
    assert capsys.readouterr().err == (
        "advisor: error: torch is not installed here: install gpu-upgrade-advisor[probe] or torch "
        "to measure this box\n")
