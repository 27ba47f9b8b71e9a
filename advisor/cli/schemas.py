"""The JSON documents advisor prints, each opened by its `schema` name and `version`.

Every `--json` (and `--format json`) output is one JSON object whose first two keys say
what it is, so a script can check what it reads: `{"schema": "advisor.decision-summary",
"version": 1, ...}`. A version goes up when a key is removed or renamed or changes
meaning; a new key does not change it. Keys are snake_case (a map keyed by data, such as
GPU ids or package names, keeps the data's spelling); README's "JSON output" section lists
each document's keys, and a test keeps it equal to what the commands print. A decision
report is its own document (`advisor.decision-report`, the TOML's schema): `report show
--json` prints it, and `report show` reads it back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Schema:
    name: str
    version: int

    def document(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """`data` as this schema's document: `schema` and `version` first, then its keys."""
        own = {"schema": self.name, "version": self.version}
        stated = {k: data[k] for k in own if k in data}
        if stated and stated != own:  # a document that names itself must name this schema
            raise ValueError(f"{stated} is not {own}")
        return {**own, **data}


DECISION_SUMMARY = Schema("advisor.decision-summary", 1)
"""`compare --json`, `decide --json`: the current GPU and each target at the primary length."""
DECISION_REPORT = Schema("advisor.decision-report", 2)
"""`report show --json`: the whole report, as its TOML holds it."""
REPORT_DIFF = Schema("advisor.report-diff", 1)
"""`report diff --json`: what changed between two reports."""
RANKING = Schema("advisor.ranking", 1)
"""`rank --json`, `compare --target all --json`."""
CONFIG_SWEEP = Schema("advisor.config-sweep", 1)
"""`configs sweep --json`."""
PIPELINE = Schema("advisor.pipeline", 1)
"""`configs pipeline --json`."""
CATALOG = Schema("advisor.catalog", 1)
"""`catalog list --json`, `catalog show --json`: the matching GPUs with their default price."""
MODELS = Schema("advisor.models", 1)
"""`models --json`."""
VALIDATION = Schema("advisor.validation", 1)
"""`validate --json`."""
ANCHORED_VALIDATION = Schema("advisor.validation-anchored", 1)
"""`validate --anchored --json`."""
ENV = Schema("advisor.env", 1)
"""`env --json`."""
