"""The effective catalog: the shipped TOML with any pulled team catalog and price sheet on top.

Pulled data is stored as an overlay (the entries as pulled), not as merged copies of the
shipped files, so upgrading advisor still brings new shipped GPUs and corrections while
the team's entries keep winning. Merging is entry by entry, by key:

    [[gpu]], [[arch]], [[package]]   by id
    [[support]]                      by (package, arch, variant)
    [[price]]                        by (gpu, label)

A pulled entry replaces the shipped entry with the same key whole (fields are not mixed),
and new keys are added; nothing shipped is deleted, so a team sheet with three GPUs keeps
the other thirty-odd. A pulled price marked `default` becomes the one default for its GPU.
The catalog overlay is applied first, then the price sheet.

Reading is offline and cheap: with nothing pulled this is exactly `load_catalog()`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, time
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, ValidationError, field_validator

from advisor.core.errors import InputError
from advisor.core.formats import parse_json, validation_error, without_nulls
from advisor.core.model.bounds import MAX_JSON_BYTES
from advisor.core.model.catalog import (
    CATALOG_FILES,
    Catalog,
    catalog_from_docs,
    parse_toml,
)
from advisor.core.model.strict import Moment, StrictInput
from advisor.core.redact import redact_url
from advisor.io.atomic import write_output
from advisor.io.files import read_text
from advisor.io.paths import cache_dir, pulled_dir

if TYPE_CHECKING:
    from advisor.core.report.document import Provenance

def read_shipped_texts() -> dict[str, str]:
    """The catalog files that ship with advisor, by file name."""
    root = resources.files("advisor.catalog")
    return {f: root.joinpath(f).read_text(encoding="utf-8") for f in CATALOG_FILES}


SHIPPED_ORIGIN = {f: f"catalog/{f}" for f in CATALOG_FILES}


def shipped_docs(texts: Mapping[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """The shipped catalog files decoded, from a cache keyed on their exact bytes.

    Decoding the TOML is most of what loading the catalog costs a command (tomllib is pure
    Python); validating the decoded entries is cheap and is still done on every start, so a
    stale, damaged or planted cache cannot put an unchecked figure into a decision. The
    cache is JSON in the user cache folder (dates as ISO text, which validation reads
    back), written atomically; any failure to read or write it just decodes the TOML.
    """
    texts = texts if texts is not None else read_shipped_texts()
    digest = hashlib.sha256(CACHE_KEY_SALT.encode())
    for name in CATALOG_FILES:
        digest.update(name.encode() + b"\0" + texts[name].encode() + b"\0")
    path = cache_dir() / f"catalog-{digest.hexdigest()[:24]}.json"
    try:
        cached = json.loads(path.read_bytes())
        if isinstance(cached, dict) and set(cached) == set(CATALOG_FILES):
            return cached
    except (OSError, ValueError):
        pass
    docs = {f: parse_toml(texts[f], SHIPPED_ORIGIN[f]) for f in CATALOG_FILES}
    with contextlib.suppress(InputError):  # a read-only home: decode again next time
        write_output(path, json.dumps(docs, default=_iso), create_parents=True)
    return docs


CACHE_KEY_SALT = "advisor.catalog-docs.1"
"""Changes when the cached form changes, so an old cache is never read as a new one."""


def _iso(value: Any) -> str:
    if isinstance(value, date | time):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} in a catalog file")


def load_catalog() -> Catalog:
    """The shipped catalog alone, as `advisor validate` and the tests read it."""
    return catalog_from_docs(shipped_docs(), SHIPPED_ORIGIN)


PullKind = Literal["catalog", "prices"]
PULL_KINDS: tuple[PullKind, ...] = ("catalog", "prices")  # also the order overlays apply in

CACHE_SCHEMA = "advisor.pulled"
CACHE_VERSION = 1

# Top-level array of tables -> the shipped file it belongs to, and its merge key.
TABLE_FILE: Mapping[str, str] = {
    "gpu": "gpus.toml",
    "arch": "archs.toml",
    "package": "software.toml",
    "support": "software.toml",
    "price": "prices.toml",
}
TABLE_KEY: Mapping[str, tuple[str, ...]] = {
    "gpu": ("id",),
    "arch": ("id",),
    "package": ("id",),
    "support": ("package", "arch", "variant"),
    "price": ("gpu", "label"),
}

Entries = dict[str, list[dict[str, Any]]]


class PulledCache(StrictInput):
    """One pulled document: its entries and the HTTP metadata for conditional requests.

    Metadata and entries share one file, so one atomic rename keeps them consistent:
    an ETag can never describe entries other than the ones stored beside it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    schema_: Literal["advisor.pulled"] = Field(alias="schema")
    version: Literal[1]
    kind: PullKind
    url: Annotated[str, AfterValidator(redact_url)]  # a cache from before shape redaction too
    source: str | None = Field(
        default=None, description="keyed hash of the URL as pulled (sync.source_key); a "
                                  "cache without one is refreshed by an unconditional GET")
    etag: str | None = None
    last_modified: str | None = None
    fetched_at: Moment = Field(description="when these entries were downloaded")
    checked_at: Moment = Field(description="last time the server confirmed them (200 or 304)")
    sha256: str
    entries: Entries

    @field_validator("entries")
    @classmethod
    def _known_tables(cls, v: Entries) -> Entries:
        for table in v:
            if table not in TABLE_FILE:
                raise ValueError(f"unknown table {table!r}")
        return v

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json", by_alias=True), indent=2) + "\n"


