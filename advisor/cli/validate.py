"""`advisor validate`: every shipped published case, predicted against measured.

It leads with the held-out figures (training and inference apart), scores the
naive predictor, the geometric mean of the peak-FLOPS and HBM ratios, beside
ours, and says how often the 90% band holds the measurement. The table marks
which cases calibration was fitted to (in-sample). `--refit` solves the fitted
constants again from the case files.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from advisor.textfmt import render_table

if TYPE_CHECKING:
    from advisor.core import Accuracy, CaseSpec, Catalog


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
    p.add_argument("--anchored", action="store_true",
                   help="anchor the current GPU on each case's published figure for it and "
                        "compare the target's absolute figure, with and without anchoring")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=cmd_validate)


def _num(value: float | str | bool) -> str:
    if isinstance(value, bool | str):
        return str(value)
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _pct(value: float | None) -> str:
    return f"{value * 100:+.1f}%" if value is not None else ""


def _accuracy_line(label: str, a: Accuracy) -> str:
    cover = f", 90% band holds {a.coverage:.0%}" if a.coverage is not None else ""
    return (f"  {label:<10} {a.cases:>2} cases: ours {a.median:.1%} median, {a.group_weighted:.1%} "
            f"group-weighted | naive sqrt(FLOPS x HBM) {a.naive_median:.1%}, "
            f"{a.naive_group_weighted:.1%}{cover}")


def cmd_validate(args: argparse.Namespace) -> int:
    from advisor.core import refit, validate
    from advisor.io.cases import CASES_DIR, left_out, load_cases
    from advisor.io.catalog_store import load_catalog

    catalog = load_catalog()  # the shipped figures the cases were written against
    cases = load_cases(args.cases or CASES_DIR)
    if args.anchored:
        return _anchored(catalog, cases, args.json)
    summary = validate(catalog, cases)
    rows = refit(catalog, cases) if args.refit else []
    if args.json:
        out = summary.model_dump(mode="json")
        out["refit"] = [r.model_dump() | {"drift": r.drift} for r in rows]
        print(json.dumps(out, indent=2))
        return 0 if all(r.passed for r in summary.results) else 1
    order = {"held-out": 0, "in-sample": 1, "input": 2}
    results = sorted(summary.results, key=lambda r: (order[r.basis], r.category, r.id))
    table = render_table(
        ["case", "basis", "kind", "predicted", "band", "measured", "error", "naive err", "tol",
         "ok"],
        [[r.id[:48], r.basis, r.category, _num(r.predicted),
          f"{r.low:.2f}-{r.high:.2f}" if r.low is not None and r.high is not None else "",
          _num(r.measured), _pct(r.error), _pct(r.naive_error),
          f"{r.tolerance:.0%}" if r.error is not None else "", "ok" if r.passed else "miss"]
         for r in results])
    held = sum(r.basis == "held-out" for r in summary.results)
    fitted = sum(r.basis == "in-sample" for r in summary.results)
    missed = [r.id for r in summary.results if not r.passed]
    lines = [
        "Held-out speedups (published cross-GPU measurements the engine was never fitted to):",
        _accuracy_line("all", summary.held_out),
        _accuracy_line("training", summary.held_out_training),
        _accuracy_line("serving", summary.held_out_inference),
        _accuracy_line("dtype switch", summary.held_out_switch)
        + "   (the two GPUs run different formats, e.g. FP8 against NVFP4)",
        _accuracy_line("unseen", summary.held_out_unseen)
        + "   (cases added after the band's sigma was chosen)",
        _accuracy_line("in-sample", summary.in_sample) + "   (the seed guide, fitted)",
        f"  every held-out numeric case (memory, bandwidth, rates too): "
        f"{summary.median_abs_error_held_out:.1%} median |error|",
        f"  the band's model sigma that would hold 90% of held-out speedups: "
        f"{summary.suggested_model_sigma:.0%}",
        "", table, "",
        f"{len(summary.results)} cases: {held} held out, {fitted} in-sample (calibration was "
        f"fitted to them), {len(summary.results) - held - fitted} pass-through (catalog figures "
        "or a write-up's arithmetic, left out of the accuracy figures)",
    ]
    skipped = left_out(args.cases or CASES_DIR)
    if skipped:
        reasons = Counter(reason for _, reason in skipped)
        lines += [f"{len(skipped)} published cases not scored at all:"]
        lines += [f"  {n} {reason}" for reason, n in reasons.most_common()]
    if rows:
        lines += ["", "Refit from the cases (shipped constant vs solved again):", render_table(
            ["constant", "shipped", "refit", "drift", "fitted to"],
            [[r.name, f"{r.shipped:.5g}", f"{r.refit:.5g}", f"{r.drift:+.2%}", r.fitted_to]
             for r in rows])]
    lines.append("every case within its tolerance" if not missed
                 else f"outside tolerance ({len(missed)}): {', '.join(missed)}")
    print("\n".join(lines))
    return 0


def _anchored(catalog: Catalog, cases: list[CaseSpec], as_json: bool) -> int:
    """The transfer check: the target's absolute figure with and without the anchor."""
    from advisor.core import anchored_groups, validate_anchored

    rows = validate_anchored(catalog, cases)
    groups = anchored_groups(rows)
    if as_json:
        print(json.dumps({"cases": [r.model_dump() for r in rows],
                          "groups": [g.model_dump() for g in groups]}, indent=2))
        return 0

    def err(a: float | None, b: float) -> str:
        return _pct(a / b - 1) if a is not None else "refused"

    table = render_table(
        ["case", "unit", "published", "model", "error", "anchored", "error", "ratio err",
         "anchored"],
        [[r.id, r.unit, _num(r.measured_to), _num(r.modelled_to or 0), err(r.modelled_to,
          r.measured_to), _num(r.anchored_to or 0), err(r.anchored_to, r.measured_to),
          _pct(r.ratio_error), _pct(r.anchored_ratio_error)] for r in rows])
    summary = render_table(
        ["group", "cases", "target |err| model", "anchored", "ratio |err| model", "anchored"],
        [[g.group, str(g.cases), f"{g.absolute:.1%}", f"{g.anchored:.1%}", f"{g.ratio:.1%}",
          f"{g.anchored_ratio:.1%}"] for g in groups])
    print("Anchored on each case's published figure for the current GPU: the target's "
          "absolute figure (per GPU) and the speedup, the model alone and anchored\n\n"
          + table + "\n\nBy source group (median |error|)\n" + summary)
    return 0
