"""Catalog and price-sheet pulls, through a fake web (an httpx transport that answers at
once, in this thread) so no test depends on how fast a reply comes; a real HTTP server on
127.0.0.1 only where the sockets themselves are the subject (a trickling server against
the attempt's deadline) and for the two sheets of one static server (`python -m
http.server`'s own conditional GET), each with waits far past any local reply.

Each failure mode (timeout, 404, 500, truncated body, invalid or oversized content,
redirects, 304) must leave the previous cache byte-for-byte as it was.
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
import tomlkit
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.core.errors import InputError
from advisor.core.formats import detect_format
from advisor.io.catalog_store import (
    cache_path,
    effective_catalog,
    load_catalog,
    provenance,
    read_pulled,
    shipped_catalog_version,
)
from advisor.io.fetch import FetchError, FetchPolicy
from advisor.io.sheets import parse_catalog_doc, parse_price_sheet
from advisor.io.sync import KEY_NAME, PullOutcome, pull, source_key

FAST = FetchPolicy(timeout_s=0.3, total_s=3.0, retries=1, backoff_s=0.01,
                   max_bytes=64 * 1024, allow_http=True)
PATIENT = FetchPolicy(timeout_s=30.0, total_s=60.0, retries=0, allow_http=True)
"""For the real servers: a local reply comes long before, however loaded the box."""

PRICE_CSV = (
    b"gpu,usd_per_hour,label,source,retrieved\n"
    b"h100-sxm,2.10,reserved 1-yr,finance Q3 sheet; vendor quote 17,2026-01-15\n"
    b"H200 SXM,3.05,,,\n"
)


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    fail: type[httpx.TransportError] | None = None  # e.g. ReadTimeout: no answer in time
    send_only: int | None = None  # declare len(body) but send this many bytes, then hang up
    chunked: bool = False  # no Content-Length: the cap must hold while streaming
    hold_s: float = 0.0  # before answering: only to make two pulls overlap (no time asserted)


Route = Callable[[int, dict[str, str]], Reply]  # (hit number, request headers) -> reply


class _Cut(httpx.SyncByteStream):
    """A body that stops short of its Content-Length: the connection dropped."""

    def __init__(self, sent: bytes) -> None:
        self.sent = sent

    def __iter__(self) -> Iterator[bytes]:
        yield self.sent
        raise httpx.RemoteProtocolError("peer closed connection without sending complete body")


class FakeWeb:
    """The sheets' server, as an httpx transport: each route answers at once."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.seen: list[tuple[str, dict[str, str]]] = []
        self.transport = httpx.MockTransport(self._answer)

    def _answer(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.seen.append((path, headers | {"query": request.url.query.decode()}))
        hits = sum(1 for p, _ in self.seen if p == path)
        route = self.routes.get(path)
        reply = route(hits, headers) if route else Reply(404, b"not here")
        time.sleep(reply.hold_s)
        if reply.fail is not None:
            raise reply.fail("the server did not answer in time", request=request)
        if reply.send_only is not None:
            return httpx.Response(reply.status, stream=_Cut(reply.body[: reply.send_only]),
                                  headers={**reply.headers,
                                           "Content-Length": str(len(reply.body))})
        if reply.chunked:
            pieces = [reply.body[i : i + 4096] for i in range(0, len(reply.body), 4096)]
            return httpx.Response(reply.status, headers=reply.headers,
                                  stream=httpx.ByteStream(b"") if not pieces else _Chunks(pieces))
        return httpx.Response(reply.status, headers=reply.headers, content=reply.body)

    def url(self, path: str) -> str:
        return f"http://sheets.test{path}"

    def serve(self, path: str, reply: Reply | Route) -> str:
        self.routes[path] = reply if callable(reply) else (lambda n, h: reply)
        return self.url(path)

    def hits(self, path: str) -> list[dict[str, str]]:
        return [h for p, h in self.seen if p == path]

    def pull(self, kind: str, url: str, policy: FetchPolicy = FAST, **kw: object
             ) -> PullOutcome:
        return pull(kind, url, policy, transport=self.transport, **kw)  # type: ignore[arg-type]


class _Chunks(httpx.SyncByteStream):
    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    def __iter__(self) -> Iterator[bytes]:
        yield from self.pieces


@pytest.fixture
def server() -> FakeWeb:
    return FakeWeb()


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler] | functools.partial) -> Iterator[str]:
    """A real HTTP server on an ephemeral port of 127.0.0.1, for as long as the block runs."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)  # type: ignore[arg-type]
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ADVISOR_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _good_pull(server: FakeWeb) -> bytes:
    """A first, valid price pull; returns the cache bytes that later failures must keep."""
    server.pull("prices", server.serve("/good.csv", Reply(body=PRICE_CSV)))
    return cache_path("prices").read_bytes()


def _team_catalog() -> str:
    shipped = load_catalog()
    new = shipped.gpu("h100-sxm").model_dump(mode="json", exclude_none=True)
    new.update(id="team-h100-oc", name="Team H100, overclocked", aliases=[])
    l4 = shipped.gpu("l4").model_dump(mode="json", exclude_none=True)
    l4["name"] = "NVIDIA L4 (team-verified)"
    return tomlkit.dumps({"gpu": [new, l4]})


# --- merging ----------------------------------------------------------------------------------


def test_price_sheet_becomes_the_labelled_default(server: FakeWeb) -> None:
    shipped = load_catalog()
    url = server.serve("/prices.csv", Reply(body=PRICE_CSV))
    outcome = server.pull("prices", url)
    assert outcome.changed and "pulled 2 price" in outcome.summary()
    cat = effective_catalog()
    h100 = cat.default_price("h100-sxm")
    assert h100 is not None and h100.usd_per_hour == 2.10 and h100.label == "reserved 1-yr"
    assert h100.source == [f"team price sheet {url}", "finance Q3 sheet", "vendor quote 17"]
    assert str(h100.retrieved) == "2026-01-15"
    h200 = cat.default_price("h200-sxm")
    assert h200 is not None and h200.usd_per_hour == 3.05 and h200.label == "team price sheet"
    # the shipped figures stay as non-default alternatives; unnamed GPUs keep theirs
    assert len(cat.prices_for("h100-sxm")) == len(shipped.prices_for("h100-sxm")) + 1
    assert cat.default_price("b200-sxm") == shipped.default_price("b200-sxm")
    assert len(cat.gpus) == len(shipped.gpus)


def test_catalog_merges_entry_by_entry(server: FakeWeb) -> None:
    shipped = load_catalog()
    team = server.serve("/team.toml", Reply(body=_team_catalog().encode()))
    outcome = server.pull("catalog", team)
    assert outcome.changed
    cat = effective_catalog()
    assert len(cat.gpus) == len(shipped.gpus) + 1
    assert cat.gpu("team-h100-oc").name == "Team H100, overclocked"
    assert cat.gpu("l4").name == "NVIDIA L4 (team-verified)"
    assert cat.gpu("b200-sxm") == shipped.gpu("b200-sxm")


def test_price_sheet_may_price_a_gpu_from_the_pulled_catalog(server: FakeWeb) -> None:
    server.pull("catalog", server.serve("/team.toml", Reply(body=_team_catalog().encode())))
    sheet = b'[[price]]\ngpu = "team-h100-oc"\nusd_per_hour = 1.5\nsource = "ops wiki"\n'
    server.pull("prices", server.serve("/p.toml", Reply(body=sheet)))
    price = effective_catalog().default_price("team-h100-oc")
    assert price is not None and price.usd_per_hour == 1.5 and price.source[-1] == "ops wiki"


def test_merged_result_is_validated_before_caching(server: FakeWeb) -> None:
    bad = _team_catalog().replace('arch = "sm_90"', 'arch = "sm_999"', 1)
    url = server.serve("/bad.toml", Reply(body=bad.encode()))
    with pytest.raises(InputError) as exc:
        server.pull("catalog", url)
    line = exc.value.one_line()
    assert url in line and "over catalog/gpus.toml" in line and "sm_999" in line
    assert not cache_path("catalog").exists()


def test_offline_use_never_touches_the_network(server: FakeWeb, monkeypatch) -> None:
    _good_pull(server)

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("network used")

    monkeypatch.setattr(httpx, "Client", no_network)
    cat = effective_catalog()
    assert cat.default_price("h100-sxm").usd_per_hour == 2.10  # type: ignore[union-attr]


def test_reports_record_what_was_pulled(server: FakeWeb) -> None:
    _good_pull(server)
    prov = provenance()
    assert [(s.kind, s.url) for s in prov.pulled] == [("prices", server.url("/good.csv"))]
    assert prov.catalog_version == shipped_catalog_version() and len(prov.catalog_version) == 12


def test_no_pull_means_the_shipped_catalog() -> None:
    assert effective_catalog() == load_catalog()


def test_damaged_cache_is_one_line_and_a_pull_repairs_it(server: FakeWeb) -> None:
    path = cache_path("prices")
    path.parent.mkdir(parents=True)
    path.write_text('{"schema": "advisor.pulled", "version": 7}')
    with pytest.raises(InputError) as exc:
        effective_catalog()
    assert str(path) in exc.value.one_line() and "version" in exc.value.one_line()
    server.pull("prices", server.serve("/p.csv", Reply(body=PRICE_CSV)))
    assert effective_catalog().default_price("h100-sxm").usd_per_hour == 2.10  # type: ignore[union-attr]


# --- transport failures leave the previous cache untouched ------------------------------------


def test_plain_http_needs_allow_http(server: FakeWeb) -> None:
    url = server.serve("/p.csv", Reply(body=PRICE_CSV))
    strict = FetchPolicy(allow_http=False)
    with pytest.raises(InputError, match="--allow-http"):
        server.pull("prices", url, strict)
    for other in ("file:///etc/passwd", "ftp://127.0.0.1/p.csv"):
        with pytest.raises(InputError, match="only https"):
            server.pull("prices", other)
    assert server.seen == []


def test_404_fails_at_once(server: FakeWeb) -> None:
    before = _good_pull(server)
    with pytest.raises(FetchError) as exc:
        server.pull("prices", server.url("/missing.csv"))
    assert "HTTP 404" in exc.value.one_line() and "/missing.csv" in exc.value.one_line()
    assert len(server.hits("/missing.csv")) == 1
    assert cache_path("prices").read_bytes() == before


def test_500_is_retried_with_exponential_backoff(server: FakeWeb) -> None:
    before = _good_pull(server)
    url = server.serve("/flaky.csv", Reply(500, b"oops"))
    waits: list[float] = []
    policy = FetchPolicy(retries=2, backoff_s=0.25, allow_http=True)
    with pytest.raises(FetchError, match=r"HTTP 500 .*after 3 attempts"):
        server.pull("prices", url, policy, sleep=waits.append)
    assert waits == [0.25, 0.5]
    assert len(server.hits("/flaky.csv")) == 3
    assert cache_path("prices").read_bytes() == before


def test_a_transient_failure_then_success(server: FakeWeb) -> None:
    url = server.serve("/once.csv", lambda n, h: Reply(503) if n == 1 else Reply(body=PRICE_CSV))
    assert server.pull("prices", url).changed
    assert len(server.hits("/once.csv")) == 2


def test_timeout(server: FakeWeb) -> None:
    before = _good_pull(server)
    url = server.serve("/slow.csv", Reply(body=PRICE_CSV, fail=httpx.ReadTimeout))
    with pytest.raises(FetchError, match=r"timed out after 0.3 s \(after 2 attempts\)"):
        server.pull("prices", url)
    assert cache_path("prices").read_bytes() == before


def test_truncated_body(server: FakeWeb) -> None:
    before = _good_pull(server)
    url = server.serve("/cut.csv", Reply(body=PRICE_CSV, send_only=20))
    with pytest.raises(FetchError, match="closed early"):
        server.pull("prices", url)
    assert cache_path("prices").read_bytes() == before


@pytest.mark.parametrize("chunked", [False, True], ids=["declared", "streamed"])
def test_oversized_body(server: FakeWeb, chunked: bool) -> None:
    before = _good_pull(server)
    big = PRICE_CSV + b"#" * (FAST.max_bytes + 1)
    url = server.serve("/big.csv", Reply(body=big, chunked=chunked))
    with pytest.raises(FetchError, match="byte cap"):
        server.pull("prices", url)
    assert len(server.hits("/big.csv")) == 1  # a cap is not transient: no retry
    assert cache_path("prices").read_bytes() == before


@pytest.mark.parametrize(("body", "needles"), [
    (b"gpu,usd_per_hour\nh100-sxm,-5\n", ["line 2", "usd_per_hour", "-5"]),
    (b"gpu,usd_per_hour,colour\nh100-sxm,2,red\n", ["line 1", "unknown column", "colour"]),
    (b"gpu,usd_per_hour\nh1000-sxm,2\n", ["line 2", "unknown GPU id", "h1000-sxm", "did you mean"]),
    (b"gpu,usd_per_hour\nh100-sxm,2\nh100-sxm,3\n", ["line 3", "second price", "line 2"]),
    (b"gpu,usd_per_hour\nh100-sxm,2,extra\n", ["line 2", "expected 2 cells"]),
    (b"\xff\xfe\x00garbage", ["not UTF-8"]),
])
def test_invalid_content_leaves_the_cache(server: FakeWeb, body: bytes, needles: list[str]) -> None:
    before = _good_pull(server)
    url = server.serve("/bad.csv", Reply(body=body))
    with pytest.raises(InputError) as exc:
        server.pull("prices", url)
    assert not isinstance(exc.value, FetchError)
    line = exc.value.one_line()
    assert url in line and "\n" not in line
    for needle in needles:
        assert needle in line, (needle, line)
    assert cache_path("prices").read_bytes() == before


def test_redirect_is_followed_and_the_asked_url_kept(server: FakeWeb) -> None:
    target = server.serve("/v2/prices.csv", Reply(body=PRICE_CSV))
    url = server.serve("/prices", Reply(302, headers={"Location": "/v2/prices.csv"}))
    outcome = server.pull("prices", url)
    assert outcome.changed and outcome.cache.url == url
    assert len(server.hits("/v2/prices.csv")) == 1 and target.endswith(".csv")


def test_redirects_are_bounded_and_checked(server: FakeWeb) -> None:
    loop = server.serve("/loop", Reply(302, headers={"Location": "/loop"}))
    with pytest.raises(FetchError, match="more than 5 redirects"):
        server.pull("prices", loop)
    escape = server.serve("/escape", Reply(302, headers={"Location": "file:///etc/passwd"}))
    with pytest.raises(InputError, match="only https"):
        server.pull("prices", escape)


def test_etag_and_last_modified_give_a_304(server: FakeWeb) -> None:
    stamp = "Wed, 21 Oct 2026 07:28:00 GMT"

    def sheet(n: int, headers: dict[str, str]) -> Reply:
        if headers.get("if-none-match") == '"v1"':
            return Reply(304, headers={"ETag": '"v1"'})
        return Reply(body=PRICE_CSV, headers={"ETag": '"v1"', "Last-Modified": stamp})

    url = server.serve("/etag.csv", sheet)
    first = server.pull("prices", url)
    assert first.cache.etag == '"v1"' and first.cache.last_modified == stamp
    second = server.pull("prices", url)
    assert not second.changed and "unchanged since" in second.summary()
    assert second.cache.entries == first.cache.entries
    assert second.cache.checked_at >= first.cache.checked_at
    sent = server.hits("/etag.csv")
    assert "if-none-match" not in sent[0]
    assert sent[1]["if-none-match"] == '"v1"' and sent[1]["if-modified-since"] == stamp
    # a different URL is a different resource: no conditional headers
    server.pull("prices", server.serve("/other.csv", Reply(body=PRICE_CSV)))
    assert "if-none-match" not in server.hits("/other.csv")[0]


def test_same_bytes_without_etag_count_as_unchanged(server: FakeWeb) -> None:
    url = server.serve("/p.csv", Reply(body=PRICE_CSV))
    assert server.pull("prices", url).changed
    assert not server.pull("prices", url).changed


def test_a_304_to_an_unconditional_request_is_refused(server: FakeWeb) -> None:
    with pytest.raises(FetchError, match="unconditional"):
        server.pull("prices", server.serve("/odd.csv", Reply(304)))
    assert read_pulled("prices") is None


def _h100(url_price: float) -> None:
    price = effective_catalog().default_price("h100-sxm")
    assert price is not None and price.usd_per_hour == url_price


def test_two_sheets_of_one_static_server_are_never_mistaken(tmp_path: Path) -> None:
    """The audit's case, on `python -m http.server`'s own handler: q1 then q2 of one team
    folder, written the same second. q2's pull must not send q1's If-Modified-Since (the
    server would answer 304 and q1's $2.11 would stay where q2 says $9.99); the same
    sheet pulled again is a 304, and each pull leaves its own sheet's prices."""
    www = tmp_path / "www"
    (www / "team").mkdir(parents=True)
    stamp = time.time() - 3600
    for name, usd in (("q1", "2.11"), ("q2", "9.99")):
        sheet = www / "team" / f"prices-2026-{name}.csv"
        sheet.write_text(f"gpu,usd_per_hour\nh100-sxm,{usd}\n")
        os.utime(sheet, (stamp, stamp))
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(www))
    handler.log_message = lambda *a: None  # type: ignore[attr-defined]
    with serving(handler) as base:
        q1, q2 = f"{base}/team/prices-2026-q1.csv", f"{base}/team/prices-2026-q2.csv"
        assert pull("prices", q1, PATIENT).changed
        _h100(2.11)
        second = pull("prices", q2, PATIENT)
        assert second.changed and second.cache.url == q2  # cited as itself, not REDACTED
        _h100(9.99)
        again = pull("prices", q2, PATIENT)
        assert not again.changed and "unchanged" in again.summary()
        _h100(9.99)
        assert pull("prices", q1, PATIENT).changed  # back to q1: a new sheet again
        _h100(2.11)


