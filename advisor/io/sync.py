"""Pulling a team-maintained catalog or price sheet over HTTPS, safely.

The network is only touched by an explicit `advisor catalog pull URL` or
`advisor prices pull URL`; everything else reads the cache offline. A pull is
all-or-nothing: the body is fetched (bounded in time and size, retried with
backoff on transient failures), parsed, merged over the shipped catalog and
validated through `build_catalog` before one atomic rename replaces the cache.
Any failure leaves the previous data exactly as it was and is reported in one line.

Pulls of either kind take one lock on the overlay (a flock on a file in the data folder)
for the whole fetch-merge-validate-write, so a `catalog pull` and a `prices pull` run at
the same time are serialised and each validates against what the other actually left:
together they can never leave an overlay that every command refuses.

A URL is someone's secret as often as not. User:password in it is refused (it would be
printed, cached and cited in every report); the values of query keys that look like
secrets (token, key, sig, auth, password, ...) are redacted from everything shown,
stored or cited, and only the request itself carries them. Every wait is bounded: an
attempt ends at its timeout however slowly the server trickles (its sockets are shut),
backoff between attempts is capped, and so is the whole pull.

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

import contextlib
import fcntl
import hashlib
import math
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

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
from advisor.core.model import bounds as B
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
from advisor.io.paths import pulled_dir

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
    backoff_s: float = 0.5  # wait before retry n is min(backoff_s * 2**n, MAX_BACKOFF_S)
    max_bytes: int = 8 * 1024 * 1024
    max_redirects: int = 5
    allow_http: bool = False
    pull_s: float = B.MAX_PULL_S  # every attempt and wait together

    def __post_init__(self) -> None:
        for name, hi in (("timeout_s", B.MAX_TIMEOUT_S), ("total_s", B.MAX_TIMEOUT_S),
                         ("pull_s", B.MAX_PULL_S)):
            v = getattr(self, name)
            if not (isinstance(v, int | float) and math.isfinite(v) and 0 < v <= hi):
                raise InputError(f"must be a number of seconds above 0 and at most {hi:g}",
                                 field=name, value=v)
        if not (isinstance(self.backoff_s, int | float) and 0 <= self.backoff_s
                <= B.MAX_BACKOFF_S):
            raise InputError(f"must be 0 to {B.MAX_BACKOFF_S:g} seconds", field="backoff_s",
                             value=self.backoff_s)
        if not 0 <= self.retries <= B.MAX_RETRIES:
            raise InputError(f"must be 0 to {B.MAX_RETRIES}", field="retries", value=self.retries)
        if not 0 < self.max_bytes <= B.MAX_DOWNLOAD_BYTES:
            raise InputError(f"must be 1 to {B.MAX_DOWNLOAD_BYTES:,} bytes", field="max_bytes",
                             value=self.max_bytes)
        if not 0 <= self.max_redirects <= B.MAX_REDIRECTS:
            raise InputError(f"must be 0 to {B.MAX_REDIRECTS}", field="max_redirects",
                             value=self.max_redirects)

    def wait_before(self, attempt: int) -> float:
        """The backoff before attempt n (1-based retries), capped so no N waits 0.5 x 2^N s."""
        return min(self.backoff_s * 2.0 ** min(attempt - 1, 32), B.MAX_BACKOFF_S)


@dataclass(frozen=True)
class Fetched:
    url: str  # after redirects
    not_modified: bool
    body: bytes
    etag: str | None
    last_modified: str | None
    content_type: str | None


# A query key holding any of these is treated as a secret: its value is never shown or kept.
SECRET_WORDS = ("token", "key", "secret", "password", "passwd", "pwd", "sig", "auth",
                "credential", "session", "cookie", "access", "private", "otp")
REDACTED = "REDACTED"


def _secret_key(key: str) -> bool:
    k = key.lower()
    return any(w in k for w in SECRET_WORDS) or k.startswith("x-amz-") or k.startswith("x-goog-")


def redact_url(url: str) -> str:
    """The URL as it may be printed, cached and cited: no user:password, no fragment, and
    the value of every secret-looking query key replaced by REDACTED."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "<a malformed URL>"
    netloc = (f"{REDACTED}@" if "@" in parts.netloc else "") + (
        f"[{host}]" if ":" in host else host) + (f":{port}" if port is not None else "")
    query = "&".join(
        f"{quote(k, safe='')}={REDACTED if _secret_key(k) else quote(v, safe='')}"
        for k, v in parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def _secrets_of(url: str) -> list[str]:
    try:
        parts = urlsplit(url)
        found = [v for k, v in parse_qsl(parts.query, keep_blank_values=True)
                 if _secret_key(k) and v]
        return found + [p for p in (parts.username, parts.password) if p]
    except ValueError:
        return []


def _scrub(text: str, url: str) -> str:
    """An error message from the HTTP stack with the URL's secrets taken out."""
    text = text.replace(url, redact_url(url))
    for secret in sorted(_secrets_of(url), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def check_url(url: str, allow_http: bool) -> None:
    """https always; plain http only when asked for; nothing else (file:, ftp:) ever; and no
    credentials in the URL.

    A refused URL is the user's input, so it is an InputError (exit 2), not a FetchError.
    """
    shown = redact_url(url)
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise InputError(f"not a valid URL ({_scrub(str(exc), url)})", value=shown) from None
    if parsed.userinfo:
        raise InputError("credentials in a URL are refused: the URL is printed, cached and "
                         "cited in reports; serve the sheet where no password is needed, or "
                         "use a signed URL", value=shown)
    if parsed.scheme == "https" or (parsed.scheme == "http" and allow_http):
        return
    if parsed.scheme == "http":
        raise InputError("plain http refused; use https, or pass --allow-http to accept it",
                         value=shown)
    raise InputError("only https URLs can be pulled", value=shown)


def _cut(sock: socket.socket) -> None:
    """Shut a socket from another thread, waking whatever is blocked reading it. The plain
    socket's shutdown, not SSLSocket's: that one tears down TLS state under the reader."""
    with contextlib.suppress(OSError, ValueError):
        if sock.fileno() >= 0:
            socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Deadline:
    """Ends one attempt at `seconds`, whatever the server does: a timer shuts the attempt's
    sockets (found through httpcore's trace hook as they are opened), so a server that
    trickles a byte every few seconds cannot hold it past the timeout."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def trace(self, name: str, info: Mapping[str, Any]) -> None:
        if not name.endswith((".connect_tcp.complete", ".start_tls.complete")):
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            fired = self.fired
        if fired:
            _cut(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _cut(sock)

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()


def fetch(
    url: str,
    policy: FetchPolicy,
    *,
    etag: str | None = None,
    last_modified: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Fetched:
    """GET with conditional headers, retries on transient failures, and a size cap.

    Errors name the redacted URL; the request itself is the only place the full one goes."""
    check_url(url, policy.allow_http)
    shown = redact_url(url)
    start = time.monotonic()
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
        limits=httpx.Limits(max_keepalive_connections=0),  # a fresh socket per attempt
    ) as client:
        failure = ""
        attempts = 0
        for attempt in range(policy.retries + 1):
            left = policy.pull_s - (time.monotonic() - start)
            if attempt:
                wait = policy.wait_before(attempt)
                if wait >= left:
                    break
                sleep(wait)
                left -= wait
            if left <= 0:
                break
            attempts += 1
            try:
                return _fetch_once(client, url, shown, policy, min(policy.total_s, left))
            except _Transient as exc:
                failure = str(exc)
    tries = f" (after {attempts} attempts)" if attempts > 1 else ""
    raise FetchError(f"{failure}{tries}", file=shown)


def _fetch_once(client: httpx.Client, url: str, shown: str, policy: FetchPolicy,
                seconds: float) -> Fetched:
    deadline = _Deadline(seconds)
    try:
        with deadline, client.stream("GET", url, extensions={"trace": deadline.trace}) as resp:
            code = resp.status_code
            if code in RETRY_STATUS:
                raise _Transient(f"HTTP {code} {resp.reason_phrase}")
            final = str(resp.url)
            if code == 304:
                return Fetched(final, True, b"", resp.headers.get("etag"),
                               resp.headers.get("last-modified"), None)
            if code != 200:
                raise FetchError(f"HTTP {code} {resp.reason_phrase}", file=shown)
            declared = resp.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > policy.max_bytes:
                raise FetchError(
                    f"response is {int(declared):,} bytes, over the {policy.max_bytes:,} byte "
                    "cap; nothing downloaded", file=shown)
            body = bytearray()
            for chunk in resp.iter_bytes():
                body += chunk
                if len(body) > policy.max_bytes:
                    raise FetchError(
                        f"response exceeds the {policy.max_bytes:,} byte cap; download aborted",
                        file=shown)
                if deadline.fired:
                    raise _Transient(f"the attempt took longer than {seconds:g} s")
            if deadline.fired:
                raise _Transient(f"the attempt took longer than {seconds:g} s")
            return Fetched(final, False, bytes(body), resp.headers.get("etag"),
                           resp.headers.get("last-modified"), resp.headers.get("content-type"))
    except httpx.TimeoutException:
        raise _Transient(f"timed out after {policy.timeout_s:g} s") from None
    except httpx.TooManyRedirects:
        raise FetchError(f"more than {policy.max_redirects} redirects", file=shown) from None
    except httpx.TransportError as exc:
        if deadline.fired:
            raise _Transient(f"the attempt took longer than {seconds:g} s") from None
        if isinstance(exc, httpx.RemoteProtocolError):
            raise _Transient(f"connection closed early ({_scrub(str(exc), url)})") from None
        raise _Transient(f"{type(exc).__name__}: {_scrub(str(exc), url)}") from None


# --- the overlay lock ----------------------------------------------------------------------

LOCK_NAME = ".lock"


@contextlib.contextmanager
def overlay_lock(wait_s: float = B.MAX_PULL_S + 30,
                 sleep: Callable[[float], None] = time.sleep) -> Iterator[None]:
    """Hold the lock on the pulled overlay: one pull of either kind at a time.

    The lock is an flock on a file beside the caches, so it is released if the holder dies.
    Waiting is bounded by the longest a pull can take, then it is one line.
    """
    folder = pulled_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise FetchError(f"another pull has held the lock for over {wait_s:g} s",
                                     file=str(path)) from None
                sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


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
    """Fetch, parse, merge, validate, then atomically replace the cache of this kind, all
    under the overlay lock, so the cache written is valid with the other one as it is."""
    check_url(url, policy.allow_http)
    with overlay_lock(sleep=sleep):
        return _pull_locked(kind, url, policy, fmt, sleep)


def _pull_locked(kind: PullKind, url: str, policy: FetchPolicy, fmt: Format | None,
                 sleep: Callable[[float], None]) -> PullOutcome:
    other: PullKind = "prices" if kind == "catalog" else "catalog"
    other_cache = read_pulled(other)  # must be sound: the merged whole is validated below
    prev = _previous(kind)
    shown = redact_url(url)  # what is printed, stored and cited
    same = prev is not None and prev.url == shown
    got = fetch(url, policy, etag=prev.etag if prev and same else None,
                last_modified=prev.last_modified if prev and same else None, sleep=sleep)
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
        overlays = [(shown, entries), *cached]
    else:
        entries = parse_price_sheet(text, shown, fmt, build_effective(cached), now.date())
        overlays = [*cached, (shown, entries)]
    build_effective(overlays)  # raises before anything is written

    cache = PulledCache(
        schema_="advisor.pulled", version=1, kind=kind, url=shown, etag=got.etag,
        last_modified=got.last_modified, fetched_at=now, checked_at=now, sha256=digest,
        entries=entries,
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
