"""Fuzz every loader with typed, meaning-aware mutations, and count what came out.

    python benchmarks/fuzz_typed.py                    # 3,000 inputs per loader
    python benchmarks/fuzz_typed.py -n 300 --only flags --seed 3

The generators here are apart from fuzz_inputs/fuzz_loaders (byte edits, number swaps and
hypothesis drafts): they parse a valid document, then change what it means while keeping
it well formed, as a user or a hostile sheet would: a value of the wrong type (true for a
count, a list for a name, "8k", "١٢", "1,000" or 10^40 for a number), a GPU named by an
alias, a loose name, an unknown id or with a count after @ (good and bad), a key spelled
nearly right, a field dropped, a serving figure on a training job, a measured MFU of 1, a
figure scaled by 1e-6..1e5, a pulled GPU that takes another's name. Loaders, all in this
process, each through the path a user's input takes (the command line itself, `advisor.cli
.main`, except for pulls, which go through `pull` with an httpx MockTransport: no network):

  answers    `advisor decide --answers FILE --out REPORT` (configs and pipeline included),
             or `advisor configs pipeline FILE` for a pipeline on its own
  flags      `advisor compare` (and `rank`, `configs sweep`) argument lists
  sheets     pulled price sheets (CSV, TOML, JSON; any Content-Type and URL suffix)
  catalogs   pulled team catalogs (TOML, JSON), then a decision on every GPU they add
  probes     probe records, suite and workload probe (whose throughput anchors the
             decision): `compare --probe FILE`, or `advisor probe import FILE` and then
             `compare` with the store
  reports    decision reports (TOML, JSON): `advisor report show FILE`
  models     Hugging Face config.json files: `advisor compare --model PATH`

Outcomes: ok; clean (one line naming the file, field or flag); grouped (a flag error that
names the workload flags as a whole: a rule across several of them); unnamed (one line
naming none); multiline; traceback (any other exception or exit: a bug); above_peak (a
result or an accepted figure past its GPU's peak: any MFU above 1 in what the command
built, whatever it printed, a pipeline stage stated above its GPU's highest peak, or a
pulled figure more than MAX_FAMILY_FACTOR above the highest the shipped catalog
publishes). Exits 1 when any traceback, multiline, unnamed or above_peak was counted.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import os
import random
import re
import sys
import tempfile
import time
import tomllib
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
KINDS = ("ok", "clean", "grouped")
FAILURES = ("traceback", "multiline", "unnamed", "above_peak")

WRONG = [True, False, [], {}, "", " ", "8k", "1,000", "-1", "nan", "inf", "1e309", "١٢",
         "0x10", "1e3k", "$4.50/h", "3.4x", 10**40, -1, 0, 0.0, 1e-320, 2**63, 1.5,
         "b200-sxm@x", "h100-sxm@0", "\x1b[31m", "x" * 300, date(2026, 1, 1), [1, "a"],
         {"a": 1}, "true", "None", 8.0]
GPU_NAMES = ["h100-sxm", "H100", "h100 sxm", "H100 SXM", "b200-sxm", "B200", "h200-sxm",
             "mi300x", "MI300X", "l4", "t4", "gb300", "h1OO-sxm", "b200", "rtx-pro-6000-bw-server",
             "all", "all:AMD", "all:Foo", "", "@8"]
COUNTS = ["", "@1", "@8", "@64", "@1k", "@0", "@-2", "@x", "@3.4x", "@1,000", "@", "@1e3",
          "@262145", "@8.5"]


# --- the typed mutations --------------------------------------------------------------------

def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield (*prefix, i)
            yield from _paths(v, (*prefix, i))


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for p in path[:-1]:
        doc = doc[p]
    return doc


def _gpu_name(rng: random.Random) -> str:
    """A GPU as a user might name it: mostly a real id or alias, now and then an unknown or
    loose one, sometimes with a count after @ (good or bad)."""
    name = GPU_NAMES[rng.randrange(12)] if rng.random() < 0.8 else rng.choice(GPU_NAMES)
    return name + (rng.choice(COUNTS) if rng.random() < 0.3 else "")


def mutate(doc: Any, rng: random.Random, extras: list[Callable[[Any, random.Random], None]],
           n: int | None = None) -> Any:
    """1-3 meaning-changing edits of a decoded document, each well formed."""
    doc = copy.deepcopy(doc)
    for _ in range(n or rng.choice([1, 1, 1, 2, 3])):
        paths = list(_paths(doc))
        op = rng.random()
        if extras and op < 0.35:
            rng.choice(extras)(doc, rng)
            continue
        if not paths:
            break
        path = rng.choice(paths)
        parent, key = _parent(doc, path), path[-1]
        value = parent[key]
        if op < 0.6:  # a value of another type or form
            parent[key] = _wrong(rng) if not isinstance(value, str) or rng.random() < 0.5 \
                else (_gpu_name(rng) if rng.random() < 0.6 else _wrong(rng))
        elif op < 0.7 and isinstance(parent, dict):  # a key spelled nearly right
            new = rng.choice([str(key).upper(), str(key).replace("_", "-"), f"{key}s",
                              str(key)[:-1], f"{key}@8", "H100 SXM", "h100-sxm@x"])
            parent[new] = parent.pop(key)
        elif op < 0.8 and isinstance(parent, dict):  # dropped
            parent.pop(key)
        elif op < 0.9 and isinstance(value, int | float) and not isinstance(value, bool):
            parent[key] = type(value)(value * rng.choice([1e-3, 0.5, 2, 10, 1e3, 1e5])) \
                if isinstance(value, float) else value * rng.choice([0, 2, 1000, 10**9])
        elif isinstance(value, list) and value:  # a list grown, emptied or of one wrong item
            parent[key] = rng.choice([[], value * rng.randint(2, 50), [_wrong(rng)]])
        else:
            parent[key] = _wrong(rng)
    return doc


def _wrong(rng: random.Random) -> Any:
    """A value of the wrong type or form: a copy, so no later edit changes WRONG itself."""
    return copy.deepcopy(rng.choice(WRONG))


def _to_toml(doc: Any) -> str:
    import tomlkit

    def clean(v: Any) -> Any:  # TOML has no null, and no key may be empty in our writer
        if isinstance(v, dict):
            return {str(k): clean(x) for k, x in v.items() if x is not None}
        if isinstance(v, list):
            return [clean(x) for x in v if x is not None]
        return v

    try:
        return tomlkit.dumps(clean(doc))
    except Exception:  # a shape TOML cannot hold (mixed arrays in old tomlkit): as JSON text
        return json.dumps(doc, default=str)


def _to_json(doc: Any) -> str:
    return json.dumps(doc, default=str)


# --- the loaders --------------------------------------------------------------------------

class Runner:
    def __init__(self, home: Path) -> None:
        os.environ["ADVISOR_HOME"] = str(home)
        from advisor.io.catalog_store import load_catalog

        self.catalog = load_catalog()
        self.home = home
        self.shipped_top = self._top_figures(self.catalog)
        self.built: list[Any] = []
        _keep_what_is_built(self.built)

    @staticmethod
    def _top_figures(catalog: Any) -> dict[str, float]:
        top: dict[str, float] = {}
        for g in catalog.gpus:
            for dtype, v in g.peak_tflops.items():
                top[dtype] = max(top.get(dtype, 0.0), v)
        return top

    def above_peak(self, decision: Any) -> bool:
        sides = [decision.current, *decision.targets]
        return any(p.mfu is not None and p.mfu > 1 + 1e-9
                   for s in sides for p in (*s.sweep, *s.as_run))

    def report_above_peak(self, report: Any) -> bool:
        if self.above_peak(report.decision):
            return True
        configs = report.configs
        if configs is not None and any(p.mfu > 1 + 1e-9 for p in configs.points):
            return True
        spec = report.decision.answers.pipeline
        return spec is not None and self.pipeline_above_peak(spec)

    def pipeline_above_peak(self, spec: Any) -> bool:
        """A stage stated above its GPU's highest published peak."""
        stated = [(s.gpu, s.peak_tflops) for s in spec.stages]
        stated += [(a.gpu, r.peak_tflops) for a in spec.alternatives for r in a.stages.values()]
        from advisor.core import InputError

        for gpu, tflops in stated:
            try:
                part = self.catalog.gpu(gpu.split("@")[0])
            except InputError:  # a kept report may name a GPU the catalog no longer has
                continue
            peaks = part.peak_tflops.items()
            if tflops is not None and tflops > max((v for _, v in peaks), default=0.0):
                return True
        return False

    def built_above_peak(self) -> bool:
        """Whether anything the last command built (a report, a pipeline) is above peak,
        whatever the command printed of it."""
        for kind, item in self.built:
            if kind == "report" and self.report_above_peak(item):
                return True
            if kind == "pipeline" and self.pipeline_above_peak(item):
                return True
        return False


