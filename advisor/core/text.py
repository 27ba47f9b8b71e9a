"""Text that came from a file or the network, made safe to show on a terminal.

A GPU name in a pulled catalog, a warning in a report or a hostname in a probe record
is someone else's text. Written raw, an ESC or BEL in it is a terminal command: it can
retitle the window, clear the screen, move the cursor over earlier lines or hide text
(`\\x1b]0;...\\x07\\x1b[2J`). `clean` turns every such character into its visible
escape (`\\x1b`), so the reader sees that it was there and nothing acts on it.

Covered: the C0 controls (U+0000-U+001F, tab and newline included unless asked for),
DEL, the C1 controls (U+0080-U+009F, which some terminals read as CSI and OSC), the
line and paragraph separators, the bidirectional overrides and isolates that can make
text display in a different order than it reads ("trojan source"), and lone surrogates
(JSON can spell one; printing or writing it as UTF-8 would fail).

This is the one sanitiser. Data keeps its text as written (a report reads back exactly);
the output points run this over what they show: error lines (`InputError.one_line`),
tables and blocks the CLI draws (`advisor.cli.render.emit`, `advisor.present.humanize`), and the
wizard's labels of catalog and pulled names.
"""

from __future__ import annotations

import re

_BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
_SURROGATES = range(0xD800, 0xE000)  # JSON can spell a lone one; it cannot be written as UTF-8
_UNSAFE = (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029, *_BIDI, *_SURROGATES)


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_LINE = {code: _escape(code) for code in _UNSAFE}
_BLOCK = {code: esc for code, esc in _LINE.items() if chr(code) not in "\n\t"}


def _char_class(codes: list[int]) -> re.Pattern[str]:
    """One regex class of `codes`, consecutive runs as ranges (a 2,000-member class compiles
    slowly): every catalog field passes through first_control at each start-up."""
    runs: list[list[int]] = []
    for code in sorted(codes):
        if runs and code == runs[-1][1] + 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return re.compile("[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in runs) + "]")


_BLOCK_RE = _char_class(list(_BLOCK))


def clean(text: str) -> str:
    """One line of display text: every control character as its visible escape."""
    return text.translate(_LINE)


def clean_block(text: str) -> str:
    """A multi-line block: as `clean`, but newlines and tabs are kept as layout."""
    return text.translate(_BLOCK)


def first_control(text: str) -> str | None:
    """The escape of the first character `clean_block` would change, or None if there is none."""
    found = _BLOCK_RE.search(text)
    return _BLOCK[ord(found.group())] if found else None


def refuse_control(value: object, what: str = "text") -> None:
    """Raise ValueError if a string in `value` (a str, or the strs of a list, tuple or dict,
    keys included) holds a control character other than newline and tab. For the models
    whose text is shown everywhere: refusing it at load keeps it off every terminal."""
    items = value.items() if isinstance(value, dict) else None
    texts = [t for kv in items for t in kv] if items is not None else (
        list(value) if isinstance(value, list | tuple) else [value])
    for text in texts:
        if isinstance(text, str) and (bad := first_control(text)) is not None:
            raise ValueError(f"control character {bad} is not allowed in {what}")
