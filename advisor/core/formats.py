"""Reading TOML, JSON and CSV so that any malformed input becomes one line, never a traceback;
and writing pydantic models as commented TOML that reads back exactly.

Every loader in advisor (answers, reports, pulled catalogs and price sheets) goes through
these helpers, so "which file, which line or field, what value" is said the same way
everywhere and the CLI can turn it into exit code 2.

TOML has no null. A None is written by leaving its key out, and `restore_nulls` puts it
back from the model's field types before validation, so a model survives the trip
unchanged. (A None inside a free-form container, e.g. a dict[str, float | None] value,
has no field to restore it from; such values are dropped, so build those parts through
`normalize` once before relying on an exact round trip.)
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import types
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from advisor.core.errors import InputError
from advisor.core.model.bounds import MAX_DEPTH

if TYPE_CHECKING:
    from tomlkit.items import Item

Format = Literal["toml", "json", "csv"]
FORMATS: tuple[Format, ...] = ("toml", "json", "csv")

# `{`, or `[` then `{`, `"` or end of line: JSON; a TOML header is `[name]` or `[[name]]`.
_JSON_START = re.compile(r'^(\{|\[\s*(\{|"|$))')

# Errors about a document that did not parse as ours name the file and the position, never
# its content: the file may be anything (`advisor probe import /etc/shadow`).


def decode_text(data: bytes, file: str) -> str:
    """UTF-8 (a leading BOM is dropped, as spreadsheet exports add one)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (invalid byte at offset {exc.start})",
                         file=file) from None


def _path(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def finite_data(data: Any, file: str) -> Any:
    """Decoded data, checked: nested at most MAX_DEPTH levels and every float finite (TOML
    and Python's JSON both read nan and inf). Iterative, so no depth overflows the stack."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), data)]
    while stack:
        path, node = stack.pop()
        if len(path) > MAX_DEPTH:
            raise InputError(f"nested deeper than {MAX_DEPTH} levels", file=file,
                             field=_path(path[:8]) + ".…")
        if isinstance(node, float) and not math.isfinite(node):
            raise InputError("must be a finite number", file=file, field=_path(path),
                             value=node)
        if isinstance(node, dict):
            stack.extend(((*path, k), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend(((*path, i), v) for i, v in enumerate(node))
    return data


class NonFiniteError(RuntimeError):
    """A NaN or infinity reached an output: a bug, since every input is finite at load."""


def assert_finite(data: Any, what: str) -> None:
    """Raise NonFiniteError naming the first non-finite float in `data` (a bug, not bad input)."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            raise NonFiniteError(f"{what}: {_path(path)} is {node}; every input is finite, "
                                 "so this is a bug in advisor")
        if isinstance(node, Mapping):
            stack.extend(((*path, k), v) for k, v in node.items())
        elif isinstance(node, list | tuple):
            stack.extend(((*path, i), v) for i, v in enumerate(node))


def parse_toml(text: str, file: str) -> dict[str, Any]:
    """TOML to a dict; the error names the line and column, not what is there."""
    import tomllib  # here: a command whose inputs are all JSON or flags never loads it

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML ({exc})", file=file) from None
    except RecursionError:
        raise InputError("not valid TOML (nested too deeply)", file=file) from None
    except ValueError as exc:  # an integer past Python's digit limit
        raise InputError(f"not valid TOML ({str(exc).split(':')[0]})", file=file) from None
    return finite_data(data, file)