def test_a_conditional_request_is_only_sent_for_the_same_url(server: FakeWeb) -> None:
    stamp = formatdate(usegmt=True)

    def sheet(usd: str) -> Route:
        def reply(n: int, headers: dict[str, str]) -> Reply:
            if headers.get("if-modified-since") == stamp:
                return Reply(304)
            return Reply(body=f"gpu,usd_per_hour\nh100-sxm,{usd}\n".encode(),
                         headers={"Last-Modified": stamp})
        return reply

    secret = "?token=Zx81kQ9wLr72mPq4VbN3"
    q1 = server.serve("/team/prices-2026-q1.csv", sheet("2.11")) + secret
    q2 = server.serve("/team/prices-2026-q2.csv", sheet("9.99")) + secret
    server.pull("prices", q1)
    assert server.pull("prices", q2).changed
    assert "if-modified-since" not in server.hits("/team/prices-2026-q2.csv")[0]
    _h100(9.99)
    assert not server.pull("prices", q2).changed
    assert server.hits("/team/prices-2026-q2.csv")[1]["if-modified-since"] == stamp
    # the cache knows its sheet by a keyed hash of the URL as pulled: never the secret
    stored = cache_path("prices").read_text()
    assert "Zx81kQ9wLr72mPq4VbN3" not in stored and source_key(q2) in stored
    assert source_key(q1) != source_key(q2)


