"""The headless output a person reads and shares: fitted to the terminal, the verdict first,
shareable formats, `-` for standard streams, and the conventions around them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ANSWERS = ROOT / "examples" / "answers.toml"
COMPARE = ["compare", "--current", "h100-sxm@256", "--target", "b200-sxm@64", "--model",
           "llama-3.1-70b", "--seq-len", "8192", "--global-batch", "512", "--precision", "fp8"]


def advisor(*args: str, columns: int = 80, stdin: str | None = None, home: Path | None = None
            ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns)}
    if home is not None:
        env["ADVISOR_HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "advisor", *args], capture_output=True,
                          text=True, timeout=300, input=stdin, env=env,
                          stdin=None if stdin is not None else subprocess.DEVNULL)


def widest(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "r.toml"
    r = advisor("decide", "--answers", str(ANSWERS), "--out", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    return out


@pytest.mark.parametrize("args", [COMPARE, ["decide", "--answers", str(ANSWERS)],
                                  ["catalog", "list"]])
def test_no_line_is_wider_than_the_terminal_and_a_wide_one_is_used(args: list[str]) -> None:
    narrow, wide = advisor(*args, columns=80), advisor(*args, columns=200)
    assert narrow.returncode == 0 and wide.returncode == 0, narrow.stderr + wide.stderr
    assert widest(narrow.stdout) <= 80
    assert 100 < widest(wide.stdout) <= 200
    assert "left out at this width" in narrow.stdout  # and it says what it left out


def test_report_show_fits_80_columns(report_file: Path) -> None:
    r = advisor("report", "show", str(report_file), columns=80)
    assert r.returncode == 0, r.stderr
    assert widest(r.stdout) <= 80
    assert "Where this comes from" in r.stdout and "Prices" in r.stdout


def test_the_verdict_comes_first_and_names_both_cluster_sizes() -> None:
    out = advisor(*COMPARE).stdout
    head = out.split("\n\n")[:2]
    assert head[0].startswith("Verdict:")
    assert "64x b200-sxm vs 256x h100-sxm:" in head[1]
    assert "gpus = 8" not in out  # every side named its count: no GPU-count default listed


def test_numbers_read_as_people_say_them() -> None:
    out = advisor("decide", "--answers", str(ANSWERS), columns=200).stdout
    assert "1.0T tokens" in out and "days" in out
    assert "e+" not in out  # no 1e+12
    # the headline's speedup weighs 4k-16k tokens, the table's is at 4k: said beside it
    assert "the verdict's speedup: the geometric mean over every length both GPUs fit; " \
           "this table is at 4,096 tokens" in out


def test_quiet_prints_the_verdict_lines_alone() -> None:
    r = advisor(*COMPARE, "--quiet")
    assert r.returncode == 0
    assert r.stdout.splitlines() == [line for line in r.stdout.splitlines() if " vs " in line]
    assert len(r.stdout.splitlines()) == 1


def test_share_formats(report_file: Path, tmp_path: Path) -> None:
    html = advisor("report", "show", str(report_file), "--format", "html").stdout
    assert html.startswith("<!DOCTYPE html>") and "<title>advisor: 8x h200-sxm" in html
    assert "Verdict:" in html and any(k in html for k in ("upgrade", "hold", "break-even"))
    assert "█" in html and "Time against cost" in html  # the two charts
    svg = advisor("report", "show", str(report_file), "--format", "svg").stdout
    assert svg.lstrip().startswith("<svg") and "Speedup" in svg
    md = advisor("report", "show", str(report_file), "--format", "md").stdout
    assert md.startswith("# advisor:") and "| --- |" in md and "```text" in md


def test_report_json_round_trips(report_file: Path, tmp_path: Path) -> None:
    first = advisor("report", "show", str(report_file), "--format", "json")
    assert first.returncode == 0, first.stderr
    (tmp_path / "r.json").write_text(first.stdout)
    second = advisor("report", "show", str(tmp_path / "r.json"), "--json")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout) == json.loads(first.stdout)


def test_json_and_another_format_at_once_is_refused() -> None:
    r = advisor("catalog", "list", "--json", "--format", "md")
    assert r.returncode == 2 and "--json is --format json" in r.stderr


@pytest.mark.parametrize("command", [COMPARE, ["decide", "--answers", str(ANSWERS)],
                                     ["configs", "sweep", "--answers", str(ANSWERS)]])
def test_the_refusal_comes_before_any_work(command: list[str], monkeypatch, capsys) -> None:
    import advisor.core
    from advisor.cli import main

    def no_work(*args: object, **kwargs: object) -> None:
        raise AssertionError("the engine ran before the flags were checked")

    monkeypatch.setattr(advisor.core, "run", no_work)
    monkeypatch.setattr(advisor.core, "run_pipeline", no_work)
    assert main([*command, "--json", "--format", "md"]) == 2
    assert "--json is --format json" in capsys.readouterr().err


def test_decide_reads_stdin_and_writes_the_report_to_stdout() -> None:
    r = advisor("decide", "--answers", "-", "--out", "-", stdin=ANSWERS.read_text())
    assert r.returncode == 0, r.stderr
    assert r.stdout.lstrip("# \n").count('schema = "advisor.decision-report"') == 1
    assert "b200-sxm vs h200-sxm" in r.stderr  # the verdict goes beside it
    again = advisor("report", "show", "-", "--quiet", stdin=r.stdout)
    assert again.returncode == 0 and "b200-sxm vs h200-sxm" in again.stdout


def test_a_report_given_as_answers_says_so(report_file: Path) -> None:
    r = advisor("decide", "--answers", str(report_file))
    assert r.returncode == 2
    assert "this is a decision report, not an answers file" in r.stderr
    assert len(r.stderr.splitlines()) == 1


def test_decide_does_not_suggest_a_flag_it_lacks(tmp_path: Path) -> None:
    answers = tmp_path / "a.toml"
    answers.write_text(ANSWERS.read_text().replace('targets = ["b200-sxm"]',
                                                   'targets = ["gh200-144g"]'))
    out = advisor("decide", "--answers", str(answers), columns=200).stdout
    assert "no price" in out and "--price" not in out
    assert "[prices]" in out  # and data in brackets is not taken for markup


def test_catalog_show_json_is_a_list_however_many_match() -> None:
    one = json.loads(advisor("catalog", "show", "b200-sxm", "--json").stdout)["gpus"]
    many = json.loads(advisor("catalog", "show", "h100", "--json").stdout)["gpus"]
    assert isinstance(one, list) and len(one) == 1 and one[0]["id"] == "b200-sxm"
    assert isinstance(many, list) and len(many) > 1


def test_catalog_memory_is_in_gib_everywhere() -> None:
    listed = advisor("catalog", "list", columns=200).stdout
    shown = advisor("catalog", "show", "b200-sxm", columns=200).stdout
    assert "GiB" in listed.splitlines()[1] and "180 GiB" in shown
    assert "GB 180" not in shown


def test_models_lists_presets_with_their_sizes() -> None:
    r = advisor("models", "llama-3.1")
    assert r.returncode == 0
    assert any(line.startswith("llama-3.1-8b") and "8.0B" in line for line in r.stdout.splitlines())
    data = json.loads(advisor("models", "--json").stdout)["models"]
    assert {"deepseek-v3", "llama-3.1-70b"} <= {m["name"] for m in data}


def test_env_is_sanitised_and_copy_pasteable(tmp_path: Path) -> None:
    r = advisor("env", home=tmp_path)
    assert r.returncode == 0, r.stderr
    assert str(Path.home()) not in r.stdout or str(Path.home()) == "/"
    for key in ("- advisor:", "- python:", "- torch build:", "- gpus:", "- catalog:"):
        assert key in r.stdout
    data = json.loads(advisor("env", "--json", home=tmp_path).stdout)
    assert data["packages"]["rich"] != "not installed"


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_parse_in_their_shell(shell: str, tmp_path: Path) -> None:
    r = advisor("completion", shell)
    assert r.returncode == 0 and "advisor" in r.stdout
    for word in ("catalog", "decide", "format", "quiet", "html"):
        assert word in r.stdout
    binary = shutil.which(shell)
    if binary is None:
        pytest.skip(f"{shell} is not installed here")
    script = tmp_path / f"advisor.{shell}"
    script.write_text(r.stdout)
    checked = subprocess.run([binary, "-n", str(script)], capture_output=True, text=True,
                             timeout=30)
    assert checked.returncode == 0, checked.stderr


def test_bash_completion_completes_subcommands_and_choices() -> None:
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    script = advisor("completion", "bash").stdout
    probe = script + ('\nCOMP_WORDS=(advisor catalog sh); COMP_CWORD=2; _advisor; '
                      'echo "${COMPREPLY[*]}"\n'
                      'COMP_WORDS=(advisor report show r.toml --format ""); COMP_CWORD=5; '
                      '_advisor; echo "${COMPREPLY[*]}"\n')
    out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=30)
    assert out.stdout.splitlines() == ["show", "text md html svg json"]


def test_validate_exits_1_when_a_case_leaves_its_tolerance(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    import advisor.core
    from advisor.cli import main

    real = advisor.core.validate

    def one_missed(catalog, cases):  # type: ignore[no-untyped-def]
        summary = real(catalog, cases)
        worst = next(r for r in summary.results if r.basis == "held-out")
        results = [r.model_copy(update={"passed": r is not worst}) for r in summary.results]
        return summary.model_copy(update={"results": results})

    def all_within(catalog, cases):  # type: ignore[no-untyped-def]
        summary = real(catalog, cases)
        return summary.model_copy(update={"results": [
            r.model_copy(update={"passed": True}) for r in summary.results]})

    monkeypatch.setattr(advisor.core, "validate", one_missed)
    assert main(["validate", "--quiet"]) == 1
    assert capsys.readouterr().out.startswith("1 of ")
    monkeypatch.setattr(advisor.core, "validate", all_within)
    assert main(["validate"]) == 0
    out = capsys.readouterr().out
    assert "every one of the" in out and "Speedup cases" in out
    assert "ok" in out and "MISS" not in out
