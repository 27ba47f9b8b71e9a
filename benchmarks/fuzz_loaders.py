"""Fuzz every loader: generated and mutated bytes in, and what came out, counted.

    python benchmarks/fuzz_loaders.py                  # 10,000 per loader, 300 through the CLI
    python benchmarks/fuzz_loaders.py -n 500 --cli 40  # a quicker look
    python benchmarks/fuzz_loaders.py --only answers --seed 7

Each loader runs in its own worker process, which caps its own address space at
(its size after start-up + 500 MiB) and every input at a wall-clock limit, so a runaway
input is counted, not waited for. Inputs come from hypothesis: valid documents with a few
bytes changed (`fuzz_inputs.mutated`), valid documents with one number swapped for an
edge value (0, -5, nan, inf, 1e308, 10^30...), documents generated field by field inside
and just outside their bounds, and raw bytes.

Then every list-valued field of every loader is timed at N and 4N elements
(`--scaling-only` for just that): a loader, or the overlay build behind it, that is worse
than linear in a list (t(4N)/t(N) over 5x) is a failure. Lists have caps (bounds.py), so
past a cap it is the refusal that is timed.

Outcomes, per loader:
  ok         the document loaded and everything downstream of it ran (a decision, a
             report rendered, a record imported and a decision made with the store)
  clean      one InputError line that names the file
  unnamed    an InputError line that does not name the file: a failure
  traceback  any other exception: a failure
  poisoned   (probe store) an import that succeeded but left the store unusable
  hang       past the per-input limit (default 20 s): a failure
  slow       answered, but in more than 2 s (reported, and a failure of the 2 s budget)
  memory     MemoryError under the 500 MiB cap: a failure

The loaders: answers (load, decide, configs sweep, pipeline, report TOML), report
(load, render as `report show` does, state for `--resume`, diff), probe record (load,
decide with it as `decide --probe`), probe store (import, then decide with the store),
price sheets as CSV, TOML and JSON, and the catalog overlay (a pulled document, and the
cache file it is stored in). Exits 1 if any failure was counted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fuzz_inputs as F  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

LOADERS = ("answers", "report", "probe", "probe_store", "price_csv", "price_toml",
           "price_json", "catalog")
FAILURES = ("unnamed", "traceback", "poisoned", "hang", "slow", "memory")
MEMORY_CAP = 500 * 2**20
SLOW_S = 2.0


class Hang(BaseException):
    """Raised by SIGALRM at the per-input limit."""


def _alarm(signum: int, frame: Any) -> None:
    raise Hang


# --- the loaders, in process ----------------------------------------------------------------

class Harness:
    """One loader's run on one input. Returns an outcome name; keeps a few samples."""

    def __init__(self, loader: str, work: Path) -> None:
        from advisor.io.catalog_store import load_catalog

        self.loader = loader
        self.work = work
        self.home = work / "home"
        os.environ["ADVISOR_HOME"] = str(self.home)
        self.catalog = load_catalog()
        self.samples: dict[str, list[str]] = {}
        self.good_report = _good_report(work / "good-report.toml")

    def _reset_home(self) -> None:
        import shutil

        shutil.rmtree(self.home, ignore_errors=True)

    def run(self, data: bytes) -> str:
        from advisor.core.errors import InputError

        suffix = {"answers": ".toml", "report": ".toml", "price_csv": ".csv",
                  "price_toml": ".toml", "catalog": ".json"}.get(self.loader, ".json")
        path = self.work / f"input{suffix}"
        path.write_bytes(data)
        label = str(path)
        step: Callable[[Path], str | None] = getattr(self, f"_{self.loader}")
        try:
            outcome = step(path) or "ok"
        except InputError as exc:
            line = exc.one_line()
            label = getattr(self, "_label", label)
            outcome = "clean" if ("\n" not in line and label in line) else "unnamed"
            if outcome == "unnamed":
                self._keep(outcome, line)
        except (Hang, MemoryError):
            raise
        except Exception:
            outcome = "traceback"
            self._keep(outcome, traceback.format_exc(limit=6))
        finally:
            self.__dict__.pop("_label", None)
        return outcome

    def _keep(self, outcome: str, text: str) -> None:
        kept = self.samples.setdefault(outcome, [])
        if len(kept) < 5:
            kept.append(text)

    # each returns None for ok (or another outcome name), raising what the loader raises

    def _answers(self, path: Path) -> None:
        from advisor.core.comparison import decide
        from advisor.core.economics.configs import sweep_configs
        from advisor.core.economics.stages import analyse_pipeline
        from advisor.core.errors import in_file
        from advisor.core.report.document import Provenance, build_report, report_to_toml
        from advisor.io.documents import load_answers

        answers = load_answers(path, self.catalog)
        with in_file(str(path)):
            decision = decide(answers, self.catalog)
            configs = sweep_configs(answers, self.catalog) if answers.configs else None
            pipeline = (analyse_pipeline(answers.pipeline, self.catalog)
                        if answers.pipeline else None)
        provenance = Provenance(advisor_version="fuzz", catalog_version="fuzz",
                                created=_NOW)
        report_to_toml(build_report(decision, self.catalog, {}, provenance,
                                    configs=configs, pipeline=pipeline))

    def _report(self, path: Path) -> None:
        from advisor.cli.render import emit
        from advisor.core.report.diff import diff_reports
        from advisor.io.documents import load_report
        from advisor.present import report as document
        from advisor.tui.export import state_from_report
        from advisor.tui.screens.verdict import card

        report = load_report(path)
        blocks = document.blocks(report)  # what `report show` prints, as text and Markdown
        emit.render(blocks, "text", document.title(report))
        emit.render(blocks, "md", document.title(report))
        json.dumps(report.model_dump(mode="json", by_alias=True))  # `report show --json`
        emit.render(document.changes_blocks(diff_reports(self.good_report, report)), "text",
                    "diff")  # `report diff`
        state_from_report(report)  # what `advisor --resume` builds before Textual starts
        for t in report.decision.targets:  # and the verdict cards it then shows
            if t.verdict is not None:
                card(report.decision, t)

    def _probe(self, path: Path) -> None:
        from advisor.core.comparison import decide
        from advisor.core.errors import in_file
        from advisor.core.model.answers import parse_answers
        from advisor.io.probe_store import probes_for

        probes = probes_for(["h200-sxm", "b200-sxm"], self.catalog, [str(path)], stored=False)
        with in_file(str(path)):
            decision = decide(parse_answers(_ANSWERS), self.catalog, probes)
        self._report_of(decision, probes)

    def _report_of(self, decision: Any, probes: Any) -> None:
        """The report `decide --out` writes: its finiteness guard is what catches a NaN."""
        from advisor.core.report.document import Provenance, build_report, report_to_toml

        report_to_toml(build_report(decision, self.catalog, probes, Provenance(
            advisor_version="fuzz", catalog_version="fuzz", created=_NOW)))

    def _probe_store(self, path: Path) -> str | None:
        from advisor.core.comparison import decide
        from advisor.core.errors import InputError
        from advisor.core.model.answers import parse_answers
        from advisor.io.probe_store import import_probe, probes_for

        self._reset_home()
        try:
            done = import_probe(path, self.catalog)
        except InputError:
            self._decide_with_store()  # refused: the store must still work
            raise
        answers = parse_answers(_ANSWERS | {"current": done.gpu_id, "targets": ["b200-sxm"]
                                            if done.gpu_id != "b200-sxm" else ["h200-sxm"]})
        try:
            probes = probes_for([answers.current, *answers.targets], self.catalog)
            self._report_of(decide(answers, self.catalog, probes), probes)
        except Exception as exc:  # accepted, then broke the next decision: the audit's case
            self._keep("poisoned", f"{type(exc).__name__}: {exc}")
            return "poisoned"
        return None

    def _decide_with_store(self) -> None:
        from advisor.core.comparison import decide
        from advisor.core.model.answers import parse_answers
        from advisor.io.probe_store import probes_for

        probes = probes_for(["h200-sxm", "b200-sxm"], self.catalog)
        self._report_of(decide(parse_answers(_ANSWERS), self.catalog, probes), probes)

    def _sheet(self, path: Path, fmt: str) -> None:
        from advisor.core.formats import decode_text
        from advisor.io.catalog_store import build_effective
        from advisor.io.sheets import parse_price_sheet

        url = f"https://sheets.example/{path.name}"
        self._label = url
        text = decode_text(path.read_bytes(), url)
        entries = parse_price_sheet(text, url, fmt, self.catalog, date(2026, 1, 1))  # type: ignore[arg-type]
        build_effective([(url, entries)])

    def _price_csv(self, path: Path) -> None:
        self._sheet(path, "csv")

    def _price_toml(self, path: Path) -> None:
        self._sheet(path, "toml")

    def _price_json(self, path: Path) -> None:
        self._sheet(path, "json")

    def _catalog(self, path: Path) -> None:
        from advisor.core.formats import decode_text, detect_format
        from advisor.io.catalog_store import build_effective, cache_path, effective_catalog
        from advisor.io.sheets import parse_catalog_doc

        data = path.read_bytes()
        if data[:1] == b"#":  # half the inputs: the bytes are the pulled cache file itself
            self._reset_home()
            cache = cache_path("catalog")
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_bytes(data[1:])
            self._label = str(cache)
            effective_catalog()
            return
        url = "https://team.example/catalog"
        self._label = url
        text = decode_text(data, url)
        fmt = detect_format(url, None, text)
        build_effective([(url, parse_catalog_doc(text, url, fmt))])


