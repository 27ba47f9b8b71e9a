"""Reading TOML, JSON and CSV so that any malformed input becomes one line, never a traceback.

Every loader in advisor (answers, reports, pulled catalogs and price sheets) goes through
these helpers, so "which file, which line or field, what value" is said the same way
everywhere and the CLI can turn it into exit code 2.
"""

from __future__ import annotations

import csv
import io
import json
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from advisor.core.errors import InputError

Format = Literal["toml", "json", "csv"]
FORMATS: tuple[Format, ...] = ("toml", "json", "csv")

_TOML_POS = re.compile(r"\(at line (\d+), column (\d+)\)")
# `{`, or `[` then `{`, `"` or end of line: JSON; a TOML header is `[name]` or `[[name]]`.
_JSON_START = re.compile(r'^(\{|\[\s*(\{|"|$))')


def _line_of(text: str, lineno: int) -> str | None:
    lines = text.splitlines()
    return lines[lineno - 1].strip() if 0 < lineno <= len(lines) else None


def read_bytes(path: str | Path) -> bytes:
    """A file's bytes, or an InputError saying why it can't be read."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror})", file=str(path)) from None


def read_text(path: str | Path) -> str:
    """A UTF-8 text file, or an InputError saying why it can't be read."""
    return decode_text(read_bytes(path), str(path))


def decode_text(data: bytes, file: str) -> str:
    """UTF-8 (a leading BOM is dropped, as spreadsheet exports add one)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 text (byte {exc.start})", file=file, value=data[exc.start : exc.start + 8]
        ) from None


def parse_toml(text: str, file: str) -> dict[str, Any]:
    """TOML to a dict; the error names the line and shows it."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        pos = _TOML_POS.search(msg)
        line = _line_of(text, int(pos.group(1))) if pos else None
        raise InputError(
            f"not valid TOML ({msg})", file=file, value=line, has_value=line is not None
        ) from None
    except RecursionError:
        raise InputError("not valid TOML (nested too deeply)", file=file) from None


def parse_json(text: str, file: str) -> Any:
    """JSON to Python; the error names the line and column and shows the line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        line = _line_of(text, exc.lineno)
        raise InputError(
            f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})",
            file=file, value=line, has_value=line is not None,
        ) from None
    except RecursionError:
        raise InputError("not valid JSON (nested too deeply)", file=file) from None


def parse_csv(
    text: str, file: str, *, required: Sequence[str], optional: Sequence[str] = ()
) -> list[tuple[int, dict[str, str]]]:
    """A CSV with a header row: (line number, row) pairs with blank cells dropped.

    Unknown or missing columns are refused up front: a typo in a header would otherwise
    silently drop a whole column of figures.
    """
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    rows: list[tuple[int, dict[str, str]]] = []
    try:
        header = [h.strip() for h in next(reader, [])]
        if not any(header):
            raise InputError("empty CSV: expected a header row", file=file)
        known = set(required) | set(optional)
        for h in header:
            if h not in known:
                raise InputError(
                    f"unknown column; expected {', '.join([*required, *optional])}",
                    file=file, entry="line 1", value=h,
                )
        missing = [c for c in required if c not in header]
        if missing:
            raise InputError("missing column", file=file, entry="line 1", value=missing[0])
        if len(set(header)) != len(header):
            dup = next(h for h in header if header.count(h) > 1)
            raise InputError("duplicate column", file=file, entry="line 1", value=dup)
        for cells in reader:
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(header):
                raise InputError(
                    f"expected {len(header)} cells, found {len(cells)}",
                    file=file, entry=f"line {reader.line_num}", value=",".join(cells),
                )
            row = {h: c.strip() for h, c in zip(header, cells, strict=True) if c.strip()}
            rows.append((reader.line_num, row))
    except csv.Error as exc:
        raise InputError(f"not valid CSV ({exc})", file=file,
                         entry=f"line {reader.line_num}") from None
    return rows


def detect_format(name: str, content_type: str | None, text: str) -> Format:
    """The format from the file or URL suffix, then the Content-Type, then the first line."""
    suffix = name.lower().split("?", 1)[0].rsplit(".", 1)[-1]
    if suffix in FORMATS:
        return suffix
    ctype = (content_type or "").split(";", 1)[0].strip().lower()
    for fmt in FORMATS:
        if ctype.endswith(f"/{fmt}") or ctype.endswith(f"+{fmt}"):
            return fmt
    first = text.lstrip().split("\n", 1)[0].strip()
    if _JSON_START.match(first):
        return "json"
    return "csv" if "," in first and "=" not in first else "toml"


def validation_error(exc: ValidationError, file: str, entry: str | None = None) -> InputError:
    """The first pydantic error as one line: file, entry, dotted field path, offending value."""
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"])
    value = err.get("input")
    if isinstance(value, dict | list):
        value = None
    return InputError(
        err["msg"].removeprefix("Value error, "),
        file=file, entry=entry, field=loc or None, value=value, has_value=value is not None,
    )