def _keep_what_is_built(into: list[Any]) -> None:
    """Every report `run()` builds, and every pipeline `configs pipeline` balances, is kept
    in `into`: the results are judged as built, not as one output format shows them."""
    import advisor.core
    from advisor.core import entry

    build, balance = entry.build_report, entry.run_pipeline

    def building(*args: Any, **kw: Any) -> Any:
        report = build(*args, **kw)
        into.append(("report", report))
        return report

    def balancing(spec: Any, *args: Any, **kw: Any) -> Any:
        pipeline = balance(spec, *args, **kw)
        into.append(("pipeline", spec))
        return pipeline

    entry.build_report = building  # type: ignore[assignment]
    entry.run_pipeline = balancing  # type: ignore[assignment]
    advisor.core.run_pipeline = balancing  # type: ignore[attr-defined]


def cli(r: Runner, argv: list[str], names: tuple[str, ...]) -> str:
    """`advisor ARGV` run in this process, sorted: ok (exit 0, nothing built above peak),
    clean (exit 2 and one line naming one of `names`: the file, the flag), grouped (a flag
    error naming the workload flags as a whole, not the one flag), unnamed, multiline,
    traceback (any other exit or exception) or above_peak."""
    from advisor.cli import main

    r.built.clear()
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 2
    except Exception as exc:
        return classify(exc)
    LAST[0] = f"{argv}: {err.getvalue()[-1500:]}"
    if code == 0:
        return "above_peak" if r.built_above_peak() else "ok"
    if code != 2:
        return "traceback"
    lines = [ln for ln in err.getvalue().splitlines()
             if ln.strip() and not ln.startswith("advisor: warning:")]
    if len(lines) != 1:
        return "multiline"
    said = HELP_HINT.sub("", lines[0])  # every usage error ends "(see advisor X --help)"
    if any(n in said for n in names):
        return "clean"
    return "grouped" if "the workload flags" in said else "unnamed"


