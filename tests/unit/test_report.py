"""The decision report: commented TOML that stdlib tomllib reads and that round-trips exactly."""

from __future__ import annotations

import copy
import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.core.comparison import Decision, decide
from advisor.core.errors import InputError
from advisor.core.model.probe_record import parse_probe_record
from advisor.core.report.answers_toml import parse_answers_toml
from advisor.core.report.document import (
    Provenance,
    PulledSource,
    Report,
    build_report,
    parse_report,
    quotes_for,
    report_to_toml,
)
from advisor.io.catalog_store import build_effective
from advisor.io.documents import load_answers

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "answers.toml"
PROVENANCE = Provenance(
    advisor_version="0.1.0", catalog_version="0123456789ab",
    pulled=[PulledSource(kind="prices", url="https://example.com/p.csv", etag='"v1"',
                         fetched_at=datetime(2026, 3, 1, 9, 30, tzinfo=UTC))],
    created=datetime(2026, 3, 2, 12, 0, tzinfo=UTC),
)


def probe(catalog_id: str) -> Any:
    return parse_probe_record({
        "schema": "advisor.probe-record", "version": 1, "complete": True, "interrupted": False,
        "stamp": {"hostname": "box-1", "date": "2026-03-01T10:00:00Z",
                  "device": {"kind": "cuda", "name": "NVIDIA H200", "count": 8,
                             "catalog_id": catalog_id},
                  "versions": {"python": "3.11.9", "torch": "2.7.1+cu128", "cuda": "12.8"},
                  "clocks": {"sm_mhz": 1980.0, "mem_mhz": None}},
        "settings": {"budget_s": 20, "note": None, "shapes": [1, None, 3]},
        "matmul": [{"status": "ok", "dtype": "bf16", "mode": "quick", "mamf_tflops": 760.0,
                    "best_shape": [8192, 8192, 8192]}],
        "bandwidth": [{"status": "ok", "kind": "d2d", "bytes": 1 << 30, "gbps_median": 4100.0}],
    }, "probe.json")


@pytest.fixture(scope="module")
def report(catalog) -> Report:
    answers = load_answers(EXAMPLE)
    probes = {"h200-sxm": probe("h200-sxm")}
    return build_report(decide(answers, catalog, probes), catalog, probes, PROVENANCE,
                        ["stack drift: torch: 2.7.1 (a), 2.4.0 (b)"])


@pytest.fixture(scope="module")
def report_text(report: Report) -> str:
    return report_to_toml(report)


def _exact(r: Report) -> str:
    text = report_to_toml(r)
    again = parse_report(text, "report.toml")
    assert again == r
    assert again.decision.answers.model_fields_set == r.decision.answers.model_fields_set
    assert report_to_toml(again) == text
    return text


def test_round_trip_is_exact(report: Report) -> None:
    _exact(report)


def test_stdlib_reads_every_section(report: Report) -> None:
    doc = tomllib.loads(report_to_toml(report))
    assert doc["schema"] == "advisor.decision-report" and doc["version"] == 2
    assert doc["provenance"]["catalog_version"] == "0123456789ab"
    assert doc["provenance"]["created"] == datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    assert {q["gpu"]: q["source"] for q in doc["quotes"]} == {"h200-sxm": "user",
                                                            "b200-sxm": "default"}
    assert doc["answers"]["workload"]["seq_lens"] == [4096, 8192, 16384]
    assert doc["answers"]["stack"]["packages"]["torch"] == "2.7.1+cu128"
    assert doc["probes"]["h200-sxm"]["stamp"]["hostname"] == "box-1"
    assert [p["seq_len"] for p in doc["current"]["sweep"]] == [4096, 8192, 16384]
    target = doc["targets"][0]
    assert target["dtype_gate"]["passed"] is True and "software_gate" in target
    verdict = target["verdict"]
    assert verdict["kind"] and verdict["reasons"] and "flips" in verdict
    assert "speedup_low" in verdict and "cost_ratio_high" in verdict