def test_the_url_key_is_private_and_a_copied_cache_is_not_recognised(
        server: FakeWeb, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = server.serve("/p.csv", lambda n, h: Reply(304) if "if-none-match" in h else
                       Reply(body=PRICE_CSV, headers={"ETag": '"v1"'}))
    server.pull("prices", url)
    key = home / "pulled" / KEY_NAME
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert not server.pull("prices", url).changed  # the same folder's key: recognised
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "pulled").mkdir(parents=True)
    (elsewhere / "pulled" / "prices.json").write_bytes(cache_path("prices").read_bytes())
    monkeypatch.setenv("ADVISOR_HOME", str(elsewhere))
    assert server.pull("prices", url).changed  # another key: an unconditional GET
    assert "if-none-match" not in server.hits("/p.csv")[-1]


# --- parsing ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "ctype", "text", "fmt"), [
    ("/p.csv", "application/json", "", "csv"),  # the suffix wins
    ("/sheet", "text/csv; charset=utf-8", "", "csv"),
    ("/sheet", "application/toml", "", "toml"),
    ("/sheet", None, "# prices, team\n[[price]]\ngpu = 'l4'", "toml"),
    ("/sheet", None, "[gpu]\nid = 'x'", "toml"),
    ("/sheet", None, '[\n  {"gpu": "l4"}]', "json"),
    ("/sheet", None, "gpu,usd_per_hour\nl4,0.5", "csv"),
])
def test_format_detection(name: str, ctype: str | None, text: str, fmt: str) -> None:
    assert detect_format(name, ctype, text) == fmt


