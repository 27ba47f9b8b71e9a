"""Answers whose text reaches every terminal: tables, reports and the wizard show it as given."""

from __future__ import annotations

from typing import Any

from pydantic import field_validator

from advisor.core.model.strict import StrictInput
from advisor.core.text import refuse_control


class PrintableModel(StrictInput):
    """A control character in any field is refused at load, so it is never printed."""

    @field_validator("*", mode="after")
    @classmethod
    def _printable(cls, v: Any) -> Any:
        refuse_control(v, "answers")
        return v
