"""The reliability audit's reproductions (round four), each run through the command line in
this process: every one ends in one line naming the file, the field (or the flag) and the
value, and exit code 2, or in the right result. Never a traceback, never a coerced value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from advisor.cli import main

ROOT = Path(__file__).resolve().parents[2]
BASE = """current = "h100-sxm"
targets = ["b200-sxm"]
[workload]
model = "llama-3.1-8b"
seq_lens = [4096]
gpus = 8
"""
COMPARE = ["compare", "--current", "h100-sxm", "--model", "llama-3.1-8b", "--seq-len", "4096"]


def one_line_exit_2(capsys: pytest.CaptureFixture[str], args: list[str], *needles: str) -> str:
    code = main(args)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, (code, err)
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def decide(tmp_path: Path, text: str) -> list[str]:
    answers = tmp_path / "answers.toml"
    answers.write_text(text)
    return ["decide", "--answers", str(answers), "--out", str(tmp_path / "report.toml")]


@pytest.mark.parametrize(("extra", "field"), [
    ('[prices]\n"b200-sxm@x" = 5.0\n', "prices.b200-sxm@x"),
    ('[layouts."b200-sxm@x"]\ntp = 1\n', "layouts.b200-sxm@x"),
    ('[power_limits_w]\n"b200-sxm@x" = 500\n', "power_limits_w.b200-sxm@x"),
])
def test_a_bad_count_inside_a_key(capsys, tmp_path, extra: str, field: str) -> None:
    one_line_exit_2(capsys, decide(tmp_path, BASE + extra), "answers.toml", f"'{field}'",
                    "not a number")


def test_a_bad_count_in_a_pipeline_stage(capsys, tmp_path) -> None:
    text = (ROOT / "examples" / "configs_pipeline.toml").read_text()
    bad = tmp_path / "pipeline.toml"
    bad.write_text(text.replace('gpu = "rtx-pro-6000-bw-server"',
                                'gpu = "rtx-pro-6000-bw-server@x"', 1))
    one_line_exit_2(capsys, ["configs", "pipeline", str(bad)], "pipeline.toml",
                    "stages.0.gpu", "not a number")


def test_a_bad_count_beside_a_targets_format(capsys) -> None:
    one_line_exit_2(capsys, [*COMPARE, "--target", "b200-sxm@3.4x", "--target-precision", "fp8"],
                    "'--target'", "b200-sxm@3.4x", "not a number")


DRAFTER = """name = "drafter"
gpu = "rtx-pro-6000-bw-server"
gpus = 1
measured_units_per_s = 0.74
"""


@pytest.mark.parametrize(("stage", "budget", "needles"), [
    ("flops_per_token = 6e9\nmfu = 0.5\npeak_tflops = 1e5\n", None,
     ["field 'pipeline.stages.1.peak_tflops', value 100000.0", "highest published peak"]),
    ("measured_tokens_per_s = 1e-9\n", "1e18",
     ["field 'pipeline.token_budget'", "years on the pipeline as split"]),
])
def test_configs_pipeline_checks_its_result(capsys, tmp_path, stage: str, budget: str | None,
                                            needles: list[str]) -> None:
    """`advisor configs pipeline` had no result check: a stage at 1e5 TFLOPS, and an ETA of
    "31,688,087,814,028,947,456.0 years", were printed."""
    text = (ROOT / "examples" / "configs_pipeline.toml").read_text()
    assert DRAFTER in text
    text = text.replace(DRAFTER, DRAFTER.replace("measured_units_per_s = 0.74\n", stage))
    if budget:
        text = text.replace("token_budget = 1.1196e10", f"token_budget = {budget}")
    path = tmp_path / "pipeline.toml"
    path.write_text(text)
    one_line_exit_2(capsys, ["configs", "pipeline", str(path)], "pipeline.toml", *needles)


def test_unicode_digits_are_read_as_the_numbers_they_are(capsys) -> None:
    """`--gpus ١٢` is 12 GPUs: any script's decimal digits are unambiguous, so the number
    grammar reads them (its docs say so) rather than refusing them like `1,000`."""
    assert main([*COMPARE, "--target", "b200-sxm", "--gpus", "١٢", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["current"]["gpus"] == 12 and out["targets"][0]["gpus"] == 12


def test_a_serving_figure_cannot_anchor_training(capsys, tmp_path) -> None:
    one_line_exit_2(capsys, decide(tmp_path, BASE + "[measured]\ntpot_ms = 50\n"),
                    "answers.toml", "measured.tpot_ms", "serving")
    one_line_exit_2(capsys, [*COMPARE, "--target", "b200-sxm", "--measured-tpot-ms", "50"],
                    "command line", "'--measured-tpot-ms'", "serving")


@pytest.mark.parametrize("seq", [4096, 8192])
def test_an_mfu_of_one_is_refused_at_every_length(capsys, tmp_path, seq: int) -> None:
    text = BASE.replace("[4096]", f"[{seq}]") + "[measured]\nmfu = 1.0\n"
    one_line_exit_2(capsys, decide(tmp_path, text), "measured", "peak")


def test_no_anchor_on_a_side_nothing_fits(capsys) -> None:
    one_line_exit_2(capsys, ["compare", "--current", "h100-sxm", "--target", "b200-sxm",
                             "--model", "llama-3.1-8b", "--seq-len", "131072", "--gpus", "1",
                             "--micro-batch", "8", "--measured-mfu", "0.9"],
                    "'--measured-*'", "cannot anchor")


@pytest.mark.parametrize(("old", "new", "field"), [
    ("gpus = 8", "gpus = true", "workload.gpus"),
    ("gpus = 8", "fused_kernels = 1", "workload.fused_kernels"),
    ('current = "h100-sxm"', 'current = ["h100-sxm"]', "current"),
    ("gpus = 8", 'gpus = 8\nnic_gbit = "400"\ntoken_budget = true', "workload.token_budget"),
])
def test_types_are_not_coerced(capsys, tmp_path, old: str, new: str, field: str) -> None:
    one_line_exit_2(capsys, decide(tmp_path, BASE.replace(old, new)), "answers.toml",
                    f"'{field}'")


def test_a_whole_number_written_as_a_float_is_that_number(capsys, tmp_path) -> None:
    assert main(decide(tmp_path, BASE.replace("gpus = 8", "gpus = 8.0"))) == 0


@pytest.mark.parametrize(("flags", "needles"), [
    (["--target", "h1OO-sxm"], ["'--target'", "h1OO-sxm", "unknown GPU id"]),
    (["--target", "b200-sxm", "--price", "h1OO=3"], ["'--price'", "h1OO"]),
    (["--target", "b200-sxm", "--power-limit", "h1OO=300"], ["'--power-limit'", "h1OO"]),
    (["--target", "b200-sxm", "--measured-mfu", "0.0001"], ["'--measured-mfu'"]),
    (["--target", "b200-sxm", "--token-budget", "1e18", "--gpus", "1"], ["'--token-budget'"]),
    (["--target", "b200-sxm", "--price", "h100-sxm=0.01", "--price", "b200-sxm=900"],
     ["'--price b200-sxm'"]),
])
def test_a_flag_error_names_the_flag(capsys, flags: list[str], needles: list[str]) -> None:
    one_line_exit_2(capsys, [*COMPARE, *flags], "command line", *needles)


def test_an_unknown_model_is_named_where_it_was_written(capsys, tmp_path) -> None:
    """The preset is resolved inside the workload's validation, which dropped where that
    workload was: `--model nope` said "field 'model'", a pipeline stage's 'pipeline.model'."""
    one_line_exit_2(capsys, decide(tmp_path, BASE.replace('"llama-3.1-8b"', '"nope"')),
                    "answers.toml, field 'workload.model', value 'nope'", "unknown model preset")
    text = (ROOT / "examples" / "configs_pipeline.toml").read_text()
    stage = 'gpu = "rtx-pro-6000-bw-server"'
    assert stage in text
    bad = tmp_path / "pipeline.toml"
    bad.write_text(text.replace(stage, stage + '\nworkload = { mode = "prefill", model = '
                                '"nope", seq_lens = [2048] }', 1))
    one_line_exit_2(capsys, ["configs", "pipeline", str(bad)],
                    "field 'pipeline.stages.0.workload.model', value 'nope'")
    one_line_exit_2(capsys, ["compare", "--current", "h100-sxm", "--target", "b200-sxm",
                             "--model", "nope", "--seq-len", "4096"],
                    "command line, field '--model", "value 'nope'")


