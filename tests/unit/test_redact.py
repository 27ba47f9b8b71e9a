"""Secrets in URLs are redacted by what they are, and nothing else is: a corpus of URL
shapes in both directions (each secret shape, percent-encoded and nested, must vanish;
each ordinary sheet URL must come back exactly as written), and generated key names with
credential-shaped values (hypothesis). The next shape found is one line of SECRETS or KEPT.
"""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from advisor.core.redact import HARMLESS_KEYS, REDACTED, looks_secret, redact_url, scrub

JWT = ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
GHP = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
STRIPE = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
UUID = "550e8400-e29b-41d4-a716-446655440000"
SHEET_ID = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms"
H = "https://sheets.example"
DIGEST = re.compile(r"\b[0-9a-f]{64}\b")

# (URL, the secret that must appear nowhere in what is shown, stored or cited)
SECRETS = [
    (f"{H}/p.csv?pw=hunter2", "hunter2"),
    (f"{H}/p.csv?pwd=hunter2", "hunter2"),
    (f"{H}/p.csv?password=correct-horse", "correct-horse"),
    (f"{H}/p.csv?pass=hunter2hunter2", "hunter2hunter2"),
    (f"{H}/p.csv?hmac=3f2a9c", "3f2a9c"),
    (f"{H}/p.csv?sas=sv2021sr", "sv2021sr"),
    (f"{H}/p.csv?sig=abc", "abc"),
    (f"{H}/p.csv?sv=2021-06-08&sr=b&sp=r&sig=Zm9vYmFy%2BYmF6%3D", "Zm9vYmFy+YmF6="),
    (f"{H}/p.csv?ref={GHP}", GHP),
    (f"{H}/p.csv?v={STRIPE}", STRIPE),
    (f"{H}/p.csv?v={JWT}", JWT),
    (f"{H}/p.csv;jsessionid=A1B2C3D4", "A1B2C3D4"),
    (f"{H}/app;jsessionid=A1B2C3D4/p.csv", "A1B2C3D4"),
    (f"{H}/p.csv?PHPSESSID=8f7e6d", "8f7e6d"),
    (f"{H}/p.csv?sid=8f7e6d", "8f7e6d"),
    (f"{H}/token=abc123/p.csv", "abc123"),
    (f"{H}/api/key=abc123/p.csv", "abc123"),
    (f"{H}/p.csv?next=https%3A%2F%2Fauth.example%2Fcb%3Ftoken%3Dabc123", "abc123"),
    (f"{H}/p.csv?next=%252Fcb%253Ftoken%253Dabc123", "abc123"),  # encoded twice
    (f"{H}/p.csv?next=https://auth.example/cb?token=abc123", "abc123"),  # not encoded
    (f"{H}/p.csv?state=x&redirect=%2Fcb%3Fcode%3Dq9w8e7", "q9w8e7"),
    (f"{H}/p.csv?to%6Ben=abc123", "abc123"),  # the key percent-encoded
    (f"{H}/p.csv?token=ab%63123", "abc123"),  # the value percent-encoded
    (f"{H}/p%3Btoken%3Dabc123/p.csv", "abc123"),  # a path's separators encoded
    (f"{H}/p.csv?api_key=abc", "abc"),
    (f"{H}/p.csv?apiKey=abc", "abc"),
    (f"{H}/p.csv?api-key=abc", "abc"),
    (f"{H}/p.csv?access_token=abc", "abc"),
    (f"{H}/p.csv?client_secret=abc", "abc"),
    (f"{H}/p.csv?private_token=abc", "abc"),
    (f"{H}/p.csv?otp=123456", "123456"),
    (f"{H}/p.csv?code=4/0AX4XfWh-Hn8y3k2Lq9", "4/0AX4XfWh-Hn8y3k2Lq9"),
    (f"{H}/p.csv?auth=Bearer%20abc", "Bearer abc"),
    (f"{H}/p.csv?q=Bearer+abc123", "Bearer abc123"),
    (f"{H}/p.csv?X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20260101",
     "AKIAIOSFODNN7EXAMPLE/20260101"),
    (f"{H}/p.csv?X-Amz-Security-Token=IQoJb3JpZ2lu", "IQoJb3JpZ2lu"),
    (f"{H}/p.csv?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Signature=vjbyPxybd", "vjbyPxybd"),
    (f"{H}/p.csv?Policy=eyJTdGF0ZW1lbnQi&Key-Pair-Id=K2JCJMDEHXQW5F", "K2JCJMDEHXQW5F"),
    (f"{H}/p.csv?oauth_signature=tR3%2BTy81lMeYAr", "tR3+Ty81lMeYAr"),
    (f"{H}/p.csv?s=9f86d081884c7d659a2feaa0c55ad015", "9f86d081884c7d659a2feaa0c55ad015"),
    (f"{H}/p.csv?k=Zx81kQ9wLr72mPq4VbN3", "Zx81kQ9wLr72mPq4VbN3"),
    (f"{H}/p.csv?a=1;token=Zx81kQ9wLr72mPq4VbN3", "Zx81kQ9wLr72mPq4VbN3"),
    (f"{H}/{STRIPE}/p.csv", STRIPE),
    (f"{H}/s/{UUID}/p.csv", UUID),
    (f"{H}/d/{SHEET_ID}/export", SHEET_ID),
    (f"{H}/x/aB3dE6gH9jK2/p.csv", "aB3dE6gH9jK2"),  # short, but three classes and no word
    ("https://bob:Pa55w0rd@sheets.example/p.csv", "Pa55w0rd"),
]

