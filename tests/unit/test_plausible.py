"""Plausibility: bounds that come from the hardware (power limits, MFU, the catalog's figures
against their family, aliases), list caps, and the result sanity gate over a decision."""

from __future__ import annotations

import copy
import json
import sys
import tomllib
from pathlib import Path

import pytest

from advisor.core import run
from advisor.core.economics.sanity import check_plausible
from advisor.core.errors import InputError
from advisor.core.model import bounds as B
from advisor.core.model.answers import check_against_catalog, parse_answers, power_limit_range
from advisor.core.model.catalog import CATALOG_FILES, catalog_from_docs
from advisor.core.model.probe_record import parse_probe_record
from advisor.core.report.answers_toml import parse_answers_toml
from advisor.io.catalog_store import load_catalog, read_shipped_texts

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import fuzz_inputs as F  # noqa: E402

CATALOG = load_catalog()
BASE = {"current": "h200-sxm", "targets": ["b200-sxm"],
        "workload": {"model": "llama-3.1-8b", "seq_lens": [4096], "token_budget": 1e11}}


def _docs() -> dict:
    return {f: tomllib.loads(t) for f, t in read_shipped_texts().items()}


# --- power limits: the part's range ---------------------------------------------------------

def test_the_published_minimum_limits_lie_inside_the_range() -> None:
    """A100 SXM4 100-400 W and H100 SXM 200-700 W (nvidia-smi, cited in bounds.py) are
    settable parts' ranges: both ends must be accepted, and a quarter of TDP refused below."""
    assert power_limit_range(CATALOG.gpu("a100-sxm")) == (100.0, 400.0)
    low, high = power_limit_range(CATALOG.gpu("h100-sxm"))
    assert low <= 200.0 and high == 700.0


@pytest.mark.parametrize(("watts", "ok"), [(1e-9, False), (249.9, False), (250, True),
                                           (1000, True), (1000.5, False)])
def test_a_power_limit_is_checked_against_the_part(watts: float, ok: bool) -> None:
    answers = parse_answers({**BASE, "power_limits_w": {"b200-sxm": watts}})
    if ok:
        check_against_catalog(answers, CATALOG)
        return
    with pytest.raises(InputError, match=r"b200-sxm takes a power limit of 250 to 1,000 W"):
        check_against_catalog(answers, CATALOG)


def test_run_checks_power_limits_for_every_front_end() -> None:
    answers = parse_answers({**BASE, "power_limits_w": {"b200-sxm": 1e-9}})
    with pytest.raises(InputError, match=r"power_limits_w\.b200-sxm"):
        run(answers, CATALOG)


# --- counts, MFU, efficiencies --------------------------------------------------------------

@pytest.mark.parametrize("target", ["b200-sxm@0", "b200-sxm@-1", "b200-sxm@x", "b200-sxm@",
                                    "b200-sxm@1.5", f"b200-sxm@{B.MAX_GPUS + 1}"])
def test_a_count_after_at_is_a_whole_number_of_gpus(target: str) -> None:
    with pytest.raises(InputError, match=r"targets\.0"):
        parse_answers({**BASE, "targets": [target]})


def test_a_count_after_at_reads_the_grammar() -> None:
    assert parse_answers({**BASE, "targets": ["b200-sxm@1k"]}).targets == ["b200-sxm@1k"]


def test_mfu_and_efficiency_ranges_exist() -> None:
    stage = {"name": "a", "gpu": "h100-sxm", "gpus": 1, "flops_per_token": 1e9}
    pipe = {"stages": [stage | {"mfu": 0.4}, stage | {"name": "b", "mfu": 0.4}]}
    parse_answers({**BASE, "pipeline": pipe})
    for mfu in (B.MIN_MFU / 2, 1.01):
        bad = {"stages": [stage | {"mfu": mfu}, stage | {"name": "b", "mfu": 0.4}]}
        with pytest.raises(InputError, match=r"pipeline\.stages\.0\.mfu"):
            parse_answers({**BASE, "pipeline": bad}, "answers.toml")
    record = F.probe_record("h200-sxm")
    record["matmul"][0]["efficiency"] = 3.0  # three times the catalog's peak
    with pytest.raises(InputError, match=r"efficiency"):
        parse_probe_record(record, "box.json")