def parse_json(text: str, file: str) -> Any:
    """JSON to Python; the error names the line and column, not what is there."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})",
                         file=file) from None
    except RecursionError:
        raise InputError("not valid JSON (nested too deeply)", file=file) from None
    except ValueError as exc:  # an integer past Python's digit limit
        raise InputError(f"not valid JSON ({str(exc).split(':')[0]})", file=file) from None
    return finite_data(data, file)


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
                    file=file, entry=f"line {reader.line_num}",
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
    lines = (ln.strip() for ln in text.splitlines())
    first = next((ln for ln in lines if ln and not ln.startswith("#")), "")
    if _JSON_START.match(first):
        return "json"
    return "csv" if "," in first and "=" not in first else "toml"


def validation_error(exc: ValidationError, file: str, entry: str | None = None) -> InputError:
    """The first pydantic error as one line: file, entry, dotted field path, offending value."""
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"] if p != "[key]")  # a key: its path is its own
    cause = (err.get("ctx") or {}).get("error")
    if isinstance(cause, InputError):  # a validator's FieldError: its field, under this path
        return InputError(cause.message, file=file, entry=entry,
                          field=".".join(p for p in (loc, cause.field) if p) or None,
                          value=cause.value, has_value=cause.has_value)
    value = err.get("input")
    if isinstance(value, dict | list) or err["type"] == "extra_forbidden":
        value = None  # a key that is not ours: its value may be anything, so it is not shown
    return InputError(
        err["msg"].removeprefix("Value error, "),
        file=file, entry=entry, field=loc or None, value=value, has_value=value is not None,
    )


# --- models <-> TOML -----------------------------------------------------------------------

M = TypeVar("M", bound=BaseModel)

# Flat tables of figures with at most this many keys are written inline: `{ dense = 1.2 }`
# reads better than a [header] for each small group; a table holding prose gets a header.
INLINE_MAX_KEYS = 8
PROSE_CHARS = 40
LINE_WIDTH = 100  # longer arrays are written one element per line


def without_nulls(value: Any) -> Any:
    """Drop None (TOML cannot say it) and turn tuples into lists, recursively."""
    if isinstance(value, Mapping):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [without_nulls(v) for v in value if v is not None]
    return value


def _nullable(tp: Any) -> bool:
    if tp is Any or tp is type(None):
        return True
    return get_origin(tp) in (Union, types.UnionType) and type(None) in get_args(tp)


def restore_nulls(tp: Any, data: Any) -> Any:
    """Put back the None of every nullable model field that `without_nulls` left out."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return restore_nulls(args[0], data)
    if origin in (Union, types.UnionType):
        for arg in args:
            if arg is not type(None):
                data = restore_nulls(arg, data)
        return data
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for name, f in tp.model_fields.items():
            key = f.alias or name
            if key in out:
                out[key] = restore_nulls(f.annotation, out[key])
            elif _nullable(f.annotation) and (f.is_required() or f.default is not None):
                out[key] = None  # a default of None is left to pydantic, so it stays unset
        return out
    if origin in (list, tuple, Sequence) and isinstance(data, list) and args:
        if origin is tuple and (len(args) != 2 or args[1] is not Ellipsis):
            return [restore_nulls(a, d) for a, d in zip(args, data, strict=False)]
        return [restore_nulls(args[0], d) for d in data]
    if origin in (dict, Mapping) and isinstance(data, dict) and len(args) == 2:
        return {k: restore_nulls(args[1], v) for k, v in data.items()}
    return data


def model_data(model: BaseModel) -> Any:
    """A model as plain TOML-ready data (python mode keeps dates, inf and nan as they are)."""
    return without_nulls(model.model_dump(by_alias=True))


def load_model(model: type[M], data: Any, file: str, entry: str | None = None,
               context: dict[str, Any] | None = None, strict: bool = False) -> M:
    """Validate decoded TOML/JSON into `model`, restoring nulls; errors are one line.
    `context` reaches the model's validators (e.g. the catalog, for a price ratio).
    `strict` holds every field to its JSON type, for a model not strict by itself (a
    report's results): `"inf"` for a dollar figure is refused, not read as infinity."""
    try:
        if strict:  # as JSON, where an array is a tuple and ISO text a date
            return model.model_validate_json(json.dumps(restore_nulls(model, data),
                                                        default=_iso), strict=True,
                                             context=context)
        return model.model_validate(restore_nulls(model, data), context=context)
    except ValidationError as exc:
        raise validation_error(exc, file, entry) from None
    except InputError as exc:  # raised by a validator itself (e.g. an unknown preset)
        exc.file = exc.file or file
        raise


