"""Reading a pulled document: a team catalog, or a price sheet in CSV, TOML or JSON.

Price sheets are CSV with the header `gpu,usd_per_hour,label,source,retrieved`
(only gpu and usd_per_hour required; `source` may hold several citations separated
by `;`, `retrieved` is YYYY-MM-DD and defaults to the day of the pull), or TOML/JSON
with the same fields as `[[price]]` entries. `gpu` may be a catalog id or any name
that matches one GPU loosely; `usd_per_hour` is read by the one number grammar
(`4.50`, `$4.50/h`). One row per GPU: each becomes that GPU's default price, labelled
with the sheet's URL as its source, because it is still not the user's own quote for a
decision. A team catalog is TOML or JSON with any of the shipped `[[gpu]]`, `[[arch]]`,
`[[package]]`, `[[support]]` and `[[price]]` tables. Each entry is validated alone here;
the merged whole is validated by `catalog_store.build_effective`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from pydantic import BaseModel, ValidationError

from advisor.core.errors import InputError
from advisor.core.formats import Format, parse_csv, parse_json, parse_toml, validation_error
from advisor.core.model.catalog import Arch, Catalog, Gpu, Package, Price, Support
from advisor.core.numbers import USD, parse_price
from advisor.io.catalog_store import TABLE_FILE, Entries, entry_key

PRICE_COLUMNS_REQUIRED = ("gpu", "usd_per_hour")
PRICE_COLUMNS_OPTIONAL = ("label", "source", "retrieved")
SHEET_LABEL = "team price sheet"
TABLE_MODEL: Mapping[str, type[BaseModel]] = {
    "gpu": Gpu, "arch": Arch, "package": Package, "support": Support, "price": Price,
}


def _parse_doc(text: str, file: str, fmt: Format) -> dict[str, Any]:
    doc = parse_toml(text, file) if fmt == "toml" else parse_json(text, file)
    if not isinstance(doc, dict):
        raise InputError("expected a table (a JSON object) at the top level", file=file)
    return doc


def _tables(doc: Mapping[str, Any], file: str, allowed: tuple[str, ...]) -> Entries:
    out: Entries = {}
    for key, items in doc.items():
        if key not in allowed:
            raise InputError(f"unknown table; expected {', '.join(allowed)}", file=file,
                             field=key)
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise InputError(f"expected an array of tables ([[{key}]])", file=file, field=key)
        out[key] = items
    if not any(out.values()):
        raise InputError(f"no entries; expected any of {', '.join(allowed)}", file=file)
    return out


def parse_catalog_doc(text: str, file: str, fmt: Format) -> Entries:
    """A team catalog: each entry validated alone here, the merged whole by build_catalog."""
    if fmt == "csv":
        raise InputError("a catalog is TOML or JSON; CSV is for price sheets "
                         "(`advisor prices pull`)", file=file)
    out: Entries = {}
    for table, items in _tables(_parse_doc(text, file, fmt), file, tuple(TABLE_FILE)).items():
        seen: set[tuple[Any, ...]] = set()
        out[table] = []
        for raw in items:
            key = entry_key(table, raw)
            label = "/".join(str(k) for k in key if k is not None) or None
            try:
                model = TABLE_MODEL[table].model_validate(raw)
            except ValidationError as exc:
                raise validation_error(exc, file, entry=label) from None
            if key in seen:
                raise InputError(f"duplicate [[{table}]] entry", file=file, entry=label)
            seen.add(key)
            out[table].append(model.model_dump(mode="json", exclude_none=True))
    return out


def parse_price_sheet(text: str, file: str, fmt: Format, catalog: Catalog, today: date) -> Entries:
    """A price sheet: every row becomes the default price of the GPU it names."""
    rows: list[tuple[str, dict[str, Any]]]
    if fmt == "csv":
        rows = [(f"line {n}", dict(r)) for n, r in parse_csv(
            text, file, required=PRICE_COLUMNS_REQUIRED, optional=PRICE_COLUMNS_OPTIONAL)]
    else:
        items = _tables(_parse_doc(text, file, fmt), file, ("price",))["price"]
        rows = [(f"price {i}", r) for i, r in enumerate(items, 1)]
    if not rows:
        raise InputError("no prices in the sheet", file=file)
    known = set(PRICE_COLUMNS_REQUIRED + PRICE_COLUMNS_OPTIONAL)
    prices: list[dict[str, Any]] = []
    lines: dict[str, str] = {}
    for where, row in rows:
        for k in row:
            if k not in known:
                raise InputError(f"unknown field; expected {', '.join(sorted(known))}",
                                 file=file, entry=where, field=k)
        for k in PRICE_COLUMNS_REQUIRED:
            if k not in row:
                raise InputError("missing", file=file, entry=where, field=k)
        if not isinstance(row["gpu"], str):
            raise InputError("expected a GPU's catalog id or name, as text", file=file,
                             entry=where, field="gpu", value=row["gpu"])
        try:
            gpu = catalog.gpu(row["gpu"]).id
        except InputError as exc:
            raise InputError(exc.message, file=file, entry=where, field="gpu",
                             value=row["gpu"]) from None
        if gpu in lines:
            raise InputError(f"second price for this GPU (first at {lines[gpu]})",
                             file=file, entry=where, field="gpu", value=row["gpu"])
        lines[gpu] = where
        cited = row.get("source", [])
        if isinstance(cited, str):
            cited = [c.strip() for c in cited.split(";") if c.strip()]
        if not isinstance(cited, list):
            raise InputError("expected a citation or a list of them", file=file, entry=where,
                             field="source", value=cited)
        usd = row["usd_per_hour"]
        if isinstance(usd, str):
            try:
                usd = parse_price(usd, USD.unbounded(), None)[1]  # Price checks its range
            except ValueError as exc:
                raise InputError(str(exc), file=file, entry=where, field="usd_per_hour",
                                 value=usd) from None
        raw = {
            "gpu": gpu,
            "usd_per_hour": usd,
            "label": row.get("label", SHEET_LABEL),
            "default": True,
            "source": [f"{SHEET_LABEL} {file}", *cited],
            "retrieved": row.get("retrieved", today.isoformat()),
        }
        try:
            price = Price.model_validate(raw)
        except ValidationError as exc:
            raise validation_error(exc, file, entry=where) from None
        prices.append(price.model_dump(mode="json"))
    return {"price": prices}
