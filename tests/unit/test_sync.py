"""Catalog and price-sheet pulls against a real HTTP server on 127.0.0.1.

Each failure mode (timeout, 404, 500, truncated body, invalid or oversized content,
redirects, 304) must leave the previous cache byte-for-byte as it was.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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
from advisor.io.sync import pull

FAST = FetchPolicy(timeout_s=0.3, total_s=3.0, retries=1, backoff_s=0.01,
                   max_bytes=64 * 1024, allow_http=True)
SLOW_OK = FetchPolicy(timeout_s=5.0, total_s=10.0, retries=0, allow_http=True)

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
    delay: float = 0.0  # before the status line: a stalled server
    send_only: int | None = None  # declare len(body) but send this many bytes, then hang up
    chunked: bool = False  # no Content-Length: the cap must hold while streaming
    trickle: float = 0.0  # seconds between body bytes: a server that never quite goes silent
    trickle_headers: bool = False  # trickle the header block instead, before any body


Route = Callable[[int, dict[str, str]], Reply]  # (hit number, request headers) -> reply


class Server:
    """A stdlib HTTP server in a thread on an ephemeral port; stops itself after 30 s."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.seen: list[tuple[str, dict[str, str]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                headers = {k.lower(): v for k, v in self.headers.items()}
                path = self.path.split("?", 1)[0]
                outer.seen.append((path, headers | {"query": self.path.partition("?")[2]}))
                hits = sum(1 for p, _ in outer.seen if p == path)
                route = outer.routes.get(path)
                reply = route(hits, headers) if route else Reply(404, b"not here")
                time.sleep(reply.delay)
                # the client may hang up first, as it should past a cap or a timeout
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._send(reply)

            def _send(self, reply: Reply) -> None:
                if reply.trickle_headers:
                    head = (b"HTTP/1.1 200 OK\r\nX-Padding: " + b"x" * 140 + b"\r\n"
                            b"Content-Length: 0\r\n\r\n")
                    for i in range(len(head)):
                        self.wfile.write(head[i : i + 1])
                        self.wfile.flush()
                        time.sleep(reply.trickle)
                    return
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("Connection", "close")
                if reply.chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for i in range(0, len(reply.body), 4096):
                        piece = reply.body[i : i + 4096]
                        self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    self.wfile.write(b"0\r\n\r\n")
                    return
                if reply.status != 304:
                    self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                if reply.trickle:
                    for i in range(len(reply.body)):
                        self.wfile.write(reply.body[i : i + 1])
                        self.wfile.flush()
                        time.sleep(reply.trickle)
                    return
                self.wfile.write(reply.body[: reply.send_only])

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self.watchdog = threading.Timer(30, self.httpd.shutdown)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def serve(self, path: str, reply: Reply | Route) -> str:
        self.routes[path] = reply if callable(reply) else (lambda n, h: reply)
        return self.url(path)

    def hits(self, path: str) -> list[dict[str, str]]:
        return [h for p, h in self.seen if p == path]


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server()
    srv.thread.start()
    srv.watchdog.start()
    yield srv
    srv.watchdog.cancel()
    srv.httpd.shutdown()
    srv.httpd.server_close()


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ADVISOR_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _good_pull(server: Server) -> bytes:
    """A first, valid price pull; returns the cache bytes that later failures must keep."""
    pull("prices", server.serve("/good.csv", Reply(body=PRICE_CSV)), FAST)
    return cache_path("prices").read_bytes()


def _team_catalog() -> str:
    shipped = load_catalog()
    new = shipped.gpu("h100-sxm").model_dump(mode="json", exclude_none=True)
    new.update(id="team-h100-oc", name="Team H100, overclocked", aliases=[])
    l4 = shipped.gpu("l4").model_dump(mode="json", exclude_none=True)
    l4["name"] = "NVIDIA L4 (team-verified)"
    return tomlkit.dumps({"gpu": [new, l4]})


# --- merging ----------------------------------------------------------------------------------


def test_price_sheet_becomes_the_labelled_default(server: Server) -> None:
    shipped = load_catalog()
    url = server.serve("/prices.csv", Reply(body=PRICE_CSV))
    outcome = pull("prices", url, FAST)
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


def test_catalog_merges_entry_by_entry(server: Server) -> None:
    shipped = load_catalog()
    outcome = pull("catalog", server.serve("/team.toml", Reply(body=_team_catalog().encode())),
                   FAST)
    assert outcome.changed
    cat = effective_catalog()
    assert len(cat.gpus) == len(shipped.gpus) + 1
    assert cat.gpu("team-h100-oc").name == "Team H100, overclocked"
    assert cat.gpu("l4").name == "NVIDIA L4 (team-verified)"
    assert cat.gpu("b200-sxm") == shipped.gpu("b200-sxm")