def _iso(value: Any) -> str:
    """A TOML date or datetime as the ISO text JSON carries it."""
    if isinstance(value, date | datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not TOML data")


def normalize(model: M) -> M:
    """The model as it reads back from TOML (free-form nulls dropped); idempotent."""
    return load_model(type(model), model_data(model), type(model).__name__)


def _is_prose(value: Any) -> bool:
    return isinstance(value, str) and len(value) > PROSE_CHARS


def _is_table(value: Any) -> bool:
    return isinstance(value, Mapping) or (
        isinstance(value, list) and bool(value) and all(isinstance(v, Mapping) for v in value))


def toml_item(value: Any, inline: bool = True) -> Item:
    """Plain data as tomlkit items: scalars before sub-tables, small flat tables inline
    (where `inline`), lists of tables as [[arrays of tables]]."""
    import tomlkit  # here, not at the top: reading and deciding never write TOML

    if isinstance(value, Mapping):
        flat = not any(_is_table(v) or _is_prose(v) for v in value.values())
        if inline and flat and len(value) <= INLINE_MAX_KEYS:
            small = tomlkit.inline_table()
            small.update({k: toml_item(v) for k, v in value.items()})
            return small
        table = tomlkit.table()
        plain = [(k, v) for k, v in value.items() if not _is_table(v)]
        # tomlkit looks for the last plain value before the first sub-table on every add
        # (a scan of the whole table: 4,000 packages took 13 s); added first, they are all
        # before it already, so the scan is switched off for them, as tomlkit's own parser
        # does, and the table's writing stays linear in its keys
        table.value.parsing(True)
        for k, v in plain:
            table.add(k, toml_item(v))
        table.value.parsing(False)
        for k, v in value.items():
            if _is_table(v):
                table.add(k, toml_item(v))
        return table
    if _is_table(value):
        aot = tomlkit.aot()
        for v in value:
            aot.append(toml_item(v, inline=False))
        return aot
    if isinstance(value, list | tuple) and not any(isinstance(v, Mapping) for v in value):
        return _array([tomlkit.item(v) for v in value])
    return tomlkit.item(value)


def _array(items: list[Item]) -> Item:
    """A TOML array of these items: on one line when short, else one element per line.
    Built in one call (tomlkit re-indexes an array on every append: quadratic in a
    4,000-package list)."""
    import tomlkit
    from tomlkit.items import Array, Trivia

    if sum(len(i.as_string()) + 2 for i in items) <= LINE_WIDTH:
        return tomlkit.item([i.unwrap() for i in items])
    array = Array([], Trivia())
    array.add_line(*items, indent="", newline=False)
    array.multiline(True)
    return array


def toml_document(header: Sequence[str], sections: Sequence[tuple[str, Any, str]]) -> str:
    """A TOML document: header comment lines, then each (key, value, comment) section.

    Plain values go first, tables after, since TOML would file a plain value written
    after a [table] under that table; each section's comment stays right above it.
    """
    import tomlkit
    from tomlkit.items import AoT, Table

    doc = tomlkit.document()
    for line in header:
        doc.add(tomlkit.comment(line))
    for key, value, comment in sorted(sections, key=lambda s: _is_table(s[1])):
        doc.add(tomlkit.nl())
        for line in comment.splitlines():
            doc.add(tomlkit.comment(line))
        item = toml_item(value, inline=False)
        doc.add(key, item)
        head = item[0] if isinstance(item, AoT) else item
        if isinstance(head, Table):
            head.trivia.indent = ""  # keep the comment right above the [header]
    return tomlkit.dumps(doc)
