"""The one sanitiser: which characters it escapes, and that the fast scan agrees with it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from advisor.core.text import clean, clean_block, first_control, refuse_control


def _changed_by_block(text: str) -> str | None:
    """The definition first_control answers to: the escape of the first character that
    clean_block would rewrite."""
    for ch in text:
        if clean_block(ch) != ch:
            return clean_block(ch)
    return None


@given(st.text(alphabet=st.characters(codec=None, exclude_categories=())))
def test_the_scan_finds_what_clean_block_would_change(text: str) -> None:
    assert first_control(text) == _changed_by_block(text)


def test_every_code_point_is_judged_as_clean_block_judges_it() -> None:
    for code in range(0x110000):
        ch = chr(code)
        assert first_control(f"ok{ch}") == (None if clean_block(ch) == ch else clean_block(ch))


def test_what_is_escaped_and_what_is_layout() -> None:
    assert first_control("GPU \x1b]0;owned\x07") == "\\x1b"
    assert first_control("line\nnext\ttab") is None
    assert first_control("trojan \u202e source") == "\\u202e"
    assert first_control("lone \ud800") == "\\ud800"
    assert first_control("B200 — 180 GB, ü, 中") is None
    assert clean("a\nb") == "a\\x0ab"


def test_refusal_names_the_character_and_reads_keys_too() -> None:
    for bad in ("\x9b31m", ["ok", "\x07"], {"key\x1b": "v"}, ("ok", "\u2028")):
        try:
            refuse_control(bad, "catalog text")
        except ValueError as exc:
            assert "catalog text" in str(exc) and "control character \\" in str(exc)
        else:
            raise AssertionError(f"{bad!r} was let through")
    refuse_control({"name": "H200 SXM", "n": 8}, "catalog text")