# Ordinary sheet URLs: shown exactly as written (a cited source must say which sheet).
KEPT = [
    f"{H}/team/prices-2026-q1.csv",
    f"{H}/team/prices-2026-q2.csv",
    f"{H}/exports/export-20260101.csv",
    f"{H}/p.csv?id=123456",
    f"{H}/prices_2026_team_sheet.csv?page=2&format=csv&region=eu",
    f"{H}/p.csv?date=2026-01-15&region=us-east-1",
    f"{H}/v2/HGX-B200/prices.csv",
    f"{H}/p.csv?ref=main",
    f"{H}/p.csv?ref=4f3a9c2e1b7d04e5f8a6",  # a commit under a harmless key
    f"{H}/p.csv?next=/team/prices.csv",
    f"{H}/p.csv?sheet=Q1%20prices&gid=0",
    f"{H}/p.csv?user=alice&team=ml-infra",
    f"{H}/Llama3Instruct/prices.csv",
    f"{H}/p.csv?countrycode=US&author=ops",
    f"{H}/2026/01/15/prices.csv?v=3",
    f"{H}/p.csv?region=AsiaPacificSouth1",
    f"{H}/p.csv?download",
    "https://[::1]:8080/p.csv",
    "https://sheets.example:8443/a.csv?x=2",
]


@pytest.mark.parametrize(("url", "secret"), SECRETS)
def test_every_secret_shape_is_redacted(url: str, secret: str) -> None:
    shown = redact_url(url)
    assert secret not in shown and REDACTED in shown, shown
    assert redact_url(shown) == shown  # idempotent: a cited URL redacted again stays as is
    message = f"GET {url} failed: {secret} refused"
    assert secret not in scrub(message, url)


@pytest.mark.parametrize(("url", "secret"), SECRETS)
def test_no_secret_shape_reaches_a_cache_or_what_a_report_records(url: str, secret: str) -> None:
    """Each shape pulled as a price sheet (through a stand-in transport that answers every
    URL): neither what the pull prints, the cache file, the price's citation nor the
    provenance a report records holds the secret; a URL refused before any request (one
    with credentials) does not quote it either."""
    import httpx

    from advisor.core.errors import InputError
    from advisor.io.catalog_store import cache_path, effective_catalog, provenance
    from advisor.io.fetch import FetchPolicy
    from advisor.io.sync import pull

    sheet = b"gpu,usd_per_hour\nh100-sxm,2.10\n"
    web = httpx.MockTransport(lambda request: httpx.Response(200, content=sheet))
    try:
        outcome = pull("prices", url, FetchPolicy(), "csv", transport=web)
    except InputError as exc:
        assert secret not in exc.one_line()
        return
    price = effective_catalog().default_price("h100-sxm")
    assert price is not None and price.usd_per_hour == 2.10
    for text in (outcome.summary(), cache_path("prices").read_text(), " ".join(price.source),
                 provenance().model_dump_json()):
        # a digest (the sheet's sha256, the URL's keyed hash: random per install) can hold
        # "abc" or "123456" by chance, and no secret can be read back out of one
        assert secret not in DIGEST.sub("<digest>", text), text