def test_price_sheet_may_price_a_gpu_from_the_pulled_catalog(server: Server) -> None:
    pull("catalog", server.serve("/team.toml", Reply(body=_team_catalog().encode())), FAST)
    sheet = b'[[price]]\ngpu = "team-h100-oc"\nusd_per_hour = 1.5\nsource = "ops wiki"\n'
    pull("prices", server.serve("/p.toml", Reply(body=sheet)), FAST)
    price = effective_catalog().default_price("team-h100-oc")
    assert price is not None and price.usd_per_hour == 1.5 and price.source[-1] == "ops wiki"


def test_merged_result_is_validated_before_caching(server: Server) -> None:
    bad = _team_catalog().replace('arch = "sm_90"', 'arch = "sm_999"', 1)
    url = server.serve("/bad.toml", Reply(body=bad.encode()))
    with pytest.raises(InputError) as exc:
        pull("catalog", url, FAST)
    line = exc.value.one_line()
    assert url in line and "over catalog/gpus.toml" in line and "sm_999" in line
    assert not cache_path("catalog").exists()


def test_offline_use_never_touches_the_network(server: Server, monkeypatch) -> None:
    _good_pull(server)

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("network used")

    monkeypatch.setattr(httpx, "Client", no_network)
    cat = effective_catalog()
    assert cat.default_price("h100-sxm").usd_per_hour == 2.10  # type: ignore[union-attr]


def test_reports_record_what_was_pulled(server: Server) -> None:
    _good_pull(server)
    prov = provenance()
    assert [(s.kind, s.url) for s in prov.pulled] == [("prices", server.url("/good.csv"))]
    assert prov.catalog_version == shipped_catalog_version() and len(prov.catalog_version) == 12


def test_no_pull_means_the_shipped_catalog() -> None:
    assert effective_catalog() == load_catalog()


def test_damaged_cache_is_one_line_and_a_pull_repairs_it(server: Server) -> None:
    path = cache_path("prices")
    path.parent.mkdir(parents=True)
    path.write_text('{"schema": "advisor.pulled", "version": 7}')
    with pytest.raises(InputError) as exc:
        effective_catalog()
    assert str(path) in exc.value.one_line() and "version" in exc.value.one_line()
    pull("prices", server.serve("/p.csv", Reply(body=PRICE_CSV)), FAST)
    assert effective_catalog().default_price("h100-sxm").usd_per_hour == 2.10  # type: ignore[union-attr]


# --- transport failures leave the previous cache untouched ------------------------------------


def test_plain_http_needs_allow_http(server: Server) -> None:
    url = server.serve("/p.csv", Reply(body=PRICE_CSV))
    strict = FetchPolicy(allow_http=False)
    with pytest.raises(InputError, match="--allow-http"):
        pull("prices", url, strict)
    for other in ("file:///etc/passwd", "ftp://127.0.0.1/p.csv"):
        with pytest.raises(InputError, match="only https"):
            pull("prices", other, FAST)
    assert server.seen == []


def test_404_fails_at_once(server: Server) -> None:
    before = _good_pull(server)
    with pytest.raises(FetchError) as exc:
        pull("prices", server.url("/missing.csv"), FAST)
    assert "HTTP 404" in exc.value.one_line() and "/missing.csv" in exc.value.one_line()
    assert len(server.hits("/missing.csv")) == 1
    assert cache_path("prices").read_bytes() == before


def test_500_is_retried_with_exponential_backoff(server: Server) -> None:
    before = _good_pull(server)
    url = server.serve("/flaky.csv", Reply(500, b"oops"))
    waits: list[float] = []
    policy = FetchPolicy(retries=2, backoff_s=0.25, allow_http=True)
    with pytest.raises(FetchError, match=r"HTTP 500 .*after 3 attempts"):
        pull("prices", url, policy, sleep=waits.append)
    assert waits == [0.25, 0.5]
    assert len(server.hits("/flaky.csv")) == 3
    assert cache_path("prices").read_bytes() == before


def test_a_transient_failure_then_success(server: Server) -> None:
    url = server.serve("/once.csv", lambda n, h: Reply(503) if n == 1 else Reply(body=PRICE_CSV))
    assert pull("prices", url, FAST).changed
    assert len(server.hits("/once.csv")) == 2


