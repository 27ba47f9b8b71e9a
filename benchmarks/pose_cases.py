"""Pose published cross-GPU cases to `advisor compare --json` the way a new user would.

`advisor validate` scores the cases the package ships through the engine directly. This
script checks the other path: a development case file (the format of the team's
dev-cases.toml: from_gpu, to_gpu, n_gpus_from/to, model, precision or
precision_from/precision_to, parallelism, ISL/OSL in the model text, measured_speedup)
is turned into the command line a user would type (a model preset, the stated TP where the
source states one, `--mode serve --isl --osl`, per-side counts and formats), and the
`targets[0].speedup` it prints is compared with the measurement, beside the naive
sqrt(peak-FLOPS x HBM) ratio. Nothing here is fitted: it prints errors.

    python benchmarks/pose_cases.py [CASES.toml] [--only inference|training] [--verbose]

Cases the engine does not model (non-LLM, isolated kernels, GEMM tables) are listed as
skipped with the reason. For MLPerf's dataset-defined lengths the script uses the
datasets' published mean lengths (see MLPERF_LENGTHS), stated in the output.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import re
import statistics
import sys
import tomllib
from pathlib import Path
from typing import Any

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "validation" / "dev-cases.toml"

# Names as the case files spell them -> catalog ids (first match wins).
GPUS: tuple[tuple[str, str], ...] = (
    (r"gb300", "gb300"), (r"gb200", "gb200"), (r"gh200", "gh200-144g"),
    (r"b300", "b300-sxm"), (r"b200", "b200-sxm"),
    (r"h200 nvl|h200-nvl", "h200-nvl"), (r"h200", "h200-sxm"),
    (r"h100 sxm5? 96gb|h100 .*96gb", "h100-sxm"), (r"h100 nvl", "h100-nvl"),
    (r"h100 pcie", "h100-pcie"), (r"h100", "h100-sxm"),
    (r"a100", "a100-sxm"), (r"l40s", "l40s"),
    (r"rtx pro 6000|rtxpro6000", "rtx-pro-6000-bw-server"),
    (r"mi355x", "mi355x"), (r"mi325x", "mi325x"), (r"mi300x", "mi300x"),
)
MODELS: tuple[tuple[str, str], ...] = (
    (r"llama-3\.1-405b", "llama-3.1-405b"), (r"llama-3\.1-70b", "llama-3.1-70b"),
    (r"llama-3\.3-70b", "llama-3.3-70b"), (r"llama-3-70b", "llama-3-70b"),
    (r"llama-3\.1-8b", "llama-3.1-8b"), (r"llama-2-70b", "llama-2-70b"),
    (r"mixtral-8x7b", "mixtral-8x7b"), (r"qwen3-235b", "qwen3-235b-a22b"),
    (r"qwen3-30b-a3b", "qwen3-30b-a3b"), (r"deepseek-v3", "deepseek-v3"),
    (r"deepseek-r1", "deepseek-r1"), (r"gpt-oss-120b", "gpt-oss-120b"),
)
# MLPerf Inference datasets' mean lengths (input, output), as a user would look them up:
# llama2-70b (OpenOrca subset) and llama3.1-405b (the long-context mix).
# deepseek-r1 and gpt-oss-120b: the output means are the submissions' logs (the case text
# states them); their input means are not in the files read, so ~800 (the reasoning prompts)
# and ~1,500 (the performance set's summarisation prompts) are assumed.
MLPERF_LENGTHS = {"llama-2-70b": (294, 294), "llama-3.1-405b": (9400, 650),
                  "deepseek-r1": (800, 3756), "gpt-oss-120b": (1500, 1308)}
PRECISIONS = {"fp8": "fp8", "fp8_e4m3": "fp8", "fp16": "fp16", "bf16": "bf16", "nvfp4": "nvfp4",
              "fp4": "nvfp4", "mxfp8": "fp8"}


def _match(table: tuple[tuple[str, str], ...], text: str) -> str | None:
    low = text.lower()
    return next((v for k, v in table if re.search(k, low)), None)


def _precision(text: str | None) -> str | None:
    if not text:
        return None
    low = text.lower()
    low = low.replace("float8", "fp8")
    for key in ("nvfp4", "fp4", "fp8", "fp16", "bf16"):
        if key in low:
            return PRECISIONS[key]
    return None


NO_TP = False  # --no-tp: pose every case without its stated TP (a user who does not say)


def pose(case: dict[str, Any]) -> tuple[list[str] | None, str]:
    """The compare command line for a case, or None with why it is not posed."""
    cat = case.get("category", "")
    if cat == "kernel_microbench":
        return None, "kernel microbenchmark (a calibration input)"
    model = _match(MODELS, case.get("model", ""))
    if model is None:
        return None, "not a decoder-only LLM preset"
    cur, tgt = _match(GPUS, case["from_gpu"]), _match(GPUS, case["to_gpu"])
    if cur is None or tgt is None:
        return None, f"GPU not mapped: {case['from_gpu']} / {case['to_gpu']}"
    n_from, n_to = case.get("n_gpus_from") or 1, case.get("n_gpus_to") or 1
    args = ["--current", f"{cur}@{n_from}", "--target", f"{tgt}@{n_to}", "--model", model]
    text = case.get("model", "") + " " + case.get("parallelism", "")
    serving = cat.startswith("inference")
    p_from = _precision(case.get("precision_from") or case.get("precision"))
    p_to = _precision(case.get("precision_to") or case.get("precision"))
    if serving:
        m = re.search(r"ISL/OSL (\d+)/(\d+)", text)
        if m:
            isl, osl = int(m[1]), int(m[2])
        elif model in MLPERF_LENGTHS:
            isl, osl = MLPERF_LENGTHS[model]
            logged = re.search(r"mean OSL (\d+)", text)
            osl = int(logged[1]) if logged else osl
        else:
            return None, "no ISL/OSL"
        args += ["--mode", "serve", "--isl", str(isl), "--osl", str(osl)]
        if "tensorrt" in case.get("software", "").lower():  # the engine the source ran
            args += ["--framework", "trtllm"]
        tp = re.search(r"\bTP ?(\d+)", case.get("parallelism", ""))
        if tp and not NO_TP:  # the source's TP ran on both sides
            args += ["--tp", tp[1], "--target-layout", f"{tgt}=tp={tp[1]}"]
        if "concurrency 16" in text:
            return None, "a latency case at fixed concurrency"
        for flag, name in (("--ttft-ms", "TTFT"), ("--tpot-ms", "TPOT")):
            limit = re.search(name + r" ?<= ?([\d.]+) ?(ms|s)\b", text)
            if limit:  # an MLPerf Server/Interactive scenario's latency limits, as stated
                ms = float(limit[1]) * (1000 if limit[2] == "s" else 1)
                args += [flag, f"{ms:g}"]
    else:
        seq = case.get("seq_len")
        if not seq:
            return None, "no sequence length"
        args += ["--seq-len", str(seq)]
        if "lora" in text.lower():
            args += ["--mode", "lora"]
        if case.get("global_batch"):
            args += ["--global-batch", str(case["global_batch"])]
    cap = re.search(r"(\d+) ?W power limit", case["from_gpu"])
    if cap:
        args += ["--power-limit", f"{cur}={cap[1]}"]
    if p_from and p_from == p_to:
        args += ["--precision", p_from]
    elif p_from or p_to:
        if p_from:
            args += ["--current-precision", p_from]
        if p_to:
            args += ["--target-precision", p_to]
    return args, ""


def run(args: list[str]) -> dict[str, Any] | str:
    from advisor.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["compare", *args, "--json"])
        except SystemExit as exc:  # a usage error
            code = int(exc.code or 2)
    if code != 0:
        return (err.getvalue().strip() or f"exit {code}").splitlines()[-1]
    data: dict[str, Any] = json.loads(out.getvalue())
    return data


def naive(cur: str, tgt: str, precision: str) -> float | None:
    from advisor.core.validation import naive_ratio
    from advisor.io.catalog_store import effective_catalog

    try:
        return naive_ratio(cur, tgt, precision, effective_catalog())
    except Exception:
        return None


def _gw(rows: list[tuple[str, float]]) -> float:
    groups: dict[str, list[float]] = {}
    for g, e in rows:
        groups.setdefault(g, []).append(abs(e))
    return statistics.median(statistics.median(v) for v in groups.values()) if groups else math.nan


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--only", choices=["inference", "training"])
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--no-tp", action="store_true",
                    help="leave the stated TP out, as a user who does not know it would")
    a = ap.parse_args(argv)
    global NO_TP
    NO_TP = a.no_tp
    cases = tomllib.loads(a.cases.read_text())["case"]
    scored: dict[str, list[tuple[str, float, float | None, bool | None]]] = {}
    for case in cases:
        kind = "inference" if case.get("category", "").startswith("inference") else "training"
        if a.only and kind != a.only:
            continue
        args, why = pose(case)
        if args is None:
            if a.verbose:
                print(f"skip  {case['id']}: {why}")
            continue
        got = run(args)
        measured = float(case["measured_speedup"])
        cur, tgt = args[1].split("@")[0], args[3].split("@")[0]
        prec = _precision(case.get("precision_to") or case.get("precision")) or "bf16"
        nv = naive(cur, tgt, prec)
        if isinstance(got, str):
            print(f"FAIL  {case['id']}: {got}\n      advisor compare {' '.join(args)}")
            scored.setdefault(kind, []).append((case.get("group") or case["id"], math.inf,
                                                None, None))
            continue
        t = got["targets"][0]
        s = t["speedup"]
        if s is None:
            print(f"NONE  {case['id']}: {t.get('headline')}\n"
                  f"      advisor compare {' '.join(args)}")
            scored.setdefault(kind, []).append((case.get("group") or case["id"], math.inf,
                                                None, None))
            continue
        err = s / measured - 1
        nerr = nv / measured - 1 if nv else None
        inside = t["speedup_low"] <= measured <= t["speedup_high"] \
            if t.get("speedup_low") and t.get("speedup_high") else None
        scored.setdefault(kind, []).append((case.get("group") or case["id"], err, nerr, inside))
        mark = "ok  " if abs(err) <= 0.1 else "MISS"
        tps = [(x.get("layout") or {}).get("tp") for x in (t, got["current"])]
        lay = f"{tps[0]}/{tps[1]}"
        print(f"{mark}  {case['id'][:62]:62s} {s:6.3f} vs {measured:6.3f} {err:+6.1%}"
              f"  naive {nerr:+6.1%}" if nerr is not None else
              f"{mark}  {case['id'][:62]:62s} {s:6.3f} vs {measured:6.3f} {err:+6.1%}",
              f" tp t/c {lay}" if a.verbose else "")
        if a.verbose:
            print(f"      advisor compare {' '.join(args)}")
    for kind, rows in scored.items():
        errs = [e for _, e, _, _ in rows]
        nerrs = [(g, n) for g, _, n, _ in rows if n is not None]
        cover = [c for *_, c in rows if c is not None]
        print(f"{kind}: {len(rows)} cases, median |err| "
              f"{statistics.median(abs(e) for e in errs):.1%}, group-weighted "
              f"{_gw([(g, e) for g, e, _, _ in rows]):.1%}; naive median "
              f"{statistics.median(abs(n) for _, n in nerrs):.1%}, group-weighted "
              f"{_gw(nerrs):.1%}; band holds {sum(cover)}/{len(cover)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