@pytest.mark.parametrize(("row", "field"), [
    ('"gpu": "h100-sxm", "usd_per_hour": true', "usd_per_hour"),  # was $1.00/h
    ('"gpu": ["h100-sxm"], "usd_per_hour": 2.5', "gpu"),  # was read as "['h100-sxm']"
    ('"gpu": "h100-sxm", "usd_per_hour": 2.5, "retrieved": 20260101', "retrieved"),
    ('"gpu": "h100-sxm", "usd_per_hour": 2.5, "label": ["a", "b"]', "label"),
])
def test_a_pulled_sheets_types_are_not_coerced(row: str, field: str) -> None:
    cat = load_catalog()
    with pytest.raises(InputError) as exc:
        parse_price_sheet(f'{{"price": [{{{row}}}]}}', "sheet.json", "json", cat,
                          cat.prices[0].retrieved)
    assert f"field '{field}'" in exc.value.one_line() and "price 1" in exc.value.one_line()


def test_a_sheets_unicode_digits_are_the_price_they_say() -> None:
    """A CSV price `٢.٥` is 2.5: any script's decimal digits read as numbers (the number
    grammar's docs say so); a comma, which means different things in different locales, is
    refused."""
    cat = load_catalog()
    day = cat.prices[0].retrieved
    entries = parse_price_sheet("gpu,usd_per_hour\nh100-sxm,٢.٥\n", "s.csv", "csv", cat, day)
    assert [p["usd_per_hour"] for p in entries["price"]] == [2.5]
    with pytest.raises(InputError, match="comma"):
        parse_price_sheet('gpu,usd_per_hour\nh100-sxm,"2,5"\n', "s.csv", "csv", cat, day)