def test_pipeline_alternatives_are_validated_at_load_with_their_path() -> None:
    text = (ROOT / "examples" / "drafter_pipeline.toml").read_text()
    good = "stages.targets = { flops_per_token = 54e9, mfu = 0.45, peak_tflops = 4500 }"
    assert good in text
    cases = {
        "stages.targets = { flops_per_token = 54e9 }": "flops_per_token and mfu go together",
        "stages.targets = { measured_units_per_s = 1.0, flops_per_token = 54e9, mfu = 0.4 }":
            "give one rate",
        "stages.nope = { flops_per_token = 54e9, mfu = 0.45 }": "names no stage",
    }
    drafter = "stages.drafter = { flops_per_token = 7.7810e9, mfu = 0.45, peak_tflops = 4500 }"
    assert drafter in text
    changed = [(good, new, message) for new, message in cases.items()]
    changed.append((drafter, "stages.drafter = { hop_s_per_unit = 0.01 }",
                    "give a rate on b200-sxm"))
    for old, new, message in changed:
        with pytest.raises(InputError, match=message) as exc:
            parse_answers_toml(text.replace(old, new), "drafter.toml")
        assert "pipeline" in exc.value.one_line() and "alternatives" in exc.value.one_line()


# --- the catalog: family figures, aliases, caps ---------------------------------------------

def _build(docs: dict) -> None:
    catalog_from_docs(docs, {f: f"catalog/{f}" for f in CATALOG_FILES})


def test_the_shipped_catalog_passes_its_own_checks() -> None:
    _build(_docs())


@pytest.mark.parametrize(("figure", "value"), [("bf16", 20_000.0), ("bf16", 90.0)])
def test_a_peak_far_from_its_family_is_refused(figure: str, value: float) -> None:
    docs = _docs()
    h100 = next(g for g in docs["gpus.toml"]["gpu"] if g["id"] == "h100-sxm")
    h100["peak_tflops"] = {"source": ["x"], "retrieved": h100["peak_tflops"]["retrieved"],
                           figure: value}
    h100.pop("mamf", None)
    h100.pop("gemm", None)
    with pytest.raises(InputError, match=r"h100-sxm.*peak_tflops.bf16.*Hopper family"):
        _build(docs)


def test_a_bandwidth_far_from_its_family_is_refused() -> None:
    docs = _docs()
    b200 = next(g for g in docs["gpus.toml"]["gpu"] if g["id"] == "b200-sxm")
    b200["memory"]["bandwidth_tbps"] = 29.0
    b200.pop("measured", None)
    with pytest.raises(InputError, match=r"memory.bandwidth_tbps.*Blackwell family"):
        _build(docs)


def _team_gpu(docs: dict, **changes) -> dict:
    """A new GPU (a copy of the B200's figures) added as a pulled catalog would add it."""
    b200 = next(g for g in docs["gpus.toml"]["gpu"] if g["id"] == "b200-sxm")
    team = copy.deepcopy(b200)
    team.update({"id": "team-x1", "name": "Team X1", "aliases": [], **changes})
    for key in ("mamf", "gemm", "same_die_as"):
        team.pop(key, None)
    docs["gpus.toml"]["gpu"].append(team)
    return team


@pytest.mark.parametrize("arch", ["sm_100", "new"])
def test_a_peak_above_peak_is_refused_in_a_family_of_one(arch: str) -> None:
    """A pulled GPU at 1e5 TFLOPS passed when its family had two or fewer members; now it
    is judged against its architecture's GPUs, and for a new architecture against the
    highest figure any GPU publishes ("116.97x faster" was the audit's result)."""
    docs = _docs()
    team = _team_gpu(docs, family="TeamX")
    if arch == "new":
        new = copy.deepcopy(docs["archs.toml"]["arch"][0])
        new["id"] = "team_arch"
        docs["archs.toml"]["arch"].append(new)
        team["arch"] = "team_arch"
    _build(docs)  # as a B200's figures, it is plausible
    team["peak_tflops"] = {"source": ["x"], "retrieved": team["peak_tflops"]["retrieved"],
                           "bf16": 1e5}
    peers = "sm_100 architecture's" if arch == "sm_100" else "highest any other catalog GPU"
    with pytest.raises(InputError, match=rf"team-x1.*peak_tflops.bf16.*{peers}"):
        _build(docs)