_ANSWERS: dict[str, Any] = {
    "current": "h200-sxm", "targets": ["b200-sxm"],
    "workload": {"model": "llama-3.1-8b", "seq_lens": [4096, 8192], "token_budget": 1e11},
}
_NOW = None


def _good_report(path: Path) -> Any:
    from datetime import UTC, datetime

    from advisor.core.comparison import decide
    from advisor.core.economics.configs import sweep_configs
    from advisor.core.economics.stages import analyse_pipeline
    from advisor.core.report.document import (
        Provenance,
        build_report,
        parse_report,
        report_to_toml,
    )
    from advisor.io.catalog_store import load_catalog
    from advisor.io.documents import load_answers

    global _NOW
    _NOW = datetime(2026, 3, 1, tzinfo=UTC)
    catalog = load_catalog()
    answers = load_answers(F.EXAMPLES / "answers.toml")
    pipe = load_answers_pipeline()
    answers = answers.model_copy(update={"pipeline": pipe})
    decision = decide(answers, catalog)
    report = build_report(decision, catalog, {}, Provenance(
        advisor_version="fuzz", catalog_version="fuzz", created=_NOW),
        ["stack drift: torch differs"], configs=sweep_configs(answers, catalog),
        pipeline=analyse_pipeline(pipe, catalog))
    text = report_to_toml(report)
    path.write_text(text)
    return parse_report(text, str(path))