HELP_HINT = re.compile(r"\s*\(see advisor [^()]*--help\)$")
FLAG = "--"
"""In `names`: any flag named (argparse's "argument --seq-len", "unrecognized arguments:
--nodes", advisor's "field '--price b200-sxm'")."""


LAST = [""]
"""What the last failure said: a traceback, or the line that was not one clean line."""


def classify(exc: BaseException) -> str:
    from advisor.core import InputError

    if not isinstance(exc, InputError):
        LAST[0] = "".join(traceback.format_exception(exc))[-1500:]
        return "traceback"
    line = exc.one_line()
    LAST[0] = line
    if "\n" in line:
        return "multiline"
    return "clean" if (exc.file or exc.field or exc.entry) else "unnamed"


def _answers_seeds() -> list[dict[str, Any]]:
    seeds = [tomllib.loads(p.read_text()) for p in sorted((ROOT / "examples").glob("*.toml"))]
    base = {"current": "h100-sxm", "targets": ["b200-sxm", "h200-sxm"],
            "workload": {"model": "llama-3.1-8b", "seq_lens": [4096, 8192], "gpus": 8,
                         "token_budget": 1e11}}
    serve = {"current": "h200-sxm", "targets": ["b200-sxm@4"],
             "workload": {"mode": "serve", "model": "llama-3.1-70b", "seq_lens": [2048],
                          "osl": 512, "gpus": 8, "precision": "fp8", "tpot_ms": 50}}
    with_sides = [s if "current" in s else {**base, **s} for s in seeds if "current" in s
                  or "pipeline" in s]  # a pipeline file's [pipeline], in answers around it
    alone = [s for s in seeds if "current" not in s]  # as `configs pipeline` reads them
    return [*with_sides, *alone, base, serve]


def _table(doc: dict[str, Any], key: str) -> dict[str, Any]:
    """doc[key] as a table (one made, or put back, where an earlier edit left none)."""
    if not isinstance(doc.get(key), dict):
        doc[key] = {}
    return doc[key]


