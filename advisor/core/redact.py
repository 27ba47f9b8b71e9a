"""Secrets in URLs, found by their shape: a pulled URL is printed, cached and cited in
every report, and a URL is someone's credential as often as not (a signed link, a token
in the query, a key in a path segment, a capability id).

What is redacted (replaced by REDACTED) wherever a URL is shown, stored or cited:

- userinfo (`user:password@`), always;
- any query value (parameters split on `&` and `;`) or path segment that looks like a
  credential: a JWT, a value after an auth scheme (`Bearer ...`), a known token prefix
  (`sk_live_`, `ghp_`, `AKIA`...), or a long random-looking string (16+ characters
  mixing letters and digits, 16+ hex digits, or 6+ digits in a query value: an OTP);
- the value of a query key that names a secret (token, key, sig, auth, password...),
  whatever its shape.

A query value is kept, whatever its shape, when its key is on a short allow-list of
harmless names (`format`, `page`, `gid`, ...), unless it is a JWT or follows an auth
scheme. The fragment is dropped. Only the request itself carries the full URL.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote, urlsplit, urlunsplit

REDACTED = "REDACTED"
HARMLESS_KEYS = frozenset({
    "format", "output", "page", "per_page", "limit", "offset", "sheet", "gid", "tab",
    "region", "lang", "version", "v", "ref", "raw", "dl", "download", "alt", "currency",
})
SECRET_WORDS = ("token", "key", "secret", "password", "passwd", "pwd", "sig", "auth",
                "credential", "session", "cookie", "access", "private", "otp", "jwt",
                "bearer", "pass", "code")
AUTH_SCHEMES = ("bearer", "basic", "token", "digest", "negotiate", "apikey")
TOKEN_PREFIXES = ("sk_live_", "sk_test_", "rk_live_", "pk_live_", "ghp_", "gho_", "ghs_",
                  "ghu_", "github_pat_", "glpat-", "xoxb-", "xoxp-", "xoxa-", "hf_", "ya29.")
_CLOUD_KEY = re.compile(r"^(?:AKIA|ASIA)[0-9A-Z]{12,}$|^AIza[0-9A-Za-z_-]{20,}$")
_JWT = re.compile(r"^[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*$")
_HEX = re.compile(r"^[0-9a-fA-F]{16,}$")
_TOKENISH = re.compile(r"^[A-Za-z0-9+/=_.~%-]{16,}$")
_WORD = re.compile(r"[a-z]{4,}")
_SEPARATORS = re.compile(r"[&;]")
_PARTS = re.compile(r"[_.~-]+")


def looks_secret(value: str, query: bool = False) -> bool:
    """Whether `value` has the shape of a credential (see the module docstring). A long
    string is random-looking when it mixes letters with digits (or both cases) and is not
    a name made of words: `prices_2026_team_sheet.csv` is kept, `Zx81kQ9wLr72mPq4VbN3` is
    not. Only a value in several parts (split on `_ . - ~`) can be such a name; one unbroken
    run of letters and digits (`0000000aaaaaaaag`) is a token whatever letters it holds."""
    v = unquote(value).strip()
    if not v:
        return False
    if _always_secret(v) or v.startswith(TOKEN_PREFIXES) or _CLOUD_KEY.match(v):
        return True
    if _HEX.match(v) or (query and v.isdigit() and len(v) >= 6):  # a digest; an OTP
        return True
    if not _TOKENISH.match(v):
        return False
    has_digit = any(c.isdigit() for c in v)
    has_alpha = any(c.isalpha() for c in v)
    both_cases = any(c.isupper() for c in v) and any(c.islower() for c in v)
    named = len(_PARTS.split(v)) > 1
    wordy = named and sum(len(w) for w in _WORD.findall(v)) * 2 > len(v)
    return ((has_digit and has_alpha) or both_cases) and not wordy


def _always_secret(value: str) -> bool:
    """A JWT or a value after an auth scheme: redacted even under a harmless key."""
    v = unquote(value).strip()
    return bool(_JWT.match(v)) or v.lower().startswith(tuple(f"{s} " for s in AUTH_SCHEMES))


def secret_key(key: str) -> bool:
    k = key.lower()
    return any(w in k for w in SECRET_WORDS) or k.startswith(("x-amz-", "x-goog-"))


def _query_secret(key: str, value: str) -> bool:
    if key.lower() in HARMLESS_KEYS:
        return _always_secret(value)
    return secret_key(key) or looks_secret(value, query=True)


def _pairs(query: str) -> list[tuple[str, str, str]]:
    """(key, value) of each query parameter, decoded (`+` is a space), with the value as
    written: one reading for what is redacted and what is scrubbed."""
    out = []
    for part in _SEPARATORS.split(query):
        if part:
            key, _, value = part.partition("=")
            out.append((unquote(key.replace("+", " ")), unquote(value.replace("+", " ")),
                        value))
    return out


def redact_url(url: str) -> str:
    """The URL as it may be printed, cached and cited: no userinfo, no fragment, and every
    secret-looking query value and path segment replaced by REDACTED."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "<a malformed URL>"
    netloc = (f"{REDACTED}@" if "@" in parts.netloc else "") + (
        f"[{host}]" if ":" in host else host) + (f":{port}" if port is not None else "")
    path = "/".join(REDACTED if looks_secret(seg) else seg for seg in parts.path.split("/"))
    query = "&".join(
        f"{quote(k, safe='')}={REDACTED if _query_secret(k, v) else quote(v, safe='')}"
        for k, v, _ in _pairs(parts.query))
    return urlunsplit((parts.scheme, netloc, path, query, ""))


def secrets_of(url: str) -> list[str]:
    """The secret parts of `url`, as written and decoded, to scrub from messages quoting it."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = []
    for key, value, written in _pairs(parts.query):
        if value and _query_secret(key, value):
            found += [written, value]
    found += [seg for seg in parts.path.split("/") if looks_secret(seg)]
    return found + [p for p in (parts.username, parts.password) if p]


def scrub(text: str, url: str) -> str:
    """A message (e.g. from the HTTP stack) with the URL's secrets taken out."""
    text = text.replace(url, redact_url(url))
    for secret in sorted(set(secrets_of(url)), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text
