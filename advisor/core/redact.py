"""Secrets in URLs, recognised by what they are: a pulled URL is printed, cached and cited
in every report, and a URL is someone's credential as often as not (a signed link, a
token in the query, a session id in a path parameter, a key in a path segment).

A part of a URL (a query value, a path segment, a `;name=value` path parameter) is a
secret, and is replaced by REDACTED wherever the URL is shown, stored or cited, when:

- its name says so: a key whose words name a credential (`token`, `pw`, `hmac`, `sas`,
  `sig`, `jsessionid`, `X-Amz-*`, ...), whatever the value looks like;
- it announces itself: a vendor's token prefix (`ghp_`, `sk_live_`, `xoxb-`, `AKIA`...),
  a JWT (`eyJ...`), a value after an auth scheme (`Bearer ...`), under any key;
- it is random: an unbroken run of 16 or more letters and digits that mixes them (or both
  cases), a digest of 16+ hex digits, a UUID, or a shorter run mixing all three classes
  with no word in it;
- it carries a URL or a query that holds a secret (`?next=...%3Ftoken%3D...`): the whole
  value goes, however often it was percent-encoded.

Everything is read percent-decoded, repeatedly, so an encoded key or separator hides
nothing. Words, numbers, dates, version tags and the file names made of them are kept
(`prices-2026-q1.csv`, `export-20260101.csv`, `?id=123456`): a cited source must still
say which sheet it was. A value under a harmless key (`format`, `page`, `ref`, `v`...)
is kept unless it announces itself or nests a secret: a commit under `ref` is no secret,
a GitHub token is. Userinfo is always redacted, the fragment dropped, the host kept.
Only the request itself carries the full URL.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit, urlunsplit

REDACTED = "REDACTED"
HARMLESS_KEYS = frozenset({
    "format", "output", "page", "per_page", "limit", "offset", "sheet", "gid", "tab",
    "region", "lang", "version", "v", "ref", "raw", "dl", "download", "alt", "currency",
})
# A key's words (split at case changes, digits and punctuation) that name a credential...
SECRET_WORDS = frozenset({
    "key", "pw", "pwd", "pass", "sig", "sas", "hmac", "mac", "auth", "otp", "totp", "pin",
    "code", "sid", "jwt", "ticket", "nonce", "private", "bearer", "cookie", "csrf", "xsrf",
})
# ...and the stems that do wherever they stand in it (`access_token`, `apikey`, `PHPSESSID`).
SECRET_STEMS = ("token", "secret", "passw", "passphrase", "signature", "credential",
                "session", "sessid", "apikey", "accesskey", "privatekey", "authoriz",
                "oauth", "hmac", "jwt", "cookie")
SIGNED_PREFIXES = ("x-amz-", "x-goog-")  # every parameter of a signed cloud link
AUTH_SCHEMES = ("bearer", "basic", "token", "digest", "negotiate", "apikey")
TOKEN_PREFIXES = ("sk_live_", "sk_test_", "rk_live_", "rk_test_", "pk_live_", "ghp_", "gho_",
                  "ghs_", "ghu_", "ghr_", "github_pat_", "glpat-", "xoxb-", "xoxp-", "xoxa-",
                  "xoxs-", "hf_", "ya29.", "npm_", "pypi-", "shpat_", "sq0atp-")
_TAIL = r"(?:(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{8,}|[A-Za-z0-9_-]{16,})"  # a prefix's token
_ANNOUNCED = re.compile(
    r"(?<![A-Za-z0-9])(?:" + "|".join(re.escape(p) for p in TOKEN_PREFIXES) + ")" + _TAIL
    + r"|(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])"
    r"|(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}"
    r"|(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"
    r"|^\s*(?i:" + "|".join(AUTH_SCHEMES) + r")\s+\S")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_RUN = re.compile(r"[A-Za-z0-9]+")
_HEX = re.compile(r"[0-9a-fA-F]+")
_PIECES = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")  # camelCase words and numbers
_KEY_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
_NESTED = re.compile(r"[/?=&;]|://")
LONG_RUN = 16  # a run this long that mixes letters and digits is no word or number
MIXED_RUN = 12  # from here, a run mixing upper, lower and digits with no word in it
WORD = 3  # pieces this long on average make a name (`Llama3Instruct`), not a token
DECODE_DEPTH = 8  # percent-decodings, and nestings, followed before a value is redacted whole


def decoded(text: str) -> str:
    """`text` percent-decoded until it no longer changes (at most DECODE_DEPTH times)."""
    for _ in range(DECODE_DEPTH):
        plain = unquote(text)
        if plain == text:
            break
        text = plain
    return text


def secret_key(key: str) -> bool:
    """Whether a parameter's name says its value is a credential."""
    k = decoded(key)
    low = k.lower()
    words = {w.lower() for w in _KEY_WORDS.findall(k)}
    return (bool(words & SECRET_WORDS) or any(s in low for s in SECRET_STEMS)
            or low.startswith(SIGNED_PREFIXES))


