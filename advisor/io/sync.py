"""Pulling a team-maintained catalog or price sheet over HTTPS, safely.

The network is only touched by an explicit `advisor catalog pull URL` or
`advisor prices pull URL`; everything else reads the cache offline. A pull is
all-or-nothing: the body is fetched (bounded in time and size, retried with
backoff on transient failures), parsed, merged over the shipped catalog and
validated through `build_catalog` before one atomic rename replaces the cache.
Any failure leaves the previous data exactly as it was and is reported in one line.

Price sheets are CSV with the header `gpu,usd_per_hour,label,source,retrieved`
(only gpu and usd_per_hour required; `source` may hold several citations separated
by `;`, `retrieved` is YYYY-MM-DD and defaults to the day of the pull), or TOML/JSON
with the same fields as `[[price]]` entries. `gpu` may be a catalog id or any name
that matches one GPU loosely. One row per GPU: each becomes that GPU's default price,
labelled with the sheet's URL as its source, because it is still not the user's own
quote for a decision. A team catalog is TOML or JSON with any of the shipped
`[[gpu]]`, `[[arch]]`, `[[package]]`, `[[support]]` and `[[price]]` tables.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import httpx
from pydantic import BaseModel, ValidationError

from advisor import __version__
from advisor.core.errors import InputError
from advisor.core.formats import (
    Format,
    decode_text,
    detect_format,
    parse_csv,
    parse_json,
    parse_toml,
    validation_error,
)
from advisor.core.model.catalog import Arch, Catalog, Gpu, Package, Price, Support
from advisor.io.atomic import write_output
from advisor.io.catalog_store import (
    TABLE_FILE,
    Entries,
    PulledCache,
    PullKind,
    build_effective,
    cache_path,
    entry_key,
    read_pulled,
)

PRICE_COLUMNS_REQUIRED = ("gpu", "usd_per_hour")
PRICE_COLUMNS_OPTIONAL = ("label", "source", "retrieved")
SHEET_LABEL = "team price sheet"
TABLE_MODEL: Mapping[str, type[BaseModel]] = {
    "gpu": Gpu, "arch": Arch, "package": Package, "support": Support, "price": Price,
}
TABLE_NOUN: Mapping[str, str] = {
    "gpu": "GPU", "arch": "architecture", "package": "package", "support": "support row",
    "price": "price",
}
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})


class FetchError(InputError):
    """The download itself failed (network, HTTP status, size, scheme): nothing was changed."""


class _Transient(Exception):
    """A failure worth another attempt: timeouts, dropped connections, 5xx, 429."""


@dataclass(frozen=True)
class FetchPolicy:
    """Bounds on one pull. Tests shrink them; the defaults suit a sheet on an intranet."""

    timeout_s: float = 10.0  # connect, and the longest silence while reading
    total_s: float = 60.0  # the whole of one attempt, so a trickling server can't stall us
    retries: int = 2  # attempts after the first, on transient failures only
    backoff_s: float = 0.5  # wait before retry n is backoff_s * 2**n
    max_bytes: int = 8 * 1024 * 1024
    max_redirects: int = 5
    allow_http: bool = False


@dataclass(frozen=True)
class Fetched:
    url: str  # after redirects
    not_modified: bool
    body: bytes
    etag: str | None
    last_modified: str | None
    content_type: str | None


def check_url(url: str, allow_http: bool) -> None:
    """https always; plain http only when asked for; nothing else (file:, ftp:) ever.

    A refused URL is the user's input, so it is an InputError (exit 2), not a FetchError.
    """
    try:
        scheme = httpx.URL(url).scheme
    except httpx.InvalidURL as exc:
        raise InputError(f"not a valid URL ({exc})", value=url) from None
    if scheme == "https" or (scheme == "http" and allow_http):
        return
    if scheme == "http":
        raise InputError("plain http refused; use https, or pass --allow-http to accept it",
                         value=url)
    raise InputError("only https URLs can be pulled", value=url)


def fetch(
    url: str,
    policy: FetchPolicy,
    *,
    etag: str | None = None,
    last_modified: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Fetched:
    """GET with conditional headers, retries on transient failures, and a size cap."""
    check_url(url, policy.allow_http)
    headers = {
        "User-Agent": f"advisor/{__version__}",
        "Accept": "application/toml, application/json, text/csv, text/plain;q=0.5",
    }
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified

    def guard(request: httpx.Request) -> None:  # also runs for every redirect hop
        check_url(str(request.url), policy.allow_http)

    with httpx.Client(
        timeout=httpx.Timeout(policy.timeout_s),
        follow_redirects=True,
        max_redirects=policy.max_redirects,
        event_hooks={"request": [guard]},
        headers=headers,
        trust_env=False,
    ) as client:
        failure = ""
        for attempt in range(policy.retries + 1):
            if attempt:
                sleep(policy.backoff_s * 2 ** (attempt - 1))
            try:
                return _fetch_once(client, url, policy)
            except _Transient as exc:
                failure = str(exc)
    tries = f" (after {policy.retries + 1} attempts)" if policy.retries else ""
    raise FetchError(f"{failure}{tries}", file=url)


def _fetch_once(client: httpx.Client, url: str, policy: FetchPolicy) -> Fetched:
    deadline = time.monotonic() + policy.total_s
    try:
        with client.stream("GET", url) as resp:
            code = resp.status_code
            if code in RETRY_STATUS:
                raise _Transient(f"HTTP {code} {resp.reason_phrase}")
            final = str(resp.url)
            if code == 304:
                return Fetched(final, True, b"", resp.headers.get("etag"),
                               resp.headers.get("last-modified"), None)
            if code != 200:
                raise FetchError(f"HTTP {code} {resp.reason_phrase}", file=url)
            declared = resp.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > policy.max_bytes:
                raise FetchError(
                    f"response is {int(declared):,} bytes, over the {policy.max_bytes:,} byte "
                    "cap; nothing downloaded", file=url)
            body = bytearray()
            for chunk in resp.iter_bytes():
                body += chunk
                if len(body) > policy.max_bytes:
                    raise FetchError(
                        f"response exceeds the {policy.max_bytes:,} byte cap; download aborted",
                        file=url)
                if time.monotonic() > deadline:
                    raise _Transient(f"download took longer than {policy.total_s:g} s")
            return Fetched(final, False, bytes(body), resp.headers.get("etag"),
                           resp.headers.get("last-modified"), resp.headers.get("content-type"))
    except httpx.TimeoutException:
        raise _Transient(f"timed out after {policy.timeout_s:g} s") from None
    except httpx.TooManyRedirects:
        raise FetchError(f"more than {policy.max_redirects} redirects", file=url) from None
    except httpx.RemoteProtocolError as exc:
        raise _Transient(f"connection closed early ({exc})") from None
    except httpx.TransportError as exc:
        raise _Transient(f"{type(exc).__name__}: {exc}") from None


# --- parsing pulled documents --------------------------------------------------------------


def _parse_doc(text: str, file: str, fmt: Format) -> dict[str, Any]:
    doc = parse_toml(text, file) if fmt == "toml" else parse_json(text, file)
    if not isinstance(doc, dict):
        raise InputError("expected a table (a JSON object) at the top level", file=file)
    return doc


def _tables(doc: Mapping[str, Any], file: str, allowed: tuple[str, ...]) -> Entries:
    out: Entries = {}
    for key, items in doc.items():
        if key not in allowed:
            raise InputError(f"unknown table; expected {', '.join(allowed)}", file=file,
                             field=key)
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise InputError(f"expected an array of tables ([[{key}]])", file=file, field=key)
        out[key] = items
    if not any(out.values()):
        raise InputError(f"no entries; expected any of {', '.join(allowed)}", file=file)
    return out


def parse_catalog_doc(text: str, file: str, fmt: Format) -> Entries:
    """A team catalog: each entry validated alone here, the merged whole by build_catalog."""
    if fmt == "csv":
        raise InputError("a catalog is TOML or JSON; CSV is for price sheets "
                         "(`advisor prices pull`)", file=file)
    out: Entries = {}
    for table, items in _tables(_parse_doc(text, file, fmt), file, tuple(TABLE_FILE)).items():
        seen: set[tuple[Any, ...]] = set()
        out[table] = []
        for raw in items:
            key = entry_key(table, raw)
            label = "/".join(str(k) for k in key if k is not None) or None
            try:
                model = TABLE_MODEL[table].model_validate(raw)
            except ValidationError as exc:
                raise validation_error(exc, file, entry=label) from None
            if key in seen:
                raise InputError(f"duplicate [[{table}]] entry", file=file, entry=label)
            seen.add(key)
            out[table].append(model.model_dump(mode="json", exclude_none=True))
    return out


def parse_price_sheet(text: str, file: str, fmt: Format, catalog: Catalog, today: date) -> Entries:
    """A price sheet: every row becomes the default price of the GPU it names."""
    rows: list[tuple[str, dict[str, Any]]]
    if fmt == "csv":
        rows = [(f"line {n}", dict(r)) for n, r in parse_csv(
            text, file, required=PRICE_COLUMNS_REQUIRED, optional=PRICE_COLUMNS_OPTIONAL)]
    else:
        items = _tables(_parse_doc(text, file, fmt), file, ("price",))["price"]
        rows = [(f"price {i}", r) for i, r in enumerate(items, 1)]
    if not rows:
        raise InputError("no prices in the sheet", file=file)
    known = set(PRICE_COLUMNS_REQUIRED + PRICE_COLUMNS_OPTIONAL)
    prices: list[dict[str, Any]] = []
    lines: dict[str, str] = {}
    for where, row in rows:
        for k in row:
            if k not in known:
                raise InputError(f"unknown field; expected {', '.join(sorted(known))}",
                                 file=file, entry=where, field=k)
        for k in PRICE_COLUMNS_REQUIRED:
            if k not in row:
                raise InputError("missing", file=file, entry=where, field=k)
        try:
            gpu = catalog.gpu(str(row["gpu"])).id
        except InputError as exc:
            raise InputError(exc.message, file=file, entry=where, field="gpu",
                             value=row["gpu"]) from None
        if gpu in lines:
            raise InputError(f"second price for this GPU (first at {lines[gpu]})",
                             file=file, entry=where, field="gpu", value=row["gpu"])
        lines[gpu] = where
        cited = row.get("source", [])
        if isinstance(cited, str):
            cited = [c.strip() for c in cited.split(";") if c.strip()]
        if not isinstance(cited, list):
            raise InputError("expected a citation or a list of them", file=file, entry=where,
                             field="source", value=cited)
        raw = {
            "gpu": gpu,
            "usd_per_hour": row["usd_per_hour"],
            "label": row.get("label", SHEET_LABEL),
            "default": True,
            "source": [f"{SHEET_LABEL} {file}", *cited],
            "retrieved": row.get("retrieved", today.isoformat()),
        }
        try:
            price = Price.model_validate(raw)
        except ValidationError as exc:
            raise validation_error(exc, file, entry=where) from None
        prices.append(price.model_dump(mode="json"))
    return {"price": prices}


# --- the pull ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PullOutcome:
    kind: PullKind
    changed: bool  # False: the server said 304, or sent the same bytes again
    cache: PulledCache

    def summary(self) -> str:
        counts = ", ".join(f"{len(v)} {TABLE_NOUN[k]}{'' if len(v) == 1 else 's'}"
                           for k, v in self.cache.entries.items() if v)
        where = cache_path(self.kind)
        if not self.changed:
            return (f"{self.kind}: unchanged since {self.cache.fetched_at:%Y-%m-%d %H:%M} UTC "
                    f"({counts}); kept {where}")
        return f"{self.kind}: pulled {counts} from {self.cache.url}; cached in {where}"


def _previous(kind: PullKind) -> PulledCache | None:
    """The cache to refresh; a damaged one is simply replaced, so a pull can repair it."""
    try:
        return read_pulled(kind)
    except InputError:
        return None


def pull(kind: PullKind, url: str, policy: FetchPolicy, fmt: Format | None = None,
         *, sleep: Callable[[float], None] = time.sleep) -> PullOutcome:
    """Fetch, parse, merge, validate, then atomically replace the cache of this kind."""
    other: PullKind = "prices" if kind == "catalog" else "catalog"
    other_cache = read_pulled(other)  # must be sound: the merged whole is validated below
    prev = _previous(kind)
    same = prev is not None and prev.url == url
    got = fetch(url, policy, etag=prev.etag if prev and same else None,
                last_modified=prev.last_modified if prev and same else None, sleep=sleep)
    now = datetime.now(UTC).replace(microsecond=0)
    if got.not_modified:
        if prev is None or not same:
            raise FetchError("server answered 304 Not Modified to an unconditional request",
                             file=url)
        return _store(kind, prev.model_copy(update={"checked_at": now}), changed=False)

    digest = hashlib.sha256(got.body).hexdigest()
    if prev is not None and same and prev.sha256 == digest:
        return _store(kind, prev.model_copy(update={
            "checked_at": now, "etag": got.etag, "last_modified": got.last_modified}),
            changed=False)
    text = decode_text(got.body, url)
    fmt = fmt or detect_format(httpx.URL(got.url).path, got.content_type, text)

    cached = [(str(cache_path(other)), other_cache.entries)] if other_cache else []
    if kind == "catalog":
        entries = parse_catalog_doc(text, url, fmt)
        overlays = [(url, entries), *cached]
    else:
        entries = parse_price_sheet(text, url, fmt, build_effective(cached), now.date())
        overlays = [*cached, (url, entries)]
    build_effective(overlays)  # raises before anything is written

    cache = PulledCache(
        schema_="advisor.pulled", version=1, kind=kind, url=url, etag=got.etag,
        last_modified=got.last_modified, fetched_at=now, checked_at=now, sha256=digest,
        entries=entries,
    )
    return _store(kind, cache, changed=True)


def _store(kind: PullKind, cache: PulledCache, changed: bool) -> PullOutcome:
    write_output(cache_path(kind), cache.to_json(), create_parents=True)
    return PullOutcome(kind, changed, cache)
