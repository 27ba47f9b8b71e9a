"""Input fields take their own type, never a coerced one.

pydantic's lax mode reads `gpus = true` as one GPU, a pulled `"usd_per_hour": true` as
$1.00/h, `"700"` as a number and `1` as true: each a typo or a hostile file silently
turned into a decision. Every model of what advisor reads (answers, the catalog, pulled
sheets, probe records, caches) is strict: a number is a number (text only where the one
grammar reads it, `advisor.core.numbers`), a flag is true or false, text is text. Dates
and times are the one exception: JSON has no date type, so they are read from ISO text.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Strict


def _dated(value: object) -> object:
    """A date as TOML writes it, or ISO text as JSON must; not a number (lax mode would
    read 20260115 as seconds since 1970)."""
    if not isinstance(value, date | str):
        raise ValueError("expected a date (YYYY-MM-DD)")
    return value


Day = Annotated[date, BeforeValidator(_dated), Strict(False)]
"""A date: a TOML date, or ISO text (`2026-01-15`) from JSON."""
Moment = Annotated[datetime, BeforeValidator(_dated), Strict(False)]
"""A date and time: a TOML datetime, or ISO text from JSON."""


class StrictInput(BaseModel):
    """What advisor reads: validated strictly (see the module docstring)."""

    model_config = ConfigDict(strict=True)
