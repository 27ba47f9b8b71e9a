"""`advisor validate`: every shipped published case, predicted against measured.

The table marks which cases calibration was fitted to (in-sample) and which
are held out, and scores the naive peak-FLOPS-ratio predictor beside ours, so
the accuracy claim can be read off rather than taken on trust. `--refit`
solves the fitted constants again from the case files.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from advisor.textfmt import render_table


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "validate", help="check the model against published measurements, with its error",
        description="Predicted vs measured for every published case, the median |error|, and "
                    "the naive peak-ratio predictor's error beside ours.",
    )
    p.add_argument("--cases", type=Path,
                   help="folder of case TOML files (default: the shipped cases)")
    p.add_argument("--refit", action="store_true",
                   help="also solve the fitted constants again from the cases")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=cmd_validate)


def _num(value: float | str | bool) -> str:
    if isinstance(value, bool | str):
        return str(value)
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _pct(value: float | None) -> str:
    return f"{value * 100:+.1f}%" if value is not None else ""


def cmd_validate(args: argparse.Namespace) -> int:
    from advisor.core.validation import refit, validate
    from advisor.io.cases import CASES_DIR, load_cases
    from advisor.io.catalog_store import load_catalog

    catalog = load_catalog()  # the shipped figures the cases were written against
    cases = load_cases(args.cases or CASES_DIR)
    summary = validate(catalog, cases)
    rows = refit(catalog, cases) if args.refit else []
    if args.json:
        out = summary.model_dump(mode="json")
        out["refit"] = [r.model_dump() | {"drift": r.drift} for r in rows]
        print(json.dumps(out, indent=2))
        return 0 if all(r.passed for r in summary.results) else 1
    table = render_table(
        ["case", "basis", "predicted", "measured", "error", "naive", "naive err", "tol", "ok"],
        [[r.id, r.basis, _num(r.predicted), _num(r.measured), _pct(r.error),
          _num(r.naive) if r.naive is not None else "", _pct(r.naive_error),
          f"{r.tolerance:.0%}" if r.error is not None else "", "ok" if r.passed else "FAIL"]
         for r in summary.results])
    held = sum(r.basis == "held-out" for r in summary.results)
    fitted = sum(r.basis == "in-sample" for r in summary.results)
    failed = [r.id for r in summary.results if not r.passed]
    lines = [
        table, "",
        f"{len(summary.results)} cases: {held} held out, {fitted} in-sample (calibration was "
        f"fitted to them), {len(summary.results) - held - fitted} catalog pass-through",
        f"median |error|, all numeric cases:  {summary.median_abs_error:.1%}",
        f"median |error|, held-out cases:     {summary.median_abs_error_held_out:.1%}",
        f"speedups, held out: ours {summary.median_abs_error_speedups_held_out:.1%}, naive peak "
        f"ratio {summary.median_abs_naive_error_speedups_held_out:.1%}",
        f"speedups, all:      ours {summary.median_abs_error_speedups:.1%}, naive peak ratio "
        f"{summary.median_abs_naive_error_speedups:.1%}",
    ]
    if rows:
        lines += ["", "Refit from the cases (shipped constant vs solved again):", render_table(
            ["constant", "shipped", "refit", "drift", "fitted to"],
            [[r.name, f"{r.shipped:.5g}", f"{r.refit:.5g}", f"{r.drift:+.2%}", r.fitted_to]
             for r in rows])]
    lines.append("all cases within tolerance" if not failed else f"FAILED: {', '.join(failed)}")
    print("\n".join(lines))
    return 0 if not failed else 1
