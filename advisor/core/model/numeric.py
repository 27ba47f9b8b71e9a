"""Numeric field types of the input models: a number written as text in an answers file
(`seq_lens = ["8k"]`, `token_budget = "300B"`, `gpus = "1k"`) is read by the one grammar
(`advisor.core.numbers`), so a file accepts what the wizard and the flags accept.

Each type only reads text; the range stays on the field (`Field(ge=..., le=...)` with the
values of `bounds`), checked after the text is read, exactly as for a number.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator

from advisor.core.numbers import AMOUNT, PLAIN, TOKENS, WHOLE, number_reader

Whole = Annotated[int, BeforeValidator(number_reader(WHOLE))]
TokenLength = Annotated[int, BeforeValidator(number_reader(TOKENS))]
Amount = Annotated[float, BeforeValidator(number_reader(AMOUNT))]
Plain = Annotated[float, BeforeValidator(number_reader(PLAIN))]
