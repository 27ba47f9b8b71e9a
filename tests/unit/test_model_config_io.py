"""Where a model config comes from: a file or its folder, an answers file's `model = {
config = ... }` (relative to the answers file), or the hub through huggingface_hub, which is
replaced here by a stand-in module (no test touches the network)."""

from __future__ import annotations

import json
import shutil
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from advisor.core.errors import InputError
from advisor.core.model.presets import PRESETS
from advisor.core.report.answers_toml import parse_answers_toml
from advisor.io.documents import load_answers
from advisor.io.model_config import read_config, read_model

DATA = Path(__file__).parents[1] / "data"
GPT_OSS = DATA / "gpt-oss-120b" / "config.json"


def test_a_preset_name_is_left_to_core() -> None:
    assert read_model("llama-3.1-8b") == "llama-3.1-8b"
    assert read_model("Llama-3.1-8B") == "Llama-3.1-8B"


def test_a_file_or_its_folder_reads_the_config_named_after_the_folder() -> None:
    by_file, by_folder = read_model(str(GPT_OSS)), read_model(str(GPT_OSS.parent))
    assert not isinstance(by_file, str) and by_file == by_folder
    assert by_file.name == "gpt-oss-120b"
    assert by_file.params_total == PRESETS["gpt-oss-120b"].params_total


def test_a_named_json_file_is_named_after_its_stem(tmp_path: Path) -> None:
    shutil.copy(GPT_OSS, tmp_path / "my-oss.json")
    spec = read_model("my-oss.json", tmp_path)
    assert not isinstance(spec, str) and spec.name == "my-oss"


@pytest.mark.parametrize(("text", "message"), [
    ("{", "not valid JSON"), ("[1]", "not a Hugging Face model config"),
])
def test_a_bad_file_is_one_line_naming_it(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "config.json").write_text(text)
    with pytest.raises(InputError, match=message) as err:
        read_model(str(tmp_path / "config.json"))
    assert str(tmp_path / "config.json") in err.value.one_line()


def test_a_missing_json_file_is_not_taken_for_a_preset(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        read_model(str(tmp_path / "nope.json"))


# --- the hub -------------------------------------------------------------------------------


def hub(monkeypatch: pytest.MonkeyPatch, download: Any) -> list[tuple[str, str]]:
    """A stand-in huggingface_hub whose hf_hub_download is `download`; returns its calls."""
    calls: list[tuple[str, str]] = []

    def hf_hub_download(repo_id: str, filename: str) -> str:
        calls.append((repo_id, filename))
        return str(download(repo_id, filename))

    module = types.ModuleType("huggingface_hub")
    module.hf_hub_download = hf_hub_download  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "huggingface_hub", module)
    return calls


def test_a_hub_id_fetches_its_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls = hub(monkeypatch, lambda repo, name: GPT_OSS)
    spec = read_model("openai/gpt-oss-120b", tmp_path)
    assert calls == [("openai/gpt-oss-120b", "config.json")]
    assert not isinstance(spec, str) and spec.name == "openai/gpt-oss-120b"
    assert spec.source.startswith(
        "https://huggingface.co/openai/gpt-oss-120b/blob/main/config.json (gpt_oss")


def test_offline_says_how_to_pass_the_file(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    class OfflineModeIsEnabled(ConnectionError):
        pass

    def offline(repo: str, name: str) -> Path:
        raise OfflineModeIsEnabled("offline")

    hub(monkeypatch, offline)
    with pytest.raises(InputError) as err:
        read_model("openai/gpt-oss-120b", tmp_path)
    line = err.value.one_line()
    assert "OfflineModeIsEnabled" in line and "--model PATH/config.json" in line
    assert "value 'openai/gpt-oss-120b'" in line and "\n" not in line


def test_without_the_package_it_says_how_to_pass_the_file(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import fails
    with pytest.raises(InputError, match=r"huggingface_hub package .*--model PATH/config.json"):
        read_model("openai/gpt-oss-120b", tmp_path)


def test_a_local_folder_wins_over_a_hub_id_of_the_same_spelling(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls = hub(monkeypatch, lambda repo, name: GPT_OSS)
    (tmp_path / "openai" / "gpt-oss-120b").mkdir(parents=True)
    shutil.copy(GPT_OSS, tmp_path / "openai" / "gpt-oss-120b" / "config.json")
    spec = read_model("openai/gpt-oss-120b", tmp_path)
    assert calls == [] and not isinstance(spec, str)


# --- answers files -----------------------------------------------------------------------

ANSWERS = """current = "h100-sxm"
targets = ["b200-sxm"]

[workload]
seq_lens = [4096]
model = {model}
"""


def test_an_answers_files_config_is_read_relative_to_it(tmp_path: Path) -> None:
    (tmp_path / "models" / "oss").mkdir(parents=True)
    shutil.copy(GPT_OSS, tmp_path / "models" / "oss" / "config.json")
    answers = tmp_path / "answers.toml"
    answers.write_text(ANSWERS.format(model='{ config = "models/oss/config.json" }'))
    model = load_answers(answers).workload.model
    assert model.name == "oss" and model.params_total == PRESETS["gpt-oss-120b"].params_total
    answers.write_text(ANSWERS.format(model='{ config = "models/oss" }'))  # its folder
    assert load_answers(answers).workload.model == model


@pytest.mark.parametrize(("model", "message"), [
    ('{ config = "nope.json" }', "nope.json: cannot read"),
    ('{ config = "c.json", layers = 2 }', "names a Hugging Face config and nothing else"),
    ("{ config = 3 }", "names a Hugging Face config and nothing else"),
])
def test_a_bad_config_in_answers_is_one_line(tmp_path: Path, model: str, message: str) -> None:
    answers = tmp_path / "answers.toml"
    answers.write_text(ANSWERS.format(model=model))
    with pytest.raises(InputError, match=message) as err:
        load_answers(answers)
    assert "\n" not in err.value.one_line()


def test_answers_parsed_without_a_reader_say_where_a_config_is_read() -> None:
    with pytest.raises(InputError, match="read from an answers file"):
        parse_answers_toml(ANSWERS.format(model='{ config = "c.json" }'), "a.toml")


def test_a_config_read_once_saves_as_its_dimensions(tmp_path: Path) -> None:
    """The answers the wizard or `decide` writes back hold the shape (and its source), so
    they re-run without the config file."""
    from advisor.core.report.answers_toml import answers_to_toml

    shutil.copy(GPT_OSS, tmp_path / "config.json")
    answers = tmp_path / "answers.toml"
    answers.write_text(ANSWERS.format(model='{ config = "config.json" }'))
    loaded = load_answers(answers)
    (tmp_path / "config.json").unlink()
    again = parse_answers_toml(answers_to_toml(loaded), "again.toml")
    assert again.workload.model == loaded.workload.model
    assert json.dumps(again.workload.model.model_dump())  # plain data


def test_read_config_takes_a_hub_id_too(monkeypatch: pytest.MonkeyPatch,
                                        tmp_path: Path) -> None:
    hub(monkeypatch, lambda repo, name: GPT_OSS)
    assert read_config("openai/gpt-oss-120b", tmp_path).name == "openai/gpt-oss-120b"