def test_it_reads_well(report: Report) -> None:
    text = report_to_toml(report)
    assert text.startswith("# advisor decision report")
    for header in ("[provenance]", "[[quotes]]", "[answers.workload]", "[current]",
                   "[[targets]]", "[[targets.sweep]]", "[targets.verdict]",
                   "[[targets.verdict.reasons]]", "[probes.h200-sxm]"):
        assert f"\n{header}\n" in text, header
    comment = text.index("# each target: gates")
    assert text.index("[[targets]]") > comment
    assert max(len(line) for line in text.splitlines() if line.startswith("#")) <= 100


def test_free_form_nulls_are_dropped_once_then_stable(report: Report) -> None:
    rec = report.probes["h200-sxm"]
    assert rec.stamp.clocks == {"sm_mhz": 1980.0}
    assert rec.settings == {"budget_s": 20, "shapes": [1, 3]}
    assert rec.mamf("bf16") == 760.0 and rec.stamp.versions.hip is None


def test_configs_and_pipeline_sections_round_trip(catalog) -> None:
    """[configs] and [pipeline] from the answers travel in the report and read back exactly."""
    from advisor.cli.configs import load_pipeline
    from advisor.core.economics.configs import sweep_configs
    from advisor.core.economics.stages import analyse_pipeline

    answers = load_answers(EXAMPLE)
    assert answers.configs is not None
    spec = load_pipeline(str(EXAMPLE.with_name("configs_pipeline.toml")))
    r = build_report(decide(answers, catalog), catalog, {}, PROVENANCE,
                     configs=sweep_configs(answers, catalog),
                     pipeline=analyse_pipeline(spec, catalog))
    text = _exact(r)
    doc = tomllib.loads(text)
    assert {p["gpus"] for p in doc["configs"]["points"]} == {8, 16, 32}
    assert doc["configs"]["choice"]["objective"] == "cost"
    assert doc["pipeline"]["current"]["split"] == [7, 1]
    assert "# GPU-count sweep" in text and "# producer/consumer pipeline" in text


def test_a_configs_point_above_peak_is_refused_at_load(catalog) -> None:
    """The GPU-count sweep in a hand-edited report holds the decision's rule: no MFU above 1
    (fuzz_typed found `report show` printing one)."""
    from advisor.core.economics.configs import sweep_configs

    answers = load_answers(EXAMPLE)
    r = build_report(decide(answers, catalog), catalog, {}, PROVENANCE,
                     configs=sweep_configs(answers, catalog))
    doc = tomllib.loads(report_to_toml(r))
    mfu = doc["configs"]["points"][1]["mfu"]
    assert 0 < mfu <= 1
    text = report_to_toml(r).replace(f"mfu = {mfu}", "mfu = 4.2", 1)
    assert "mfu = 4.2" in text
    with pytest.raises(InputError) as exc:
        parse_report(text, "hand.toml")
    line = exc.value.one_line()
    assert "field 'configs.points." in line and "above the GPU's peak" in line, line


def _edit_first(text: str, table: str, key: str, value: str) -> str:
    """`text` with `key`'s value in the first `[[table]]` replaced by `value`, as by hand."""
    at = text.index(f"[[{table}]]")
    head, _, rest = table.partition(".")
    doc = tomllib.loads(text)
    old = (doc[head][rest] if rest else doc[head])[0][key]
    edited = text[:at] + text[at:].replace(f"{key} = {old}", f"{key} = {value}", 1)
    assert edited != text
    return edited


@pytest.mark.parametrize("text_value", ['"inf"', '"nan"', '"1e3"', "true"])
def test_a_figure_given_as_text_or_a_flag_is_refused_at_load(catalog, text_value) -> None:
    """A report's figures are numbers: `usd = "inf"` was read as infinity and `report show`
    ended in a ValueError drawing the cost chart (fuzz_typed reports #2514)."""
    from advisor.core.economics.configs import sweep_configs

    answers = load_answers(EXAMPLE)
    r = build_report(decide(answers, catalog), catalog, {}, PROVENANCE,
                     configs=sweep_configs(answers, catalog))
    edited = _edit_first(report_to_toml(r), "configs.points", "usd", text_value)
    with pytest.raises(InputError) as exc:
        parse_report(edited, "hand.toml")
    assert "field 'configs.points.0.usd'" in exc.value.one_line()


