"""`advisor compare --model tests/data/<model>/config.json` for every family advisor reads:
the comparison runs, and the model it projects has its card's parameter count (within 2%).

The configs in tests/data are written for these tests from each model's published
dimensions (with the keys that make each recognisable as its family's, as the hub's
config.json spells them); model_cards.STATED says where each count is stated."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from advisor.core import ModelSpec

from ..unit.model_cards import STATED

DATA = Path(__file__).parents[1] / "data"
FAMILIES = {
    "llama-2-7b": "Llama 2", "llama-3.1-8b": "Llama 3", "llama-4-maverick": "Llama 4",
    "qwen2.5-7b": "Qwen2/2.5", "qwen3-8b": "Qwen3", "qwen3-30b-a3b": "Qwen3-MoE",
    "mixtral-8x7b": "Mixtral", "deepseek-r1": "DeepSeek-V3/R1", "kimi-k2": "Kimi-K2",
    "glm-4.5": "GLM-4.5", "gpt-oss-120b": "GPT-OSS", "gemma-3-27b": "Gemma 3",
}


def test_every_config_in_tests_data_has_a_family_test() -> None:
    assert {p.parent.name for p in DATA.glob("*/config.json")} == set(FAMILIES)


@pytest.mark.parametrize("name", list(FAMILIES))
def test_compare_reads_the_familys_config(advisor_cli, name: str) -> None:
    config = DATA / name / "config.json"
    r = advisor_cli("compare", "--current", "h100-sxm", "--target", "b200-sxm", "--model",
                    str(config), "--seq-len", "4096", "--gpus", "64", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    model = ModelSpec.model_validate(out["workload"]["model"])
    assert model.name == name and model.source.startswith(str(config))
    stated, where = STATED[name]
    assert model.params_total == pytest.approx(stated, rel=0.02), (
        f"{model.params_total / 1e9:.3f}B against {where}")
    assert out["targets"][0]["verdict"] is not None


def test_an_unknown_family_is_one_line_naming_the_file_and_its_model_type(
        advisor_cli, tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"architectures": ["MambaForCausalLM"],
                                  "model_type": "mamba", "hidden_size": 768}))
    r = advisor_cli("compare", "--current", "h100-sxm", "--target", "b200-sxm", "--model",
                    str(config), "--seq-len", "4096")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert str(config) in r.stderr and "'model_type', value 'mamba'" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_hub_id_without_huggingface_hub_says_how_to_pass_the_file(advisor_cli) -> None:
    """The test environment has no huggingface_hub (the [hub] extra); offline is the same
    line with the hub's error (tests/unit/test_model_config_io.py)."""
    if importlib.util.find_spec("huggingface_hub") is not None:
        pytest.skip("huggingface_hub is installed here")
    r = advisor_cli("compare", "--current", "h100-sxm", "--target", "b200-sxm", "--model",
                    "openai/gpt-oss-120b", "--seq-len", "4096")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "huggingface_hub" in r.stderr and "--model PATH/config.json" in r.stderr


REPRO = ("compare", "--current", "h200-sxm", "--target", "b200-sxm", "--params", "400e9",
         "--layers", "48", "--hidden", "5120", "--experts", "128", "--active-experts", "1",
         "--seq-len", "4096", "--gpus", "64")


def test_the_issues_custom_moe_says_its_shape_was_given_and_disagrees(advisor_cli) -> None:
    """Issue 28's reproduction: the shape given (not "inferred"), and the count it gives
    said to be far from the 400B stated, with which one is used."""
    r = advisor_cli(*REPRO, "--ffn", "8192")
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert "Model shape: layers, hidden, ffn as given" in text
    assert "off the 400B you gave: the dimensions are used, not the count" in text


def test_the_moe_flags_give_llama4_maverick(advisor_cli) -> None:
    """With --moe-ffn, --moe-every and --shared-experts the same flags say Maverick's shape,
    which its card's 400B confirms: nothing to note."""
    r = advisor_cli(*REPRO, "--heads", "40", "--kv-heads", "8", "--vocab", "202048", "--ffn",
                    "16384", "--moe-ffn", "8192", "--moe-every", "2", "--shared-experts", "1",
                    "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    model = ModelSpec.model_validate(out["workload"]["model"])
    assert (model.moe_every, model.moe_ffn, model.shared_experts) == (2, 8192, 1)
    assert model.source == "the shape given (the parameter count only checks it)"
    assert model.params_total == pytest.approx(STATED["llama-4-maverick"][0], rel=0.02)
    assert not any("you gave" in n for n in out["notes"])


def test_model_flags_do_not_go_with_a_config(advisor_cli) -> None:
    r = advisor_cli("compare", "--current", "h100-sxm", "--target", "b200-sxm", "--model",
                    str(DATA / "qwen3-8b"), "--layers", "4", "--seq-len", "4096")
    assert r.returncode == 2 and "not with --model" in r.stderr


@pytest.mark.parametrize(("flag", "value"), [("--layers", "0"), ("--vocab", "16777217"),
                                             ("--heads", "0")])
def test_a_custom_dimension_out_of_bounds_names_its_flag(advisor_cli, flag, value) -> None:
    """A dimension given as 0 is refused, not inferred (the summary said 'layers as given'),
    and a bound a dimension breaks is blamed on its flag (fuzz_typed found '--vocab' named
    'field vocab')."""
    r = advisor_cli("compare", "--current", "mi300x", "--target", "l4", "--seq-len", "8k",
                    "--params", "8B", flag, value)
    assert r.returncode == 2, r.stdout[-300:]
    assert r.stderr.count("\n") == 1 and f"field '{flag}'" in r.stderr, r.stderr


def test_a_config_whose_dense_layers_exceed_its_depth_is_refused_by_its_key(
        tmp_path: Path) -> None:
    """GLM-4.5 with `first_k_dense_replace` past its 92 layers was read as -2,908 MoE
    layers: negative step times, a band of 0..inf and a math domain error (fuzz_typed,
    twice). No layer would hold the experts, so the config is refused by the key to fix."""
    from .conftest import run_advisor

    glm = json.loads((Path(__file__).parents[1] / "data" / "glm-4.5" / "config.json"
                      ).read_text(encoding="utf-8"))
    glm["first_k_dense_replace"] = 3000
    (tmp_path / "config.json").write_text(json.dumps(glm), encoding="utf-8")
    r = run_advisor("compare", "--current", "h100-sxm", "--target", "mi300x", "--model",
                    str(tmp_path / "config.json"), "--seq-len", "8k")
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert "field 'first_k_dense_replace', value 3000: must be a whole number, 0 to 91" \
        in r.stderr


def test_custom_dense_layers_past_the_depth_name_their_flag(advisor_cli) -> None:
    """`--dense-layers` at or past `--layers` leaves no layer for the experts."""
    r = advisor_cli("compare", "--current", "h100-sxm", "--target", "mi300x", "--seq-len",
                    "8k", "--params", "100B", "--layers", "10", "--experts", "8",
                    "--active-experts", "2", "--moe-ffn", "1024", "--dense-layers", "10")
    assert r.returncode == 2, r.stdout[-300:]
    assert r.stderr.count("\n") == 1, r.stderr
    assert "field '--dense-layers', value 10: leaves no MoE layer in 10" in r.stderr