RANK = ["rank", "--model", "llama-3.1-8b", "--seq-len", "4096"]


@pytest.mark.parametrize(("args", "flag", "value"), [
    ([*RANK, "--current", "b200"], "--current", "b200"),  # ambiguous: b200-sxm or gb200
    ([*RANK, "--current", "h100-sxm", "--target", "h1OO"], "--target", "h1OO"),
    ([*COMPARE, "--target", "all", "--target", "B200"], "--target", "B200"),
    (["compare", "--current", "b200", "--target", "all:AMD", "--model", "llama-3.1-8b",
      "--seq-len", "8k"], "--current", "b200"),
])
def test_a_ranking_names_the_flag_of_a_gpu_it_cannot_find(capsys, args: list[str], flag: str,
                                                          value: str) -> None:
    """`advisor rank` and `compare --target all` resolved the names only while ranking:
    "command line, value 'b200': ambiguous GPU id" named no flag."""
    one_line_exit_2(capsys, args, "command line", f"field '{flag}'", f"value '{value}'")


def test_a_sweep_option_is_named_as_its_flag(capsys) -> None:
    """`configs sweep --gpus-per-node 1000` (or `--gpus 1000`, which argparse reads as its
    abbreviation) said "field 'gpus_per_node'", a field of no file."""
    one_line_exit_2(capsys, ["configs", "sweep", "--current", "h100-sxm", "--model",
                             "llama-3.1-8b", "--seq-len", "4096", "--token-budget", "1e11",
                             "--gpus-per-node", "1000"],
                    "command line, field '--gpus-per-node', value 1000")