def test_a_configs_point_of_a_gpu_not_swept_is_refused_at_load(catalog) -> None:
    """Every front end draws a sweep's points by its GPUs (fuzz_typed found `report show`
    ending in a KeyError on one that was not)."""
    from advisor.core.economics.configs import sweep_configs

    answers = load_answers(EXAMPLE)
    r = build_report(decide(answers, catalog), catalog, {}, PROVENANCE,
                     configs=sweep_configs(answers, catalog))
    doc = tomllib.loads(report_to_toml(r))
    gpu = doc["configs"]["points"][0]["gpu"]
    text = report_to_toml(r)
    at = text.index("[[configs.points]]")  # the first point's own gpu, not the decision's
    text = text[:at] + text[at:].replace(f'gpu = "{gpu}"', 'gpu = "mi300x"', 1)
    with pytest.raises(InputError) as exc:
        parse_report(text, "hand.toml")
    line = exc.value.one_line()
    assert "configs." in line and "'mi300x'" in line and "not one of the swept GPUs" in line


def test_report_fields_do_not_collide_with_the_decision() -> None:
    assert not set(Decision.model_fields) & {f.alias or n for n, f in Report.model_fields.items()}


def test_quotes_cite_a_pulled_price_sheet(catalog) -> None:
    url = "https://ops.example.com/gpu-prices.csv"
    sheet = {"price": [{"gpu": "b200-sxm", "usd_per_hour": 5.1, "label": "team price sheet",
                        "default": True, "source": [f"team price sheet {url}"],
                        "retrieved": "2026-02-01"}]}
    pulled = build_effective([(url, sheet)])
    decision = decide(load_answers(EXAMPLE), pulled)
    quotes = {q.gpu: q for q in quotes_for(decision, pulled)}
    assert quotes["b200-sxm"].usd_per_hour == 5.1 and quotes["b200-sxm"].source == "default"
    assert quotes["b200-sxm"].cited == [f"team price sheet {url}"]
    assert quotes["h200-sxm"].source == "user"


_BASE = tomllib.loads(EXAMPLE.read_text())


@st.composite
def variants(draw: st.DrawFn) -> dict[str, Any]:
    """The example with its quotes, targets, sweep, precision and defaults varied."""
    data = copy.deepcopy(_BASE)
    data["targets"] = draw(st.lists(st.sampled_from(["b200-sxm", "h100-sxm", "mi300x", "l4",
                                                     "a100-sxm", "rtx-pro-6000-bw-server"]),
                                    min_size=1, max_size=3, unique=True))
    data["prices"] = draw(st.dictionaries(st.sampled_from(["h200-sxm", *data["targets"]]),
                                          st.floats(0.05, 50.0), max_size=2))
    if draw(st.booleans()):
        del data["electricity_usd_per_kwh"]
    if draw(st.booleans()):
        data["power_cap_kw"] = draw(st.floats(1.0, 100.0))
    w = data["workload"]
    w["seq_lens"] = draw(st.lists(st.sampled_from([512, 2048, 4096, 32768, 131072]),
                                  min_size=1, max_size=3, unique=True))
    w["precision"] = draw(st.sampled_from(["bf16", "fp8", "fp4"]))
    w["model"] = draw(st.sampled_from(["llama-3.1-8b", "qwen3-32b", "mixtral-8x7b"]))
    if draw(st.booleans()):
        del data["stack"]
    return data


@settings(max_examples=30, deadline=None)
@given(data=variants())
def test_report_round_trip_property(catalog, data: dict[str, Any]) -> None:
    import tomlkit

    answers = parse_answers_toml(tomlkit.dumps(data), "variant.toml")
    decision = decide(answers, catalog)
    _exact(build_report(decision, catalog, {}, PROVENANCE))