def test_timeout(server: Server) -> None:
    before = _good_pull(server)
    url = server.serve("/slow.csv", Reply(body=PRICE_CSV, delay=0.8))
    # the message is the proof the timeout fired; no wall-clock bound (load would make one flaky)
    with pytest.raises(FetchError, match=r"timed out after 0.3 s \(after 2 attempts\)"):
        pull("prices", url, FAST)
    assert cache_path("prices").read_bytes() == before


def test_truncated_body(server: Server) -> None:
    before = _good_pull(server)
    url = server.serve("/cut.csv", Reply(body=PRICE_CSV, send_only=20))
    with pytest.raises(FetchError, match="closed early"):
        pull("prices", url, FAST)
    assert cache_path("prices").read_bytes() == before


@pytest.mark.parametrize("chunked", [False, True], ids=["declared", "streamed"])
def test_oversized_body(server: Server, chunked: bool) -> None:
    before = _good_pull(server)
    big = PRICE_CSV + b"#" * (FAST.max_bytes + 1)
    url = server.serve("/big.csv", Reply(body=big, chunked=chunked))
    with pytest.raises(FetchError, match="byte cap"):
        pull("prices", url, FAST)
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
def test_invalid_content_leaves_the_cache(server: Server, body: bytes, needles: list[str]) -> None:
    before = _good_pull(server)
    url = server.serve("/bad.csv", Reply(body=body))
    with pytest.raises(InputError) as exc:
        pull("prices", url, FAST)
    assert not isinstance(exc.value, FetchError)
    line = exc.value.one_line()
    assert url in line and "\n" not in line
    for needle in needles:
        assert needle in line, (needle, line)
    assert cache_path("prices").read_bytes() == before


def test_redirect_is_followed_and_the_asked_url_kept(server: Server) -> None:
    target = server.serve("/v2/prices.csv", Reply(body=PRICE_CSV))
    url = server.serve("/prices", Reply(302, headers={"Location": "/v2/prices.csv"}))
    outcome = pull("prices", url, FAST)
    assert outcome.changed and outcome.cache.url == url
    assert len(server.hits("/v2/prices.csv")) == 1 and target.endswith(".csv")


def test_redirects_are_bounded_and_checked(server: Server) -> None:
    loop = server.serve("/loop", Reply(302, headers={"Location": "/loop"}))
    with pytest.raises(FetchError, match="more than 5 redirects"):
        pull("prices", loop, FAST)
    escape = server.serve("/escape", Reply(302, headers={"Location": "file:///etc/passwd"}))
    with pytest.raises(InputError, match="only https"):
        pull("prices", escape, FAST)


def test_etag_and_last_modified_give_a_304(server: Server) -> None:
    stamp = "Wed, 21 Oct 2026 07:28:00 GMT"

    def sheet(n: int, headers: dict[str, str]) -> Reply:
        if headers.get("if-none-match") == '"v1"':
            return Reply(304, headers={"ETag": '"v1"'})
        return Reply(body=PRICE_CSV, headers={"ETag": '"v1"', "Last-Modified": stamp})

    url = server.serve("/etag.csv", sheet)
    first = pull("prices", url, FAST)
    assert first.cache.etag == '"v1"' and first.cache.last_modified == stamp
    second = pull("prices", url, FAST)
    assert not second.changed and "unchanged since" in second.summary()
    assert second.cache.entries == first.cache.entries
    assert second.cache.checked_at >= first.cache.checked_at
    sent = server.hits("/etag.csv")
    assert "if-none-match" not in sent[0]
    assert sent[1]["if-none-match"] == '"v1"' and sent[1]["if-modified-since"] == stamp
    # a different URL is a different resource: no conditional headers
    pull("prices", server.serve("/other.csv", Reply(body=PRICE_CSV)), FAST)
    assert "if-none-match" not in server.hits("/other.csv")[0]


def test_same_bytes_without_etag_count_as_unchanged(server: Server) -> None:
    url = server.serve("/p.csv", Reply(body=PRICE_CSV))
    assert pull("prices", url, FAST).changed
    assert not pull("prices", url, FAST).changed


def test_a_304_to_an_unconditional_request_is_refused(server: Server) -> None:
    with pytest.raises(FetchError, match="unconditional"):
        pull("prices", server.serve("/odd.csv", Reply(304)), FAST)
    assert read_pulled("prices") is None


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


