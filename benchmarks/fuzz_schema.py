"""Fuzz every loader with inputs built from the schemas and the bounds, and count what came out.

    python benchmarks/fuzz_schema.py                   # 3,000 inputs per loader, seed 0
    python benchmarks/fuzz_schema.py -n 300 --only answers --seed 3
    python benchmarks/fuzz_schema.py --only probes --case 1234   # input #1234 alone, shown

The generators here are apart from fuzz_inputs/fuzz_loaders (byte edits, number swaps,
hypothesis drafts) and fuzz_typed (typed mutations of a valid document). Each input is
made by one of five families, named in the examples it prints:

  bounds       every numeric field the input model's JSON schema bounds (its `ge/le/gt/lt`,
               which are bounds.py's figures) and every figure in bounds.py itself: a field
               put exactly at its bound, one ulp (math.nextafter; 1 for a whole number)
               inside and outside, or at a *neighbouring* field's bound; and `extremes`:
               several fields each at an end that is valid alone, together (the deepest,
               widest model with the largest vocabulary, sequence and batch; the smallest
               model of all-1 dimensions; peaks at their ceiling with the bandwidth at its
               floor), where products overflow, memory tends to 0, a step to 0 and MFU to 1;
               a field with no bound (a kept report's figures) at its number type's ends (0,
               -0.0, -1, 5e-324, 1e308), and one figure of every row of a table at both ends
               (what a chart's axis or a sum over the rows is drawn from)
  schema       documents synthesised from the input model's `model_json_schema()` (Answers
               and its Workload, ModelSpec, MeasuredRun, layouts, configs and pipeline; a
               catalog Gpu; a sheet's Price; a probe record's sections; a report's
               sections), random but valid by the schema, not mutated from a seed: what the
               cross-field rules, the loader and the engine make of them
  splice       a table from one kind of document in another (a catalog GPU as a model
               table, a probe record's section in a report or an answers file, a report's
               [answers] given to `decide`, a whole report given as answers, a pulled
               sheet's rows in a catalog and the other way round), and sections duplicated,
               reordered or emptied
  consistency  values each valid alone, wrong together: TP x PP x EP past the GPU count,
               kv_heads not dividing heads, a sliding window past the sequence, a serving
               OSL past the model's context, a measured anchor or probe record of a GPU the
               comparison does not name, a workload probe of another model or length, a
               report whose targets' sweeps are another report's, a sheet pricing one GPU
               twice (by id and by alias, with other dates), a MAMF exactly at its peak
  text         Unicode confusables in ids ("h1OO", a Cyrillic 'Н100', fullwidth 'Ｈ１００'), NFKC
               equivalents, zero-width joiners and soft hyphens, right-to-left overrides,
               NUL, names at and one past their length cap, and whole files with a BOM,
               CRLF or lone CR line ends, as UTF-16, or with a trailing NUL

The loaders, the outcome classes and how each is judged are fuzz_typed's (its Runner,
`cli`, `classify` and pull path, imported): ok, clean (one line naming the file, field
or flag; exit 2), grouped, traceback, multiline, unnamed, above_peak. Each input is made
from the seeded generator alone, before it runs, so `--case N` rebuilds input #N alone in
a fresh home and prints it. Exits 1 when any traceback, multiline, unnamed or above_peak
was counted.
"""

from __future__ import annotations

import argparse
import copy
import functools
import math
import os
import random
import shutil
import sys
import tempfile
import time
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fuzz_typed as T  # noqa: E402

ROOT = HERE.parent
Doc = Any


# --- a case: an input made before it runs ---------------------------------------------------

@dataclass
class Case:
    """One input: what made it (`how`), the files it writes under the home, and how it runs:
    an argument list (`argv`, judged by `names`), a pull (`pull`: kind, body, suffix,
    content type) or a probe import then `argv` (`imported`)."""

    how: str
    files: dict[str, bytes] = field(default_factory=dict)
    argv: list[str] = field(default_factory=list)
    names: tuple[str, ...] = ()
    pull: tuple[str, bytes, str, str | None] | None = None
    imported: str | None = None

    def run(self, r: T.Runner) -> str:
        for name, data in self.files.items():
            path = r.home / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        home = str(r.home)
        argv = [a.replace("{home}", home) for a in self.argv]
        names = tuple(n.replace("{home}", home) for n in self.names)
        if self.pull is not None:
            shutil.rmtree(r.home / "pulled", ignore_errors=True)  # each pull on its own
            return T._pull(r, *self.pull)
        shutil.rmtree(r.home / "probes", ignore_errors=True)
        if self.imported is not None:
            path = str(r.home / self.imported)
            got = T.cli(r, ["probe", "import", path], (path, T.FLAG))
            if got != "ok":
                return got
            names = (*names, str(r.home / "probes"))
        got = T.cli(r, argv, names)
        if got == "ok" and argv[:2] == ["report", "show"]:
            from advisor.io.documents import load_report

            return "above_peak" if r.report_above_peak(load_report(argv[2])) else "ok"
        return got

    def show(self) -> str:
        out = [f"how: {self.how}", f"argv: {self.argv}"]
        if self.pull:
            out.append(f"pull {self.pull[0]} (suffix {self.pull[2]!r}, type {self.pull[3]}):")
            out.append(self.pull[1].decode("utf-8", "backslashreplace")[:6000])
        for name, data in self.files.items():
            out.append(f"--- {name}")
            out.append(data.decode("utf-8", "backslashreplace")[:6000])
        return "\n".join(out)


# --- text attacks ---------------------------------------------------------------------------

CONFUSABLE = {"H": ["Н", "Ｈ", "Η"], "h": ["һ", "ｈ"], "1": ["l", "I", "１", "¹"],
              "0": ["O", "о", "０", "〇"], "-": ["‐", "‑", "–", "−", "­-"],
              "a": ["а", "ａ"], "e": ["е"], "o": ["о", "ο"], "p": ["р"], "c": ["с"],
              "x": ["х", "×"], "B": ["В", "Ｂ"], "M": ["М"], "s": ["ѕ"], "i": ["і", "ı"],
              "l": ["1", "ӏ"], " ": ["\u00a0", "\u2009", "\u3000"], "8": ["８", "𝟖"],
              "2": ["２"], "4": ["４", "٤"], ".": ["．", "。"]}
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e"]
BIDI = ["\u202e", "\u202d", "\u2066", "\u2067", "\u2068", "\u200f", "\u061c"]