@pytest.mark.parametrize("arch", ["sm_100", "new"])
def test_two_pulled_outliers_cannot_vouch_for_each_other(arch: str) -> None:
    """Two GPUs of one pull, both at 1e5 TFLOPS in one family and architecture, were each
    the other's peer and passed (fuzz_typed: a pulled catalog above peak). A pulled GPU is
    judged against the shipped GPUs' published figures only."""
    docs = _docs()
    twins = [_team_gpu(docs, family="TeamX"), _team_gpu(docs, family="TeamX")]
    twins[1].update(id="team-x2", name="Team X2")
    if arch == "new":
        new = copy.deepcopy(docs["archs.toml"]["arch"][0])
        new["id"] = "team_arch"
        docs["archs.toml"]["arch"].append(new)
    for team in twins:
        team["arch"] = "team_arch" if arch == "new" else team["arch"]
        team["peak_tflops"] = {"source": ["x"], "retrieved": team["peak_tflops"]["retrieved"],
                               "bf16": 1e5}
    labels = {f: f"catalog/{f}" for f in CATALOG_FILES}
    pulled = ["team-x1", "team-x2"]
    with pytest.raises(InputError, match=r"team-x[12].*peak_tflops.bf16"):
        catalog_from_docs(docs, labels, pulled=pulled)


def test_a_shown_only_peak_above_every_published_one_is_refused() -> None:
    """fp32, tf32 and int8 are shown, never projected, so only an upper bound holds them:
    fuzz_typed pulled an A10 copy at 31,200 fp32 TFLOPS (the highest shipped is 229)."""
    docs = _docs()
    team = _team_gpu(docs)
    team["peak_tflops"] = {**team["peak_tflops"], "fp32": 31_200.0}
    with pytest.raises(InputError, match=r"team-x1.*peak_tflops.fp32.*highest any other"):
        catalog_from_docs(docs, {f: f"catalog/{f}" for f in CATALOG_FILES}, pulled=["team-x1"])


def test_every_peak_is_judged_one_way_or_the_other() -> None:
    from advisor.core.model.catalog import FAMILY_FIGURES, SHOWN_ONLY, Peaks

    judged = {f.removeprefix("peak_tflops.") for f, _ in FAMILY_FIGURES} | set(SHOWN_ONLY)
    figures = {n for n, f in Peaks.model_fields.items() if f.annotation == float | None}
    assert figures and figures <= judged


@pytest.mark.parametrize(("changes", "blamed"), [
    ({"id": "h100", "family": "Hopper"},
     r"entry 'h100-sxm', field 'aliases', value 'H100'.*\(h100\)"),
    ({"name": "NVIDIA H100 SXM5 80GB"}, r"entry 'team-x1', field 'name'.*\(h100-sxm\)"),
    ({"id": "h100sxm"}, r"entry 'h100sxm', field 'id'.*\(h100-sxm\)"),
    ({"aliases": ["H100"]}, r"entry 'team-x1', field 'aliases'.*\(h100-sxm\)"),
])
def test_a_pulled_gpu_cannot_take_another_gpus_name(changes: dict, blamed: str) -> None:
    """A pulled id `h100` (h100-sxm's alias) made `--current H100` resolve to it, and a
    duplicate of another GPU's full name was accepted: both are refused, the less
    specific of the two clashing names (an alias before a name before an id) blamed."""
    docs = _docs()
    names = {g["id"]: g["name"] for g in docs["gpus.toml"]["gpu"]}
    if "name" in changes:
        changes = {"name": names["h100-sxm"]}
    _team_gpu(docs, **changes)
    with pytest.raises(InputError, match=rf"{blamed}") as exc:
        _build(docs)
    assert "names another catalog GPU" in exc.value.one_line()


