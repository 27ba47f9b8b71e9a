"""The published cases `advisor validate` ships, read from the package's own data."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from advisor.core.errors import InputError
from advisor.core.validation import CaseSpec
from advisor.io.documents import load_answers

CASES_DIR = Path(str(resources.files("advisor") / "published_cases"))


def left_out(directory: Path = CASES_DIR) -> list[tuple[str, str]]:
    """(id, reason) of each published case kept out of the score, as the case files list
    them, so `validate` can say how many and why rather than drop them silently."""
    out: list[tuple[str, str]] = []
    for path in sorted(directory.glob("*.toml")) if directory.is_dir() else []:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
        for entry in doc.get("left_out", []):
            if not isinstance(entry, dict) or not isinstance(entry.get("id"), str) \
                    or not isinstance(entry.get("reason"), str):
                raise InputError("a [[left_out]] entry needs an id and a reason", file=str(path),
                                 field="left_out", value=entry)
            out.append((entry["id"], entry["reason"]))
    return out


def load_cases(directory: Path = CASES_DIR) -> list[CaseSpec]:
    """Every [[case]] in the directory's TOML files, with its named workload resolved."""
    files = sorted(directory.glob("*.toml")) if directory.is_dir() else []
    cases: list[CaseSpec] = []
    for path in files:
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"not valid TOML ({exc})", file=str(path)) from None
        workloads = doc.get("workloads", {})
        for raw in doc.get("case", []):
            entry = dict(raw)
            name = entry.get("workload")
            if isinstance(name, str):
                if name not in workloads:
                    raise InputError("unknown workload", file=str(path), entry=entry.get("id"),
                                     field="workload", value=name)
                entry["workload"] = workloads[name]
            if isinstance(entry.get("answers"), str):  # an answers file beside the cases
                entry["answers"] = load_answers(directory / entry["answers"])
            try:
                cases.append(CaseSpec.model_validate({**entry, "file": path.name}))
            except ValidationError as exc:
                err = exc.errors()[0]
                raise InputError(err["msg"], file=str(path), entry=entry.get("id"),
                                 field=".".join(str(p) for p in err["loc"])) from None
    if not cases:
        raise InputError("no published cases found; pass the folder of case files",
                         file=str(directory))
    return cases