def _answers_extras() -> list[Callable[[Any, random.Random], None]]:
    def measured(doc: Any, rng: random.Random) -> None:
        field = rng.choice(["tokens_per_s_per_gpu", "step_s", "mfu", "tpot_ms", "ttft_ms",
                            "concurrency", "attention_share", "peak_memory_gib"])
        _table(doc, "measured")[field] = rng.choice(
            [1.0, 0.9, 0.99, 1.0000001, 50, 1e9, 1e-9, 0.3, 8, 2000.0, True, "9.1k"])

    def keyed(doc: Any, rng: random.Random) -> None:
        table = rng.choice(["prices", "power_limits_w", "layouts"])
        value = {"prices": rng.choice([2.5, "3.4x", "$4.50/h", "", True, 0.0005]),
                 "power_limits_w": rng.choice([500, 100, 1e9, "700"]),
                 "layouts": rng.choice([{"tp": 2}, {"precision": "nvfp4"}, {"gpus": 0}])}[table]
        _table(doc, table)[_gpu_name(rng)] = value

    def mode(doc: Any, rng: random.Random) -> None:
        w = _table(doc, "workload")
        w["mode"] = rng.choice(["pretrain", "finetune", "lora", "prefill", "decode", "serve"])
        if rng.random() < 0.5:
            w["model"] = {"layers": 2, "hidden": 1024, "heads": 8, "kv_heads": 8, "ffn": 2048,
                          "vocab": rng.choice([32000, 2**22, 2**24])}

    def sides(doc: Any, rng: random.Random) -> None:
        doc["current"] = _gpu_name(rng)
        doc["targets"] = [_gpu_name(rng) for _ in range(rng.randint(0, 3))]

    def stage(doc: Any, rng: random.Random) -> None:
        stages = _table(doc, "pipeline").get("stages")
        if isinstance(stages, list) and stages and isinstance(stages[-1], dict):
            stages[-1].update(rng.choice([{"gpu": _gpu_name(rng)},
                                          {"peak_tflops": 1e5, "flops_per_token": 6e9,
                                           "mfu": 0.5, "measured_units_per_s": None},
                                          {"measured_tokens_per_s": 1e-9}]))
            doc["pipeline"]["token_budget"] = rng.choice([1e18, 1e10])

    return [measured, keyed, mode, sides, stage]


def run_answers(r: Runner, rng: random.Random, seeds: list[Any]) -> str:
    """`advisor decide --answers FILE --out REPORT` (the report written too), or `advisor
    configs pipeline FILE` for a pipeline on its own."""
    doc = mutate(rng.choice(seeds), rng, _answers_extras())
    path = r.home / "answers.toml"
    path.write_text(_to_toml(doc))
    if isinstance(doc, dict) and "current" not in doc:
        return cli(r, ["configs", "pipeline", str(path)], (str(path),))
    return cli(r, ["decide", "--answers", str(path), "--out", str(r.home / "report.toml")],
               (str(path),))


FLAG_VALUES: dict[str, list[str]] = {
    "--seq-len": ["4096", "8k", "1,000", "-1", "nan", "0", "١٢", "1e3k", "67108865", "x"],
    "--gpus": ["8", "1", "0", "true", "8.5", "1k", "262145", "-8"],
    "--micro-batch": ["1", "0", "65537", "2"], "--global-batch": ["64", "3", "0"],
    "--tp": ["1", "2", "3", "16"], "--pp": ["1", "2", "5"],
    "--mode": ["pretrain", "prefill", "decode", "serve", "train"],
    "--osl": ["512", "0", "x"], "--isl": ["2048", "0"],
    "--precision": ["bf16", "fp8", "nvfp4", "int4"],
    "--target-precision": ["fp8", "nvfp4"], "--current-precision": ["fp8"],
    "--token-budget": ["1e11", "1e18", "300G", "0", "1e19"],
    "--price": ["b200-sxm=6.4", "h100-sxm=2.5", "b200-sxm=3.4x", "h1OO=3", "b200-sxm=",
                "=3", "b200-sxm@x=2", "h100-sxm=0.0001", "b200-sxm=900"],
    "--power-limit": ["h100-sxm=500", "b200-sxm=1e9", "h1OO=300", "b200-sxm=x"],
    "--measured-tokens-per-s": ["9.1k", "1e12", "0", "1e-9"],
    "--measured-mfu": ["0.4", "1.0", "0.99", "1.5", "0.0001"],
    "--measured-tpot-ms": ["50", "0"], "--measured-step-s": ["1.5", "1e9"],
    "--measured-attention-share": ["0.3", "1.2"], "--measured-concurrency": ["8", "0"],
    "--electricity": ["0.12", "99", "-1"], "--power-cap": ["40", "0", "1e99"],
    "--zero": ["0", "3", "4"], "--framework": ["megatron", "vllm", "fsdp"],
    "--tpot-ms": ["50", "0"], "--ttft-ms": ["500"], "--kv-dtype": ["fp8", "auto"],
    "--params": ["8B", "1e15", "0"], "--layers": ["32", "0"], "--vocab": ["128k", "16777217"],
    "--max-batch": ["2048", "0"], "--nodes": ["1", "3"], "--ep": ["1", "8"],
    "--current-gpus": ["8", "0"], "--target-gpus": ["64", "x"],
}


