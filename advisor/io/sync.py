"""Pulling a team-maintained catalog or price sheet, and caching it, all or nothing.

The network is only touched by an explicit `advisor catalog pull URL` or
`advisor prices pull URL`; everything else reads the cache offline. A pull takes the
overlay lock (`lock`), fetches the body (`fetch`: bounded in time and size, retried with
backoff on transient failures), parses it (`sheets`), merges it over the shipped catalog
and validates it through `catalog_store.build_effective` before one atomic rename
replaces the cache. Any failure leaves the previous data exactly as it was and is
reported in one line naming the URL being pulled: the pulled document is validated over
the shipped catalog on its own first, so a cache kept from an earlier pull is only named
when it is the combination of the two that fails.

A URL is someone's secret as often as not. User:password in it is refused (it would be
printed, cached and cited in every report), and every secret part of it is redacted from
everything shown, stored or cited (`advisor.core.redact`). So the cache recognises the
sheet it holds by a keyed hash of the URL as pulled (`source_key`), never by its redacted
form: two sheets can redact alike, and a conditional request for one must never be
answered "unchanged" for the other.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx

from advisor.core.errors import InputError
from advisor.core.formats import Format, decode_text, detect_format
from advisor.core.model import bounds as B
from advisor.core.redact import redact_url
from advisor.io.atomic import write_output
from advisor.io.catalog_store import (
    PulledCache,
    PullKind,
    build_effective,
    cache_path,
    read_pulled,
)
from advisor.io.fetch import FetchError, FetchPolicy, check_url, fetch
from advisor.io.lock import overlay_lock
from advisor.io.paths import pulled_dir
from advisor.io.sheets import parse_catalog_doc, parse_price_sheet

KEY_NAME = ".source-key"
KEY_BYTES = 32

TABLE_NOUN: Mapping[str, str] = {
    "gpu": "GPU", "arch": "architecture", "package": "package", "support": "support row",
    "price": "price",
}


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


def source_key(url: str) -> str:
    """HMAC-SHA256 of the URL as pulled, secrets and all, under a random key of this data
    folder's (readable by its owner alone): equal for the same URL, and a cache file copied
    elsewhere says nothing about the secrets of the URL it came from."""
    return hmac.new(_folder_key(), url.encode("utf-8", "surrogatepass"), "sha256").hexdigest()


def _folder_key() -> bytes:
    """The key, made on first use; a lost or damaged one only costs one unconditional GET."""
    path = pulled_dir() / KEY_NAME
    try:
        key = path.read_bytes()
    except OSError:
        key = b""
    if len(key) != KEY_BYTES:
        key = secrets.token_bytes(KEY_BYTES)
        write_output(path, key, create_parents=True, private=True)
    return key


def _previous(kind: PullKind) -> PulledCache | None:
    """The cache to refresh; a damaged one is simply replaced, so a pull can repair it."""
    try:
        return read_pulled(kind)
    except InputError:
        return None


def pull(kind: PullKind, url: str, policy: FetchPolicy, fmt: Format | None = None,
         *, sleep: Callable[[float], None] = time.sleep,
         transport: httpx.BaseTransport | None = None) -> PullOutcome:
    """Fetch, parse, merge, validate, then atomically replace the cache of this kind, all
    under the overlay lock, so the cache written is valid with the other one as it is.
    `sleep` and `transport` stand in for the clock's waits and the network (tests)."""
    check_url(url, policy.allow_http)
    with overlay_lock(sleep=sleep):
        return _pull_locked(kind, url, policy, fmt, sleep, transport)


def _pull_locked(kind: PullKind, url: str, policy: FetchPolicy, fmt: Format | None,
                 sleep: Callable[[float], None],
                 transport: httpx.BaseTransport | None) -> PullOutcome:
    other: PullKind = "prices" if kind == "catalog" else "catalog"
    other_cache = read_pulled(other)  # must be sound: the merged whole is validated below
    prev = _previous(kind)
    shown = redact_url(url)  # what is printed, stored and cited
    source = source_key(url)  # what recognises the sheet: two URLs may redact alike
    same = prev is not None and prev.source == source
    got = fetch(url, policy, etag=prev.etag if prev and same else None,
                last_modified=prev.last_modified if prev and same else None, sleep=sleep,
                transport=transport)
    now = datetime.now(UTC).replace(microsecond=0)
    if got.not_modified:
        if prev is None or not same:
            raise FetchError("server answered 304 Not Modified to an unconditional request",
                             file=shown)
        return _store(kind, prev.model_copy(update={"checked_at": now}), changed=False)

    digest = hashlib.sha256(got.body).hexdigest()
    if prev is not None and same and prev.sha256 == digest:
        return _store(kind, prev.model_copy(update={
            "checked_at": now, "etag": got.etag, "last_modified": got.last_modified}),
            changed=False)
    text = decode_text(got.body, shown)
    fmt = fmt or detect_format(httpx.URL(got.url).path, got.content_type, text)

    cached = [(str(cache_path(other)), other_cache.entries)] if other_cache else []
    if kind == "catalog":
        entries = parse_catalog_doc(text, shown, fmt)
        build_effective([(shown, entries)])  # its own faults are the URL's, whatever is cached
        overlays = [(shown, entries), *cached]
    else:
        entries = parse_price_sheet(text, shown, fmt, build_effective(cached), now.date())
        overlays = [*cached, (shown, entries)]
    build_effective(overlays)  # raises before anything is written

    cache = PulledCache(
        schema_="advisor.pulled", version=1, kind=kind, url=shown, source=source,
        etag=got.etag, last_modified=got.last_modified, fetched_at=now, checked_at=now,
        sha256=digest, entries=entries,
    )
    return _store(kind, cache, changed=True)


def _store(kind: PullKind, cache: PulledCache, changed: bool) -> PullOutcome:
    text = cache.to_json()
    if len(text.encode()) > B.MAX_JSON_BYTES:  # it would be refused when read back
        raise InputError(f"too large to cache: {len(text.encode()):,} bytes once stored, over "
                         f"the {B.MAX_JSON_BYTES:,} byte cap on what advisor reads",
                         file=cache.url)
    write_output(cache_path(kind), text, create_parents=True)
    return PullOutcome(kind, changed, cache)