def attack_text(text: str, rng: random.Random) -> tuple[str, str]:
    """`text` as a hostile or careless writer might give it, and the attack's name."""
    kind = rng.choice(["confusable", "fullwidth", "invisible", "bidi", "nul", "combining",
                       "long", "padded", "case", "decomposed"])
    if kind == "confusable":
        spots = [i for i, c in enumerate(text) if c in CONFUSABLE]
        if spots:
            i = rng.choice(spots)
            text = text[:i] + rng.choice(CONFUSABLE[text[i]]) + text[i + 1:]
    elif kind == "fullwidth":  # NFKC folds it back to ASCII
        text = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" and rng.random() < 0.6 else c
                       for c in text)
    elif kind == "invisible":
        i = rng.randint(0, len(text))
        text = text[:i] + rng.choice(INVISIBLE) + text[i:]
    elif kind == "bidi":
        text = rng.choice(BIDI) + text + rng.choice(["", "\u202c", "\u2069"])
    elif kind == "nul":
        i = rng.randint(0, len(text))
        text = text[:i] + "\x00" + text[i:]
    elif kind == "combining":
        i = rng.randint(1, max(1, len(text)))
        text = text[:i] + rng.choice(["\u0301", "\u0308", "\u20dd"]) + text[i:]
    elif kind == "long":  # at the name cap, one past it, or far past it (valid characters)
        from advisor.core.model import bounds as B

        n = rng.choice([B.MAX_NAME_CHARS, B.MAX_NAME_CHARS + 1, B.MAX_NOTE_CHARS,
                        B.MAX_NOTE_CHARS + 1, 100_000])
        text = (text * (n // max(1, len(text)) + 1))[:n] if text else "x" * n
    elif kind == "padded":
        text = rng.choice([" ", "\t", "\u3000", "\n"]) + text + rng.choice([" ", "\u00a0", ""])
    elif kind == "case":
        text = rng.choice([text.upper(), text.title(), text.swapcase()])
    else:
        import unicodedata

        text = unicodedata.normalize(rng.choice(["NFD", "NFKD"]), text + "é")
    return text, kind


def attack_bytes(text: str, rng: random.Random) -> tuple[bytes, str]:
    """A whole file's text as bytes, in a form an editor or spreadsheet might save."""
    kind = rng.choice(["bom", "crlf", "cr", "utf16", "utf16be", "nul", "bom-crlf", "mixed"])
    if kind == "bom":
        return b"\xef\xbb\xbf" + text.encode(), kind
    if kind == "crlf":
        return text.replace("\n", "\r\n").encode(), kind
    if kind == "cr":
        return text.replace("\n", "\r").encode(), kind
    if kind == "utf16":
        return text.encode("utf-16"), kind
    if kind == "utf16be":
        return text.encode("utf-16-be"), kind
    if kind == "nul":
        return text.encode() + b"\x00", kind
    if kind == "bom-crlf":
        return b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode(), kind
    return "".join(line + rng.choice(["\n", "\r\n"]) for line in text.split("\n")).encode(), kind


def _strings(doc: Doc, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Paths to every string value (and, as (*path, KEY), every dict key) of `doc`."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield (*prefix, KEY, k)
            yield from _strings(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _strings(v, (*prefix, i))
    elif isinstance(doc, str):
        yield prefix


def _numbers(doc: Doc, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Paths to every number (not a flag) of `doc`."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _numbers(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _numbers(v, (*prefix, i))
    elif isinstance(doc, int | float) and not isinstance(doc, bool):
        yield prefix


def column_ends(doc: Doc, rng: random.Random) -> str | None:
    """One figure of every row of a table (a sweep's points, a record's matmul results) put
    at its number type's two ends, the largest and the most negative first: what a chart's
    axis or a sum over the rows is drawn from. What was done, or None."""
    columns = sorted({(_rows(path), path[-1]) for path in _numbers(doc)
                      if any(isinstance(p, int) for p in path[:-1])}, key=str)
    if not columns:
        return None
    rows, key = rng.choice(columns)
    for n, path in enumerate(p for p in _numbers(doc) if (_rows(p), p[-1]) == (rows, key)):
        parent = _get(doc, path[:-1])
        whole = isinstance(parent[path[-1]], int)
        ends = ([UNBOUNDED_INT[3], UNBOUNDED_INT[4], *UNBOUNDED_INT[:3]] if whole else
                [UNBOUNDED_FLOAT[5], UNBOUNDED_FLOAT[6], *UNBOUNDED_FLOAT[:5]])
        parent[path[-1]] = ends[n % 2] if n < 2 else rng.choice(ends)
    return f"bounds: every {rows}.{key} at its type's ends"


def _rows(path: tuple[Any, ...]) -> str:
    """A number's path with its row indices as `#`: the column it is a value of."""
    return ".".join("#" if isinstance(p, int) else str(p) for p in path[:-1])


KEY = object()
"""In a path from `_strings`: the next element is a dict key to rename, not a value."""


def attack_some_string(doc: Doc, rng: random.Random, prefer: tuple[str, ...] = ()) -> str:
    """One string (or key) of `doc`, attacked in place; mostly one whose path names one of
    `prefer` (GPU ids and names). Returns what was done."""
    paths = list(_strings(doc))
    liked = [p for p in paths if any(str(x) in prefer for x in p if x is not KEY)]
    if not paths:
        return "text: nothing to attack"
    path = rng.choice(liked) if liked and rng.random() < 0.7 else rng.choice(paths)
    if KEY in path:
        parent = _get(doc, path[:-2])
        old = path[-1]
        new, kind = attack_text(str(old), rng)
        if new not in parent:
            parent[new] = parent.pop(old)
        return f"text {kind}: key {_dotted(path[:-2])}.{old!r} -> {new!r}"
    parent = _get(doc, path[:-1])
    new, kind = attack_text(parent[path[-1]], rng)
    parent[path[-1]] = new
    return f"text {kind}: {_dotted(path)} = {_short(new)}"


def _get(doc: Doc, path: tuple[Any, ...]) -> Doc:
    for p in path:
        doc = doc[p]
    return doc


def _dotted(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path if p is not KEY) or "(top)"


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 80 else f"{text[:60]}...({len(text)} chars)"


# --- the schemas: synthesis and bounds --------------------------------------------------------

@dataclass(frozen=True)
class Leaf:
    """A numeric field of a schema: its path (str keys; "*" a dict's value, "#" a list's
    item) and its bounds as the schema states them."""

    path: tuple[str, ...]
    integer: bool
    lo: float | None
    lo_open: bool
    hi: float | None
    hi_open: bool


class Schema:
    """A pydantic model's JSON schema: random documents valid by it, and its numeric leaves."""

    def __init__(self, model: Any, keys: Callable[[random.Random], str] | None = None) -> None:
        self.root = model.model_json_schema()
        self.defs = self.root.get("$defs", {})
        self.keys = keys or (lambda rng: rng.choice(["a", "b200-sxm", "h100-sxm", "x y"]))

    def node(self, n: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in n:
            ref = self.defs[n["$ref"].rsplit("/", 1)[-1]]
            n = {**ref, **{k: v for k, v in n.items() if k != "$ref"}}
        return n

    def at(self, *names: str) -> dict[str, Any]:
        """The sub-schema of a property path (e.g. "workload", "model")."""
        n = self.node(self.root)
        for name in names:
            n = self._object_branch(self.node(n))["properties"][name]
        return self.node(n)

    def _object_branch(self, n: dict[str, Any]) -> dict[str, Any]:
        if "properties" in n:
            return n
        for b in n.get("anyOf", []):
            b = self.node(b)
            if "properties" in b:
                return b
        return n

    # synthesis

    def synth(self, n: dict[str, Any], rng: random.Random, depth: int = 0) -> Any:
        n = self.node(n)
        if "const" in n:
            return n["const"]
        if "enum" in n:
            return rng.choice(n["enum"])
        if "anyOf" in n:
            branches = [b for b in n["anyOf"] if self.node(b).get("type") != "null"]
            if not branches:
                return None
            return self.synth(rng.choice(branches), rng, depth)
        kind = n.get("type")
        if kind == "integer":
            return int(_edgy(rng, n, integer=True))
        if kind == "number":
            return _edgy(rng, n, integer=False)
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "string":
            return _string(rng, n)
        if kind == "array":
            lo = n.get("minItems", 0)
            hi = min(n.get("maxItems", lo + 3), lo + 3)
            if depth > 6:
                hi = lo
            items = n.get("items", {}) if not n.get("prefixItems") else None
            if items is None:
                return [self.synth(p, rng, depth + 1) for p in n["prefixItems"]]
            return [self.synth(items, rng, depth + 1) for _ in range(rng.randint(lo, hi))]
        if kind == "object" or "properties" in n:
            out: dict[str, Any] = {}
            required = set(n.get("required", []))
            for name, sub in n.get("properties", {}).items():
                if name in required or (depth < 6 and rng.random() < 0.35):
                    value = self.synth(sub, rng, depth + 1)
                    if value is not None:
                        out[name] = value
            extra = n.get("additionalProperties")
            if isinstance(extra, dict) and extra and not n.get("properties") and depth < 6:
                for _ in range(rng.randint(0, 2)):
                    out[self.keys(rng)] = self.synth(extra, rng, depth + 1)
            return out
        return rng.choice([1, 0.5, "x", True])  # Any

    # bounds

    def leaves(self) -> list[Leaf]:
        out: list[Leaf] = []
        self._leaves(self.root, (), out, frozenset())
        return out

    def _leaves(self, n: dict[str, Any], path: tuple[str, ...], out: list[Leaf],
                seen: frozenset[str]) -> None:
        ref = n.get("$ref")
        if ref is not None:
            if ref in seen or len(path) > 10:
                return
            seen = seen | {ref}
        n = self.node(n)
        for b in n.get("anyOf", []):
            self._leaves(b, path, out, seen)
        kind = n.get("type")
        if kind in ("integer", "number"):
            lo, lo_open = _bound(n, "minimum", "exclusiveMinimum")
            hi, hi_open = _bound(n, "maximum", "exclusiveMaximum")
            out.append(Leaf(path, kind == "integer", lo, lo_open, hi, hi_open))
        for name, sub in n.get("properties", {}).items():
            self._leaves(sub, (*path, name), out, seen)
        extra = n.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            self._leaves(extra, (*path, "*"), out, seen)
        if kind == "array" and isinstance(n.get("items"), dict):
            self._leaves(n["items"], (*path, "#"), out, seen)


def _bound(n: dict[str, Any], closed: str, open_: str) -> tuple[float | None, bool]:
    if open_ in n:
        return n[open_], True
    return n.get(closed), False


def _edgy(rng: random.Random, n: dict[str, Any], integer: bool) -> float:
    lo, lo_open = _bound(n, "minimum", "exclusiveMinimum")
    hi, hi_open = _bound(n, "maximum", "exclusiveMaximum")
    if integer:
        low = int(lo + (1 if lo_open else 0)) if lo is not None else 0
        high = int(hi - (1 if hi_open else 0)) if hi is not None else max(low, 1) * 1000
        powers = [2**k for k in range(63) if low <= 2**k <= high]
        pick = rng.random()
        if pick < 0.25:
            return rng.choice([low, high])
        if pick < 0.55 and powers:
            return rng.choice(powers)
        if pick < 0.8:
            return rng.randint(low, min(high, low + 64))
        return _log_uniform(rng, max(low, 1), max(high, 1), integer=True)
    low = float(lo) if lo is not None else 0.0
    high = float(hi) if hi is not None else max(low, 1.0) * 1e4
    low = math.nextafter(low, math.inf) if lo_open else low
    high = math.nextafter(high, -math.inf) if hi_open else high
    pick = rng.random()
    if pick < 0.3:
        return rng.choice([low, high])
    if pick < 0.6:
        return rng.uniform(low, high)
    return _log_uniform(rng, max(low, 1e-12), max(high, 1e-12), integer=False)


def _log_uniform(rng: random.Random, lo: float, hi: float, integer: bool) -> float:
    if hi <= lo:
        return lo
    v = math.exp(rng.uniform(math.log(lo), math.log(hi)))
    return max(int(lo), min(int(hi), round(v))) if integer else min(hi, max(lo, v))


def _string(rng: random.Random, n: dict[str, Any]) -> str:
    fmt = n.get("format")
    if fmt == "date":
        return rng.choice(["2026-01-15", "1970-01-01", "9999-12-31", "2024-02-29"])
    if fmt == "date-time":
        return rng.choice(["2026-01-15T12:00:00Z", "2026-01-15T12:00:00+14:00",
                           "0001-01-01T00:00:00"])
    pattern = n.get("pattern")
    if pattern == r"^\d+x\d+x\d+$":
        return rng.choice(["8192x8192x8192", "1x1x1", "65536x1x1"])
    if pattern is not None:
        return rng.choice(["team-x", "a", "0", "z9.9-9"])
    lo, hi = n.get("minLength", 0), n.get("maxLength")
    words = ["x", "team rate", "sm_90", "llama", "TPU v5e", "ok", "NVIDIA", "hbm3e",
             "2.7.1+cu128", "a b c", "ünïcödé", "—"]
    text = rng.choice(words)
    if rng.random() < 0.1 and hi is not None:
        text = "y" * hi
    while len(text) < lo:
        text += "z"
    return text[:hi] if hi is not None else text


def _bounds_py() -> list[float]:
    """Every figure bounds.py holds: the ends a neighbouring field may be put at."""
    from advisor.core.model import bounds as B

    return sorted({float(v) for k, v in vars(B).items()
                   if k.isupper() and isinstance(v, int | float) and not isinstance(v, bool)})


UNBOUNDED_INT = [0, -1, 2**53 + 1, 2**63 - 1, -(2**63)]
UNBOUNDED_FLOAT = [0.0, -0.0, -1.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
                   -1e308, 1e-300]


def leaf_values(leaf: Leaf, rng: random.Random, others: list[float]) -> tuple[float, str]:
    """A value for `leaf` at or next to one of its bounds, or at another field's bound."""
    ends = [(leaf.lo, leaf.lo_open, -1), (leaf.hi, leaf.hi_open, 1)]
    ends = [(v, o, s) for v, o, s in ends if v is not None]
    if not ends and rng.random() < 0.4:  # unbounded: the number type's own ends
        v = rng.choice(UNBOUNDED_INT if leaf.integer else UNBOUNDED_FLOAT)
        return v, "at its type's end (no bound)"
    if not ends or rng.random() < 0.2:
        v = rng.choice(others)
        return (int(v) if leaf.integer and v == int(v) else v), "at a neighbour's bound"
    bound, open_, side = rng.choice(ends)
    where = rng.choice(["at", "inside", "outside"])
    if leaf.integer:
        step = {"at": 0, "inside": -side, "outside": side}[where]
        return int(bound) + step, f"{where} its bound {bound:g}"
    toward = {"at": bound, "inside": -side * math.inf, "outside": side * math.inf}[where]
    value = float(bound) if where == "at" else math.nextafter(float(bound), toward)
    return value, f"{where} its {'open ' if open_ else ''}bound {bound:g}"


def set_leaf(doc: Doc, path: tuple[str, ...], value: Any, rng: random.Random,
             make: bool = True) -> bool:
    """Put `value` at `path` in `doc` (a "*" is an existing key, a "#" an existing item);
    missing tables on the way are made when `make`. False when the path is not there."""
    node = doc
    if make and path and path[0] not in doc and path[0] not in MADE:
        make = False  # a section the document lacks is made only where one field can be it
    for i, p in enumerate(path):
        last = i == len(path) - 1
        if p == "*":
            if not isinstance(node, dict) or not node:
                return False
            key: Any = rng.choice(list(node))
        elif p == "#":
            if not isinstance(node, list) or not node:
                return False
            key = rng.randrange(len(node))
        else:
            if not isinstance(node, dict):
                return False
            key = p
            if not last and key not in node:
                if not make or path[i + 1] in ("#", "*"):
                    return False
                node[key] = {}
        if last:
            node[key] = value
            return True
        node = node[key]
    return False


MADE = ("measured", "configs", "workload")
"""Sections a bound's edit may make in a document that lacks them: one field makes them."""


def bound_edits(doc: Doc, leaves: list[Leaf], rng: random.Random, others: list[float],
                k: int, make: bool = True) -> list[str]:
    """Up to `k` numeric fields of `doc` set at, inside or outside their bounds."""
    said = []
    for leaf in rng.sample(leaves, min(k, len(leaves))):
        value, why = leaf_values(leaf, rng, others)
        if set_leaf(doc, leaf.path, value, rng, make):
            said.append(f"{'.'.join(leaf.path)} = {value!r} ({why})")
    return said


# --- documents ---------------------------------------------------------------------------------

def toml_bytes(doc: Doc) -> bytes:
    return T._to_toml(doc).encode()


def json_bytes(doc: Doc) -> bytes:
    return T._to_json(doc).encode()


def _catalog_gpu_ids() -> list[str]:
    from advisor.io.catalog_store import load_catalog

    return [g.id for g in load_catalog().gpus]


def _gpu_key(rng: random.Random) -> str:
    return rng.choice(["h100-sxm", "b200-sxm", "h200-sxm", "mi300x", "H100 SXM", "l4",
                       "b200-sxm@16", "h100-sxm@8", "gb200"])


EXTREME_MODELS: list[dict[str, Any]] = [
    # the deepest, widest model with the largest vocabulary: each dimension valid alone
    {"layers": 4096, "hidden": 2**20, "heads": 2**14, "kv_heads": 2**14, "ffn": 2**20,
     "vocab": 2**24},
    {"layers": 4096, "hidden": 2**20, "heads": 2**14, "kv_heads": 1, "ffn": 2**20,
     "vocab": 2**24, "head_dim": 2**20},
    {"layers": 1, "hidden": 1, "heads": 1, "kv_heads": 1, "ffn": 1, "vocab": 1},
    {"layers": 1, "hidden": 2**20, "heads": 1, "kv_heads": 1, "ffn": 1, "vocab": 1},
    {"layers": 4096, "hidden": 1, "heads": 1, "kv_heads": 1, "ffn": 1, "vocab": 2**24},
    {"layers": 2, "hidden": 64, "heads": 2**14, "kv_heads": 2**14, "ffn": 64, "vocab": 8,
     "head_dim": 1},
    {"layers": 4096, "hidden": 2**20, "heads": 2**14, "kv_heads": 2**14, "ffn": 2**20,
     "vocab": 2**24, "experts": 2**16, "active_experts": 2**16, "shared_experts": 2**16,
     "moe_ffn": 2**20},
    {"layers": 64, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn": 1, "vocab": 32000,
     "experts": 2**16, "active_experts": 1, "moe_ffn": 1},
    {"layers": 4, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn": 14336, "vocab": 32000,
     "sliding_window": 1, "global_every": 4096},
    {"layers": 8, "hidden": 7168, "heads": 128, "kv_heads": 128, "ffn": 18432, "vocab": 2**24,
     "mla": {"q_lora_rank": 2**20, "kv_lora_rank": 2**20, "qk_nope_head_dim": 2**20,
             "qk_rope_head_dim": 2**20, "v_head_dim": 2**20}},
    {"layers": 8, "hidden": 7168, "heads": 128, "kv_heads": 128, "ffn": 18432, "vocab": 129280,
     "mla": {"q_lora_rank": 1, "kv_lora_rank": 1, "qk_nope_head_dim": 1,
             "qk_rope_head_dim": 1, "v_head_dim": 1}},
]
EXTREME_WORKLOADS: list[dict[str, Any]] = [
    {"seq_lens": [2**26], "micro_batch": 2**16, "gpus": 2**18, "token_budget": 1e18},
    {"seq_lens": [1], "micro_batch": 1, "gpus": 1, "token_budget": 1.0},
    {"seq_lens": [1, 2**26], "gpus": 2**18, "tp": 2**18},
    {"seq_lens": [2**26], "gpus": 2**18, "nodes": 2**18, "nic_gbit": 1.0},
    {"seq_lens": [2**26], "micro_batch": 2**16, "global_batch": 2**30, "gpus": 8},
    {"seq_lens": [4096], "gpus": 4096, "pp": 4096, "vp": 1},
    {"seq_lens": [2**26], "gpus": 8, "cp": 8, "token_budget": 1e18},
]


# --- answers -----------------------------------------------------------------------------------

class Ctx:
    """What the generators of one loader share: seeds, schemas, leaves, other documents."""

    def __init__(self, r: T.Runner, loader: str) -> None:
        self.r = r
        self.loader = loader
        self.others = _bounds_py()
        self.answers_seeds = [*T._answers_seeds(), *copy.deepcopy(MORE_ANSWERS)]
        self._reports: list[dict[str, Any]] | None = None
        self._records: list[dict[str, Any]] | None = None
        self._gpus: list[dict[str, Any]] | None = None

    @property
    def reports(self) -> list[dict[str, Any]]:
        if self._reports is None:
            self._reports = [tomllib.loads(t) for t in T._report_seeds(self.r)]
            self._reports += _more_reports(self.r)
        return self._reports

    @property
    def records(self) -> list[dict[str, Any]]:
        if self._records is None:
            self._records = T.seeds_for("probes", self.r)
        return self._records

    @property
    def gpus(self) -> list[dict[str, Any]]:
        if self._gpus is None:
            self._gpus = T.seeds_for("catalogs", self.r)
        return self._gpus


MORE_ANSWERS: list[dict[str, Any]] = [
    # what fuzz_typed's report seeds lack: a LoRA (its frozen base's options), decode and
    # serving (the batch curve, interactivity), a mixture of experts
    {"current": "h100-sxm", "targets": ["b200-sxm", "l4"],
     "workload": {"mode": "lora", "model": "llama-3.1-70b", "seq_lens": [4096], "gpus": 8,
                  "base_format": "nf4", "allow_quantized_base": True, "token_budget": 1e9}},
    {"current": "h200-sxm", "targets": ["b200-sxm"],
     "workload": {"mode": "decode", "model": "llama-3.1-8b", "seq_lens": [8192], "gpus": 1,
                  "tpot_ms": 20, "token_budget": 1e10}},
    {"current": "h100-sxm", "targets": ["mi300x", "b200-sxm@4"],
     "workload": {"mode": "serve", "model": "qwen3-30b-a3b", "seq_lens": [2048, 8192],
                  "osl": 256, "gpus": 8, "min_tokens_per_user": 40, "token_budget": 1e10},
     "prices": {"h100-sxm": 2.5, "mi300x": "1.2x"}},
    {"current": "h100-sxm", "targets": ["b200-sxm"],
     "workload": {"mode": "pretrain", "model": "gpt-oss-120b", "seq_lens": [4096], "gpus": 64,
                  "ep": 8, "token_budget": 1e12},
     "measured": {"mfu": 0.3}},
]


def _more_reports(r: T.Runner) -> list[dict[str, Any]]:
    from advisor.core import parse_answers, run
    from advisor.core.report.document import report_to_toml

    return [tomllib.loads(report_to_toml(run(parse_answers(doc, "a", r.catalog), r.catalog)))
            for doc in MORE_ANSWERS]


@functools.cache
def _schema(of: str) -> Schema:
    """Each input model's schema, built once, on first use (importing advisor is not free)."""
    from advisor.core.model.answers import Answers
    from advisor.core.model.catalog import Gpu, Price
    from advisor.core.model.probe_record import ProbeRecord
    from advisor.core.report.document import Report

    model, keys = {"answers": (Answers, _gpu_key), "gpu": (Gpu, None), "price": (Price, None),
                   "record": (ProbeRecord, None), "report": (Report, _gpu_key)}[of]
    return Schema(model, keys=keys)


def _answers_seed(ctx: Ctx, rng: random.Random) -> dict[str, Any]:
    seeds = [s for s in ctx.answers_seeds if "current" in s]
    return copy.deepcopy(rng.choice(seeds))


def _workload(doc: dict[str, Any]) -> dict[str, Any]:
    return T._table(doc, "workload")


def answers_bounds(ctx: Ctx, rng: random.Random) -> tuple[str, Doc]:
    doc = _answers_seed(ctx, rng)
    if rng.random() < 0.3:  # extremes together, each valid alone
        w = _workload(doc)
        model = copy.deepcopy(rng.choice(EXTREME_MODELS))
        w["model"] = model if rng.random() < 0.7 else w.get("model", "llama-3.1-8b")
        w.update(copy.deepcopy(rng.choice(EXTREME_WORKLOADS)))
        w.pop("configs", None)
        if rng.random() < 0.3:
            w["mode"] = rng.choice(["prefill", "decode", "serve", "finetune", "lora"])
            if w["mode"] == "serve":
                w["osl"] = rng.choice([1, 2**26])
        extra = bound_edits(doc, _schema("answers").leaves(), rng, ctx.others, rng.randint(0, 2))
        return f"bounds extremes: model {_short(w['model'])}, workload " \
               f"{_short({k: v for k, v in w.items() if k != 'model'})}; {extra}", doc
    said = bound_edits(doc, _schema("answers").leaves(), rng, ctx.others, rng.choice([1, 1, 2, 3]))
    return f"bounds: {said}", doc


def answers_schema(ctx: Ctx, rng: random.Random) -> tuple[str, Doc]:
    s = _schema("answers")
    pick = rng.random()
    if pick < 0.2:  # the whole document, from the schema alone
        doc = s.synth(s.root, rng)
        doc["current"], doc["targets"] = _gpu_key(rng), [_gpu_key(rng)]
        return "schema: a whole Answers", doc
    doc = _answers_seed(ctx, rng)
    part = rng.choice(["model", "measured", "layouts", "configs", "workload", "pipeline",
                       "prices", "power_limits_w", "stack"])
    if part == "model":
        _workload(doc)["model"] = s.synth(s.at("workload", "model"), rng)
    elif part == "workload":
        w = s.synth(s.at("workload"), rng)
        w["model"] = rng.choice(["llama-3.1-8b", "qwen3-30b-a3b", "deepseek-v3",
                                 s.synth(s.at("workload", "model"), rng)])
        doc["workload"] = w
    elif part == "pipeline":
        doc = s.synth(s.at("pipeline"), rng)
        return "schema: a [pipeline] alone", {"pipeline": doc}
    else:
        doc[part] = s.synth(s.at(part), rng)
    return f"schema: [{part}] synthesised", doc


def answers_splice(ctx: Ctx, rng: random.Random) -> tuple[str, Doc]:
    pick = rng.choice(["report-answers", "report", "gpu-model", "record", "record-workload",
                       "duplicate", "empty", "reorder", "report-measured", "pipeline"])
    report = copy.deepcopy(rng.choice(ctx.reports))
    if pick == "report-answers":  # what a report was decided on, given to decide again
        return "splice: a report's [answers] as the answers", report["answers"]
    if pick == "report":
        return "splice: a whole report as the answers", report
    doc = _answers_seed(ctx, rng)
    if pick == "gpu-model":
        _workload(doc)["model"] = copy.deepcopy(rng.choice(ctx.gpus))
        return "splice: a catalog [[gpu]] as the model table", doc
    if pick == "record":
        rec = rng.choice(ctx.records)
        key = rng.choice(["matmul", "stamp", "workload", "bandwidth"])
        where = rng.choice(["measured", "workload", "layouts", "stack"])
        target = T._table(doc, where)
        target[key] = copy.deepcopy(rec.get(key, {}))
        return f"splice: a probe record's {key} in [{where}]", doc
    if pick == "record-workload":  # the workload probe's shape as the model
        rec = next((r for r in ctx.records if "workload" in r), None)
        if rec is not None:
            shape = copy.deepcopy(rec["workload"]["shape"])
            shape.pop("mlp", None)
            shape.pop("expert_ffn", None)
            _workload(doc)["model"] = shape
        return "splice: a workload probe's shape as the model", doc
    if pick == "duplicate":  # a section given twice, under another spelling
        key = rng.choice(list(doc))
        doc[rng.choice([key.upper(), key + " ", f'"{key}"', key.replace("_", "-")])] = \
            copy.deepcopy(doc[key])
        return f"splice: [{key}] twice", doc
    if pick == "empty":
        key = rng.choice(list(doc))
        doc[key] = rng.choice([{}, [], ""]) if not isinstance(doc[key], dict) else {}
        return f"splice: [{key}] emptied", doc
    if pick == "reorder":
        items = list(doc.items())
        rng.shuffle(items)
        w = doc.get("workload")
        if isinstance(w, dict) and isinstance(w.get("seq_lens"), list):
            w["seq_lens"] = list(reversed(w["seq_lens"]))
        return "splice: sections reordered, seq_lens reversed", dict(items)
    if pick == "report-measured":  # another report's as-run point as the measured anchor
        point = (report.get("current", {}).get("as_run") or [{}])[0]
        doc["measured"] = {k: point[k] for k in ("mfu", "step_s") if k in point} or {
            "mfu": 0.5}
        return f"splice: a report's as-run point as [measured] {doc['measured']}", doc
    pipe = next((s for s in ctx.answers_seeds if "pipeline" in s), None)
    if pipe is not None:
        doc["pipeline"] = copy.deepcopy(pipe["pipeline"])
        stages = doc["pipeline"].get("stages", [])
        if stages and rng.random() < 0.5:
            stages.append(copy.deepcopy(stages[0]))
            return "splice: a pipeline with a stage twice", doc
    return "splice: a pipeline beside the sides", doc


def answers_consistency(ctx: Ctx, rng: random.Random) -> tuple[str, Doc]:
    doc = _answers_seed(ctx, rng)
    w = _workload(doc)
    custom = {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn": 14336,
              "vocab": 128256}
    pick = rng.choice(["parallel", "kv", "window", "osl", "measured", "layout", "batch",
                       "ep", "vp", "price", "lora", "packed", "stage", "counts"])
    if pick == "parallel":
        w.update(tp=rng.choice([2, 4, 8, 16]), pp=rng.choice([1, 2, 4]),
                 ep=rng.choice([1, 2, 8]), gpus=rng.choice([1, 2, 4, 8]))
    elif pick == "kv":
        w["model"] = {**custom, "kv_heads": rng.choice([3, 5, 7, 31, 64])}
    elif pick == "window":
        w["model"] = {**custom, "sliding_window": rng.choice([2**26, 8193, 1]),
                      "global_every": rng.choice([2, 64, 4096]),
                      "max_context": rng.choice([512, 4095, 2**26])}
    elif pick == "osl":
        w.update(mode="serve", osl=rng.choice([2**20, 2**26, 131073]),
                 model={**custom, "max_context": rng.choice([2048, 8192, 131072])})
        for k in ("zero_stage", "recompute", "checkpointing", "offload_optimizer",
                  "token_budget"):
            w.pop(k, None)
    elif pick == "measured":  # an anchor no GPU of the answers can run
        doc["measured"] = rng.choice([
            {"mfu": 1.0}, {"mfu": B_MIN_MFU()}, {"tokens_per_s_per_gpu": 1e12},
            {"tokens_per_s_per_gpu": 1e-9}, {"step_s": 1e-300}, {"step_s": 1e7},
            {"mfu": 0.5, "attention_share": 1.0}, {"mfu": 0.5, "peak_memory_gib": 1e6},
            {"tokens_per_s_per_gpu": 1e12, "attention_share": 0.0}])
    elif pick == "layout":  # a layout for a GPU not compared, or that breaks the workload
        doc["layouts"] = {rng.choice(["mi300x", "l4", "b200-sxm", "h100-sxm"]): rng.choice(
            [{"tp": 16}, {"gpus": 3}, {"ep": 64}, {"vp": 4}, {"nodes": 64},
             {"gpus": 2**18, "tp": 2**18}, {"micro_batch": 2**16}, {"precision": "nvfp4"},
             {"kv_dtype": "fp4"}, {"pp": 8, "vp": 4096}])}
    elif pick == "batch":
        w.update(micro_batch=rng.choice([3, 2**16]), global_batch=rng.choice([1, 7, 2**30]))
    elif pick == "ep":
        w.update(model={**custom, "experts": rng.choice([6, 8, 2**16]), "active_experts": 2,
                        "moe_ffn": 1024}, ep=rng.choice([4, 16, 64]), gpus=64)
    elif pick == "vp":
        w.update(pp=rng.choice([2, 4]), vp=rng.choice([3, 4096]), gpus=8)
    elif pick == "price":  # the current GPU's price as a ratio, a ratio to itself
        doc["prices"] = {str(doc.get("current", "h100-sxm")): rng.choice(["2x", "1x"]),
                         "b200-sxm": rng.choice(["1000x", "0.001x", "1x"])}
    elif pick == "lora":
        w.update(mode="lora", lora_rank=rng.choice([2**20, 4097]),
                 base_format=rng.choice(["nf4", "int4"]), precision="fp8")
    elif pick == "packed":
        w.update(packed_doc_len=rng.choice([2**26, 1]), seq_lens=[4096, 1])
    elif pick == "stage":
        pipe = next((s for s in ctx.answers_seeds if "pipeline" in s), None)
        if pipe is not None:
            doc = copy.deepcopy(pipe)
            stages = doc["pipeline"]["stages"]
            stage = rng.choice(stages)
            stage.update(rng.choice([{"gpu": "l4", "peak_tflops": 1e5},
                                     {"mfu": 1.0, "flops_per_token": 1e17},
                                     {"gpus": 2**18}, {"hop_s_per_unit": 3600.0}]))
            for k in ("measured_units_per_s", "measured_tokens_per_s"):
                if "flops_per_token" in stage:
                    stage.pop(k, None)
    else:
        doc["configs"] = {"counts": rng.choice([[4096], [1, 4096], [3, 5, 7]]),
                          "gpus_per_node": rng.choice([1, 72]),
                          "deadline_days": rng.choice([1e-5, 36500.0])}
    return f"consistency: {pick}", doc


def B_MIN_MFU() -> float:
    from advisor.core.model import bounds as B

    return B.MIN_MFU


def answers_text(ctx: Ctx, rng: random.Random) -> tuple[str, Doc | bytes]:
    doc = _answers_seed(ctx, rng)
    if rng.random() < 0.35:
        data, kind = attack_bytes(T._to_toml(doc), rng)
        return f"text file: {kind}", data
    said = attack_some_string(doc, rng, ("current", "targets", "prices", "layouts", "model",
                                         "power_limits_w", "gpu"))
    return said, doc


ANSWERS = {"bounds": answers_bounds, "schema": answers_schema, "splice": answers_splice,
           "consistency": answers_consistency, "text": answers_text}


def make_answers(ctx: Ctx, rng: random.Random) -> Case:
    family = rng.choice(list(ANSWERS))
    how, doc = ANSWERS[family](ctx, rng)
    data = doc if isinstance(doc, bytes) else toml_bytes(doc)
    path = "{home}/answers.toml"
    if isinstance(doc, dict) and "current" not in doc and "pipeline" in doc:
        return Case(how, {"answers.toml": data}, ["configs", "pipeline", path], (path,))
    return Case(how, {"answers.toml": data},
                ["decide", "--answers", path, "--out", "{home}/report.toml"], (path,))


# --- flags ---------------------------------------------------------------------------------------

def _flag_bounds() -> dict[str, list[str]]:
    """Each workload flag at its bound, one past it, and at a neighbouring field's bound."""
    from advisor.core.model import bounds as B

    nx = math.nextafter
    whole = {"--seq-len": (1, B.MAX_SEQ_LEN), "--gpus": (1, B.MAX_GPUS),
             "--micro-batch": (1, B.MAX_MICRO_BATCH), "--global-batch": (1, B.MAX_GLOBAL_BATCH),
             "--tp": (1, B.MAX_GPUS), "--pp": (1, B.MAX_GPUS), "--cp": (1, B.MAX_GPUS),
             "--ep": (1, B.MAX_GPUS), "--vp": (1, B.MAX_LAYERS), "--nodes": (1, B.MAX_NODES),
             "--layers": (1, B.MAX_LAYERS), "--hidden": (1, B.MAX_WIDTH),
             "--heads": (1, B.MAX_HEADS), "--kv-heads": (1, B.MAX_HEADS),
             "--ffn": (1, B.MAX_WIDTH), "--vocab": (1, B.MAX_VOCAB),
             "--experts": (0, B.MAX_EXPERTS), "--active-experts": (0, B.MAX_EXPERTS),
             "--shared-experts": (0, B.MAX_EXPERTS), "--moe-ffn": (1, B.MAX_WIDTH),
             "--dense-layers": (0, B.MAX_LAYERS), "--moe-every": (1, B.MAX_LAYERS),
             "--osl": (1, B.MAX_SEQ_LEN), "--max-batch": (1, B.MAX_MICRO_BATCH),
             "--lora-rank": (1, B.MAX_WIDTH), "--current-gpus": (1, B.MAX_GPUS),
             "--target-gpus": (1, B.MAX_GPUS), "--packed-doc-len": (1, B.MAX_SEQ_LEN),
             "--measured-concurrency": (1, B.MAX_MICRO_BATCH)}
    real = {"--token-budget": (B.MIN_TOKENS, B.MAX_TOKENS, False),
            "--electricity": (0.0, B.MAX_USD_PER_KWH, False),
            "--power-cap": (B.MIN_POWER_CAP_KW, B.MAX_POWER_CAP_KW, False),
            "--measured-mfu": (B.MIN_MFU, 1.0, False),
            "--measured-tokens-per-s": (B.MIN_RATE_PER_S, B.MAX_TOKENS_PER_S, False),
            "--measured-step-s": (B.MIN_STEP_S, B.MAX_SECONDS, False),
            "--measured-attention-share": (0.0, 1.0, False),
            "--measured-peak-gib": (0.0, B.MAX_DEVICE_GIB, True),
            "--measured-tpot-ms": (B.MIN_MS, B.MAX_SECONDS * 1000, False),
            "--measured-ttft-ms": (B.MIN_MS, B.MAX_SECONDS * 1000, False),
            "--tpot-ms": (B.MIN_MS, B.MAX_SECONDS * 1000, False),
            "--ttft-ms": (B.MIN_MS, B.MAX_SECONDS * 1000, False),
            "--min-tokens-per-user": (B.MIN_TOKENS_PER_USER, B.MAX_TOKENS_PER_USER, False),
            "--params": (B.MIN_PARAMS, B.MAX_PARAMS, False)}
    out: dict[str, list[str]] = {}
    for flag, (lo, hi) in whole.items():
        out[flag] = [str(v) for v in (lo, hi, lo - 1, hi + 1, lo + 1, hi - 1)]
    for flag, (lo, hi, open_lo) in real.items():
        out[flag] = [repr(v) for v in (
            nx(lo, math.inf) if open_lo else lo, hi, nx(hi, math.inf), nx(lo, -math.inf),
            nx(hi, -math.inf), lo, 1e-300, 5e-324)]
    out["--price"] = [f"{g}={v!r}" for g in ("b200-sxm", "h100-sxm") for v in (
        B.MIN_USD_PER_GPU_HOUR, B.MAX_USD_PER_GPU_HOUR, nx(B.MAX_USD_PER_GPU_HOUR, math.inf),
        nx(B.MIN_USD_PER_GPU_HOUR, 0.0))] + ["b200-sxm=1000x", "b200-sxm=0.001x"]
    out["--power-limit"] = [f"h100-sxm={v!r}" for v in (175.0, nx(175.0, 0), 700.0,
                                                        nx(700.0, math.inf), 10.0)]
    return out


TRAINING_FLAGS = ("--global-batch", "--measured-mfu", "--measured-tokens-per-s",
                  "--measured-step-s", "--measured-attention-share", "--measured-peak-gib",
                  "--packed-doc-len")
SERVING_FLAGS = ("--osl", "--max-batch", "--tpot-ms", "--ttft-ms", "--min-tokens-per-user",
                 "--measured-tpot-ms", "--measured-concurrency", "--measured-ttft-ms")
MODEL_FLAGS = ("--layers", "--hidden", "--heads", "--kv-heads", "--ffn", "--vocab",
               "--experts", "--active-experts", "--shared-experts", "--moe-ffn",
               "--dense-layers", "--moe-every", "--params")


def flags_bounds(ctx: Ctx, rng: random.Random) -> tuple[str, list[str]]:
    """Flags of one mode, each at or next to its bound: the values inside the bounds are
    drawn more often than those outside, so several ends meet in one run."""
    table = FLAG_BOUNDS or FLAG_BOUNDS.update(_flag_bounds()) or FLAG_BOUNDS
    argv = ["--current", rng.choice(["h100-sxm", "mi300x", "l4"]), "--target",
            rng.choice(["b200-sxm", "h200-sxm", "gb300"])]
    if rng.random() < 0.35:  # a custom model, several dimensions at their ends together
        argv += ["--params", rng.choice(["1", "1e16", "8e9", "1e12"])]
        for flag in ("--layers", "--hidden", "--heads", "--kv-heads", "--ffn", "--vocab"):
            if rng.random() < 0.6:
                argv += [flag, rng.choice(table[flag][:2])]
    else:
        argv += ["--model", rng.choice(["llama-3.1-8b", "qwen3-30b-a3b", "llama-3.1-405b",
                                        "gpt-oss-120b"])]
    serving = rng.random() < 0.4
    if serving:
        argv += ["--mode", "serve", "--osl", rng.choice(["1", "512", "67108864"])]
    usable = sorted(f for f in table if f not in MODEL_FLAGS and f != "--osl"
                    and f not in (TRAINING_FLAGS if serving else SERVING_FLAGS)
                    and f != "--lora-rank")
    chosen = rng.sample(usable, rng.randint(1, 3))
    if "--seq-len" not in chosen:
        argv += ["--seq-len", rng.choice(["4096", "1", "8k"])]
    for flag in chosen:
        values = table[flag]
        inside = [v for i, v in enumerate(values) if i not in (2, 3)]
        argv.append(_flag(flag, rng.choice(inside) if rng.random() < 0.75
                          else rng.choice(values)))
    return "bounds", argv


def _flag(flag: str, value: str) -> str:
    """`--flag=value`: a value such as -1 or -5e-324 is the flag's, not taken for another."""
    return f"{flag}={value}"


FLAG_BOUNDS: dict[str, list[str]] = {}


def flags_consistency(ctx: Ctx, rng: random.Random) -> tuple[str, list[str]]:
    base = ["--current", "h100-sxm", "--target", "b200-sxm"]
    pick = rng.choice([
        ["--model", "llama-3.1-8b", "--tp", "16", "--gpus", "8"],
        ["--model", "llama-3.1-8b", "--tp", "2", "--pp", "2", "--ep", "4", "--gpus", "8"],
        ["--params", "8e9", "--heads", "32", "--kv-heads", "5"],
        ["--model", "llama-3.1-8b", "--mode", "serve", "--osl", "67108864", "--seq-len",
         "67108864"],
        ["--model", "gpt-oss-120b", "--mode", "serve", "--osl", "1000000", "--seq-len", "8k"],
        ["--model", "llama-3.1-8b", "--seq-len", "1", "--packed-doc-len", "4096"],
        ["--model", "llama-3.1-8b", "--measured-mfu", "1.0", "--measured-attention-share",
         "1.0"],
        ["--model", "llama-3.1-8b", "--measured-tokens-per-s", "1e12", "--gpus", "1"],
        ["--model", "llama-3.1-8b", "--mode", "serve", "--osl", "128",
         "--measured-tpot-ms", "1e-300"],
        ["--model", "llama-3.1-8b", "--measured-step-s", "5e-324", "--global-batch", "1"],
        ["--model", "llama-3.1-8b", "--current-gpus", "1", "--target-gpus", "262144"],
        ["--model", "llama-3.1-8b", "--target-layout", "b200-sxm=tp=16,gpus=8"],
        ["--model", "llama-3.1-8b", "--target-layout", "mi300x=tp=2"],
        ["--params", "8e9", "--experts", "8", "--active-experts", "9"],
        ["--params", "8e9", "--experts", "8", "--dense-layers", "4096", "--layers", "4"],
        ["--model", "llama-3.1-8b", "--price", "b200-sxm=1000x", "--price", "h100-sxm=0.001"],
        ["--model", "llama-3.1-8b", "--price", "h100-sxm=2x"],
        ["--model", "llama-3.1-8b", "--power-limit", "b200-sxm=175"],
        ["--model", "llama-3.1-8b", "--mode", "lora", "--lora-rank", "1048576"],
        ["--model", "llama-3.1-8b", "--mode", "decode", "--min-tokens-per-user", "1e6",
         "--tpot-ms", "1e9"],
        ["--model", "llama-3.1-8b", "--vp", "4096", "--pp", "2"],
        ["--model", "qwen3-30b-a3b", "--ep", "256", "--gpus", "256"],
    ])
    return "consistency", [*base, *pick]


def flags_text(ctx: Ctx, rng: random.Random) -> tuple[str, list[str]]:
    argv = ["--current", "h100-sxm", "--target", "b200-sxm", "--model", "llama-3.1-8b",
            "--seq-len", "4096"]
    i = rng.choice([1, 3, 5, 7])
    new, kind = attack_text(argv[i], rng)
    if "\x00" in new:  # a command line cannot carry a NUL
        new = new.replace("\x00", "\u2400")
    argv[i] = new
    if rng.random() < 0.3:
        flag, value = rng.choice([("--price", "b200-sxm=6.40"), ("--power-limit",
                                  "h100-sxm=500"), ("--target-layout", "b200-sxm=tp=2"),
                                  ("--measured-mfu", "0.4"), ("--gpus", "16")])
        value, kind2 = attack_text(value, rng)
        argv += [flag, value.replace("\x00", "\u2400")]
        kind += f"+{kind2} {flag}"
    return f"text {kind}: {_short(argv)}", argv


def flags_schema(ctx: Ctx, rng: random.Random) -> tuple[str, list[str]]:
    """A workload synthesised from the schema, given as flags."""
    s = _schema("answers")
    w = s.synth(s.at("workload"), rng)
    argv = ["--current", _gpu_key(rng), "--target", _gpu_key(rng)]
    model = s.synth(s.at("workload", "model"), rng) if rng.random() < 0.5 else None
    if model:
        argv += ["--params", rng.choice(["8e9", "1e11"])]
        for k in ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab", "experts",
                  "active_experts", "shared_experts", "moe_ffn", "dense_layers", "moe_every"):
            if k in model:
                argv += [f"--{k.replace('_', '-')}", str(model[k])]
    else:
        argv += ["--model", rng.choice(["llama-3.1-8b", "qwen3-30b-a3b", "gpt-oss-20b"])]
    names = {"micro_batch": "--micro-batch", "global_batch": "--global-batch",
             "gpus": "--gpus", "nodes": "--nodes", "tp": "--tp", "pp": "--pp", "cp": "--cp",
             "ep": "--ep", "vp": "--vp", "mode": "--mode", "precision": "--precision",
             "zero_stage": "--zero", "recompute": "--recompute", "osl": "--osl",
             "token_budget": "--token-budget", "ttft_ms": "--ttft-ms", "tpot_ms": "--tpot-ms",
             "max_batch": "--max-batch", "kv_dtype": "--kv-dtype", "lora_rank": "--lora-rank",
             "packed_doc_len": "--packed-doc-len", "framework": "--framework",
             "attention_kernel": "--attention-kernel", "base_format": "--base-format",
             "optimizer": "--optimizer", "min_tokens_per_user": "--min-tokens-per-user"}
    for key, flag in names.items():
        if key in w:
            argv += [flag, str(w[key])]
    for n in w.get("seq_lens", [])[:3]:
        argv += ["--seq-len", str(rng.choice([n, 4096]))]
    return "schema: a Workload as flags", argv


FLAGS = {"bounds": flags_bounds, "consistency": flags_consistency, "text": flags_text,
         "schema": flags_schema}


def make_flags(ctx: Ctx, rng: random.Random) -> Case:
    family = rng.choice(list(FLAGS))
    how, argv = FLAGS[family](ctx, rng)
    command = rng.choices(["compare", "rank", "sweep"], [0.7, 0.15, 0.15])[0]
    head = ["configs", "sweep"] if command == "sweep" else [command]
    if command != "compare" and "--target" in argv:  # one target at most
        i = argv.index("--target")
        del argv[i:i + 2]
    return Case(f"{how} ({command})", {}, [*head, *argv, "--json"], (T.FLAG,))


# --- price sheets ------------------------------------------------------------------------------

def _sheet_body(rows: list[dict[str, Any]], fmt: str, rng: random.Random) -> bytes:
    if fmt == "csv":
        cols = list(dict.fromkeys(k for row in rows for k in row))
        lines = [",".join(cols)] + [",".join(_cell(row.get(c, "")) for c in cols)
                                    for row in rows]
        return "\n".join(lines).encode()
    doc = {"price": rows}
    return toml_bytes(doc) if fmt == "toml" else json_bytes(doc)


def _cell(v: Any) -> str:
    if isinstance(v, list):
        v = ";".join(str(x) for x in v)
    text = str(v)
    return f'"{text}"' if any(c in text for c in ',"\n\r') else text


def sheets_rows(ctx: Ctx, rng: random.Random) -> tuple[str, list[dict[str, Any]]]:
    from advisor.core.model import bounds as B

    pick = rng.random()
    rows = [{"gpu": g, "usd_per_hour": rng.choice([2.5, 3.0, 6.4])}
            for g in rng.sample(["h100-sxm", "b200-sxm", "mi300x", "l4", "h200-sxm"],
                                rng.randint(1, 3))]
    if pick < 0.3:  # schema: each row synthesised from Price
        s = _schema("price")
        rows = []
        for g in rng.sample(["h100-sxm", "b200-sxm", "mi300x", "l4", "H200 SXM"],
                            rng.randint(1, 3)):
            p = s.synth(s.root, rng)
            p.pop("default", None)
            p["gpu"] = g
            if rng.random() < 0.5:
                p.pop("source", None)
            rows.append(p)
        return "schema: rows synthesised from Price", rows
    if pick < 0.55:  # bounds of usd_per_hour (gt 0.01, le 200) and the neighbours'
        nx = math.nextafter
        v = rng.choice([0.01, nx(0.01, 1), nx(0.01, 0), 200.0, nx(200.0, 0), nx(200.0, 999),
                        B.MIN_USD_PER_GPU_HOUR, B.MAX_USD_PER_GPU_HOUR, 5e-324, 1e-300,
                        "0.01", "200", f"{nx(200.0, 999)!r}", "$200.00/h", "200.0000000001"])
        rows[0]["usd_per_hour"] = v
        return f"bounds: usd_per_hour = {v!r}", rows
    if pick < 0.75:  # consistency: one GPU twice, by id and by a name, with other dates
        from advisor.io.catalog_store import load_catalog

        g = load_catalog().gpu(rows[0]["gpu"])
        other = rng.choice([g.name, *g.aliases, g.id.upper(), g.id + "@8"])
        rows.append({"gpu": other, "usd_per_hour": 9.9, "retrieved": "2026-02-01"})
        rows[0]["retrieved"] = "2025-01-01"
        return f"consistency: {g.id} priced twice (as {other!r})", rows
    # text: a GPU name or a label attacked
    key = rng.choice(["gpu", "gpu", "label", "source"])
    row = rng.choice(rows)
    new, kind = attack_text(str(row.get(key, "team rate")), rng)
    row[key] = new
    return f"text {kind}: {key} = {_short(new)}", rows


def make_sheets(ctx: Ctx, rng: random.Random) -> Case:
    fmt = rng.choice(["csv", "toml", "json"])
    if rng.random() < 0.12:  # splice: a catalog document as a sheet, or a sheet's rows
        gpu = copy.deepcopy(rng.choice(ctx.gpus))
        doc = rng.choice([{"gpu": [gpu]}, {"price": [gpu]},
                          {"price": [{"gpu": "h100-sxm", "usd_per_hour": 2.5}], "gpu": [gpu]},
                          {"price": [{"gpu": "h100-sxm", "usd_per_hour": 2.5}]} | {
                              "price ": [{"gpu": "b200-sxm", "usd_per_hour": 6}]}])
        fmt = rng.choice(["toml", "json"])
        body = toml_bytes(doc) if fmt == "toml" else json_bytes(doc)
        how = f"splice: catalog tables as a {fmt} sheet"
    else:
        how, rows = sheets_rows(ctx, rng)
        body = _sheet_body(rows, fmt, rng)
        if rng.random() < 0.2:
            body, kind = attack_bytes(body.decode(), rng)
            how += f"; file {kind}"
    suffix = rng.choice([f".{fmt}", f".{fmt}", "", ".txt"])
    ctype = rng.choice([None, f"text/{fmt}", "application/octet-stream"])
    return Case(f"{how} ({fmt})", pull=("prices", body, suffix, ctype))


# --- catalogs ----------------------------------------------------------------------------------

def _new_gpu(ctx: Ctx, rng: random.Random) -> dict[str, Any]:
    g = copy.deepcopy(rng.choice(ctx.gpus))
    g.update(id="team-x0", name="Team X0", aliases=[])
    g.pop("same_die_as", None)
    return g


def catalogs_doc(ctx: Ctx, rng: random.Random) -> tuple[str, dict[str, Any]]:
    family = rng.choice(["bounds", "bounds", "schema", "splice", "consistency", "text"])
    if family == "schema":
        g = _schema("gpu").synth(_schema("gpu").root, rng)
        base = rng.choice(ctx.gpus)
        g.update(id="team-s0", name="Team S0", aliases=[], arch=base["arch"],
                 family=rng.choice([base["family"], "Solo"]), vendor=base["vendor"])
        g.pop("same_die_as", None)
        if rng.random() < 0.5:  # keep the shipped peaks so the family check passes
            g["peak_tflops"] = copy.deepcopy(base["peak_tflops"])
            g.pop("mamf", None)
            g.pop("gemm", None)
        return "schema: a Gpu synthesised", {"gpu": [g]}
    g = _new_gpu(ctx, rng) if rng.random() < 0.75 else copy.deepcopy(rng.choice(ctx.gpus))
    if family == "bounds":
        if rng.random() < 0.3:  # extremes together: each within the schema alone
            peaks = g.setdefault("peak_tflops", {})
            top = rng.choice([100000.0, math.nextafter(0.1, 1)])
            for k in ("bf16", "fp16", "fp8", "fp4", "nvfp4"):
                if k in peaks:
                    peaks[k] = top
            mem = g.get("memory")
            if isinstance(mem, dict):
                mem.update(gib=rng.choice([math.nextafter(1, 2), 1024.0]),
                           bandwidth_tbps=rng.choice([math.nextafter(0.05, 1), 30.0]))
            power = g.get("power")
            if isinstance(power, dict):
                power.update(tdp_w=rng.choice([math.nextafter(10, 11), 3000.0]))
                power.pop("idle_w", None)
            g.pop("mamf", None)
            g.pop("gemm", None)
            g.pop("measured", None)
            return f"bounds extremes: peaks {top!r}, memory {mem and {k: mem[k] for k in ('gib', 'bandwidth_tbps')}}", {"gpu": [g]}  # noqa: E501
        said = bound_edits(g, _schema("gpu").leaves(), rng, ctx.others, rng.choice([1, 1, 2]),
                           make=False)
        return f"bounds: {said}", {"gpu": [g]}
    if family == "splice":
        pick = rng.choice(["price", "arch", "record", "twice", "empty"])
        if pick == "price":
            return "splice: a [[price]] for the new GPU", {"gpu": [g], "price": [
                {"gpu": g["id"], "usd_per_hour": rng.choice([0.02, 199.0, 5.0]),
                 "label": "team rate", "default": True, "source": ["team"],
                 "retrieved": "2026-01-01"}]}
        if pick == "arch":
            arch = {**copy.deepcopy(T.ARCH), "id": "team_arch"}
            g["arch"] = "team_arch"
            g["family"] = "TeamX"
            return "splice: a new [[arch]] with the GPU", {"gpu": [g], "arch": [arch]}
        if pick == "record":
            rec = rng.choice(ctx.records)
            g["measured"] = copy.deepcopy((rec.get("bandwidth") or [{}])[0]) | {
                "source": ["probe"], "retrieved": "2026-01-01"}
            return "splice: a probe record's bandwidth as measured", {"gpu": [g]}
        if pick == "twice":
            g2 = copy.deepcopy(g)
            g2["name"] = "Team X1"
            return "splice: one GPU twice (same id)", {"gpu": [g, g2]}
        return "splice: an empty [[gpu]] beside one", {"gpu": [g, {}]}
    if family == "consistency":
        pick = rng.choice(["mamf", "gemm", "hbm", "idle", "twin", "order"])
        peaks = g.get("peak_tflops", {})
        if pick == "mamf" and peaks.get("bf16"):
            g["mamf"] = {"bf16": {"tflops": peaks["bf16"], "shape": "8192x8192x8192",
                                  "source": ["x"], "retrieved": "2026-01-01"}}
        elif pick == "gemm" and peaks.get("bf16"):
            g["gemm"] = {"bf16": {"tflops": math.nextafter(peaks["bf16"], math.inf),
                                  "source": ["x"], "retrieved": "2026-01-01"}}
        elif pick == "hbm" and isinstance(g.get("memory"), dict):
            g["measured"] = {"hbm_tbps": g["memory"]["bandwidth_tbps"], "source": ["x"],
                             "retrieved": "2026-01-01"}
        elif pick == "idle" and isinstance(g.get("power"), dict) and g["power"].get("tdp_w"):
            g["power"]["idle_w"] = min(500.0, g["power"]["tdp_w"])
        elif pick == "twin":
            g["same_die_as"] = rng.choice([g["id"], "h100-sxm", "b200-sxm", "mi300x"])
        else:
            for k in ("bf16", "fp8", "fp4"):
                if k in peaks:
                    peaks[k] = peaks.get("bf16", 1.0)
        return f"consistency: {pick}", {"gpu": [g]}
    said = attack_some_string(g, rng, ("id", "name", "aliases", "arch", "family"))
    if rng.random() < 0.4:  # a new GPU named like a shipped one, but not the same
        shipped = rng.choice(ctx.gpus)
        new, kind = attack_text(rng.choice([shipped["name"], shipped["id"],
                                            *shipped.get("aliases", [])]), rng)
        g[rng.choice(["name", "aliases"])] = new if rng.random() < 0.5 else [new]
        said = f"text {kind}: a shipped name {new!r}"
    return said, {"gpu": [g]}


def make_catalogs(ctx: Ctx, rng: random.Random) -> Case:
    how, doc = catalogs_doc(ctx, rng)
    fmt = rng.choice(["toml", "json"])
    body = toml_bytes(doc) if fmt == "toml" else json_bytes(doc)
    if rng.random() < 0.08:
        body, kind = attack_bytes(body.decode(), rng)
        how += f"; file {kind}"
    return Case(f"{how} ({fmt})", pull=("catalog", body, rng.choice([f".{fmt}", ""]), None))


# --- probes ------------------------------------------------------------------------------------

def probes_doc(ctx: Ctx, rng: random.Random) -> tuple[str, Doc]:
    rec = copy.deepcopy(rng.choice(ctx.records))
    family = rng.choice(["bounds", "bounds", "schema", "splice", "consistency", "text"])
    s = _schema("record")
    if family == "bounds":
        if rng.random() < 0.3:  # extremes together
            from advisor.core.model import bounds as B

            hi, lo = B.MAX_TFLOPS, B.MIN_TFLOPS
            for m in rec.get("matmul", []):
                m.update(mamf_tflops=rng.choice([hi, lo]), median_tflops=rng.choice([hi, lo]))
            for a in rec.get("attention", []):
                a["tflops_median"] = rng.choice([hi, lo])
            for b in rec.get("bandwidth", []):
                b["gbps_median"] = rng.choice([B.MAX_GBPS, B.MIN_GBPS])
            whole = _full_model(rec)
            if whole is not None:
                whole.update(tokens_per_s=rng.choice([B.MAX_TOKENS, 1e-300, 5e-324]),
                             step_ms=rng.choice([B.MAX_SECONDS * 1000, 5e-324]),
                             peak_memory_gib=rng.choice([0.0, B.MAX_DEVICE_GIB]))
                whole.update(attention_share=rng.choice([0.0, 1.0]), gemm_share=None,
                             other_share=None)
                for k in ("gemm_share", "other_share"):
                    whole.pop(k)
                whole.pop("attention_share") if rng.random() < 0.5 else None
            return "bounds extremes: every figure at an end", rec
        if rng.random() < 0.2 and (done := column_ends(rec, rng)):
            return done, rec
        said = bound_edits(rec, s.leaves(), rng, ctx.others, rng.choice([1, 1, 2, 3]),
                           make=False)
        return f"bounds: {said}", rec
    if family == "schema":
        section = rng.choice(["matmul", "attention", "bandwidth", "collectives", "node_health",
                              "workload", "stamp"])
        sub = s.at(section)
        value = s.synth(sub, rng)
        if section == "stamp" and isinstance(value, dict):
            value.setdefault("device", {})["catalog_id"] = rec["stamp"]["device"].get(
                "catalog_id")
        rec[section] = value
        return f"schema: {section} synthesised", rec
    if family == "splice":
        other = copy.deepcopy(rng.choice(ctx.records))
        pick = rng.choice(["section", "workload", "report", "twice", "empty"])
        if pick == "section":
            key = rng.choice(["matmul", "attention", "bandwidth", "stamp"])
            rec[key] = other.get(key)
            return f"splice: another record's {key}", rec
        if pick == "workload" and "workload" in other:
            rec["workload"] = other["workload"]
            return "splice: a workload probe's section in a suite record", rec
        if pick == "report":
            report = rng.choice(ctx.reports)
            rec["workload"] = copy.deepcopy(report.get("answers", {}).get("workload", {}))
            return "splice: a report's [answers.workload] as the record's workload", rec
        if pick == "twice":
            for key in ("matmul", "attention", "bandwidth"):
                rec[key] = rec.get(key, []) * 2
            phases = (rec.get("workload") or {}).get("phases")
            if isinstance(phases, list):
                rec["workload"]["phases"] = phases * 2
            return "splice: every result given twice", rec
        key = rng.choice(["matmul", "attention", "bandwidth", "workload"])
        if key in rec:
            rec[key] = [] if key != "workload" else {}
        return f"splice: {key} emptied", rec
    if family == "consistency":
        pick = rng.choice(["gpu", "shape", "seq", "layers", "rate", "mode", "phase", "peak",
                           "peak"])
        w = rec.get("workload")
        if pick == "peak" or (pick != "gpu" and not isinstance(w, dict)):
            # measured rates about the catalog's peak of the GPU the record is filed as: each
            # valid alone (a boost clock beats a peak quoted at base clock), above it together
            gid = rec["stamp"]["device"].get("catalog_id") or "h100-sxm"
            part = ctx.r.catalog.gpu(gid)
            peak = part.peak_tflops.get("bf16") or 100.0
            f = rng.choice([0.99, 1.0, 1.01, 1.2, 1.5, 1.99, 2.0])
            for m in rec.get("matmul", []):
                m.update(mamf_tflops=peak * f, median_tflops=peak * f * rng.choice([1, 0.95]))
            for a in rec.get("attention", []):
                a["tflops_median"] = peak * rng.choice([0.5, 0.9, 1.0, 1.2]) * f
            whole = _full_model(rec)
            if whole is not None:
                whole["tokens_per_s"] *= rng.choice([1.2, 1.5, 1.8, 2.0, 2.2, 2.5, 3.0])
            return f"consistency: rates at {f}x {gid}'s peak", rec
        if pick == "gpu" or not isinstance(w, dict):
            rec["stamp"]["device"]["catalog_id"] = rng.choice(
                ["l4", "mi300x", "gb300", "h200-sxm", "b200-sxm", "tpu-v5e", None])
            return f"consistency: filed as {rec['stamp']['device']['catalog_id']}", rec
        if pick == "shape":  # another model than the one compared
            w["shape"].update(rng.choice([{"hidden": 8192, "layers": 80, "heads": 64,
                                           "ffn": 28672}, {"vocab": 2**24},
                                          {"experts": 8, "active_experts": 2,
                                           "expert_ffn": 14336}, {"layers": 1}]))
        elif pick == "seq":
            w.update(seq_len=rng.choice([1, 2**26, 8192]), seq_len_run=rng.choice([1, 2**26]))
        elif pick == "layers":
            w.update(layers_total=rng.choice([1, 4096]), layers_run=[4096])
        elif pick == "rate":
            whole = _full_model(rec)
            if whole is not None:
                whole["tokens_per_s"] = whole["tokens_per_s"] * rng.choice([1e3, 1e6, 1e-6])
        elif pick == "mode":
            w["mode"] = rng.choice(["serve", "decode", "prefill", "lora"])
        else:
            for p in w.get("phases", []):
                p["phase"] = rng.choice(["prefill", "decode"])
        return f"consistency: workload {pick}", rec
    if rng.random() < 0.3:
        data, kind = attack_bytes(T._to_json(rec), rng)
        return f"text file: {kind}", data
    return attack_some_string(rec, rng, ("catalog_id", "name", "dtype", "kernel", "backend",
                                         "hostname", "mode", "precision")), rec


def _full_model(rec: Doc) -> dict[str, Any] | None:
    phases = (rec.get("workload") or {}).get("phases") if isinstance(rec, dict) else None
    for p in phases if isinstance(phases, list) else []:
        if isinstance(p, dict) and isinstance(p.get("full_model"), dict):
            return p["full_model"]  # type: ignore[no-any-return]
    return None


def make_probes(ctx: Ctx, rng: random.Random) -> Case:
    how, rec = probes_doc(ctx, rng)
    data = rec if isinstance(rec, bytes) else json_bytes(rec)
    named = None
    if isinstance(rec, dict):
        dev = (rec.get("stamp") or {}).get("device") if isinstance(rec.get("stamp"), dict) \
            else None
        named = dev.get("catalog_id") if isinstance(dev, dict) else None
    gpu = named if isinstance(named, str) and rng.random() < 0.8 else rng.choice(
        ["h100-sxm", "b200-sxm", "mi300x", "l4"])
    other = rng.choice([g for g in ("b200-sxm", "h200-sxm", "mi300x", "h100-sxm") if g != gpu])
    sides = [gpu, other] if rng.random() < 0.7 else [other, gpu]
    argv = ["compare", "--current", sides[0], "--target", sides[1], "--model", "llama-3.1-8b",
            "--seq-len", rng.choice(["4096", "4096", "8192"]), "--json"]
    path = "{home}/box.json"
    if rng.random() < 0.5:
        return Case(how, {"box.json": data}, [*argv, "--probe", path], (path, T.FLAG))
    return Case(how, {"box.json": data}, argv, (path, T.FLAG), imported="box.json")


# --- reports -----------------------------------------------------------------------------------

def reports_doc(ctx: Ctx, rng: random.Random) -> tuple[str, Doc]:
    doc = copy.deepcopy(rng.choice(ctx.reports))
    family = rng.choice(["bounds", "bounds", "schema", "splice", "consistency", "text"])
    s = _schema("report")
    if family == "bounds":
        if rng.random() < 0.25 and (said := column_ends(doc, rng)):
            return said, doc
        if rng.random() < 0.5:  # a figure the report holds, at its number type's ends
            said = []
            numbers = list(_numbers(doc))
            for path in rng.sample(numbers, min(len(numbers), rng.choice([1, 1, 2, 3]))):
                parent = _get(doc, path[:-1])
                ends = UNBOUNDED_INT if isinstance(parent[path[-1]], int) else UNBOUNDED_FLOAT
                parent[path[-1]] = rng.choice(ends)
                said.append(f"{_dotted(path)} = {parent[path[-1]]!r}")
            return f"bounds: {said} (its type's end)", doc
        said = bound_edits(doc, REPORT_LEAVES or _report_leaves(s), rng, ctx.others,
                           rng.choice([1, 1, 2, 3]), make=False)
        return f"bounds: {said}", doc
    if family == "schema":
        pick = rng.random()
        sides = [x for x in [doc.get("current"), *(doc.get("targets") or [])]
                 if isinstance(x, dict)]
        if pick < 0.3 and sides:  # one part of a GPU's result: a sweep point, its verdict...
            side = rng.choice(sides)
            props = s.at("decision", "current")["properties"]
            part = rng.choice(list(props))
            if part in ("sweep", "as_run") and side.get(part):
                i = rng.randrange(len(side[part]))
                point = s.synth(s.node(s.node(props[part])["items"]), rng)
                point["seq_len"] = side[part][i].get("seq_len")  # the sweep's own length
                side[part][i] = point
                return f"schema: {side.get('gpu')}.{part}.{i} synthesised", doc
            side[part] = s.synth(props[part], rng)
            return f"schema: {side.get('gpu')}.{part} synthesised", doc
        if pick < 0.45:  # a decision-wide part: the anchor, interactivity, defaults, notes
            part = rng.choice(["anchor", "interactivity", "defaults", "notes", "band_level",
                               "electricity_source"])
            doc[part] = s.synth(s.at("decision")["properties"][part], rng)
            if doc[part] is None:
                doc.pop(part)
            return f"schema: decision {part} synthesised", doc
        section = rng.choice(["quotes", "warnings", "probes", "configs", "pipeline",
                              "provenance"])
        doc[section] = s.synth(s.at(section), rng)
        return f"schema: [{section}] synthesised", doc
    if family == "splice":
        other = copy.deepcopy(rng.choice(ctx.reports))
        pick = rng.choice(["probe", "answers", "current", "targets", "twice", "empty",
                           "reorder"])
        if pick == "probe":
            rec = copy.deepcopy(rng.choice(ctx.records))
            gid = rec["stamp"]["device"].get("catalog_id") or "h100-sxm"
            doc.setdefault("probes", {})[rng.choice([gid, "b200-sxm", "h100-sxm"])] = rec
            return f"splice: a probe record of {gid} in [probes]", doc
        if pick in ("answers", "current", "targets"):
            doc[pick] = other.get(pick)
            if doc[pick] is None:
                doc.pop(pick)
            return f"splice: another report's [{pick}]", doc
        if pick == "twice":
            if isinstance(doc.get("targets"), list) and doc["targets"]:
                doc["targets"] = doc["targets"] + [copy.deepcopy(doc["targets"][0])]
            return "splice: a target given twice", doc
        if pick == "empty":
            key = rng.choice([k for k in doc if k not in ("schema", "version")])
            doc[key] = type(doc[key])() if isinstance(doc[key], dict | list) else ""
            return f"splice: [{key}] emptied", doc
        items = list(doc.items())
        rng.shuffle(items)
        return "splice: sections reordered", dict(items)
    if family == "consistency":
        pick = rng.choice(["sweep", "seq", "gpu", "mfu", "asrun", "answers-model"])
        sides = [doc.get("current"), *(doc.get("targets") or [])]
        side = rng.choice([x for x in sides if isinstance(x, dict)] or [{}])
        if pick == "sweep" and len(sides) > 1:
            # a target's sweep is the current GPU's: the figures of another part
            a, b = sides[0], sides[1]
            if isinstance(a, dict) and isinstance(b, dict):
                b["sweep"] = copy.deepcopy(a.get("sweep"))
        elif pick == "seq":
            for p in side.get("sweep", []):
                p["seq_len"] = rng.choice([1, 2**26, 12345])
        elif pick == "gpu":
            side["gpu"] = rng.choice(["l4", "mi300x", "gb300", "b200-sxm"])
        elif pick == "mfu":
            for p in side.get("sweep", []) + side.get("as_run", []):
                if "mfu" in p:
                    p["mfu"] = rng.choice([1.0, math.nextafter(1.0, 2), 0.999999])
        elif pick == "asrun":
            side["as_run"] = copy.deepcopy(side.get("sweep"))
        else:
            w = doc.get("answers", {}).get("workload")
            if isinstance(w, dict):
                w["model"] = rng.choice(["llama-3.1-405b", "qwen3-30b-a3b", "deepseek-v3"])
        return f"consistency: {pick}", doc
    if rng.random() < 0.35:
        data, kind = attack_bytes(T._to_toml(doc), rng)
        return f"text file: {kind}", data
    return attack_some_string(doc, rng, ("gpu", "current", "targets", "label", "name")), doc


REPORT_LEAVES: list[Leaf] = []


def _report_leaves(s: Schema) -> list[Leaf]:
    REPORT_LEAVES.extend(s.leaves())
    return REPORT_LEAVES


def make_reports(ctx: Ctx, rng: random.Random) -> Case:
    how, doc = reports_doc(ctx, rng)
    as_json = rng.random() < 0.3 and not isinstance(doc, bytes)
    name = "r.json" if as_json else "r.toml"
    data = doc if isinstance(doc, bytes) else (json_bytes(doc) if as_json else toml_bytes(doc))
    path = "{home}/" + name
    return Case(how, {name: data}, ["report", "show", path, "--format",
                                    rng.choice(["text", "json"])], (path,))


# --- models (config.json) ------------------------------------------------------------------

HF_BOUNDS = {"num_hidden_layers": (1, 4096), "hidden_size": (1, 2**20),
             "intermediate_size": (1, 2**20), "num_attention_heads": (1, 2**14),
             "num_key_value_heads": (1, 2**14), "vocab_size": (1, 2**24),
             "head_dim": (1, 2**20), "num_local_experts": (0, 2**16),
             "n_routed_experts": (0, 2**16), "num_experts": (0, 2**16),
             "num_experts_per_tok": (1, 2**16), "moe_intermediate_size": (1, 2**20),
             "sliding_window": (1, 2**26), "max_position_embeddings": (1, 2**26),
             "first_k_dense_replace": (0, 4096), "kv_lora_rank": (1, 2**20),
             "q_lora_rank": (1, 2**20), "qk_rope_head_dim": (1, 2**20),
             "qk_nope_head_dim": (1, 2**20), "v_head_dim": (1, 2**20),
             "n_shared_experts": (0, 2**16), "decoder_sparse_step": (1, 4096),
             "interleave_moe_layer_step": (1, 4096), "moe_layer_freq": (1, 4096),
             "intermediate_size_mlp": (1, 2**20)}


def models_doc(ctx: Ctx, rng: random.Random, seeds: list[dict[str, Any]]) -> tuple[str, Doc]:
    doc = copy.deepcopy(rng.choice(seeds))
    inner = doc["text_config"] if isinstance(doc.get("text_config"), dict) else doc
    family = rng.choice(["bounds", "bounds", "splice", "consistency", "text"])
    if family == "bounds":
        if rng.random() < 0.35:  # extremes together
            ext = rng.choice(EXTREME_MODELS)
            names = {"layers": "num_hidden_layers", "hidden": "hidden_size",
                     "heads": "num_attention_heads", "kv_heads": "num_key_value_heads",
                     "ffn": "intermediate_size", "vocab": "vocab_size", "head_dim": "head_dim"}
            for k, key in names.items():
                if k in ext:
                    inner[key] = ext[k]
            inner.pop("layer_types", None)
            inner.pop("mlp_only_layers", None)
            return f"bounds extremes: {_short({k: ext[k] for k in ext if k in names})}", doc
        said = []
        for key in rng.sample([k for k in HF_BOUNDS if k in inner] or list(HF_BOUNDS),
                              rng.choice([1, 1, 2, 3])):
            lo, hi = HF_BOUNDS[key]
            v = rng.choice([lo, hi, lo - 1, hi + 1, hi - 1, lo + 1])
            inner[key] = v
            said.append(f"{key} = {v}")
        if "num_hidden_layers" in said[0] if said else False:
            inner.pop("layer_types", None)
        return f"bounds: {said}", doc
    if family == "splice":
        pick = rng.choice(["gpu", "text_config", "other", "report"])
        if pick == "gpu":
            doc["text_config"] = copy.deepcopy(rng.choice(ctx.gpus))
        elif pick == "text_config":  # a whole other config nested as the language model
            doc["text_config"] = copy.deepcopy(rng.choice(seeds))
        elif pick == "other":  # one family's keys in another's config
            other = rng.choice(seeds)
            src = other.get("text_config", other)
            for k in rng.sample(list(src), min(5, len(src))):
                inner[k] = copy.deepcopy(src[k])
        else:
            report = rng.choice(ctx.reports)
            inner.update(copy.deepcopy(report["answers"]["workload"].get("model", {}))
                         if isinstance(report["answers"]["workload"].get("model"), dict)
                         else {"model": report["answers"]["workload"].get("model")})
        return f"splice: {pick}", doc
    if family == "consistency":
        pick = rng.choice(["kv", "head_dim", "window", "context", "experts", "dense", "types"])
        heads = inner.get("num_attention_heads", 32)
        if pick == "kv":
            inner["num_key_value_heads"] = heads + 1 if isinstance(heads, int) else 3
        elif pick == "head_dim":
            inner["head_dim"] = rng.choice([1, 2**20, 7])
        elif pick == "window":
            inner["sliding_window"] = rng.choice([2**26, 1])
            inner["max_position_embeddings"] = rng.choice([512, 2**26])
        elif pick == "context":
            inner["max_position_embeddings"] = rng.choice([1, 255, 4095])
        elif pick == "experts":
            for k in ("num_local_experts", "n_routed_experts", "num_experts"):
                if k in inner:
                    inner[k] = rng.choice([1, 2])
            inner["num_experts_per_tok"] = rng.choice([3, 2**16])
        elif pick == "dense":
            inner["first_k_dense_replace"] = inner.get("num_hidden_layers", 32)
        else:
            n = inner.get("num_hidden_layers", 4)
            inner["layer_types"] = ["sliding_attention"] * (n if isinstance(n, int)
                                                             and n < 5000 else 4)
            inner.setdefault("sliding_window", 4096)
        return f"consistency: {pick}", doc
    if rng.random() < 0.3:
        data, kind = attack_bytes(T._to_json(doc), rng)
        return f"text file: {kind}", data
    return attack_some_string(doc, rng, ("model_type", "architectures", "torch_dtype",
                                         "hidden_act")), doc


def make_models(ctx: Ctx, rng: random.Random) -> Case:
    seeds = MODEL_SEEDS or MODEL_SEEDS.extend(T.seeds_for("models", ctx.r)) or MODEL_SEEDS
    how, doc = models_doc(ctx, rng, seeds)
    data = doc if isinstance(doc, bytes) else json_bytes(doc)
    mode = rng.choice([[], [], ["--mode", "prefill"], ["--mode", "serve", "--osl", "256"],
                       ["--mode", "decode"]])
    folder = "{home}/model"
    argv = ["compare", "--current", "h100-sxm", "--target", rng.choice(["b200-sxm", "mi300x"]),
            "--model", f"{folder}/config.json" if rng.random() < 0.5 else folder,
            "--seq-len", rng.choice(["4096", "8k", "32k", "1", "64m"]), *mode, "--json"]
    return Case(how, {"model/config.json": data}, argv, (folder, T.FLAG))


MODEL_SEEDS: list[dict[str, Any]] = []


# --- the run -----------------------------------------------------------------------------------

MAKERS: dict[str, Callable[[Ctx, random.Random], Case]] = {
    "answers": make_answers, "flags": make_flags, "sheets": make_sheets,
    "catalogs": make_catalogs, "probes": make_probes, "reports": make_reports,
    "models": make_models}


def cases(loader: str, seed: int, ctx: Ctx) -> Iterator[Case]:
    rng = random.Random(f"schema-{loader}-{seed}")
    while True:
        yield MAKERS[loader](ctx, rng)


def fuzz(loader: str, n: int, seed: int, only_case: int | None = None,
         by_family: Counter[tuple[str, str]] | None = None) -> tuple[Counter[str], list[str]]:
    with tempfile.TemporaryDirectory() as home:
        r = T.Runner(Path(home))
        ctx = Ctx(r, loader)
        if loader == "catalogs":
            T.seeds_for("catalogs", r)  # fills fuzz_typed's ARCH
        counts: Counter[str] = Counter()
        examples: list[str] = []
        kept: Counter[str] = Counter()
        for i, case in enumerate(cases(loader, seed, ctx)):
            if i >= n and only_case is None:
                break
            if only_case is not None and i != only_case:
                if i > only_case:
                    break
                continue
            T.LAST[0] = ""
            try:
                got = case.run(r)
            except Exception as exc:
                got = T.classify(exc)
            counts[got] += 1
            if by_family is not None:
                by_family[case.how.split(":")[0].split(" ")[0], got] += 1
            if only_case is not None:
                print(case.show())
                print(f"\noutcome: {got}\n{T.LAST[0]}")
            elif got in T.FAILURES and kept[got] < 5:
                kept[got] += 1
                said = T.LAST[0] if len(T.LAST[0]) < 1500 else f"...{T.LAST[0][-1500:]}"
                examples.append(f"#{i} {got} [{case.how[:300]}]\n  reproduce: python "
                                f"benchmarks/fuzz_schema.py --only {loader} --seed {seed} "
                                f"--case {i}\n  {said}")
        return counts, examples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=3000, help="inputs per loader")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", choices=sorted(MAKERS), action="append")
    parser.add_argument("--case", type=int, help="run input #CASE alone and show it")
    parser.add_argument("-v", action="store_true", help="outcomes by generator family too")
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if args.case is not None:
        for loader in args.only or list(MAKERS):
            counts, _ = fuzz(loader, args.case + 1, args.seed, args.case)
        return 0
    failed = False
    print(T.header())
    for loader in args.only or list(MAKERS):
        start = time.perf_counter()
        families: Counter[tuple[str, str]] = Counter()
        counts, examples = fuzz(loader, args.n, args.seed, by_family=families)
        print(T.row(loader, counts, time.perf_counter() - start), flush=True)
        if args.v:
            for fam in sorted({f for f, _ in families}):
                print(f"    {fam:<12}" + "  ".join(f"{k} {families[fam, k]}" for k in
                                                   (*T.KINDS, *T.FAILURES) if families[fam, k]))
        for e in examples:
            print("   ", e.replace("\n", "\n    "))
        failed |= any(counts[k] for k in T.FAILURES)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