def load_answers_pipeline() -> Any:
    from advisor.core.formats import load_model, parse_toml
    from advisor.core.model.options import PipelineSpec

    doc = parse_toml((F.EXAMPLES / "configs_pipeline.toml").read_text(), "pipeline")
    return load_model(PipelineSpec, doc["pipeline"], "pipeline")


def report_seeds(work: Path) -> list[bytes]:
    """Valid reports to mutate: the example with configs and a pipeline, and one with a
    probe record for each GPU."""
    from datetime import UTC, datetime

    from advisor.core.comparison import decide
    from advisor.core.model.probe_record import parse_probe_record
    from advisor.core.report.document import Provenance, build_report, report_to_toml
    from advisor.io.catalog_store import load_catalog
    from advisor.io.documents import load_answers

    good = work / "seed-report.toml"
    _good_report(good)
    catalog = load_catalog()
    answers = load_answers(F.EXAMPLES / "answers.toml").model_copy(update={"configs": None})
    probes = {g: parse_probe_record(F.probe_record(g), "seed") for g in ("h200-sxm", "b200-sxm")}
    decision = decide(answers, catalog, probes)
    with_probes = report_to_toml(build_report(decision, catalog, probes, Provenance(
        advisor_version="fuzz", catalog_version="fuzz",
        created=datetime(2026, 3, 1, tzinfo=UTC))))
    return [good.read_bytes(), with_probes.encode()]


# --- strategies per loader ------------------------------------------------------------------

def strategy(loader: str, seeds: dict[str, list[bytes]]) -> st.SearchStrategy[bytes]:
    import tomlkit

    def edges(key: str) -> st.SearchStrategy[bytes]:
        return st.sampled_from(seeds[key]).flatmap(F.number_swap)

    raw = st.binary(max_size=512)
    if loader == "answers":
        generated = F.answers_data().map(lambda d: tomlkit.dumps(d).encode())
        return st.one_of(F.mutated(seeds["answers"]), edges("answers"), generated, raw)
    if loader == "report":
        return st.one_of(F.mutated(seeds["report"]), edges("report"), raw)
    if loader in ("probe", "probe_store"):
        generated = st.builds(
            lambda fig, v, gpu: json.dumps(F.probe_record(gpu, **{fig: v})).encode(),
            st.sampled_from(["mamf", "median", "attn", "d2d", "h2d", "busbw"]),
            st.one_of(st.floats(1e-6, 1e5), st.floats(allow_nan=True, allow_infinity=True),
                      st.sampled_from([0.0, -5.0, 1e-320, 1e308, 1e-6, 1e5])),
            st.sampled_from(["h200-sxm", "b200-sxm", "h100-sxm", "l4", "mi300x", "nope"]))
        bom = st.sampled_from(seeds["probe"]).map(lambda b: b"\xef\xbb\xbf" + b)
        return st.one_of(F.mutated(seeds["probe"]), edges("probe"), generated, bom, raw)
    if loader == "catalog":
        cache = st.sampled_from(seeds["catalog_cache"]).flatmap(
            lambda s: st.one_of(F.mutated([s]), F.number_swap(s))).map(lambda b: b"#" + b)
        return st.one_of(F.mutated(seeds["catalog"]), edges("catalog"), cache, raw)
    writer = {"price_csv": F.sheet_csv, "price_toml": F.sheet_toml, "price_json": F.sheet_json}
    return st.one_of(F.mutated(seeds[loader]), edges(loader), F.price_rows().map(writer[loader]),
                     raw)


