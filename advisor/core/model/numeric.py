"""Numeric field types of the input models: a number written as text in an answers file
(`seq_lens = ["8k"]`, `token_budget = "300B"`, `gpus = "1k"`) is read by the one grammar
(`advisor.core.numbers`), so a file accepts what the wizard and the flags accept.

Each type only reads text; the range stays on the field (`Field(ge=..., le=...)` with the
values of `bounds`), checked after the text is read, exactly as for a number.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator

from advisor.core.numbers import NumberSpec, number_reader

WHOLE = NumberSpec("a whole number", integer=True, example="8 or 1k")
TOKENS = NumberSpec("a token length", integer=True, binary_k=True, example="4096 or 4k")
AMOUNT = NumberSpec("a number", example="300B or 1.5e12")
PLAIN = NumberSpec("a number", suffixes=False, example="0.12")

Whole = Annotated[int, BeforeValidator(number_reader(WHOLE))]
"""A count (GPUs, nodes, batch, degrees, dimensions): `1k` is 1,000."""
TokenLength = Annotated[int, BeforeValidator(number_reader(TOKENS))]
"""A sequence or document length in tokens: `8k` is 8,192."""
Amount = Annotated[float, BeforeValidator(number_reader(AMOUNT))]
"""A large quantity (tokens, FLOPs, rates): `300B` is 3e11."""
Plain = Annotated[float, BeforeValidator(number_reader(PLAIN))]
"""A measured figure with a unit of its own (watts, $/kWh, kW, ms, Gbit/s): no suffix."""