def test_the_blame_goes_to_the_price_that_is_wrong(capsys, tmp_path) -> None:
    text = BASE + '[prices]\nh100-sxm = ""\nb200-sxm = "3.4x"\n'
    line = one_line_exit_2(capsys, decide(tmp_path, text), "'prices.h100-sxm'", "blank")
    assert "b200-sxm" not in line


# --- the blame on a probe record: its file and its section, never the command line -----------

WORKLOAD_RECORD = ROOT / "tests" / "unit" / "data" / "h100_workload_probe.json"


def _suite_record(tmp_path: Path, **scaled: float) -> Path:
    """A suite record of b200-sxm at its published rates, a section's figures scaled."""
    record = json.loads(WORKLOAD_RECORD.read_text())
    record.pop("workload")
    record["stamp"]["device"]["catalog_id"] = "b200-sxm"
    record["matmul"] = [{"status": "ok", "dtype": "bf16", "mode": "quick",
                         "mamf_tflops": 1700 * scaled.get("matmul", 1)}]
    record["bandwidth"] = [{"status": "ok", "kind": "d2d", "bytes": 1 << 30,
                            "gbps_median": 6400 * scaled.get("bandwidth", 1)}]
    path = tmp_path / "b200-box.json"
    path.write_text(json.dumps(record))
    return path


@pytest.mark.parametrize("stored", [False, True], ids=["--probe", "imported"])
def test_an_implausible_result_is_blamed_on_the_probe_records_file(capsys, tmp_path,
                                                                   advisor_home,
                                                                   stored: bool) -> None:
    """A record whose matmul is 10,000x too slow made b200-sxm ~5,000x slower; the line
    named `command line, field 'probes.b200-sxm'`, which is nothing anyone typed: it names
    the record's file (given with --probe, or the stored copy) and the section to check."""
    record = _suite_record(tmp_path, matmul=1e-4)
    args = [*COMPARE, "--target", "b200-sxm"]
    if stored:
        assert main(["probe", "import", str(record)]) == 0
        capsys.readouterr()
        named = str(advisor_home / "probes" / "b200-sxm.json")
    else:
        args += ["--probe", str(record)]
        named = str(record)
    line = one_line_exit_2(capsys, args, f"{named}, field 'matmul'", "x slower than h100-sxm",
                           "its matmul bf16 of")
    assert "command line" not in line and "probes." not in line


