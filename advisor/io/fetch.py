"""HTTP GET of a pulled catalog or price sheet, with every wait bounded.

An attempt ends at its timeout however slowly the server trickles (a timer shuts its
sockets), backoff between attempts is capped and so is the whole pull; the body is
capped in size; only https is fetched (plain http when asked); a redirect is checked as
the first request is. Errors name the redacted URL (`advisor.core.redact`): only the
request itself carries the full one.
"""

from __future__ import annotations

import contextlib
import math
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from advisor import __version__
from advisor.core.errors import InputError
from advisor.core.model import bounds as B
from advisor.core.redact import redact_url, scrub

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


def check_url(url: str, allow_http: bool) -> None:
    """https always; plain http only when asked for; nothing else (file:, ftp:) ever; and no
    credentials in the URL.

    A refused URL is the user's input, so it is an InputError (exit 2), not a FetchError.
    """
    shown = redact_url(url)
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise InputError(f"not a valid URL ({scrub(str(exc), url)})", value=shown) from None
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
    transport: httpx.BaseTransport | None = None,
) -> Fetched:
    """GET with conditional headers, retries on transient failures, and a size cap.

    Errors name the redacted URL; the request itself is the only place the full one goes.
    `transport` replaces the network (the tests' fake web, which answers at once)."""
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
        transport=transport,
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
            raise _Transient(f"connection closed early ({scrub(str(exc), url)})") from None
        raise _Transient(f"{type(exc).__name__}: {scrub(str(exc), url)}") from None
