"""The user's documents from disk: answers files, decision reports and probe records.

Each is read as bytes (capped), decoded and parsed by the pure loaders in core, so a bad
file becomes one InputError line naming it.
"""

from __future__ import annotations

from pathlib import Path

from advisor.core.formats import decode_text, parse_json
from advisor.core.model.answers import Answers, check_against_catalog
from advisor.core.model.bounds import MAX_JSON_BYTES
from advisor.core.model.catalog import Catalog
from advisor.core.model.probe_record import ProbeRecord, parse_probe_record
from advisor.core.report.answers_toml import parse_answers_toml
from advisor.core.report.document import Report, parse_report
from advisor.io.files import read_bytes, read_text


def load_answers(path: str | Path, catalog: Catalog | None = None) -> Answers:
    """An answers file; with a catalog, every GPU it names and every power limit is checked
    against it too, and a price may be a ratio to the current GPU's default price."""
    answers = parse_answers_toml(read_text(path), str(path), catalog)
    if catalog is not None:
        check_against_catalog(answers, catalog, str(path))
    return answers


def load_report(path: str | Path) -> Report:
    return parse_report(read_text(path), str(path))


def probe_record_from_bytes(data: bytes, file: str) -> ProbeRecord:
    """The one probe-record loader: `probe import` validates with it exactly what every
    later reader of the store will read with it."""
    return parse_probe_record(parse_json(decode_text(data, file), file), file)


def load_probe_record(path: str | Path) -> ProbeRecord:
    """Read and validate a probe record written by `python -m probes run`."""
    return probe_record_from_bytes(read_bytes(path, MAX_JSON_BYTES), str(path))