def test_a_probe_record_is_not_blamed_for_what_it_did_not_measure(capsys, tmp_path) -> None:
    """Its HBM figure is the one 10,000x off: the section blamed is bandwidth, not matmul."""
    record = _suite_record(tmp_path, bandwidth=1e-4)
    one_line_exit_2(capsys, [*COMPARE, "--target", "b200-sxm", "--gpus", "1", "--mode",
                             "decode", "--probe", str(record)],
                    f"{record}, field 'bandwidth'", "its HBM bandwidth of 0.64 GB/s")


@pytest.mark.parametrize(("tokens_per_s", "needle"), [
    (30_000, "146% of this GPU's peak"),  # refused as the anchor is fitted
    (19_000, "h100-sxm at 114% of its peak"),  # fitted on one device; above peak on eight
])
def test_a_workload_probes_figure_is_blamed_on_the_record(capsys, tmp_path, tokens_per_s: int,
                                                          needle: str) -> None:
    """The workload probe's throughput anchors the decision when the answers measure
    nothing; a figure of it past the GPU's peak was blamed on `--measured-*` (no such flag
    was given) or on the workload: the record's file and field are named."""
    record = json.loads(WORKLOAD_RECORD.read_text())
    for phase in record["workload"]["phases"]:
        phase["full_model"]["tokens_per_s"] = float(tokens_per_s)
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(record))
    line = one_line_exit_2(capsys, [*COMPARE, "--target", "b200-sxm", "--probe", str(path)],
                           f"{path}, field 'workload.phases.0.full_model.tokens_per_s'",
                           f"{tokens_per_s:,} tokens/s per GPU", needle)
    assert "--measured" not in line and "command line" not in line


# --- benchmarks/fuzz_schema.py: bounds, schema, splice, consistency and text inputs --------


@pytest.mark.parametrize(("dims", "flag"), [
    (["--heads", "47", "--kv-heads", "19"], "'--kv-heads', value 19"),
    (["--experts", "8", "--active-experts", "9"], "'--active-experts', value 9"),
    (["--experts", "8", "--dense-layers", "4096", "--layers", "4"],
     "'--active-experts', value 0"),
    (["--moe-ffn", "1024"], "'--experts', value 0"),
])
def test_a_rule_across_custom_dimensions_names_a_flag(capsys, dims: list[str],
                                                      flag: str) -> None:
    """A custom model's dimensions that are each valid but not together (heads not a
    multiple of the KV heads, more experts per token than experts) were one line naming
    only 'a model of 8e+09 parameters', no flag (fuzz_schema flags #5, #35): the flag to fix
    is named, with its value."""
    one_line_exit_2(capsys, ["compare", "--current", "h100-sxm", "--target", "b200-sxm",
                             "--seq-len", "4096", "--params", "8e9", *dims], flag)


@pytest.mark.parametrize(("figure", "value", "needle"), [
    ("tokens_per_s", 1e18, "less than or equal to 1000000000000"),
    ("tokens_per_s", 1e-300, "greater than or equal to 0.000000001"),
    ("peak_memory_gib", 0.0, "greater than 0"),
])
def test_a_workload_probes_figure_past_what_it_anchors_is_refused_at_load(
        capsys, tmp_path, figure: str, value: float, needle: str) -> None:
    """A workload probe's whole-model tokens/s of 1e18 (or 1e-300), or a peak memory of 0 GiB,
    passed the record's bounds and ended in a pydantic traceback where it became the
    decision's measured anchor (fuzz_schema probes #205, #279): the record is refused at
    load with the file, the field and the value."""
    record = json.loads(WORKLOAD_RECORD.read_text())
    for phase in record["workload"]["phases"]:
        phase["full_model"][figure] = value
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(record))
    one_line_exit_2(capsys, [*COMPARE, "--target", "b200-sxm", "--probe", str(path)],
                    f"{path}, field 'workload.phases.0.full_model.{figure}'", needle)


def test_a_model_name_too_long_for_a_file_is_named_as_the_flag(capsys) -> None:
    """`--model` with a name longer than any file system's (a preset name repeated): the
    look for a local config.json raised 'File name too long', a line naming no flag
    (fuzz_schema flags #537); a name no file can have is not a local file, and is refused as
    the unknown model it is."""
    name = "llama-3.1-8b" * 400
    one_line_exit_2(capsys, ["compare", "--current", "h100-sxm", "--target", "b200-sxm",
                             "--seq-len", "4096", "--model", name],
                    "field '--model", "unknown model preset")


