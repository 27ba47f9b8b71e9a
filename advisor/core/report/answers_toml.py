"""answers.toml: the inputs of a headless run, read with one-line errors and written back.

Only what the user set is written: a default left out stays a default on the way back
(the decision reports an unquoted electricity price as "default", and that must survive
a save and reload). See examples/answers.toml for every field with comments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from advisor.core.formats import load_model, model_data, parse_toml, toml_document
from advisor.core.model.answers import Answers

if TYPE_CHECKING:
    from collections.abc import Callable

    from advisor.core.model.catalog import Catalog
    from advisor.core.model.transformer import ModelSpec

ANSWERS_HEADER = (
    "advisor answers: the inputs `advisor decide` reads to write a decision report.",
    "Catalog ids are those of `advisor catalog list`; anything left out uses its default.",
)
FIELD_COMMENTS = {
    "current": "the GPU the workload runs on now",
    "targets": "the GPUs to compare against",
    "electricity_usd_per_kwh": "$/kWh (default 0.12)",
    "power_cap_kw": "rack power budget, kW",
    "time_premium": "extra $/token still worth paying to finish sooner (0.10 = 10%)",
    "workload": "the model and how it is run; `model` is a preset name, a table of dimensions "
                "or { config = \"PATH/config.json\" } (a Hugging Face config)",
    "prices": "your quoted $/GPU-hour by catalog id; the others use catalog defaults",
    "stack": "the software the workload needs, for the software gate",
    "stacks": "a GPU's own stack, the one it would run (PyTorch/XLA on a TPU): its gate reads it",
}


def parse_answers_toml(text: str, file: str, catalog: Catalog | None = None,
                       read_config: Callable[[str], ModelSpec] | None = None) -> Answers:
    """answers.toml text to Answers, or one InputError line naming file, field and value.
    With the catalog, a target's price may be a ratio to the current GPU's default price;
    with `read_config`, `model = { config = "..." }` reads that Hugging Face config."""
    data = parse_toml(text, file)
    return load_model(Answers, data, file, context={"catalog": catalog, "read_config": read_config})


def answers_data(answers: Answers) -> dict[str, Any]:
    """TOML-ready data of the fields the user set; defaults are left out to stay defaults."""
    data = model_data(answers)
    return {k: data[k] for k in Answers.model_fields if k in answers.model_fields_set and k in data}


def answers_to_toml(answers: Answers) -> str:
    """Commented TOML that `parse_answers_toml` reads back equal, defaults still unset."""
    sections = [(k, v, FIELD_COMMENTS.get(k, "")) for k, v in answers_data(answers).items()]
    return toml_document(ANSWERS_HEADER, sections)