@pytest.mark.parametrize(("edit", "needles"), [
    (("version = 2", "version = 3"), ["field 'version'", "value 3", "unsupported report version"]),
    (('schema = "advisor.decision-report"', 'schema = "x"'), ["not an advisor decision report"]),
    (("primary_seq_len = 4096\n", ""), ["field 'primary_seq_len'", "Field required"]),
    (('role = "current"', 'role = "spare"'), ["field 'current.role'", "'spare'"]),
    (("band_level = 0.9", "band_level = [0.9"), ["not valid TOML", "line"]),
    (("\nmfu = 0.", "\nmfu = 17."), ["field 'current.sweep.0.mfu'", "above"]),
])
def test_bad_reports_are_one_line(report_text: str, edit: tuple[str, str],
                                  needles: list[str]) -> None:
    text = report_text
    assert edit[0] in text
    with pytest.raises(InputError) as exc:
        parse_report(text.replace(edit[0], edit[1], 1), "old.toml")
    line = exc.value.one_line()
    assert line.startswith("old.toml") and "\n" not in line
    for needle in needles:
        assert needle in line, (needle, line)


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_garbage_reports_give_one_line(report_text: str, data: st.DataObject) -> None:
    base = report_text
    text = data.draw(st.one_of(
        st.text(max_size=200),
        st.tuples(st.integers(0, len(base)), st.integers(0, 60), st.text(max_size=10)).map(
            lambda t: base[: t[0]] + t[2] + base[t[0] + t[1]:]),
    ))
    try:
        parse_report(text, "r.toml")
    except InputError as exc:
        assert exc.one_line().startswith("r.toml") and "\n" not in exc.one_line()