@pytest.mark.parametrize("headers", [False, True], ids=["body", "headers"])
def test_a_trickling_server_cannot_hold_an_attempt_past_its_time(server: Server,
                                                                 headers: bool) -> None:
    # one byte every 0.1 s never trips the 0.3 s silence timeout; only the attempt's own
    # limit (1 s here) ends it, and it must, long before the 14 s the bytes would take
    before = _good_pull(server)
    url = server.serve("/trickle.csv", Reply(body=PRICE_CSV, trickle=0.1,
                                             trickle_headers=headers))
    policy = FetchPolicy(timeout_s=0.3, total_s=1.0, retries=0, allow_http=True)
    # the attempt's own deadline is what ended it: the message says so (no wall-clock bound)
    with pytest.raises(FetchError, match=r"the attempt took longer than 1 s"):
        pull("prices", url, policy)
    assert cache_path("prices").read_bytes() == before


def test_backoff_is_capped_and_so_is_the_whole_pull(server: Server) -> None:
    from advisor.core.model.bounds import MAX_BACKOFF_S, MAX_RETRIES

    policy = FetchPolicy(retries=MAX_RETRIES, backoff_s=MAX_BACKOFF_S, allow_http=True)
    assert [policy.wait_before(n) for n in (1, 2, 10, 1000)] == [MAX_BACKOFF_S] * 4
    assert FetchPolicy(backoff_s=0.5).wait_before(3) == 2.0
    url = server.serve("/down.csv", Reply(503))
    waits: list[float] = []
    with pytest.raises(FetchError, match="HTTP 503"):
        pull("prices", url, FetchPolicy(retries=MAX_RETRIES, backoff_s=0.01, pull_s=60,
                                        allow_http=True), sleep=waits.append)
    assert len(waits) == MAX_RETRIES and max(waits) <= MAX_BACKOFF_S
    # a pull whose budget would be spent waiting stops instead of waiting
    waits.clear()
    with pytest.raises(FetchError, match=r"HTTP 503"):
        pull("prices", url, FetchPolicy(retries=5, backoff_s=8, pull_s=5, allow_http=True),
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


def test_credentials_in_a_url_are_refused_before_any_request(server: Server) -> None:
    url = server.serve("/p.csv", Reply(body=PRICE_CSV)).replace("http://", "http://bob:Pa55w@")
    with pytest.raises(InputError) as exc:
        pull("prices", url, FAST)
    line = exc.value.one_line()
    assert "credentials" in line and "Pa55w" not in line and "bob" not in line
    assert server.seen == []


def test_secret_query_values_never_reach_the_cache_the_catalog_or_a_report(server: Server) -> None:
    from advisor.core.redact import redact_url

    base = server.serve("/prices.csv", Reply(body=PRICE_CSV))
    url = f"{base}?token=T0KEN&X-Amz-Signature=S1G&region=eu&api_key=K3Y"
    outcome = pull("prices", url, FAST)
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
    assert not pull("prices", url, FAST).changed


def test_redact_url_drops_userinfo_and_fragments() -> None:
    from advisor.core.redact import redact_url

    assert redact_url("https://u:p@h.example:8443/a.csv?sig=1&x=2#frag") == (
        "https://REDACTED@h.example:8443/a.csv?sig=REDACTED&x=2")


def test_without_fcntl_pulls_work_unserialised(server: Server, home: Path,
                                               monkeypatch) -> None:
    """Windows has no fcntl: the lock holds nothing there (as lock.py documents) and a
    pull still fetches, validates and writes its cache atomically."""
    from advisor.io import lock

    monkeypatch.setattr(lock, "fcntl", None)
    with lock.overlay_lock(wait_s=0.2):
        pass
    assert not (home / "pulled" / lock.LOCK_NAME).exists()
    outcome = pull("prices", server.serve("/p.csv", Reply(body=PRICE_CSV)), FAST)
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


def test_concurrent_catalog_and_price_pulls_cannot_break_the_overlay(server: Server) -> None:
    """The audit's case: a catalog pull that drops team-h100-oc races a price sheet that
    prices it. Each alone is valid against the other's old cache; under the lock the
    second one to run is validated against the first's result, so one fails cleanly and
    the overlay stays usable."""
    pull("catalog", server.serve("/team.toml", Reply(body=_team_catalog().encode())), FAST)
    without = tomlkit.dumps({"gpu": [tomlkit.parse(_team_catalog())["gpu"][1]]})  # l4 only
    cat_url = server.serve("/team2.toml", Reply(body=without.encode(), delay=0.3))
    sheet = b'[[price]]\ngpu = "team-h100-oc"\nusd_per_hour = 1.5\nsource = "ops"\n'
    price_url = server.serve("/p.toml", Reply(body=sheet, delay=0.3))
    errors: list[BaseException] = []

    def run(kind: str, url: str) -> None:
        try:
            pull(kind, url, SLOW_OK)  # type: ignore[arg-type]
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