def run_flags(r: Runner, rng: random.Random, seeds: list[Any]) -> str:
    """`advisor compare` (or `rank`, or `configs sweep`) argument lists."""
    command = rng.choices(["compare", "rank", "sweep"], [0.7, 0.15, 0.15])[0]
    argv = ["configs", "sweep"] if command == "sweep" else [command]
    argv += ["--current", _gpu_name(rng)]
    for _ in range(rng.randint(1, 3) if command == "compare" else rng.randint(0, 1)):
        argv += ["--target", _gpu_name(rng)]
    if rng.random() < 0.9:
        argv += ["--model", rng.choice(["llama-3.1-8b", "llama-3.1-70b", "qwen3-32b", "nope"])]
    argv += ["--seq-len", rng.choice(["4096", "8k"])] if rng.random() < 0.9 else []
    if command == "sweep" and rng.random() < 0.8:
        argv += ["--token-budget", rng.choice(["1e11", "3e12"])]
    for flag in rng.sample(sorted(FLAG_VALUES), rng.randint(0, 4)):
        values = FLAG_VALUES[flag]
        argv += [flag, values[0] if rng.random() < 0.5 else rng.choice(values)]
    return cli(r, [*argv, "--json"], (FLAG,))


def _pick(rng: random.Random, good: list[Any], bad: list[Any]) -> Any:
    """Mostly a good value, so what is downstream of the parse is reached too."""
    return rng.choice(good) if rng.random() < 0.75 else rng.choice(bad)


def _sheet(rng: random.Random) -> tuple[bytes, str, str | None]:
    rows = []
    for gpu in rng.sample(["h100-sxm", "H200 SXM", "b200-sxm", "mi300x", "l4", "B200"],
                          rng.randint(1, 3)):
        row: dict[str, Any] = {
            "gpu": _pick(rng, [gpu], [_gpu_name(rng), ["h100-sxm"], 7, True]),
            "usd_per_hour": _pick(rng, [2.5, "2.50", "$4.50/h", "٢.٥", 3],
                                  [True, "", "1,000", -1, 1e9, "3.4x", [2]])}
        if rng.random() < 0.5:
            row["label"] = _pick(rng, ["team rate", "reserved 1-yr"],
                                 ["", ["a"], 3, "x" * 5000, "\x1b[2J"])
        if rng.random() < 0.5:
            row["source"] = _pick(rng, ["wiki; quote 17", ["a", "b"]],
                                  [[], ["a"] * 40, 5, [["x"]], ";;"])
        if rng.random() < 0.5:
            row["retrieved"] = _pick(rng, ["2026-01-15", date(2026, 1, 1)],
                                     [20260115, "yesterday", True, "2026-13-45"])
        if rng.random() < 0.05:
            row[rng.choice(["colour", "GPU", "usd"])] = "x"
        rows.append(row)
    fmt = rng.choice(["csv", "toml", "json"])
    if fmt == "csv":
        cols = ["gpu", "usd_per_hour", "label", "source", "retrieved"]
        head = _pick(rng, [cols, cols[:2], cols[::-1]], [[*cols, "gpu"], ["gpu", "price"]])
        lines = [",".join(head)] + [",".join(str(row.get(c, "")).replace(",", rng.choice(
            [",", ";"])) for c in head) for row in rows]
        text = rng.choice(["\n", "\r\n"]).join(lines)
        body = (rng.choice([b"", b"\xef\xbb\xbf"]) + text.encode()) if rng.random() < 0.95 \
            else text.encode("utf-16")
    else:
        doc: Any = {"price": rows} if rng.random() < 0.9 else rng.choice([rows, {"prices": rows}])
        body = (_to_toml(doc) if fmt == "toml" else _to_json(doc)).encode()
    suffix = rng.choice([f".{fmt}", "", ".txt", ".csv"])
    ctype = rng.choice([None, f"text/{fmt}", "application/json", "text/plain"])
    return body, suffix, ctype


class _Web:
    def __init__(self) -> None:
        import httpx

        self.body, self.ctype = b"", None
        self.transport = httpx.MockTransport(self._answer)

    def _answer(self, request: Any) -> Any:
        import httpx

        headers = {"content-type": self.ctype} if self.ctype else {}
        return httpx.Response(200, content=self.body, headers=headers)


def _pull(r: Runner, kind: str, body: bytes, suffix: str, ctype: str | None) -> str:
    from advisor.io.catalog_store import effective_catalog
    from advisor.io.fetch import FetchPolicy
    from advisor.io.sync import pull

    web = getattr(r, "web", None) or _Web()
    r.web = web  # type: ignore[attr-defined]
    web.body, web.ctype = body, ctype
    url = f"https://sheets.test/team/sheet-{random.random():.6f}{suffix}?token=Zx81kQ9wLr72mPq4"
    try:
        pull(kind, url, FetchPolicy(), transport=web.transport)  # type: ignore[arg-type]
        catalog = effective_catalog()
    except Exception as exc:
        return classify(exc)
    text = (r.home / "pulled" / f"{kind}.json").read_text()
    if "Zx81kQ9wLr72mPq4" in text:
        return "traceback"  # a secret in the cache is a bug, counted with the bugs
    return "ok" if kind == "prices" else _catalog_results(r, catalog)


