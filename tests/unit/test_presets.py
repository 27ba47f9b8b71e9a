"""Every preset's parameter count, computed from its shape, against the count its model card
(or paper) states (model_cards.STATED, which says what each covers): within 2%."""

from __future__ import annotations

import pytest

from advisor.core.model.presets import PRESETS

from .model_cards import STATED


def test_every_preset_has_a_stated_count() -> None:
    assert set(STATED) == set(PRESETS)


@pytest.mark.parametrize("name", list(PRESETS))
def test_the_shape_gives_the_cards_count(name: str) -> None:
    stated, where = STATED[name]
    got = PRESETS[name].params_total
    assert got == pytest.approx(stated, rel=0.02), f"{got / 1e9:.3f}B against {where}"


@pytest.mark.parametrize("name", list(PRESETS))
def test_each_preset_names_its_config(name: str) -> None:
    source = PRESETS[name].source
    assert (source.startswith("https://huggingface.co/") and source.endswith(
        "/blob/main/config.json")) or name == "gpt-3-175b"
