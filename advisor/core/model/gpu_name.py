"""A GPU as answers name it: a catalog id (or any name matching one), or `id@N` for N GPUs
of it, wherever a GPU is named: the compared sides, the keys of the per-GPU tables and the
pipeline's stages. The count is checked when the name is read, so `b200-sxm@x` is one
line naming the field it is in, never an error found later by whoever splits it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated

from pydantic import AfterValidator

from advisor.core.model import bounds as B
from advisor.core.numbers import NumberSpec, parse_number

_COUNTED = re.compile(r"^(?P<id>[^@]+)@(?P<n>.*)$")
COUNT_AFTER_AT = NumberSpec("the GPU count after @", integer=True, low=1, high=B.MAX_GPUS,
                            example="b200-sxm@8")


@dataclass(frozen=True)
class GpuSpec:
    """One compared side: a catalog GPU and, when it differs from the workload's, its count."""

    gpu: str
    count: int | None

    @property
    def label(self) -> str:
        return f"{self.gpu}@{self.count}" if self.count else self.gpu


def split_count(text: str) -> tuple[str, int | None]:
    """'b200-sxm@64' -> ('b200-sxm', 64); a plain id has no count of its own. The count is
    read by the number grammar and is at least 1 (`@0` names no GPUs): ValueError if not."""
    m = _COUNTED.match(text.strip())
    if m is None:
        return text.strip(), None
    return m["id"].strip(), int(parse_number(m["n"], COUNT_AFTER_AT))


def _counted(text: str) -> str:
    split_count(text)  # a count after @ is a whole number of GPUs, at least 1
    return text


GpuName = Annotated[str, AfterValidator(_counted)]
"""A catalog id, or `id@N` for N GPUs of it."""
