"""Output on a stream that cannot show every character (`PYTHONIOENCODING=ascii`, a latin-1
terminal): plain stand-ins instead of a traceback.

`plain_streams()` gives stdout and stderr an error handler that writes what a character
means in ASCII: `-` for the rules, dashes and the not-applicable mark, `x` for a times
sign, `#` for a chart's full block, an accented letter without its accent, and `?` for
anything else. rich sees the stream's encoding and draws its rules and boxes in ASCII
itself; a document (HTML, SVG) writes what its encoding lacks as character references
instead (`for_document`), so it reads the same wherever it is opened.
"""

from __future__ import annotations

import codecs
import sys

HANDLER = "advisor-plain"
PLAIN = {
    "\u2014": "-", "\u2013": "-", "\u2012": "-", "\u2212": "-", "\u2500": "-", "\u2501": "-",
    "\u2502": "|", "\u00d7": "x", "\u2026": "...", "\u2192": "->", "\u2190": "<-",
    "\u2264": "<=", "\u2265": ">=", "\u00b1": "+-", "\u00b7": "*", "\u2022": "*",
    "\u2248": "~", "\u00a0": " ", "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
    "\u2588": "#", "\u2589": "#", "\u258a": "#", "\u258b": "#", "\u258c": "#",
    "\u258d": " ", "\u258e": " ", "\u258f": " ", "\u00b5": "u", "\u03bc": "u",
}
"""What each character advisor prints means, in ASCII; a chart's partial block is a full
one from half up (so a bar keeps its length to the nearest cell), else blank."""


def _plain(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    import unicodedata

    out = []
    for ch in error.object[error.start:error.end]:
        stand_in = PLAIN.get(ch)
        if stand_in is None:
            bare = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
            stand_in = bare or "?"
        out.append(stand_in)
    return "".join(out), error.end


def plain_streams() -> None:
    """stdout and stderr write plain stand-ins for what their encoding cannot show."""
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None)
        if encoding is None or codecs.lookup(encoding).name == "utf-8":
            continue
        try:
            codecs.lookup_error(HANDLER)
        except LookupError:
            codecs.register_error(HANDLER, _plain)
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors=HANDLER)


def for_document(text: str, stream: object) -> str:
    """`text` (HTML or SVG) with each character `stream`'s encoding lacks written as a
    character reference, which every reader turns back into the character."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    return text.encode(encoding, "xmlcharrefreplace").decode(encoding)
