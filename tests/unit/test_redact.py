"""Secrets in URLs are redacted by their shape, whatever the key is called: a generated
word list of key names (hypothesis) with credential-shaped values, against the harmless
parameters a sheet URL really carries."""

from __future__ import annotations

import string

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from advisor.core.redact import HARMLESS_KEYS, REDACTED, looks_secret, redact_url, scrub

JWT = ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
KEY_NAMES = st.from_regex(r"[a-zA-Z][a-zA-Z0-9_.-]{0,15}", fullmatch=True).filter(
    lambda k: k.lower() not in HARMLESS_KEYS)
TOKENS = st.one_of(
    st.text(string.ascii_letters + string.digits, min_size=16, max_size=48).filter(
        lambda t: any(c.isdigit() for c in t) and any(c.isalpha() for c in t)),
    st.text("0123456789abcdef", min_size=16, max_size=64),
    st.just(JWT),
    st.sampled_from(["sk_live_4eC39HqLyjWDarjtT1zdp7dc",
                     "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "AKIAIOSFODNN7EXAMPLE",
                     "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy"]),
)
QUERY_TOKENS = st.one_of(TOKENS, st.integers(100000, 10**12).map(str))  # an OTP, in a query


@given(KEY_NAMES, QUERY_TOKENS)
@example("A", "0000000aaaaaaaag")  # a long letter run is not a word (found by CI's random draw)
def test_a_credential_shaped_value_is_redacted_under_any_key(key: str, token: str) -> None:
    url = f"https://sheets.example/team/prices.csv?region=eu&{key}={token}"
    shown = redact_url(url)
    assert token not in shown and f"{REDACTED}" in shown
    assert "region=eu" in shown
    assert token not in scrub(f"GET {url} failed: {token} refused", url)


@given(TOKENS, st.sampled_from(["", "?format=csv", "?gid=0"]))
def test_a_credential_shaped_path_segment_is_redacted(token: str, query: str) -> None:
    url = f"https://h.example/d/{token}/export{query}"
    shown = redact_url(url)
    assert token not in shown and f"/d/{REDACTED}/export" in shown
    assert redact_url(shown) == shown  # idempotent: a cached URL redacted again stays as is


@pytest.mark.parametrize("key", ["jwt", "bearer", "pass", "code", "s", "token", "api_key", "sig",
                                 "X-Amz-Signature", "id_token", "access_token", "password"])
def test_the_audits_keys_with_their_values(key: str) -> None:
    secret = "Zx81kQ9wLr72mPq4VbN3"
    for sep in ("&", ";"):
        shown = redact_url(f"https://h.example/p.csv?a=1{sep}{key}={secret}")
        assert secret not in shown and f"{key}={REDACTED}" in shown and "a=1" in shown


@pytest.mark.parametrize(("url", "shown"), [
    ("https://h.example/prices_2026_team_sheet.csv?page=2&format=csv&region=eu",
     "https://h.example/prices_2026_team_sheet.csv?page=2&format=csv&region=eu"),
    ("https://docs.google.com/spreadsheets/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms"
     "/export?format=csv&gid=0",
     f"https://docs.google.com/spreadsheets/d/{REDACTED}/export?format=csv&gid=0"),
    ("https://u:p@h.example:8443/a.csv?sig=1&x=2#frag",
     f"https://{REDACTED}@h.example:8443/a.csv?sig={REDACTED}&x=2"),
    (f"https://h.example/x?v={JWT}", f"https://h.example/x?v={REDACTED}"),  # harmless key, JWT
    ("https://h.example/x?ref=4f3a9c2e1b7d04e5f8a6", "https://h.example/x?ref=4f3a9c2e1b7d04e5f8a6"),
    ("https://h.example/x?auth=Bearer%20abc", f"https://h.example/x?auth={REDACTED}"),
    ("https://[::1]:8080/p.csv", "https://[::1]:8080/p.csv"),
])
def test_what_is_kept_and_what_is_not(url: str, shown: str) -> None:
    assert redact_url(url) == shown


@pytest.mark.parametrize("word", ["us-east-1", "2026-01-15", "team-prices", "csv", "42",
                                  "HGX-B200", "prices.csv"])
def test_harmless_values_are_not_secret(word: str) -> None:
    assert not looks_secret(word, query=True)


def test_scrub_reads_the_query_as_redaction_does() -> None:
    """`+` is a space to both: `q=Bearer+abc` was redacted in the URL but not scrubbed from
    a message quoting the value decoded."""
    url = "https://x.example/y?q=Bearer+abc123"
    assert redact_url(url) == f"https://x.example/y?q={REDACTED}"
    said = scrub("refused: Bearer abc123 (q=Bearer+abc123)", url)
    assert "abc123" not in said