def run_sheets(r: Runner, rng: random.Random, seeds: list[Any]) -> str:
    return _pull(r, "prices", *_sheet(rng))


def _gpus(doc: Any) -> list[dict[str, Any]]:
    """The [[gpu]] entries an earlier edit left as tables."""
    gpus = doc.get("gpu") if isinstance(doc, dict) else None
    return [g for g in gpus if isinstance(g, dict)] if isinstance(gpus, list) else []


def _catalog_extras(shipped: list[dict[str, Any]]) -> list[Callable[[Any, random.Random], None]]:
    def scaled(doc: Any, rng: random.Random) -> None:
        if not _gpus(doc):
            return
        g = rng.choice(_gpus(doc))
        peaks = g.get("peak_tflops")
        if isinstance(peaks, dict):
            for k in ("bf16", "fp16", "fp8", "fp4", "nvfp4"):
                if isinstance(peaks.get(k), int | float) and not isinstance(peaks[k], bool):
                    peaks[k] = peaks[k] * rng.choice([1e-3, 0.1, 3, 10, 40, 1e5])
        g.pop("mamf", None)
        g.pop("gemm", None)

    def taken(doc: Any, rng: random.Random) -> None:
        if not _gpus(doc):
            return
        g, other = rng.choice(_gpus(doc)), rng.choice(shipped)
        key = rng.choice(["id", "name", "aliases"])
        g[key] = rng.choice([other["id"], other["name"], *other.get("aliases", [""])])
        if key == "aliases":
            g[key] = [g[key]]

    def alone(doc: Any, rng: random.Random) -> None:
        if not _gpus(doc):
            return
        g = rng.choice(_gpus(doc))
        g["family"] = rng.choice(["TeamX", "Solo"])
        if rng.random() < 0.5:
            doc["arch"] = [{**copy.deepcopy(ARCH), "id": "team_arch"}]
            g["arch"] = "team_arch"

    return [scaled, taken, alone]


ARCH: dict[str, Any] = {}


def run_catalogs(r: Runner, rng: random.Random, seeds: list[Any]) -> str:
    picked = [copy.deepcopy(g) for g in rng.sample(seeds, rng.randint(1, 2))]
    for i, g in enumerate(picked):
        if rng.random() < 0.7:  # a new GPU; else a shipped one, replaced
            g.update(id=f"team-x{i}", name=f"Team X{i}", aliases=[])
            g.pop("same_die_as", None)
    doc = mutate({"gpu": picked}, rng, _catalog_extras(seeds))
    fmt = rng.choice(["toml", "json"])
    body = (_to_toml(doc) if fmt == "toml" else _to_json(doc)).encode()
    return _pull(r, "catalog", body, rng.choice([f".{fmt}", ""]), None)


def _catalog_results(r: Runner, catalog: Any) -> str:
    from advisor.core import parse_answers, run
    from advisor.core.model import bounds as B

    new = [g for g in catalog.gpus if g not in r.catalog.gpus]
    for g in new:
        for dtype, v in g.peak_tflops.items():
            if v > B.MAX_FAMILY_FACTOR * r.shipped_top.get(dtype, float("inf")):
                return "above_peak"
    for g in new[:2]:
        try:
            answers = parse_answers({"current": "h100-sxm", "targets": [g.id],
                                     "workload": {"model": "llama-3.1-8b", "seq_lens": [4096]}},
                                    "probe", catalog)
            decision = run(answers, catalog).decision
        except Exception as exc:
            if classify(exc) == "traceback":
                return "traceback"
            continue
        if r.above_peak(decision):
            return "above_peak"
    return "ok"


def _record_seed(catalog: Any, gpu: str) -> dict[str, Any]:
    """A suite record for `gpu`, in the probes' own format, its figures the catalog's."""
    base = json.loads((ROOT / "tests" / "unit" / "data" / "h100_workload_probe.json").read_text())
    g = catalog.gpu(gpu)
    base["stamp"]["device"]["catalog_id"] = gpu
    base.pop("workload", None)
    base["settings"] = {"preset": "quick", "toy_sizes": False}
    peak = g.peak_tflops.bf16 or 100.0
    base["matmul"] = [{"status": "ok", "dtype": "bf16", "mode": "quick",
                       "mamf_tflops": peak * 0.75, "median_tflops": peak * 0.7}]
    base["attention"] = [{"status": "ok", "backend": "sdpa", "seq_len": 4096, "head_dim": 128,
                          "heads": 32, "kv_heads": 8, "batch": 1, "causal": True,
                          "direction": "fwd_bwd", "tflops_median": peak * 0.4}]
    bw = (g.memory.bandwidth_tbps if g.memory else 2.0) * 1000
    base["bandwidth"] = [{"status": "ok", "kind": "d2d", "bytes": 1 << 30,
                          "gbps_median": bw * 0.8},
                         {"status": "ok", "kind": "h2d", "bytes": 1 << 28, "gbps_median": 50.0}]
    return base


