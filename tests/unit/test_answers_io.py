"""answers.toml: the shipped example loads, answers round-trip exactly, bad input is one line."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from advisor.core.errors import InputError
from advisor.core.model.answers import Answers
from advisor.core.report.answers_toml import answers_to_toml, parse_answers_toml
from advisor.io.documents import load_answers

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "answers.toml"


def test_the_example_loads() -> None:
    a = load_answers(EXAMPLE)
    assert (a.current, a.targets) == ("h200-sxm", ["b200-sxm"])
    assert a.workload.model.name == "llama-3.1-8b" and a.workload.seq_lens[0] == 4096
    assert a.prices == {"h200-sxm": 3.5} and not a.electricity_is_default
    assert a.stack is not None and a.stack.torch_build == "cu128"


def _same(a: Answers, b: Answers) -> None:
    assert a == b
    assert a.model_fields_set == b.model_fields_set  # defaults stay defaults
    assert a.electricity_is_default == b.electricity_is_default


def test_example_round_trip_is_exact_and_commented() -> None:
    a = load_answers(EXAMPLE)
    text = answers_to_toml(a)
    assert "# the GPUs to compare against" in text
    _same(a, parse_answers_toml(text, "again.toml"))
    assert answers_to_toml(parse_answers_toml(text, "again.toml")) == text


def test_an_unset_default_stays_unset() -> None:
    a = parse_answers_toml(EXAMPLE.read_text().replace("electricity_usd_per_kwh = 0.11", ""),
                           "a.toml")
    assert a.electricity_is_default
    text = answers_to_toml(a)
    assert "electricity_usd_per_kwh" not in text
    assert parse_answers_toml(text, "b.toml").electricity_is_default


finite = st.floats(allow_nan=False, allow_infinity=False)
names = st.text(max_size=30)  # any text: quotes, backslashes, control characters, emoji


@st.composite
def answers(draw: st.DrawFn) -> Answers:
    gpus = ["h100-sxm", "h200-sxm", "b200-sxm", "mi300x", "l4", "a100-sxm"]
    current = draw(st.sampled_from(gpus))
    mode = draw(st.sampled_from(["pretrain", "finetune", "lora", "prefill", "decode"]))
    training = mode in ("pretrain", "finetune", "lora")
    model: Any = draw(st.one_of(
        st.sampled_from(["llama-3.1-8b", "qwen3-32b", "mixtral-8x7b", "deepseek-v3"]),
        st.builds(lambda n, layers: {"name": n, "layers": layers, "hidden": 1024, "heads": 8,
                                     "kv_heads": 2, "ffn": 4096, "vocab": 32000},
                  names, st.integers(1, 96)),
    ))
    tp = draw(st.sampled_from([1, 2, 4, 8]))
    workload: dict[str, Any] = {
        "mode": mode, "model": model, "tp": tp, "gpus": 8 * draw(st.integers(1, 4)),
        "seq_lens": draw(st.lists(st.integers(1, 1 << 20), min_size=1, max_size=4, unique=True)),
        "precision": draw(st.sampled_from(["bf16", "fp16", "fp8", "fp4", "nvfp4"])),
    }
    if training:
        workload["zero_stage"] = draw(st.integers(0, 3))
        workload["checkpointing"] = draw(st.booleans())
    if draw(st.booleans()):
        workload["token_budget"] = draw(st.floats(1.0, 1e15))
    data: dict[str, Any] = {
        "current": current,
        "targets": draw(st.lists(st.sampled_from(gpus), min_size=1, max_size=3, unique=True)),
        "workload": workload,
        "prices": draw(st.dictionaries(st.sampled_from(gpus), st.floats(0.01, 100.0),
                                       max_size=3)),
    }
    for key, strategy in [("electricity_usd_per_kwh", st.floats(0, 5)),
                          ("power_cap_kw", st.floats(0.1, 1e4)),
                          ("time_premium", st.floats(0, 10))]:
        if draw(st.booleans()):
            data[key] = draw(strategy)
    if draw(st.booleans()):
        data["stack"] = {"source": "declared",
                         "packages": {"torch": draw(st.sampled_from(["2.7.1+cu128", "2.4.0"])),
                                      "flash-attn": "2.7.4"}}
    try:
        return Answers.model_validate(data)
    except ValidationError:
        assume(False)
        raise


@settings(max_examples=150, deadline=None)
@given(a=answers())
def test_answers_round_trip(a: Answers) -> None:
    text = answers_to_toml(a)
    tomllib.loads(text)  # stdlib-readable
    _same(a, parse_answers_toml(text, "answers.toml"))


@pytest.mark.parametrize(("edit", "needles"), [
    (("[workload]", "[workload"), ["line 23", "not valid TOML"]),
    (("gpus = 8", "gpus = 8\ncolour = 'red'"), ["workload.colour", "Extra inputs"]),
    (("gpus = 8", "gpus = -8"), ["workload.gpus", "-8"]),
    (("h200-sxm = 3.50", "h200-sxm = -1"), ["prices.h200-sxm", "-1",
                                             "greater than or equal to 0.001"]),
    (("h200-sxm = 3.50", "h200-sxm = inf"), ["prices.h200-sxm", "must be a finite number"]),
    (("gpus = 8", "gpus = 1000000000000000000000000000000"), ["workload.gpus",
                                                             "less than or equal to 262144"]),
    (('model = "llama-3.1-8b"', 'model = "llama-9"'), ["workload.model", "unknown model preset",
                                                       "'llama-9'"]),
    (('seq_lens = [4096, 8192, 16384]', 'seq_lens = ["x"]'), ["workload.seq_lens.0", "'x'"]),
])
def test_bad_answers_name_the_place(edit: tuple[str, str], needles: list[str]) -> None:
    text = EXAMPLE.read_text()
    assert edit[0] in text
    with pytest.raises(InputError) as exc:
        parse_answers_toml(text.replace(edit[0], edit[1], 1), "answers.toml")
    line = exc.value.one_line()
    assert line.startswith("answers.toml") and "\n" not in line
    for needle in needles:
        assert needle in line, (needle, line)


def test_a_file_that_is_not_toml_is_not_quoted() -> None:
    secret = "root:$6$s3cr3t-hash:19000:0:99999:7:::"
    with pytest.raises(InputError) as exc:
        parse_answers_toml(f"{secret}\n", "/etc/shadow")
    line = exc.value.one_line()
    assert line.startswith("/etc/shadow: not valid TOML") and "line 1" in line
    assert "s3cr3t" not in line and "root" not in line


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        load_answers(tmp_path / "nope.toml")


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_garbage_answers_give_one_line(data: st.DataObject) -> None:
    base = EXAMPLE.read_text()
    text = data.draw(st.one_of(
        st.text(max_size=200),
        # near misses: the example with a slice replaced by random text
        st.tuples(st.integers(0, len(base)), st.integers(0, 40), st.text(max_size=10)).map(
            lambda t: base[: t[0]] + t[2] + base[t[0] + t[1]:]),
    ))
    try:
        parse_answers_toml(text, "answers.toml")
    except InputError as exc:
        assert exc.one_line().startswith("answers.toml") and "\n" not in exc.one_line()