def test_a_pulled_catalogs_types_are_not_coerced() -> None:
    doc = tomlkit.parse(_team_catalog())
    doc["gpu"][0]["peak_tflops"]["bf16"] = True
    with pytest.raises(InputError, match=r"peak_tflops\.bf16"):
        parse_catalog_doc(tomlkit.dumps(doc), "team.toml", "toml")
    doc = tomlkit.parse(_team_catalog())
    doc["gpu"][0]["memory"]["gib"] = "80"
    with pytest.raises(InputError, match=r"memory\.gib"):
        parse_catalog_doc(tomlkit.dumps(doc), "team.toml", "toml")


def test_sheet_formats_agree() -> None:
    cat = load_catalog()
    day = load_catalog().prices[0].retrieved
    csv_sheet = parse_price_sheet("gpu,usd_per_hour\nh100-sxm,2.5\n", "u", "csv", cat, day)
    toml_sheet = parse_price_sheet('[[price]]\ngpu = "h100-sxm"\nusd_per_hour = 2.5\n', "u",
                                   "toml", cat, day)
    json_sheet = parse_price_sheet('{"price": [{"gpu": "h100-sxm", "usd_per_hour": 2.5}]}', "u",
                                   "json", cat, day)
    assert csv_sheet == toml_sheet == json_sheet
    assert csv_sheet["price"][0]["retrieved"] == day.isoformat()