def _workload_seed(gpu: str) -> dict[str, Any]:
    """The workload probe's own record of llama-3.1-8b training (filed as `gpu`)."""
    base = json.loads((ROOT / "tests" / "unit" / "data" / "h100_workload_probe.json").read_text())
    base["stamp"]["device"]["catalog_id"] = gpu
    return base


def _probe_extras() -> list[Callable[[Any, random.Random], None]]:
    def figures(doc: Any, rng: random.Random) -> None:
        for section in ("matmul", "attention", "bandwidth"):
            rows = doc.get(section) if isinstance(doc, dict) else None
            for m in rows if isinstance(rows, list) else []:  # an earlier edit may retype it
                if isinstance(m, dict):
                    for k, v in m.items():
                        if k.endswith(("_tflops", "_median")) and isinstance(v, float):
                            m[k] = v * rng.choice([1e-6, 1e-4, 0.1, 2, 10, 1e4])

    def device(doc: Any, rng: random.Random) -> None:
        dev = _table(doc, "stamp").get("device")
        if isinstance(dev, dict):
            dev["catalog_id"] = rng.choice([_gpu_name(rng), None, 5, ["h100-sxm"]])

    def throughput(doc: Any, rng: random.Random) -> None:  # the anchor a workload probe gives
        phases = (doc.get("workload") or {}).get("phases") if isinstance(doc, dict) else None
        for phase in phases if isinstance(phases, list) else []:
            whole = phase.get("full_model") if isinstance(phase, dict) else None
            if isinstance(whole, dict):
                key = rng.choice(["tokens_per_s", "attention_share", "peak_memory_gib"])
                if isinstance(whole.get(key), int | float):
                    whole[key] = whole[key] * rng.choice([0.01, 0.5, 1.5, 2.8, 3, 10, 1e3])

    return [figures, device, throughput]


def run_probes(r: Runner, rng: random.Random, seeds: list[Any]) -> str:
    """A probe record as `advisor compare --probe FILE` reads it, or imported with `advisor
    probe import FILE` and then used from the store: suite records and workload-probe
    records (which anchor the decision on the current GPU)."""
    import shutil

    doc = mutate(rng.choice(seeds), rng, _probe_extras())
    path = r.home / "box.json"
    path.write_text(_to_json(doc))
    stamp = doc.get("stamp") if isinstance(doc, dict) else None
    device = stamp.get("device") if isinstance(stamp, dict) else None
    named = device.get("catalog_id") if isinstance(device, dict) else None
    gpu = named if isinstance(named, str) and rng.random() < 0.8 else rng.choice(
        ["h100-sxm", "b200-sxm", "mi300x", "l4"])
    other = rng.choice(["b200-sxm", "h200-sxm", "mi300x", "h100-sxm"])
    sides = [gpu, other] if rng.random() < 0.7 else [other, gpu]
    argv = ["compare", "--current", sides[0], "--target", sides[1], "--model", "llama-3.1-8b",
            "--seq-len", rng.choice(["4096", "4096", "8192"]), "--json"]
    store = r.home / "probes"
    shutil.rmtree(store, ignore_errors=True)
    if rng.random() < 0.5:
        return cli(r, [*argv, "--probe", str(path)], (str(path), FLAG))
    got = cli(r, ["probe", "import", str(path)], (str(path), FLAG))
    return got if got != "ok" else cli(r, argv, (str(path), str(store), FLAG))


def _report_seeds(r: Runner) -> list[str]:
    from advisor.core import parse_answers, run
    from advisor.core.report.document import report_to_toml

    out = []
    for doc in _answers_seeds()[:4]:
        try:
            out.append(report_to_toml(run(parse_answers(doc, "a", r.catalog), r.catalog)))
        except Exception:
            continue
    return out


def run_reports(r: Runner, rng: random.Random, seeds: list[Any]) -> str:
    doc = mutate(rng.choice(seeds), rng, [])
    as_json = rng.random() < 0.3
    path = r.home / ("r.json" if as_json else "r.toml")
    path.write_text(_to_json(doc) if as_json else _to_toml(doc))
    got = cli(r, ["report", "show", str(path), "--format", rng.choice(["text", "json"])],
              (str(path),))
    if got != "ok":
        return got
    from advisor.io.documents import load_report

    return "above_peak" if r.report_above_peak(load_report(path)) else "ok"