def _work(n: int) -> int:
    """Python calls (builtins included) made writing a document of n packages, n findings
    and an n-long list: a count, not a time, so load cannot make it flaky."""
    import sys

    from advisor.core.formats import toml_document

    data = {"packages": {f"pkg{i}": f"1.{i}" for i in range(n)},
            "names": [f"pkg{i}" for i in range(n)],
            "findings": [{"package": f"pkg{i}", "message": "no support data"} for i in range(n)]}
    calls = 0

    def count(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        calls += event in ("call", "c_call")

    sys.setprofile(count)
    try:
        toml_document(["head"], [("stack", data, "a stack")])
    finally:
        sys.setprofile(None)
    return calls


def test_writing_a_report_is_linear_in_what_it_holds() -> None:
    """4,000 declared packages took 12.7 s in `decide`, nearly all in writing the report
    (16x the packages, 36x the time): tomlkit scanned a table on every plain value added
    and re-indexed an array on every element appended."""
    assert _work(1600) / _work(400) < 4.5


def test_a_version_1_report_reads_as_it_was_said() -> None:
    """Version 2 states a headline as facts; a kept version-1 report (written by the advisor
    of 2026-12-07, before that change) still loads, each headline as its advisor said it."""
    from advisor.present.verdict import verdict_headline

    path = Path(__file__).parents[1] / "data" / "reports" / "version-1.toml"
    report = parse_report(path.read_text(encoding="utf-8"), path.name)
    said = {t.gpu: verdict_headline(t.verdict, t.gpu) for t in report.decision.targets
            if t.verdict is not None}
    assert said == {
        "b200-sxm": "blocked: on NVIDIA B200 SXM (sm_100) until you upgrade: torch",
        "h200-sxm": "hold: 19% more per token, 1.02x faster"}
    assert tomllib.loads(report_to_toml(report))["version"] == 2, "written back as version 2"


@pytest.mark.parametrize("value", ["0.0", "-1.0", "1e300"])
def test_a_pipelines_tokens_per_unit_is_bounded_at_load(catalog, value: str) -> None:
    """A report's [pipeline] with tokens_per_unit = 0 loaded, and `report show` ended in a
    ZeroDivisionError drawing its stage table (fuzz_schema reports #23, #141): the figure is
    held to the answers' own bounds at load, one line naming it."""
    from advisor.cli.configs import load_pipeline
    from advisor.core.economics.stages import analyse_pipeline

    spec = load_pipeline(str(EXAMPLE.with_name("configs_pipeline.toml")))
    r = build_report(decide(load_answers(EXAMPLE), catalog), catalog, {}, PROVENANCE,
                     pipeline=analyse_pipeline(spec, catalog))
    text = report_to_toml(r)
    doc = tomllib.loads(text)
    at = text.index("[pipeline]")
    old = f"tokens_per_unit = {doc['pipeline']['tokens_per_unit']}"
    edited = text[:at] + text[at:].replace(old, f"tokens_per_unit = {value}", 1)
    assert edited != text
    with pytest.raises(InputError) as exc:
        parse_report(edited, "hand.toml")
    assert "field 'pipeline.tokens_per_unit'" in exc.value.one_line()


def test_a_frozen_base_step_of_zero_is_refused_at_load(catalog) -> None:
    """A LoRA report whose frozen base's step_s is 0 loaded, and `report show` ended in a
    ZeroDivisionError writing the share of the step its dequantisation takes (found beside
    fuzz_schema's reports, on its LoRA seed): a step is at least bounds.MIN_STEP_S at load."""
    from advisor.core import parse_answers, run

    answers = parse_answers({"current": "h100-sxm", "targets": ["b200-sxm"], "workload": {
        "mode": "lora", "model": "llama-3.1-8b", "seq_lens": [4096], "gpus": 1,
        "base_format": "nf4"}}, "a", catalog)
    text = report_to_toml(run(answers, catalog))
    at = text.index("[current.sweep.frozen_base]")
    step = tomllib.loads(text)["current"]["sweep"][0]["frozen_base"]["step_s"]
    edited = text[:at] + text[at:].replace(f"step_s = {step}", "step_s = 0.0", 1)
    assert edited != text
    with pytest.raises(InputError) as exc:
        parse_report(edited, "hand.toml")
    assert "field 'current.sweep.0.frozen_base.step_s'" in exc.value.one_line()


@pytest.mark.parametrize(("figure", "value"), [("eta_days", "-1.0"), ("usd", "-1e308")])
def test_a_configs_points_time_and_cost_are_bounded_at_load(catalog, figure: str,
                                                            value: str) -> None:
    """A GPU-count sweep's point of -1 days drew the ETA chart into a math domain error, and
    costs of +-1e308 its cost axis into NaN (fuzz_schema reports, every point's figure at its
    type's ends): a point takes some time and costs nothing below 0, at load."""
    from advisor.core.economics.configs import sweep_configs

    answers = load_answers(EXAMPLE)
    r = build_report(decide(answers, catalog), catalog, {}, PROVENANCE,
                     configs=sweep_configs(answers, catalog))
    edited = _edit_first(report_to_toml(r), "configs.points", figure, value)
    with pytest.raises(InputError) as exc:
        parse_report(edited, "hand.toml")
    assert f"field 'configs.points.0.{figure}'" in exc.value.one_line()


@pytest.mark.parametrize("figure", ["tokens_per_s_per_user", "tokens_per_s_per_gpu"])
def test_an_interactivity_points_rates_are_bounded_at_load(catalog, figure: str) -> None:
    """A serving report's curve with rates of +-1.8e308 drew the interactivity chart into
    NaN, a ValueError (fuzz_schema reports #2730): a rate is not negative, at load."""
    from advisor.core import parse_answers, run

    answers = parse_answers({"current": "h100-sxm", "targets": ["b200-sxm"], "workload": {
        "mode": "serve", "model": "llama-3.1-8b", "seq_lens": [2048], "osl": 256, "gpus": 8,
        "min_tokens_per_user": 40}}, "a", catalog)
    edited = _edit_first(report_to_toml(run(answers, catalog)), "current.curve", figure,
                         "-1e308")
    with pytest.raises(InputError) as exc:
        parse_report(edited, "hand.toml")
    assert f"field 'current.curve.0.{figure}'" in exc.value.one_line()