def _random_run(run: str) -> bool:
    digits = any(c.isdigit() for c in run)
    upper = any(c.isupper() for c in run)
    lower = any(c.islower() for c in run)
    letters = upper or lower
    pieces = _PIECES.findall(run)
    wordy = sum(map(len, pieces)) >= WORD * len(pieces)
    if len(run) >= LONG_RUN:
        if _HEX.fullmatch(run) or (digits and letters):
            return True
        return upper and lower and not wordy  # camelCase words are a name
    return len(run) >= MIXED_RUN and digits and upper and lower and not wordy


def looks_secret(value: str, harmless: bool = False) -> bool:
    """Whether a value is a credential by what it is (see the module docstring); under a
    `harmless` key only a value that announces itself, or nests a secret, is one."""
    return _secret_value(value, harmless, 0, [])


def _secret_value(value: str, harmless: bool, depth: int, found: list[str]) -> bool:
    v = decoded(value).strip()
    if not v:
        return False
    if _ANNOUNCED.search(v):
        return True
    if depth < DECODE_DEPTH and _NESTED.search(v) and _nests_secret(v, depth + 1, found):
        return True
    if harmless:
        return False
    return bool(_UUID.search(v)) or any(_random_run(r) for r in _RUN.findall(v))


def _nests_secret(text: str, depth: int, found: list[str]) -> bool:
    """Whether a decoded value that reads as a URL, a path or a query holds a secret (each
    one it holds is added to `found`, so a message quoting it is scrubbed too)."""
    inner: list[str] = []
    if "://" in text or "?" in text:
        _walk(text, inner, depth)
    elif "=" in text or "&" in text:
        _query(text, inner, depth)
    else:
        _path(text, inner, depth)
    found += inner
    return bool(inner)


def _pair(part: str, found: list[str], depth: int, harmless_keys: bool = True) -> str:
    """One `key=value` (or bare value) of a query or a path parameter, redacted if secret."""
    key, eq, value = part.partition("=")
    if not eq:
        key, value = "", part
    harmless = harmless_keys and decoded(key).lower() in HARMLESS_KEYS
    secret = bool(value) and ((bool(key) and secret_key(key)) or any(
        _secret_value(v, harmless, depth, found) for v in (value, value.replace("+", " "))))
    if not secret:
        return part
    found += [value, decoded(value), decoded(value.replace("+", " "))]
    return f"{key}={REDACTED}" if eq else REDACTED


def _query(query: str, found: list[str], depth: int) -> str:
    return "".join(p if p in "&;" else _pair(p, found, depth)
                   for p in re.split(r"([&;])", query))


def _path(path: str, found: list[str], depth: int) -> str:
    """Each segment, and each `;name=value` parameter of one, judged on its own."""
    out = []
    for segment in path.split("/"):
        parts = segment.split(";")
        out.append(";".join(_pair(p, found, depth, harmless_keys=False) for p in parts))
    return "/".join(out)


def _walk(url: str, found: list[str], depth: int = 0) -> str:
    """The URL with its secrets replaced; each secret (as written and decoded) appended to
    `found`, so redaction and scrubbing read the URL one way."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "<a malformed URL>"
    if "@" in parts.netloc:
        found += [p for p in (parts.username, parts.password) if p]
    netloc = (f"{REDACTED}@" if "@" in parts.netloc else "") + (
        f"[{host}]" if ":" in host else host) + (f":{port}" if port is not None else "")
    path = _path(parts.path, found, depth)
    query = _query(parts.query, found, depth)
    return urlunsplit((parts.scheme, netloc, path, query, ""))


def redact_url(url: str) -> str:
    """The URL as it may be printed, cached and cited: no userinfo, no fragment, and every
    secret query value, path segment and path parameter replaced by REDACTED."""
    return _walk(url, [])


def secrets_of(url: str) -> list[str]:
    """The secret parts of `url`, as written and decoded, to scrub from messages quoting it."""
    found: list[str] = []
    _walk(url, found)
    return [s for s in found if s]


def scrub(text: str, url: str) -> str:
    """A message (e.g. from the HTTP stack) with the URL's secrets taken out."""
    text = text.replace(url, redact_url(url))
    for secret in sorted(set(secrets_of(url)), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text