def _model_extras() -> list[Callable[[Any, random.Random], None]]:
    def wide(doc: Any, rng: random.Random) -> None:  # a dimension far past any published
        if isinstance(doc, dict):
            key = rng.choice(["vocab_size", "hidden_size", "intermediate_size",
                              "num_hidden_layers", "num_local_experts", "n_routed_experts",
                              "sliding_window", "max_position_embeddings"])
            doc[key] = rng.choice([2**24, 2**20, 10**6, 1, 0, 3, 2**31])

    def family(doc: Any, rng: random.Random) -> None:
        if isinstance(doc, dict):
            doc[rng.choice(["model_type", "architectures"])] = rng.choice(
                ["llama", "qwen3_moe", "deepseek_v3", "gpt_oss", "mamba", ["LlamaForCausalLM"],
                 ["Qwen3MoeForCausalLM", "x"], "", None])

    return [wide, family]


def run_models(r: Runner, rng: random.Random, seeds: list[Any]) -> str:
    """A Hugging Face config.json as `advisor compare --model PATH` reads it (the file or
    its folder)."""
    doc = mutate(rng.choice(seeds), rng, _model_extras())
    folder = r.home / "model"
    folder.mkdir(exist_ok=True)
    path = folder / "config.json"
    path.write_text(_to_json(doc))
    mode = rng.choice([[], [], ["--mode", "prefill"], ["--mode", "serve", "--osl", "256"]])
    argv = ["compare", "--current", "h100-sxm", "--target", rng.choice(["b200-sxm", "mi300x"]),
            "--model", str(path if rng.random() < 0.5 else folder),
            "--seq-len", rng.choice(["4096", "8k", "32k"]), *mode, "--json"]
    return cli(r, argv, (str(folder), FLAG))


LOADERS = {"answers": run_answers, "flags": run_flags, "sheets": run_sheets,
           "catalogs": run_catalogs, "probes": run_probes, "reports": run_reports,
           "models": run_models}


def seeds_for(loader: str, r: Runner) -> list[Any]:
    if loader == "answers":
        return _answers_seeds()
    if loader == "catalogs":
        from advisor.io.catalog_store import read_shipped_texts

        ARCH.update(tomllib.loads(read_shipped_texts()["archs.toml"])["arch"][0])
        return json.loads(json.dumps(tomllib.loads(read_shipped_texts()["gpus.toml"])["gpu"],
                                     default=str))
    if loader == "probes":
        return [*(_record_seed(r.catalog, g) for g in ("h100-sxm", "b200-sxm", "mi300x", "l4")),
                _workload_seed("h100-sxm"), _workload_seed("b200-sxm")]
    if loader == "models":
        return [json.loads(p.read_text()) for p in sorted((ROOT / "tests" / "data").glob(
            "*/config.json"))]
    if loader == "reports":
        return [tomllib.loads(t) for t in _report_seeds(r)]
    return []


def fuzz(loader: str, n: int, seed: int) -> tuple[Counter[str], list[str]]:
    with tempfile.TemporaryDirectory() as home:
        r = Runner(Path(home))
        rng = random.Random(f"{loader}-{seed}")
        seeds = seeds_for(loader, r)
        counts: Counter[str] = Counter()
        examples: list[str] = []
        for i in range(n):
            LAST[0] = ""
            try:
                got = LOADERS[loader](r, rng, seeds)
            except Exception as exc:
                got = classify(exc)
            if got in FAILURES and len(examples) < 5:
                examples.append(f"#{i} {got}: {LAST[0]}")
            counts[got] += 1
        return counts, examples


def header() -> str:
    """The table's head: loader, inputs, each outcome, seconds."""
    return f"{'loader':<10}{'inputs':>8}" + "".join(f"{k:>12}" for k in
                                                    (*KINDS, *FAILURES)) + "   seconds"


def row(loader: str, counts: Counter[str], seconds: float) -> str:
    """One loader's line of the table."""
    return (f"{loader:<10}{sum(counts.values()):>8}"
            + "".join(f"{counts[k]:>12}" for k in (*KINDS, *FAILURES)) + f"   {seconds:7.0f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=3000, help="inputs per loader")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", choices=sorted(LOADERS), action="append")
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    failed = False
    print(header())
    for loader in args.only or list(LOADERS):
        start = time.perf_counter()
        counts, examples = fuzz(loader, args.n, args.seed)
        print(row(loader, counts, time.perf_counter() - start), flush=True)
        for e in examples:
            print("   ", e.replace("\n", "\n    "))
        failed |= any(counts[k] for k in FAILURES)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