def all_seeds(work: Path) -> dict[str, list[bytes]]:
    seeds = F.seed_texts()
    seeds["report"] = report_seeds(work)
    seeds["catalog_cache"] = [_cache_seed()]
    return seeds


def _cache_seed() -> bytes:
    from datetime import UTC, datetime

    from advisor.io.catalog_store import PulledCache

    entries = json.loads(F.catalog_overlay())
    now = datetime(2026, 3, 1, tzinfo=UTC)
    return PulledCache(schema_="advisor.pulled", version=1, kind="catalog",
                       url="https://team.example/catalog", fetched_at=now, checked_at=now,
                       sha256="0" * 64, entries=entries).to_json().encode()


# --- a worker: one loader, n inputs ---------------------------------------------------------

def worker(loader: str, n: int, seed_value: int, limit_s: float, cap: int | None,
           derandomize: bool = False) -> dict[str, Any]:
    """Run one loader on n generated inputs in this process; the counts by outcome.

    `cap` limits this process's address space to its size after start-up plus `cap` bytes
    (for good: run it in a worker process); `derandomize` makes the inputs a fixed set, as
    the test that runs a bounded fraction of this wants."""
    work = Path(tempfile.mkdtemp(prefix=f"fuzz-{loader}-"))
    harness = Harness(loader, work)
    seeds = all_seeds(work)
    harness.run(seeds.get(loader, seeds["probe"])[0])  # warm every import before the cap
    if cap is not None:
        used = _address_space()
        resource.setrlimit(resource.RLIMIT_AS, (used + cap, resource.RLIM_INFINITY))
    counts: Counter[str] = Counter()
    slowest = 0.0
    previous = signal.signal(signal.SIGALRM, _alarm)

    @seed(seed_value)
    @settings(max_examples=n, deadline=None, database=None, derandomize=derandomize,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(data=strategy(loader, seeds))
    def one(data: bytes) -> None:
        nonlocal slowest
        started = time.monotonic()
        signal.setitimer(signal.ITIMER_REAL, limit_s)
        try:
            outcome = harness.run(data)
        except Hang:
            outcome = "hang"
        except MemoryError:
            outcome = "memory"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        took = time.monotonic() - started
        slowest = max(slowest, took)
        if took > SLOW_S and outcome not in ("hang", "memory"):
            counts["slow"] += 1
            harness._keep("slow", f"{took:.1f} s: {data[:200]!r}")
        counts[outcome] += 1

    try:
        one()
    finally:
        signal.signal(signal.SIGALRM, previous)
    total = sum(v for k, v in counts.items() if k != "slow")
    return {"loader": loader, "inputs": total, "counts": dict(counts),
            "slowest_s": round(slowest, 2), "samples": harness.samples}


def _address_space() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


# --- through the real CLI -------------------------------------------------------------------

def cli_run(n_per: int, seed_value: int, limit_s: float) -> dict[str, Counter[str]]:
    """A few hundred inputs through `python -m advisor` in fresh processes, as a user runs it."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    work = Path(tempfile.mkdtemp(prefix="fuzz-cli-"))
    seeds = all_seeds(work)
    www = work / "www"
    www.mkdir()

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=www))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    commands: dict[str, Callable[[Path], list[str]]] = {
        "answers": lambda p: ["decide", "--answers", str(p), "--out", str(p) + ".report"],
        "report": lambda p: ["report", "show", str(p)],
        "probe": lambda p: ["decide", "--answers", str(F.EXAMPLES / "answers.toml"),
                            "--probe", str(p)],
        "probe_store": lambda p: ["probe", "import", str(p)],
        "price_csv": lambda p: ["prices", "pull", "--allow-http", f"{base}/{p.name}"],
        "price_toml": lambda p: ["prices", "pull", "--allow-http", f"{base}/{p.name}"],
        "price_json": lambda p: ["prices", "pull", "--allow-http", f"{base}/{p.name}"],
        "catalog": lambda p: ["catalog", "pull", "--allow-http", f"{base}/{p.name}"],
    }
    out: dict[str, Counter[str]] = {}
    for loader in LOADERS:
        inputs: list[bytes] = []

        @seed(seed_value)
        @settings(max_examples=n_per, deadline=None, database=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(data=strategy(loader, seeds))
        def collect(data: bytes) -> None:
            inputs.append(data.removeprefix(b"#") if loader == "catalog" else data)  # noqa: B023

        collect()
        counts: Counter[str] = Counter()
        suffix = {"price_csv": ".csv", "price_toml": ".toml", "price_json": ".json",
                  "answers": ".toml", "report": ".toml"}.get(loader, ".json")
        for i, data in enumerate(inputs[:n_per]):
            served = loader.startswith(("price", "catalog"))
            path = (www if served else work) / f"{loader}{i}{suffix}"
            path.write_bytes(data)
            home = work / f"home-{loader}-{i}"
            env = {**os.environ, "ADVISOR_HOME": str(home)}
            if loader == "probe_store":  # import, then every decision must still work
                result = _cli(commands[loader](path), env, str(path), limit_s)
                after = _cli(["decide", "--answers", str(F.EXAMPLES / "answers.toml")], env,
                             "", limit_s)
                counts[result if after == "ok" else "poisoned"] += 1
                continue
            label = str(path) if not loader.startswith(("price", "catalog")) else path.name
            counts[_cli(commands[loader](path), env, label, limit_s)] += 1
        out[loader] = counts
    httpd.shutdown()
    return out


def _cli(args: list[str], env: dict[str, str], label: str, limit_s: float) -> str:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, resource.RLIM_INFINITY))

    try:
        r = subprocess.run([sys.executable, "-m", "advisor", *args], capture_output=True,
                           text=True, timeout=limit_s + 10, env=env, stdin=subprocess.DEVNULL,
                           preexec_fn=cap, errors="replace")
    except subprocess.TimeoutExpired:
        return "hang"
    if "Traceback" in r.stderr:
        return "memory" if "MemoryError" in r.stderr else "traceback"
    if r.returncode == 0:
        return "ok"
    lines = r.stderr.strip().splitlines()
    if r.returncode in (1, 2) and len([ln for ln in lines if "error:" in ln]) == 1:
        return "clean" if not label or label in r.stderr else "unnamed"
    return "traceback"


# --- scaling: every list-valued field at N and 4N ---------------------------------------------

SCALE_N = 250
SCALE_LIMIT = 5.0
"""t(4N) / t(N) above this is worse than linear (a linear loader gives at most ~4)."""


def _toml_value(v: Any) -> str:
    """Plain data as an inline TOML value, written in linear time (tomlkit is not)."""
    from datetime import date, datetime

    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, datetime | date):
        return v.isoformat()
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml_value(x)}" for k, x in v.items()) \
        + " }"


def _toml_doc(doc: dict[str, Any]) -> str:
    return "\n".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in doc.items()) + "\n"


def _at(doc: Any, path: str) -> Any:
    for part in path.split("."):
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc


def _grown(base: dict[str, Any], path: str, n: int, make: Callable[[int], Any]) -> Any:
    """`base` with the list (or table) at `path` holding n generated elements."""
    import copy

    doc = copy.deepcopy(base)
    head, _, last = path.rpartition(".")
    parent = _at(doc, head) if head else doc
    items = [make(i) for i in range(n)]
    parent[last] = dict(items) if isinstance(parent.get(last), dict) else items
    return doc


Case = tuple[str, str, Callable[[int], bytes], Callable[[bytes], Any]]


def _scaling_cases(work: Path) -> list[Case]:
    """(loader, field, document with n elements in that field, load it) for every
    list-valued field the loaders read."""
    import copy
    import tomllib

    from advisor.core.formats import decode_text
    from advisor.io.catalog_store import build_effective, load_catalog, read_shipped_texts
    from advisor.io.documents import load_answers, load_report, probe_record_from_bytes
    from advisor.io.sheets import parse_catalog_doc, parse_price_sheet

    catalog = load_catalog()
    ids = [g.id for g in catalog.gpus]
    url = "https://team.example/sheet"

    def via_file(suffix: str, load: Callable[[Path], Any]) -> Callable[[bytes], Any]:
        def run(data: bytes) -> Any:
            path = work / f"scaled{suffix}"
            path.write_bytes(data)
            return load(path)
        return run

    def sheet(fmt: str) -> Callable[[bytes], Any]:
        def run(data: bytes) -> Any:
            entries = parse_price_sheet(decode_text(data, url), url, fmt, catalog,  # type: ignore[arg-type]
                                        date(2026, 1, 1))
            return build_effective([(url, entries)])
        return run

    def overlay(data: bytes) -> Any:
        return build_effective([(url, parse_catalog_doc(decode_text(data, url), url, "json"))])

    answers = tomllib.loads((F.EXAMPLES / "answers.toml").read_text())
    answers["pipeline"] = tomllib.loads((F.EXAMPLES / "drafter_pipeline.toml").read_text())[
        "pipeline"]
    answers["power_limits_w"] = {"b200-sxm": 800.0}
    answers["layouts"] = {"b200-sxm": {"gpus": 8}}
    stage = answers["pipeline"]["stages"][0]
    alt = answers["pipeline"]["alternatives"][0]
    _good_report(work / "scale-report.toml")
    report = tomllib.loads((work / "scale-report.toml").read_text())
    probe = F.probe_record("h200-sxm")
    gpus = tomllib.loads(read_shipped_texts()["gpus.toml"])["gpu"]
    h100 = next(g for g in gpus if g["id"] == "h100-sxm")
    team = {**copy.deepcopy(h100), "id": "team-x", "name": "Team X", "aliases": ["TX"]}
    team_price = {"gpu": "team-x", "usd_per_hour": 2.5, "label": "team rate", "default": True,
                  "source": ["team"], "retrieved": "2026-01-01"}
    support = {"package": "torch", "arch": "sm_90", "min_version": "2.1", "status": "ga",
               "source": ["team"], "retrieved": "2026-01-01", "variant": "cuda"}
    cat = {"gpu": [team], "price": [team_price], "support": [support]}
    rows = [{"gpu": "h100-sxm", "usd_per_hour": 2.5, "source": "a"}]

    def csv_rows(n: int, cites: int = 1) -> bytes:
        lines = ["gpu,usd_per_hour,source"]
        lines += [f"{ids[i % len(ids)]},2.5,{';'.join(f'c{j}' for j in range(cites))}"
                  for i in range(n)]
        return ("\n".join(lines) + "\n").encode()

    a_toml = via_file(".toml", lambda p: load_answers(p, catalog))
    cases = [
        ("answers", path, lambda n, path=path, make=make: _toml_doc(
            _grown(answers, path, n, make)).encode(), a_toml)
        for path, make in [
            ("targets", lambda i: ids[i % len(ids)]),
            ("workload.seq_lens", lambda i: 1024 + i),
            ("configs.counts", lambda i: i + 1),
            # distinct keys of bounded length (a key growing with i made the input, not the
            # loader, quadratic: 4N keys were ~16x the bytes of N)
            ("prices", lambda i: (f"{ids[i % len(ids)]}-{i // len(ids)}", 2.0)),
            ("power_limits_w", lambda i: (f"gpu{i}", 500.0)),
            ("layouts", lambda i: (f"gpu{i}", {"gpus": 8})),
            ("stack.packages", lambda i: (f"package{i}", "1.0")),
            ("pipeline.stages", lambda i: {**stage, "name": f"stage{i}"}),
            ("pipeline.alternatives", lambda i: alt),
            ("pipeline.alternatives.0.splits", lambda i: [1, 1]),
        ]]
    cases += [
        ("report", path, lambda n, path=path, make=make: _toml_doc(
            _grown(report, path, n, make)).encode(), via_file(".toml", load_report))
        for path, make in [
            ("warnings", lambda i: f"warning {i}"),
            ("notes", lambda i: f"note {i}"),
            ("defaults", lambda i: {"field": f"f{i}", "value": "1", "source": "x"}),
            ("current.sweep", lambda i: report["current"]["sweep"][0]),
            ("configs.points", lambda i: report["configs"]["points"][0]),
            ("provenance.pulled", lambda i: {"kind": "prices", "fetched_at": "2026-01-01T00:00:00Z",
                                             "url": f"https://h.example/s{i}.csv?token=abc{i}"}),
        ]]
    cases += [
        ("probe", path, lambda n, path=path, make=make: json.dumps(
            _grown(probe, path, n, make)).encode(), lambda d: probe_record_from_bytes(d, "p.json"))
        for path, make in [
            ("matmul", lambda i: probe["matmul"][0]),
            ("attention", lambda i: {**probe["attention"][0], "seq_len": 1024 + i}),
            ("bandwidth", lambda i: probe["bandwidth"][0]),
            ("collectives", lambda i: probe["collectives"][0]),
            ("notes", lambda i: f"note {i}"),
        ]]
    cases += [
        ("price_csv", "rows", lambda n: csv_rows(n), sheet("csv")),
        ("price_csv", "source (one cell, ';'-separated)", lambda n: csv_rows(1, n), sheet("csv")),
        ("price_json", "price", lambda n: json.dumps({"price": _grown(
            {"p": rows}, "p", n, lambda i: {**rows[0], "gpu": ids[i % len(ids)]})["p"]}).encode(),
         sheet("json")),
        ("price_toml", "price.0.source", lambda n: _toml_doc({"price": _grown(
            {"p": rows}, "p.0.source", n, lambda i: f"c{i}")["p"]}).encode(), sheet("toml")),
    ]
    cases += [
        ("catalog", path, lambda n, path=path, make=make: json.dumps(
            _grown(cat, path, n, make), default=str).encode(), overlay)
        for path, make in [
            ("gpu", lambda i: team if i == 0 else {**team, "id": f"team-{i}",
                                                   "name": f"Team {i}", "aliases": [f"TX{i}"]}),
            ("gpu.0.aliases", lambda i: f"Team alias {i}"),
            ("gpu.0.uncertain", lambda i: f"question {i}"),
            ("gpu.0.memory.source", lambda i: f"https://example.com/{i}"),
            ("price", lambda i: {**team_price, "label": f"rate {i}", "default": False}),
            ("price.0.source", lambda i: f"https://example.com/{i}"),
            ("support", lambda i: {**support, "variant": f"v{i}"}),
        ]]
    return cases


def scaling(n: int = SCALE_N, repeats: int = 7) -> list[dict[str, Any]]:
    """Time each loader on each list-valued field at N and 4N elements; a refusal (a cap)
    is timed like an acceptance: both must be linear. N starts at `n` and grows 4x at a
    time (to 64n at most) while the loader takes under MIN_TIMED_S at N, so that the list,
    not the fixed cost, is what is timed.

    On a shared box wall-clock time measures the neighbours as much as the loader, so this
    is the process's own CPU time, the best of `repeats` runs of each size, interleaved (N,
    4N, N, 4N...) so both see the same machine, after one untimed run. The cyclic garbage
    collector is paused while a run is timed: its full collections land at heap-size
    thresholds, and would make a linear loader look superlinear at one N and sublinear
    at the next."""
    work = Path(tempfile.mkdtemp(prefix="fuzz-scaling-"))
    os.environ["ADVISOR_HOME"] = str(work / "home")
    out = []
    for loader, field, build, load in _scaling_cases(work):
        size = n
        while True:
            best, outcome = _timed({s: build(s) for s in (size, 4 * size)}, load, repeats)
            if best[size] >= MIN_TIMED_S or size >= 64 * n:
                break
            size *= 4
        out.append({"loader": loader, "field": field, "n": size, "t_n": best[size],
                    "t_4n": best[4 * size], "out_n": outcome[size],
                    "out_4n": outcome[4 * size], "ratio": best[4 * size] / best[size]})
    return out


MIN_TIMED_S = 0.01


def _timed(data: dict[int, bytes], load: Callable[[bytes], Any],
           repeats: int) -> tuple[dict[int, float], dict[int, str]]:
    import gc

    from advisor.core.errors import InputError

    best = dict.fromkeys(data, math.inf)
    outcome = dict.fromkeys(data, "ok")
    for size in data:
        with contextlib.suppress(InputError):
            load(data[size])  # warm: imports, caches, the allocator
    for _ in range(repeats):
        for size in data:
            gc.collect()
            gc.disable()
            started = time.process_time()
            try:
                load(data[size])
            except InputError:
                outcome[size] = "refused"
            finally:
                gc.enable()
            best[size] = min(best[size], max(time.process_time() - started, 1e-6))
    return best, outcome


def print_scaling(rows: list[dict[str, Any]]) -> bool:
    """The N -> 4N table; True if every ratio is within SCALE_LIMIT."""
    print(f"\nScaling: each list-valued field at N and 4N elements (CPU time, best of 7; "
          f"linear is ~4x, the limit {SCALE_LIMIT:g}x):")
    print(f"{'loader':<11} {'field':<36} {'N':>6} {'t(N) ms':>9} {'t(4N) ms':>9} {'ratio':>6}"
          "  outcome")
    ok = True
    for r in rows:
        bad = r["ratio"] > SCALE_LIMIT
        ok &= not bad
        print(f"{r['loader']:<11} {r['field']:<36} {r['n']:>6,} {r['t_n'] * 1e3:>9.1f} "
              f"{r['t_4n'] * 1e3:>9.1f} {r['ratio']:>5.2f}x  {r['out_n']}/{r['out_4n']}"
              + ("  WORSE THAN LINEAR" if bad else ""))
    print(f"largest ratio {max(r['ratio'] for r in rows):.2f}x: "
          + ("every loader is linear in every list" if ok else "FAILURES above"))
    return ok


# --- main -------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-n", type=int, default=10_000, help="inputs per loader (default 10,000)")
    p.add_argument("--cli", type=int, default=300, help="inputs through the CLI in all (300)")
    p.add_argument("--only", choices=LOADERS, action="append", help="just these loaders")
    p.add_argument("--seed", type=int, default=20260301)
    p.add_argument("--limit", type=float, default=20.0, help="per-input seconds (20)")
    p.add_argument("--jobs", type=int, default=2, help="workers at once (2)")
    p.add_argument("--worker", choices=LOADERS, help=argparse.SUPPRESS)
    p.add_argument("--scaling-only", action="store_true",
                   help="only the N -> 4N scaling check of every list-valued field")
    p.add_argument("--scale-n", type=int, default=SCALE_N, help=f"N of the check ({SCALE_N})")
    args = p.parse_args(argv)

    if args.scaling_only:
        return 0 if print_scaling(scaling(args.scale_n)) else 1

    if args.worker:
        print(json.dumps(worker(args.worker, args.n, args.seed, args.limit, MEMORY_CAP)))
        return 0

    loaders = args.only or list(LOADERS)
    started = time.monotonic()
    results: dict[str, dict[str, Any]] = {}
    running: list[tuple[str, subprocess.Popen[str]]] = []
    queue = list(loaders)
    while queue or running:
        while queue and len(running) < args.jobs:
            name = queue.pop(0)
            cmd = [sys.executable, __file__, "--worker", name, "-n", str(args.n),
                   "--seed", str(args.seed), "--limit", str(args.limit)]
            running.append((name, subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)))
        time.sleep(0.5)
        for name, proc in list(running):
            if proc.poll() is None:
                continue
            running.remove((name, proc))
            stdout = proc.stdout.read() if proc.stdout else ""
            try:
                results[name] = json.loads(stdout.strip().splitlines()[-1])
            except (IndexError, json.JSONDecodeError):
                results[name] = {"loader": name, "inputs": 0, "counts": {"crash": 1},
                                 "slowest_s": 0, "samples": {"crash": [stdout[-2000:]]}}

    failed = False
    cols = ("ok", "clean", *FAILURES)
    print(f"In process ({args.n:,} inputs per loader, seed {args.seed}, "
          f"{args.limit:g} s and +500 MiB per input):")
    print(f"{'loader':<12} {'inputs':>7} " + " ".join(f"{c:>9}" for c in cols)
          + f" {'slowest':>8}")
    for name in loaders:
        r = results[name]
        c = r["counts"]
        print(f"{name:<12} {r['inputs']:>7,} " + " ".join(f"{c.get(k, 0):>9,}" for k in cols)
              + f" {r['slowest_s']:>7.2f}s" + (f"  CRASH {c['crash']}" if "crash" in c else ""))
        failed |= any(c.get(k) for k in (*FAILURES, "crash"))
    if args.cli:
        per = max(1, args.cli // len(loaders))
        cli = cli_run(per, args.seed, args.limit)
        print(f"\nThrough the CLI ({per} inputs per loader, fresh `python -m advisor` each):")
        print(f"{'loader':<12} {'inputs':>7} " + " ".join(f"{c:>9}" for c in cols))
        for name in loaders:
            c = cli.get(name, Counter())
            print(f"{name:<12} {sum(c.values()):>7,} "
                  + " ".join(f"{c.get(k, 0):>9,}" for k in cols))
            failed |= any(c.get(k) for k in FAILURES)
    for name in loaders:
        for outcome, texts in results[name].get("samples", {}).items():
            for text in texts[:2]:
                print(f"\n--- {name}: {outcome} ---\n{text}")
    failed |= not print_scaling(scaling(args.scale_n))
    print(f"\n{time.monotonic() - started:,.0f} s in all; "
          + ("FAILURES above" if failed else "no failures"))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