@pytest.mark.parametrize(("flags", "needle"), [
    (["--mode", "serve", "--osl", "128", "--measured-tpot-ms=5e-324"],
     "'--measured-tpot-ms', value 5e-324"),
    (["--measured-step-s=5e-324"], "'--measured-step-s', value 5e-324"),
    (["--mode", "serve", "--osl", "128", "--tpot-ms=5e-324"], "'--tpot-ms', value 5e-324"),
    (["--mode", "serve", "--osl", "128", "--min-tokens-per-user=5e-324"],
     "'--min-tokens-per-user', value 5e-324"),
])
def test_a_time_is_at_least_a_microsecond(capsys, flags: list[str], needle: str) -> None:
    """A measured TPOT of 5e-324 ms is 'greater than 0', and over 1000 it is 0: a
    ZeroDivisionError fitting the anchor (fuzz_schema answers #580, flags #299); a step of
    5e-324 s was 'inf% of this GPU's peak'. A time is at least a microsecond (bounds.MIN_MS),
    an interactivity target at least a token per MAX_SECONDS, refused with the flag named."""
    one_line_exit_2(capsys, [*COMPARE, "--target", "b200-sxm", *flags], needle)


def test_a_probe_run_of_a_subnormal_step_is_refused(capsys, tmp_path) -> None:
    """A workload probe's run timed at 5e-324 ms divided its tokens by 0 checking them, a
    ZeroDivisionError in the record's own validator: refused at load, the field named."""
    record = json.loads(WORKLOAD_RECORD.read_text())
    record["workload"]["phases"][0]["runs"][0]["step_ms_median"] = 5e-324
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(record))
    one_line_exit_2(capsys, [*COMPARE, "--target", "b200-sxm", "--probe", str(path)],
                    f"{path}, field 'workload.phases.0.runs.0.step_ms_median', value 5e-324")


SHAPE = ["--layers", "2", "--hidden", "256", "--heads", "2", "--kv-heads", "2", "--ffn", "256",
         "--vocab", "100"]


@pytest.mark.parametrize(("flags", "needle"), [
    (["--params=5e-324", *SHAPE], "'--params', value 5e-324"),  # was '+inf% off the 0B'
    (["--params=0"], "'--params', value 0.0"),  # was "'--model or --params': Field required"
    (["--params=1e300"], "'--params', value 1e+300"),  # was '--hidden', which nobody gave
    (["--params=1e15", "--hidden", "256"],
     "'--params', value 1000000000000000.0: infers layers 953674254"),
])
def test_a_parameter_count_is_blamed_for_what_it_drives(capsys, flags: list[str],
                                                       needle: str) -> None:
    """--params 5e-324 with the shape given ended in a note '+inf% off the 0B you gave'
    (exit 0); --params 0 read as no model given; 1e300 (or 1e15 beside --hidden 256) was
    blamed on --hidden (--layers), dimensions nobody gave but --params inferred (fuzz_schema
    flags). A count is 1 to MAX_PARAMS, and a dimension it infers past its bound names it."""
    one_line_exit_2(capsys, ["compare", "--current", "h100-sxm", "--target", "b200-sxm",
                             "--seq-len", "4096", *flags], needle)


@pytest.mark.parametrize("hostname", ["\u202eh100-box", "h100-box" * 12_500],
                         ids=["right-to-left", "100k-long"])
def test_a_workload_probes_hostname_is_shown_cleaned_in_its_anchor(capsys, tmp_path,
                                                                   hostname: str) -> None:
    """The anchor's note names the record's host: a hostname with a right-to-left override,
    or 100,000 characters long, made the note a MeasuredRun refuses (a control character;
    over MAX_NAME_CHARS) and the decision a pydantic traceback (fuzz_schema probes #265,
    #510). The note shows the host cleaned and shortened; the decision is made."""
    from advisor.core.model import bounds as B

    record = json.loads(WORKLOAD_RECORD.read_text())
    record["stamp"]["hostname"] = hostname
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(record))
    assert main([*COMPARE, "--target", "b200-sxm", "--probe", str(path), "--json"]) == 0
    note = json.loads(capsys.readouterr().out)["anchor"]["source"]
    assert "workload probe on " in note and "\u202e" not in note
    assert len(note) <= B.MAX_NAME_CHARS + len("probe ()"), note