@pytest.mark.parametrize(("text", "fmt", "needle"), [
    ("gpu,usd_per_hour\n", "csv", "catalog is TOML or JSON"),
    ('[[gpus]]\nid = "x"\n', "toml", "unknown table"),
    ('{"gpu": {"id": "x"}}', "json", "expected an array of tables"),
    ("[1, 2]", "json", "expected a table"),
    ('[[gpu]]\nid = "Bad Id"\n', "toml", "Bad Id"),
])
def test_catalog_doc_errors(text: str, fmt, needle: str) -> None:
    with pytest.raises(InputError, match=needle):
        parse_catalog_doc(text, "team.toml", fmt)


def test_duplicate_entries_in_a_team_catalog_are_refused() -> None:
    doc = _team_catalog()
    twice = doc + doc[doc.index("[[gpu]]", 1):]
    with pytest.raises(InputError, match="duplicate"):
        parse_catalog_doc(twice, "team.toml", "toml")


_FORMATS = st.sampled_from(["toml", "json", "csv"])


@pytest.fixture(scope="module")
def shipped():
    return load_catalog()


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=300), fmt=_FORMATS)
def test_garbage_sheets_and_catalogs_give_one_line(shipped, text: str, fmt) -> None:
    cat = shipped
    for parse in (lambda: parse_price_sheet(text, "sheet", fmt, cat, cat.prices[0].retrieved),
                  lambda: parse_catalog_doc(text, "team", fmt)):
        try:
            parse()
        except InputError as exc:
            assert "\n" not in exc.one_line()


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.lists(st.sampled_from(["h100-sxm", "l4", "2.5", "-1", "", "x,y", '"',
                                                "2026-01-01", "nan", "1e9"]),
                              min_size=1, max_size=5), max_size=5),
       header=st.sampled_from(["gpu,usd_per_hour", "gpu,usd_per_hour,label,source,retrieved",
                               "usd_per_hour,gpu,retrieved"]))
def test_near_miss_csv_sheets_give_one_line(shipped, rows: list[list[str]], header: str) -> None:
    text = "\n".join([header, *(",".join(r) for r in rows)])
    cat = shipped
    try:
        sheet = parse_price_sheet(text, "sheet.csv", "csv", cat, cat.prices[0].retrieved)
    except InputError as exc:
        assert "sheet.csv" in exc.one_line() and "\n" not in exc.one_line()
    else:
        assert all(p["default"] and p["source"][0] == "team price sheet sheet.csv"
                   for p in sheet["price"])


