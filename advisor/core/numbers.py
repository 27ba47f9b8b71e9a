"""The one grammar for every number a person types: command-line flags, answers files, the
wizard's fields and pulled price sheets all read numbers here, so `8k` means the same
thing (or is refused for the same reason) wherever it is written.

Rules, all of them:

- a number is digits with an optional point and exponent (`4.5`, `1e3`, `2.5e-1`), or
  digits with a suffix k, M, B (or G), T for thousands, millions, billions, trillions
  (`8k`, `1.5B`, `300G`); a token length's k is 1024 (`8k` = 8,192), every other k is
  1,000; an exponent and a suffix together (`1e3k`) are refused as a likely typo;
- `_` may group digits as in Python (`1_000`); a comma never does: `1,000` is one
  thousand in one locale and one in another, and the wizard's lists use commas between
  values, so every comma in a number is refused with that reason;
- no sign: every quantity here is a count, a size, a rate or a price, so `-1` is refused
  as negative; `nan`, `inf` and other words are not numbers;
- whole-number fields refuse fractions ("4.5 GPUs") instead of rounding them;
- a price may start with `$` and end with `/h` or `/hr`; `3.4x` (or `x3.4`, `3.4×`) is a
  ratio to the current GPU's price, accepted only where a ratio means something;
- digits are any script's decimal digits, as Python reads them: `١٢` is 12 and a CSV
  price `٢.٥` is 2.5, each unambiguous (unlike a comma), so they are read, not refused;
- in a file, a number is a number or text in this grammar: `true` is no count, and a
  whole number written `8.0` is 8.

Bounds belong to the field (`NumberSpec.low`/`high`, read from `model.bounds`); the
answers models check the same bounds as pydantic constraints. The standard library and
`bounds` only, so the wizard's first screen and `advisor --help` stay light.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from advisor.core.model import bounds as B  # constants only: no pydantic

SUFFIX = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
BINARY_SUFFIX = {"": 1.0, "k": 2.0**10, "m": 2.0**20, "b": 2.0**30, "g": 2.0**30, "t": 2.0**40}
_DIGITS = r"\d+(?:_\d+)*"
_NUMBER = re.compile(
    rf"(?P<mant>{_DIGITS}(?:\.(?:{_DIGITS})?)?|\.{_DIGITS})"
    r"(?:[eE](?P<exp>[+-]?\d+))?"
    r"(?P<suffix>[kKmMbBgGtT]?)")
_RATIO_MARK = ("x", "×")


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
    """k, M... are powers of 1024 (token lengths, where 8k means 8,192)."""
    suffixes: bool = True
    example: str = ""

    def eg(self) -> str:
        return f", e.g. {self.example}" if self.example else ""

    def unbounded(self) -> NumberSpec:
        """The same grammar without the range: for readers whose model checks the range."""
        return replace(self, low=None, high=None, low_open=False)


# The kinds of number a field takes; the range is each field's own (bounds.py).
WHOLE = NumberSpec("a whole number", integer=True, example="8 or 1k")
"""A count (GPUs, nodes, batch, degrees, dimensions): `1k` is 1,000."""
TOKENS = NumberSpec("a token length", integer=True, binary_k=True, example="8192 or 8k")
"""A sequence or document length in tokens: `8k` is 8,192."""
AMOUNT = NumberSpec("a number", example="300B or 1.5e12")
"""A large quantity (tokens, FLOPs, rates): `300B` is 3e11."""
PLAIN = NumberSpec("a number", suffixes=False, example="0.12")
"""A figure with a unit of its own (watts, $/kWh, kW, ms, Gbit/s, $/GPU-hour): no suffix."""
USD = NumberSpec("a price", low=B.MIN_USD_PER_GPU_HOUR, high=B.MAX_USD_PER_GPU_HOUR,
                 suffixes=False, example="4.50, $4.50/h or 3.4x")
"""$/GPU-hour as quoted (`4.50`, `$4.50/h`)."""
RATIO = NumberSpec("a price ratio", low=1 / B.MAX_PRICE_RATIO, high=B.MAX_PRICE_RATIO,
                   suffixes=False, example="3.4x")
"""A target's price over the current GPU's (`3.4x`)."""


def _bound(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,g}"


def parse_number(text: str, spec: NumberSpec) -> float:
    """The value `text` means for this field; ValueError with the message to show."""
    raw = text.strip()
    if not raw:
        raise ValueError(f"{spec.what}: blank; type a number{spec.eg()}")
    if "," in raw:
        raise ValueError(f"{raw}: a comma in a number is ambiguous (1,000 is a thousand in "
                         f"one locale and one in another); write 1000, 1_000 or 1k")
    m = _NUMBER.fullmatch(raw)
    if m is None and raw[:1] in "-−" and _NUMBER.fullmatch(raw[1:].strip()):
        raise ValueError(f"{raw}: {spec.what} cannot be negative")
    if m is None:
        raise ValueError(f"{raw}: not a number{spec.eg()}")
    suffix = m["suffix"].lower()
    if suffix and not spec.suffixes:
        raise ValueError(f"{raw}: {spec.what} takes a plain number{spec.eg()}")
    if suffix and m["exp"] is not None:
        raise ValueError(f"{raw}: use an exponent or a suffix, not both{spec.eg()}")
    digits = m["mant"].replace("_", "") + (f"e{m['exp']}" if m["exp"] is not None else "")
    value = float(digits) * (BINARY_SUFFIX if spec.binary_k else SUFFIX)[suffix]
    if not math.isfinite(value):
        raise ValueError(f"{raw}: too large")
    if spec.integer and not value.is_integer():
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


# --- prices ----------------------------------------------------------------------------

PriceKind = Literal["usd", "ratio"]
Price = tuple[PriceKind, float]
"""("usd", dollars per GPU-hour) or ("ratio", multiple of the current GPU's price)."""


def is_ratio(text: str) -> bool:
    """Whether a price is written as a ratio to the current GPU's ("3.4x", "x3.4")."""
    low = text.strip().lower()
    return low.endswith(_RATIO_MARK) or low.startswith(_RATIO_MARK)


def parse_price(text: str, usd: NumberSpec, ratio: NumberSpec | None) -> Price:
    """ "4.5", "$4.50", "4.50/h" -> ("usd", 4.5); "3.4x", "x3.4", "3.4×" -> ("ratio", 3.4).

    `ratio` None: this price cannot be a ratio (it is the current GPU's own)."""
    raw = text.strip()
    if is_ratio(raw):
        if ratio is None:
            raise ValueError(f"{raw}: this is the current GPU; give its $/GPU-hour")
        body = raw.lower().strip("".join(_RATIO_MARK)).strip()
        return "ratio", parse_number(body, ratio)
    body = raw.lower().removeprefix("$").removesuffix("/hr").removesuffix("/h").strip()
    try:
        return "usd", parse_number(body, usd)
    except ValueError as exc:
        message = str(exc)
        raise ValueError(message.replace(body, raw, 1) if body else message) from None


# --- values from files: a number as typed, or already a number --------------------------

def number_reader(spec: NumberSpec) -> Callable[[object], object]:
    """A pydantic BeforeValidator: text is read by the grammar (without the range, which
    the field's constraints check); true and false are refused (TOML's `gpus = true` is no
    count); a whole number written as a float (`8.0`) is that number; anything else goes to
    the field's own (strict) validation."""
    grammar = spec.unbounded()

    def read(value: object) -> object:
        if isinstance(value, bool):
            raise ValueError(f"{str(value).lower()}: expected {spec.what}, not true or "
                             f"false{spec.eg()}")
        if isinstance(value, str):
            number = parse_number(value, grammar)
            return int(number) if spec.integer else number
        if spec.integer and isinstance(value, float) and value.is_integer():
            return int(value)
        return value

    return read