@pytest.mark.parametrize(("field", "value"), [
    ("name", "NVIDIA \u041d100 SXM5 80GB"),  # a Cyrillic capital En for the H
    ("name", "NVIDIA H100 SXM5\u200b 80GB"),  # a zero-width space
    ("aliases", ["\u041d100"]),
    ("aliases", ["\uff28100"]),  # a fullwidth H
])
def test_a_look_alike_name_is_refused(field: str, value: object) -> None:
    """A pulled GPU named with a look-alike letter showed exactly as h100-sxm's name and
    passed the clash check, which compares letters and digits (fuzz_schema, left alone last
    round): a GPU's names are plain ASCII, one line naming the entry and field."""
    docs = _docs()
    _team_gpu(docs, **{field: value})
    with pytest.raises(InputError) as exc:
        _build(docs)
    line = exc.value.one_line()
    assert f"entry 'team-x1', field '{field}" in line and "plain ASCII" in line, line


@pytest.mark.parametrize("alias", ["H200", "h100", "h200-sxm", "NVIDIA H100 SXM5 80GB", "MI300X",
                                   "mi300x"])
def test_an_alias_cannot_name_another_gpu(alias: str) -> None:
    docs = _docs()
    b200 = next(g for g in docs["gpus.toml"]["gpu"] if g["id"] == "b200-sxm")
    names = {g["id"]: g["name"] for g in docs["gpus.toml"]["gpu"]}
    if alias.startswith("NVIDIA H100"):
        alias = names["h100-sxm"]
    b200["aliases"] = [*b200["aliases"], alias]
    with pytest.raises(InputError, match=r"b200-sxm.*aliases.*names another catalog GPU"):
        _build(docs)


@pytest.mark.parametrize(("where", "n"), [("aliases", B.MAX_ALIASES + 1),
                                          ("uncertain", B.MAX_NOTES + 1)])
def test_lists_in_the_catalog_are_capped(where: str, n: int) -> None:
    docs = _docs()
    b200 = next(g for g in docs["gpus.toml"]["gpu"] if g["id"] == "b200-sxm")
    b200[where] = [f"Team entry {i}" for i in range(n)]
    with pytest.raises(InputError, match=rf"{where}.*at most"):
        _build(docs)
    docs = _docs()
    price = docs["prices.toml"]["price"][0]
    price["source"] = [f"https://example.com/{i}" for i in range(B.MAX_CITATIONS + 1)]
    with pytest.raises(InputError, match=r"source.*at most 32"):
        _build(docs)


# --- the result sanity gate ---------------------------------------------------------------

def _decision(**changes):
    from advisor.core.comparison import decide

    return decide(parse_answers({**BASE, **changes}), CATALOG)


def test_real_decisions_pass_the_gate() -> None:
    for path in sorted((ROOT / "examples").glob("*.toml")):
        data = tomllib.loads(path.read_text())
        if "current" in data:
            check_plausible(run(parse_answers(data, str(path), CATALOG), CATALOG).decision)
    check_plausible(_decision())
    check_plausible(_decision(targets=["b200-sxm@64", "t4", "gb300"]))


def test_no_point_is_above_its_gpus_peak() -> None:
    """An MFU above 1 anywhere (the audit: a prefill with a huge vocabulary at MFU 17, the
    LM head counted for every token; an anchor carried to a target at 117%) is refused."""
    d = _decision()
    point = d.targets[0].sweep[0].model_copy(update={"mfu": 1.17})
    hot = d.model_copy(update={"targets": [d.targets[0].model_copy(update={"sweep": [point]})]})
    with pytest.raises(InputError, match=r"b200-sxm at 117% of its peak.*above its peak"):
        check_plausible(hot)
    anchored = hot.model_copy(update={"answers": parse_answers(
        {**BASE, "measured": {"mfu": 0.5}})})
    with pytest.raises(InputError, match=r"check the measured run") as exc:
        check_plausible(anchored)
    assert exc.value.field == "measured"
    at_peak = d.targets[0].sweep[0].model_copy(update={"mfu": 1.0})
    check_plausible(d.model_copy(update={"targets": [
        d.targets[0].model_copy(update={"sweep": [at_peak]})]}))