def cache_path(kind: PullKind) -> Path:
    return pulled_dir() / f"{kind}.json"


def read_pulled(kind: PullKind) -> PulledCache | None:
    """The cached pull of this kind, None if there is none; a damaged cache is an InputError."""
    path = cache_path(kind)
    if not path.exists():
        return None
    file = str(path)
    try:
        cache = PulledCache.model_validate(parse_json(read_text(path, MAX_JSON_BYTES), file))
    except ValidationError as exc:
        raise validation_error(exc, file) from None
    if cache.kind != kind:
        raise InputError("cache holds the wrong kind of pull", file=file, field="kind",
                         value=cache.kind)
    return cache


def entry_key(table: str, entry: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(entry.get(k) for k in TABLE_KEY[table])


def _merge_table(base: list[dict[str, Any]], table: str, pulled: list[dict[str, Any]]) -> None:
    index = {entry_key(table, e): i for i, e in enumerate(base)}
    for entry in pulled:
        if table == "price" and entry.get("default"):
            for other in base:
                if other.get("gpu") == entry.get("gpu"):
                    other["default"] = False
        key = entry_key(table, entry)
        if key in index:
            base[index[key]] = without_nulls(entry)
        else:
            index[key] = len(base)
            base.append(without_nulls(entry))


def build_effective(overlays: Sequence[tuple[str, Entries]]) -> Catalog:
    """The shipped catalog with each (label, entries) overlay merged in order, validated.

    Errors name the file as "<label> over catalog/<file>", so a bad pulled entry points at
    where it came from rather than at the shipped file. The merge works on decoded data and
    is validated as such (never written back as TOML text), so it is linear in the overlays.
    """
    docs = shipped_docs()  # decoded afresh from the cache: the merge may change it in place
    origin = dict(SHIPPED_ORIGIN)
    for label, entries in overlays:
        for table, items in entries.items():
            if not items:
                continue
            file = TABLE_FILE[table]
            _merge_table(docs[file].setdefault(table, []), table, items)
            origin[file] = f"{label} over catalog/{file}"
    pulled = {g.get("id") for _, entries in overlays for g in entries.get("gpu") or []}
    return catalog_from_docs(docs, origin, {i for i in pulled if isinstance(i, str)})


def effective_catalog() -> Catalog:
    """What every command should use: shipped data plus whatever the team pulled."""
    overlays = [(str(cache_path(kind)), c.entries) for kind in PULL_KINDS
                if (c := read_pulled(kind)) is not None]
    return build_effective(overlays) if overlays else load_catalog()


def shipped_catalog_version() -> str:
    """A short digest of the shipped catalog files: two reports agree on it iff the data did."""
    digest = hashlib.sha256()
    for name, text in sorted(read_shipped_texts().items()):
        digest.update(name.encode())
        digest.update(text.encode())
    return digest.hexdigest()[:12]


def pulled_sources() -> list[PulledCache]:
    """The pulls the effective catalog includes, for provenance in reports."""
    return [c for kind in PULL_KINDS if (c := read_pulled(kind)) is not None]


def provenance(now: datetime | None = None) -> Provenance:
    """What a report records about the data behind it: versions, pulled sources, the time."""
    from advisor import __version__
    from advisor.core.report.document import Provenance, PulledSource  # heavy: the decision models

    pulled = [PulledSource(kind=c.kind, url=c.url, etag=c.etag, last_modified=c.last_modified,
                           fetched_at=c.fetched_at) for c in pulled_sources()]
    return Provenance(advisor_version=__version__, catalog_version=shipped_catalog_version(),
                      pulled=pulled, created=now or datetime.now(UTC).replace(microsecond=0))