@pytest.mark.parametrize("url", KEPT)
def test_an_ordinary_url_is_kept_as_written(url: str) -> None:
    assert redact_url(url) == url


@pytest.mark.parametrize(("url", "shown"), [
    (f"{H}/p.csv?a=1&token=T0KEN&b=2", f"{H}/p.csv?a=1&token={REDACTED}&b=2"),
    (f"{H}/p.csv;jsessionid=A1B2C3D4", f"{H}/p.csv;jsessionid={REDACTED}"),
    (f"{H}/token=abc123/p.csv", f"{H}/token={REDACTED}/p.csv"),
    ("https://u:p@h.example:8443/a.csv?sig=1&x=2#frag",
     f"https://{REDACTED}@h.example:8443/a.csv?sig={REDACTED}&x=2"),
    (f"{H}/p.csv?next=https%3A%2F%2Fa.example%2Fcb%3Ftoken%3Dabc", f"{H}/p.csv?next={REDACTED}"),
])
def test_only_the_secret_part_goes(url: str, shown: str) -> None:
    assert redact_url(url) == shown


KEY_NAMES = st.from_regex(r"[a-zA-Z][a-zA-Z0-9_.-]{0,15}", fullmatch=True).filter(
    lambda k: k.lower() not in HARMLESS_KEYS)
TOKENS = st.one_of(
    st.text(string.ascii_letters + string.digits, min_size=16, max_size=48).filter(
        lambda t: any(c.isdigit() for c in t) and any(c.isalpha() for c in t)),
    st.text("0123456789abcdef", min_size=16, max_size=64),
    st.just(JWT),
    st.sampled_from([STRIPE, GHP, "AKIAIOSFODNN7EXAMPLE",
                     "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy"]),
)


@given(KEY_NAMES, TOKENS)
@example("A", "0000000aaaaaaaag")  # a long letter run is not a word (found by CI's random draw)
def test_a_credential_shaped_value_is_redacted_under_any_key(key: str, token: str) -> None:
    url = f"{H}/team/prices.csv?region=eu&{key}={token}"
    shown = redact_url(url)
    assert token not in shown and f"{REDACTED}" in shown
    assert "region=eu" in shown
    assert token not in scrub(f"GET {url} failed: {token} refused", url)


@given(TOKENS, st.sampled_from(["", "?format=csv", "?gid=0"]))
def test_a_credential_shaped_path_segment_is_redacted(token: str, query: str) -> None:
    url = f"https://h.example/d/{token}/export{query}"
    shown = redact_url(url)
    assert token not in shown and f"/d/{REDACTED}/export" in shown
    assert redact_url(shown) == shown


@given(st.integers(0, 10**9), st.dates(), st.sampled_from(["csv", "toml", "json"]))
def test_numbers_dates_and_names_are_kept(n: int, day, ext: str) -> None:
    url = (f"{H}/exports/prices-{day:%Y-%m-%d}/export-{day:%Y%m%d}-{n}.{ext}"
           f"?id={n}&date={day.isoformat()}")
    assert redact_url(url) == url


@pytest.mark.parametrize("key", ["jwt", "bearer", "pass", "code", "s", "token", "api_key", "sig",
                                 "X-Amz-Signature", "id_token", "access_token", "password"])
def test_the_audits_keys_with_their_values(key: str) -> None:
    secret = "Zx81kQ9wLr72mPq4VbN3"
    for sep in ("&", ";"):
        shown = redact_url(f"https://h.example/p.csv?a=1{sep}{key}={secret}")
        assert secret not in shown and f"{key}={REDACTED}" in shown and "a=1" in shown


@pytest.mark.parametrize("word", ["us-east-1", "2026-01-15", "team-prices", "csv", "42",
                                  "HGX-B200", "prices.csv", "123456", "export-20260101.csv"])
def test_harmless_values_are_not_secret(word: str) -> None:
    assert not looks_secret(word)


def test_scrub_reads_the_query_as_redaction_does() -> None:
    """`+` is a space to both: `q=Bearer+abc` was redacted in the URL but not scrubbed from
    a message quoting the value decoded."""
    url = "https://x.example/y?q=Bearer+abc123"
    assert redact_url(url) == f"https://x.example/y?q={REDACTED}"
    said = scrub("refused: Bearer abc123 (q=Bearer+abc123)", url)
    assert "abc123" not in said
