"""Flag types: every number a flag takes is read by the core's one number grammar, so
`--seq-len 8k`, `--token-budget 300G` and `--price b200-sxm=3.4x` mean what they mean in
the wizard and in an answers file, and `1,000`, `1e3k`, `-1` and `nan` are refused alike.

The types read the text only; the range is the answers' to check (`advisor.core.bounds`),
so a flag and a file refuse the same values with the same bound.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from advisor.core import (
    AMOUNT,
    PLAIN,
    RATIO,
    TOKENS,
    USD,
    WHOLE,
    NumberSpec,
    parse_number,
    parse_price,
)


def typed(spec: NumberSpec, name: str) -> Callable[[str], float | int]:
    """An argparse type reading `spec`'s grammar; `name` is what argparse calls the value."""

    def parse(text: str) -> float | int:
        try:
            value = parse_number(text, spec)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return int(value) if spec.integer else value

    parse.__name__ = name
    return parse


whole = typed(WHOLE, "count")
tokens = typed(TOKENS, "token length")
amount = typed(AMOUNT, "number")
plain = typed(PLAIN, "number")


def keyed(unit: str, example: str, price: bool = False) -> Callable[[str], tuple[str, object]]:
    """`GPU=VALUE`: a plain number of `unit`; with `price`, also `$4.50/h` or a ratio to the
    current GPU's price (`3.4x`), passed on as typed for the answers to resolve."""

    def parse(text: str) -> tuple[str, object]:
        key, sep, value = text.partition("=")
        if not sep or not key.strip():
            raise argparse.ArgumentTypeError(f"expected GPU={unit}, e.g. {example}: {text!r}")
        try:
            if price:  # the range is the answers' to check, as for every flag
                kind, number = parse_price(value, USD.unbounded(), RATIO.unbounded())
                return key.strip(), value.strip() if kind == "ratio" else number
            return key.strip(), parse_number(value, PLAIN)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{key.strip()}: {exc}") from None

    parse.__name__ = f"GPU={unit}"
    return parse
