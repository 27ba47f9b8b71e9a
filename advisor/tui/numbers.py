"""What people type into number fields, taken as typed or refused with a reason.

A field never edits the text: it either understands it ("4.5", "1e3", "1.5B", "8k",
"1,000,000", "$4.50", "3.4x") or says why not, in words that name the field and show
an example. Nothing here touches widgets, so the form, the tests and the property
tests share one definition.

Rules, all of them:

- a number is digits with an optional point and exponent (`1e3`, `2.5e-1`), with
  an optional suffix k, M, B (or G), T for thousands, millions, billions, trillions;
  a sequence length's k is 1024 (`8k` = 8,192), every other k is 1,000;
- a comma is a thousands separator only in groups of three (`1,000,000`); any other
  comma is refused, because "2,5" could mean 2.5 or 25;
- `_` may group digits as in Python (`1_000`);
- whole-number fields refuse fractions ("4.5 GPUs") instead of rounding them;
- out-of-range values are refused with the range;
- a price may start with `$` or end with `/h`, and `3.4x` means 3.4 times the current
  GPU's price.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

SUFFIX = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
_NUMBER = re.compile(
    r"(?P<mant>(?:\d+(?:_\d+)*|\d{1,3}(?:,\d{3})+)(?:\.\d*)?|\.\d+)"
    r"(?:[eE](?P<exp>[+-]?\d+))?"
    r"(?P<suffix>[kKmMbBgGtT]?)")
_BAD_COMMA = re.compile(r"\d,\d")


@dataclass(frozen=True)
class NumberSpec:
    """How one field reads a number: what it is called, its range, and whether it is whole."""

    what: str
    integer: bool = False
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    """`low` itself is refused (a price must be above 0, not at least 0)."""
    binary_k: bool = False
    """k, M... are powers of 1024 (sequence lengths, where 8k means 8,192)."""
    suffixes: bool = True
    example: str = ""

    def eg(self) -> str:
        return f", e.g. {self.example}" if self.example else ""


def _bound(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,g}"


def parse_number(text: str, spec: NumberSpec) -> float:
    """The value `text` means for this field; ValueError with the message to show."""
    raw = text.strip()
    if not raw:
        raise ValueError(f"{spec.what}: blank; type a number{spec.eg()}")
    m = _NUMBER.fullmatch(raw)
    if m is None and raw.startswith("-") and _NUMBER.fullmatch(raw[1:]):
        raise ValueError(f"{raw}: {spec.what} cannot be negative")
    if m is None:
        if _BAD_COMMA.search(raw):
            raise ValueError(f"{raw}: a comma here is ambiguous; write a point for decimals "
                             f"(2.5) or digits only (25)")
        raise ValueError(f"{raw}: not a number{spec.eg()}")
    suffix = m["suffix"].lower()
    if suffix and not spec.suffixes:
        raise ValueError(f"{raw}: {spec.what} takes a plain number{spec.eg()}")
    if suffix and m["exp"] is not None:
        raise ValueError(f"{raw}: use an exponent or a suffix, not both{spec.eg()}")
    mantissa = float(m["mant"].replace(",", "").replace("_", ""))
    scale = (1024.0 ** "kmbt".index(suffix.replace("g", "b")) * 1024 if suffix else 1.0) \
        if spec.binary_k else SUFFIX[suffix]
    try:
        value = mantissa * (10.0 ** int(m["exp"]) if m["exp"] is not None else 1.0) * scale
    except OverflowError:
        raise ValueError(f"{raw}: too large") from None
    if not math.isfinite(value):
        raise ValueError(f"{raw}: too large")
    if spec.integer and value != int(value):
        raise ValueError(f"{raw}: {spec.what} must be a whole number")
    if spec.low is not None and (value < spec.low or (spec.low_open and value == spec.low)):
        word = "above" if spec.low_open else "at least"
        raise ValueError(f"{raw}: {spec.what} must be {word} {_bound(spec.low)}")
    if spec.high is not None and value > spec.high:
        raise ValueError(f"{raw}: {spec.what} must be at most {_bound(spec.high)}")
    return float(int(value)) if spec.integer else value


def parse_int(text: str, spec: NumberSpec) -> int:
    return int(parse_number(text, spec))


def parse_optional(text: str, spec: NumberSpec) -> float | None:
    """Blank means "not given" (the default applies); anything else must parse."""
    return parse_number(text, spec) if text.strip() else None


def parse_list(text: str, spec: NumberSpec) -> tuple[int, ...]:
    """Whole numbers separated by commas or spaces ("4k, 32k"), sorted, each one checked.

    A repeated value is refused rather than dropped, so the list shown is the list used.
    """
    parts = [p for p in re.split(r"[,\s]+", text.strip()) if p]
    if not parts:
        raise ValueError(f"{spec.what}: give at least one{spec.eg()}")
    values = [int(parse_number(p, spec)) for p in parts]
    seen: set[int] = set()
    for part, v in zip(parts, values, strict=True):
        if v in seen:
            raise ValueError(f"{part}: listed twice")
        seen.add(v)
    return tuple(sorted(values))


Price = tuple[str, float]
"""("usd", dollars per GPU-hour) or ("ratio", multiple of the current GPU's price)."""
PRICE = NumberSpec("a price", low=0.0, low_open=True, high=1000.0, suffixes=False,
                   example="4.50, $4.50/h or 3.4x")
RATIO = NumberSpec("a price ratio", low=0.0, low_open=True, high=100.0, suffixes=False,
                   example="3.4x")


def parse_price(text: str, allow_ratio: bool = True) -> Price:
    """ "4.5", "$4.50", "4.50/h" -> ("usd", 4.5); "3.4x", "x3.4", "3.4×" -> ("ratio", 3.4)."""
    raw = text.strip()
    low = raw.lower().replace("×", "x")
    if low.endswith("x") or low.startswith("x"):
        if not allow_ratio:
            raise ValueError(f"{raw}: this is the current GPU; give its $/GPU-hour")
        return "ratio", parse_number(low.strip("x").strip(), RATIO)
    body = low.removeprefix("$").removesuffix("/h").removesuffix("/hr").strip()
    if body.startswith("$"):
        body = body[1:]
    try:
        return "usd", parse_number(body, PRICE)
    except ValueError as exc:
        message = str(exc)
        raise ValueError(message.replace(body, raw, 1) if body else message) from None


def show_number(value: float | None, integer: bool = False) -> str:
    """How a value reads back into a field: plain digits, never a suffix the user did not
    type (a value the app fills in is shown in full)."""
    if value is None:
        return ""
    if integer or float(value).is_integer():
        return str(int(value))
    return f"{value:g}"


def show_count(value: float | None, spec: NumberSpec) -> str:
    """A value for a field, with a suffix where that reads back to exactly the same value
    (1e11 -> "100B"), else in full digits."""
    if value is None:
        return ""
    short = format_count(value)
    try:
        if parse_number(short, spec) == value:
            return short
    except ValueError:
        pass
    return show_number(value)


def echo(value: float, unit: str = "") -> str:
    """The value as understood, for the note beside the field: "= 1,500,000,000 tokens"."""
    text = f"{value:,.0f}" if float(value).is_integer() else f"{value:,.6g}"
    return f"= {text}{' ' + unit if unit else ''}"


def needs_echo(text: str) -> bool:
    """Whether the typed form differs from plain digits (a suffix, exponent or separator)."""
    return bool(re.search(r"[kmbgtKMBGTeE,_]", text))


def format_count(value: float | None) -> str:
    """A count for reading (not for a field): 10_000_000_000 -> "10B"."""
    if value is None:
        return "none"
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale and (value / scale) == round(value / scale, 2):
            return f"{value / scale:g}{suffix}"
    return f"{value:,g}"


def format_seq_lens(values: Sequence[int]) -> str:
    """Sequence lengths as people write them: 8192 -> "8k", 1536 -> "1536"."""
    return ", ".join(f"{v // 1024}k" if v % 1024 == 0 and v >= 1024 else str(v) for v in values)
