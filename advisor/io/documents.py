"""The user's documents from disk: answers files, decision reports and probe records.

Each is read as bytes (capped), decoded and parsed by the pure loaders in core, so a bad
file becomes one InputError line naming it. `-` names standard input, capped alike, so
`advisor decide --answers -` and `advisor report show -` work in a pipe.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from advisor.core.errors import InputError
from advisor.core.formats import decode_text, parse_json, parse_toml
from advisor.core.model.answers import Answers, check_against_catalog
from advisor.core.model.bounds import MAX_JSON_BYTES, MAX_TOML_BYTES
from advisor.core.model.catalog import Catalog
from advisor.core.model.probe_record import ProbeRecord, parse_probe_record
from advisor.core.report.answers_toml import parse_answers_toml
from advisor.core.report.document import SCHEMA, Report, parse_report
from advisor.io.files import read_bytes

STDIN = "-"


def read_document(path: str | Path, limit: int = MAX_TOML_BYTES) -> bytes:
    """A file's bytes, or standard input's for `-`; either capped at `limit`."""
    if str(path) != STDIN:
        return read_bytes(path, limit)
    data = sys.stdin.buffer.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"more than {limit:,} bytes, the cap on what advisor reads",
                         file="standard input")
    return data


def display_name(path: str | Path) -> str:
    """How errors name a document: its path, or "standard input" for `-`."""
    return "standard input" if str(path) == STDIN else str(path)


def read_input(path: str | Path, limit: int = MAX_TOML_BYTES) -> tuple[str, str]:
    """A text document (a file, or stdin for `-`) and the name errors use for it."""
    file = display_name(path)
    return decode_text(read_document(path, limit), file), file


def load_answers(path: str | Path, catalog: Catalog | None = None) -> Answers:
    """An answers file; with a catalog, every GPU it names and every power limit is checked
    against it too, and a price may be a ratio to the current GPU's default price. A decision
    report given instead is named as such, not as a list of wrong fields."""
    from advisor.io.model_config import read_config

    text, file = read_input(path)
    folder = None if str(path) == STDIN else Path(path).parent
    try:
        answers = parse_answers_toml(text, file, catalog,
                                     lambda ref: read_config(ref, folder))
    except InputError:
        if _is_report(text, file):
            raise InputError("this is a decision report, not an answers file: "
                             "`advisor report show` reads it, and its [answers] table holds "
                             "the answers it was decided on", file=file) from None
        raise
    if catalog is not None:
        check_against_catalog(answers, catalog, file)
    return answers


def _is_report(text: str, file: str) -> bool:
    with contextlib.suppress(InputError):
        return parse_toml(text, file).get("schema") == SCHEMA
    return False


def load_report(path: str | Path) -> Report:
    text, file = read_input(path)
    return parse_report(text, file)


def probe_record_from_bytes(data: bytes, file: str) -> ProbeRecord:
    """The one probe-record loader: `probe import` validates with it exactly what every
    later reader of the store will read with it. The record knows the file it came from,
    so an implausible result it drives is blamed on that file."""
    return parse_probe_record(parse_json(decode_text(data, file), file), file).read_from(file)


def load_probe_record(path: str | Path) -> ProbeRecord:
    """Read and validate a probe record written by `python -m probes run` (`-`: stdin)."""
    return probe_record_from_bytes(read_document(path, MAX_JSON_BYTES), display_name(path))