@pytest.mark.parametrize("vocab", [32_000, 16_000_000])
def test_a_huge_vocabulary_prefill_is_within_peak(vocab: int) -> None:
    """The audit's case end to end: a prefill counted the LM head for every token (MFU 17
    at a 16M vocabulary); it runs on the last token only, so the decision is made, within
    peak, and the vocabulary moves the MFU by what its one row per request costs."""
    model = {"name": "wide", "layers": 2, "hidden": 1024, "heads": 8, "kv_heads": 8,
             "ffn": 2048, "vocab": vocab}
    answers = parse_answers({**BASE, "workload": {"mode": "prefill", "model": model,
                                                  "seq_lens": [4096]}})
    decision = run(answers, CATALOG).decision
    mfus = [p.mfu for side in (decision.current, *decision.targets)
            for p in (*side.sweep, *side.as_run) if p.mfu is not None]
    assert mfus and all(0 < m <= 0.5 for m in mfus), mfus


def _pipeline(**stage) -> dict:
    spec = tomllib.loads((ROOT / "examples" / "configs_pipeline.toml").read_text())["pipeline"]
    spec["stages"][1] = {"name": "drafter", "gpu": "rtx-pro-6000-bw-server", "gpus": 1,
                         **stage}
    return spec


def test_a_pipeline_stage_above_its_gpus_peak_is_refused() -> None:
    from advisor.core import PipelineSpec, run_pipeline
    from advisor.core.formats import load_model

    ok = load_model(PipelineSpec, _pipeline(flops_per_token=6e9, mfu=0.4), "p.toml")
    run_pipeline(ok, CATALOG)
    hot = load_model(PipelineSpec, _pipeline(flops_per_token=6e9, mfu=0.4, peak_tflops=1e5),
                     "p.toml")
    with pytest.raises(InputError, match=r"above rtx-pro-6000-bw-server's highest published"
                                         r" peak") as exc:
        run_pipeline(hot, CATALOG)
    assert exc.value.field == "pipeline.stages.1.peak_tflops"


def test_a_pipeline_that_takes_aeons_is_refused() -> None:
    from advisor.core import PipelineSpec, run_pipeline
    from advisor.core.formats import load_model

    slow = _pipeline(measured_tokens_per_s=1e-9)
    slow["token_budget"] = 1e18
    spec = load_model(PipelineSpec, slow, "p.toml")
    with pytest.raises(InputError, match=r"years on the pipeline as split") as exc:
        run_pipeline(spec, CATALOG)
    assert exc.value.field == "pipeline.token_budget"


def test_a_century_long_job_names_the_token_budget() -> None:
    d = _decision(workload={**BASE["workload"], "token_budget": 1e18, "gpus": 8})
    with pytest.raises(InputError, match=r"years on 8x h200-sxm") as exc:
        check_plausible(d)
    assert exc.value.field == "workload.token_budget" and exc.value.value == 1e18


def test_a_price_in_the_wrong_unit_names_the_quote() -> None:
    with pytest.raises(InputError, match=r"6,400x the price") as exc:
        check_plausible(_decision(prices={"h200-sxm": 0.001, "b200-sxm": 6.4}))
    assert exc.value.field == "prices.b200-sxm"
    with pytest.raises(InputError, match=r"wrong unit") as exc:
        check_plausible(_decision(prices={"h200-sxm": 0.001}))
    assert exc.value.field == "prices.h200-sxm"


def test_a_speedup_no_pair_of_gpus_gives_names_what_drives_it() -> None:
    record = parse_probe_record(F.probe_record("b200-sxm", mamf=1e-5, median=1e-5, attn=1e-5,
                                               d2d=1e-5, h2d=1e-5, busbw=1e-5), "box.json")
    with pytest.raises(InputError, match=r"b200-sxm [\d,]+x slower .*probe record of b200-sxm"):
        run(parse_answers(BASE), CATALOG, {"b200-sxm": record})
    slow = copy.deepcopy(json.loads(json.dumps(F.probe_record("h200-sxm", mamf=1e-5,
                                                              median=1e-5, attn=1e-5,
                                                              d2d=1e-5, h2d=1e-5))))
    with pytest.raises(InputError, match=r"x faster than h200-sxm"):
        run(parse_answers(BASE), CATALOG, {"h200-sxm": parse_probe_record(slow, "box.json")})