# --- bounded waits, secrets in URLs, concurrent pulls ---------------------------------------


class _Trickle(BaseHTTPRequestHandler):
    """Sends its reply a byte at a time, never silent for long: the header block (or, with
    ?body, a whole reply's body) would take seconds."""

    protocol_version = "HTTP/1.1"
    BYTE_S = 0.05

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = PRICE_CSV * 4
        if self.path.endswith("?body"):
            head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            self.wfile.write(head)
            slow = body
        else:
            slow = b"HTTP/1.1 200 OK\r\nX-Padding: " + b"x" * 140 + b"\r\nContent-Length: 0\r\n\r\n"
        with contextlib.suppress(OSError):  # the client hangs up at its deadline, as it must
            for i in range(len(slow)):
                self.wfile.write(slow[i : i + 1])
                self.wfile.flush()
                time.sleep(self.BYTE_S)


@pytest.mark.parametrize("query", ["?headers", "?body"])
def test_a_trickling_server_cannot_hold_an_attempt_past_its_time(server: FakeWeb,
                                                                 query: str) -> None:
    """A byte every 0.05 s never trips the 10 s silence timeout; only the attempt's own
    limit (1 s) ends it, long before the seconds the bytes would take. The message says
    which limit ended it, so no wall-clock bound is asserted (load would make one flaky)."""
    before = _good_pull(server)
    policy = FetchPolicy(timeout_s=10.0, total_s=1.0, retries=0, allow_http=True)
    with serving(_Trickle) as base, pytest.raises(
            FetchError, match=r"the attempt took longer than 1 s"):
        pull("prices", f"{base}/trickle.csv{query}", policy)
    assert cache_path("prices").read_bytes() == before


def test_backoff_is_capped_and_so_is_the_whole_pull(server: FakeWeb) -> None:
    from advisor.core.model.bounds import MAX_BACKOFF_S, MAX_RETRIES

    policy = FetchPolicy(retries=MAX_RETRIES, backoff_s=MAX_BACKOFF_S, allow_http=True)
    assert [policy.wait_before(n) for n in (1, 2, 10, 1000)] == [MAX_BACKOFF_S] * 4
    assert FetchPolicy(backoff_s=0.5).wait_before(3) == 2.0
    url = server.serve("/down.csv", Reply(503))
    waits: list[float] = []
    with pytest.raises(FetchError, match="HTTP 503"):
        server.pull("prices", url, FetchPolicy(retries=MAX_RETRIES, backoff_s=0.01, pull_s=60,
                                        allow_http=True), sleep=waits.append)
    assert len(waits) == MAX_RETRIES and max(waits) <= MAX_BACKOFF_S
    # a pull whose budget would be spent waiting stops instead of waiting
    waits.clear()
    with pytest.raises(FetchError, match=r"HTTP 503"):
        server.pull("prices", url, FetchPolicy(retries=5, backoff_s=8, pull_s=5, allow_http=True),
             sleep=waits.append)
    assert waits == []


@pytest.mark.parametrize(("field", "value"), [
    ("timeout_s", float("inf")), ("timeout_s", float("nan")), ("timeout_s", 0.0),
    ("total_s", 1e9), ("retries", 11), ("retries", -1), ("backoff_s", 9.0),
])
def test_fetch_policy_bounds_are_one_line(field: str, value: float) -> None:
    with pytest.raises(InputError) as exc:
        FetchPolicy(**{field: value})  # type: ignore[arg-type]
    assert field in exc.value.one_line()


def test_credentials_in_a_url_are_refused_before_any_request(server: FakeWeb) -> None:
    url = server.serve("/p.csv", Reply(body=PRICE_CSV)).replace("http://", "http://bob:Pa55w@")
    with pytest.raises(InputError) as exc:
        server.pull("prices", url)
    line = exc.value.one_line()
    assert "credentials" in line and "Pa55w" not in line and "bob" not in line
    assert server.seen == []


def test_secret_query_values_never_reach_the_cache_the_catalog_or_a_report(server: FakeWeb) -> None:
    from advisor.core.redact import redact_url

    base = server.serve("/prices.csv", Reply(body=PRICE_CSV))
    url = f"{base}?token=T0KEN&X-Amz-Signature=S1G&region=eu&api_key=K3Y"
    outcome = server.pull("prices", url)
    assert "token=T0KEN" in server.hits("/prices.csv")[0]["query"]  # the request carried them
    shown = f"{base}?token=REDACTED&X-Amz-Signature=REDACTED&region=eu&api_key=REDACTED"
    assert redact_url(url) == shown and outcome.cache.url == shown
    stored = cache_path("prices").read_text()
    price = effective_catalog().default_price("h100-sxm")
    assert price is not None
    for text in (outcome.summary(), stored, " ".join(price.source),
                 provenance().model_dump_json()):
        assert "T0KEN" not in text and "S1G" not in text and "K3Y" not in text, text
    assert f"team price sheet {shown}" in price.source
    # a second pull of the same URL is recognised as the same source (conditional GET)
    assert not server.pull("prices", url).changed


def test_redact_url_drops_userinfo_and_fragments() -> None:
    from advisor.core.redact import redact_url

    assert redact_url("https://u:p@h.example:8443/a.csv?sig=1&x=2#frag") == (
        "https://REDACTED@h.example:8443/a.csv?sig=REDACTED&x=2")


def test_without_fcntl_pulls_work_unserialised(server: FakeWeb, home: Path,
                                               monkeypatch) -> None:
    """Windows has no fcntl: the lock holds nothing there (as lock.py documents) and a
    pull still fetches, validates and writes its cache atomically."""
    from advisor.io import lock

    monkeypatch.setattr(lock, "fcntl", None)
    with lock.overlay_lock(wait_s=0.2):
        pass
    assert not (home / "pulled" / lock.LOCK_NAME).exists()
    outcome = server.pull("prices", server.serve("/p.csv", Reply(body=PRICE_CSV)))
    assert outcome.changed and cache_path("prices").exists()


def test_reading_commands_need_no_fcntl(tmp_path: Path) -> None:
    """Only the pull's lock imports fcntl: reading answers, the catalog and reports works
    on a platform without it."""
    import subprocess
    import sys

    def without_fcntl(*args: str) -> subprocess.CompletedProcess[str]:
        code = ("import sys; sys.modules['fcntl'] = None\n"
                f"from advisor.cli import main; raise SystemExit(main({list(args)!r}))")
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=120)

    answers = Path(__file__).resolve().parents[2] / "examples" / "answers.toml"
    report = tmp_path / "r.toml"
    r = without_fcntl("decide", "--answers", str(answers), "--out", str(report))
    assert r.returncode == 0, r.stderr[-2000:]
    r = without_fcntl("report", "show", str(report))
    assert r.returncode == 0 and r.stdout.startswith("Verdict: "), r.stderr[-2000:]


def test_a_held_lock_makes_a_pull_wait_then_say_so(home: Path) -> None:
    import fcntl

    from advisor.io.lock import LOCK_NAME, overlay_lock

    lock = home / "pulled" / LOCK_NAME
    lock.parent.mkdir(parents=True)
    with lock.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        with pytest.raises(FetchError, match="another pull has held the lock"):  # noqa: SIM117
            with overlay_lock(wait_s=0.2):
                pass
    with overlay_lock(wait_s=0.2):  # released: taken at once
        pass


def test_concurrent_catalog_and_price_pulls_cannot_break_the_overlay(server: FakeWeb) -> None:
    """The audit's case: a catalog pull that drops team-h100-oc races a price sheet that
    prices it. Each alone is valid against the other's old cache; under the lock the
    second one to run is validated against the first's result, so one fails cleanly and
    the overlay stays usable."""
    server.pull("catalog", server.serve("/team.toml", Reply(body=_team_catalog().encode())))
    without = tomlkit.dumps({"gpu": [tomlkit.parse(_team_catalog())["gpu"][1]]})  # l4 only
    cat_url = server.serve("/team2.toml", Reply(body=without.encode(), hold_s=0.2))
    sheet = b'[[price]]\ngpu = "team-h100-oc"\nusd_per_hour = 1.5\nsource = "ops"\n'
    price_url = server.serve("/p.toml", Reply(body=sheet, hold_s=0.2))
    errors: list[BaseException] = []

    def run(kind: str, url: str) -> None:
        try:
            server.pull(kind, url, PATIENT)
        except InputError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=a) for a in
               (("catalog", cat_url), ("prices", price_url))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(errors) == 1, errors  # exactly one lost the race, with one line
    effective_catalog()  # and every command still works
