"""`advisor validate`: every shipped published case, predicted against measured.

It leads with the held-out figures (training and inference apart), scores the
naive predictor, the geometric mean of the peak-FLOPS and HBM ratios, beside
ours, and says how often the 90% band holds the measurement. The table marks
which cases calibration was fitted to (in-sample). `--refit` solves the fitted
constants again from the case files. It exits 1 when any case is outside its tolerance.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from advisor.cli import COMMANDS
from advisor.cli.output import add_output_options, chosen, show
from advisor.cli.schemas import ANCHORED_VALIDATION, VALIDATION
from advisor.present.blocks import Block, Bullets, Col, Heading, Para, Table
from advisor.present.humanize import NA, number

if TYPE_CHECKING:
    from advisor.core import Accuracy, CaseResult, CaseSpec, Catalog, Summary


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "validate", help=COMMANDS["validate"],
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
    add_output_options(p)
    p.set_defaults(handler=cmd_validate)


UNITS = {"speedup": "x", "matmul-ratio": "x", "attention-ratio": "x", "tflops": "TFLOPS",
         "memory": "GiB", "usable-gib": "GiB", "max-seq": "tokens", "busbw": "GB/s",
         "value-per-dollar": "x", "cheaper-by": "share", "kv-bytes": "bytes/token",
         "kv-cache": "GB", "weights-gb": "GB", "report": "as in the report"}
"""What each kind of case measures, for the unit column (categories have none)."""
ORDER = {"held-out": 0, "in-sample": 1, "input": 2}
EXIT_OUTSIDE_TOLERANCE = 1


def _value(value: float | str | bool) -> str:
    if isinstance(value, bool):
        return "fits" if value else "does not fit"
    if isinstance(value, str):
        return value
    return number(value) if abs(value) >= 1000 else f"{value:.3g}"


def _pct(value: float | None) -> str:
    return f"{value * 100:+.1f}%" if value is not None else NA


def _accuracy_row(label: str, a: Accuracy) -> list[str]:
    return [label, str(a.cases), f"{a.median:.1%}", f"{a.group_weighted:.1%}",
            f"{a.naive_median:.1%}", f"{a.naive_group_weighted:.1%}",
            f"{a.coverage:.0%}" if a.coverage is not None else NA]


def _accuracy(summary: Summary) -> Table:
    return Table(
        [Col("held-out speedups"), Col("cases", numeric=True),
         Col("ours", "median |error|", numeric=True),
         Col("ours", "group-weighted", numeric=True, drop=2),
         Col("naive", "median |error|", numeric=True),
         Col("naive", "group-weighted", numeric=True, drop=3),
         Col("90% band", "holds", numeric=True, drop=1)],
        [_accuracy_row("all", summary.held_out),
         _accuracy_row("training", summary.held_out_training),
         _accuracy_row("serving", summary.held_out_inference),
         _accuracy_row("dtype switch", summary.held_out_switch),
         _accuracy_row("unseen", summary.held_out_unseen),
         _accuracy_row("in-sample (fitted)", summary.in_sample)],
        title="Speedups: published cross-GPU measurements, ours beside the naive "
              "sqrt(peak FLOPS ratio x HBM ratio)",
        notes=["dtype switch: the two GPUs run different formats (FP8 against NVFP4); unseen: "
               "cases added after the band's sigma was chosen; in-sample: the seed guide's "
               "cases calibration was fitted to, shown apart"])


def _case_tables(results: list[CaseResult]) -> list[Block]:
    results = sorted(results, key=lambda r: (ORDER[r.basis], r.kind, r.id))
    speed = [r for r in results if r.kind == "speedup"]
    numeric = [r for r in results if r.kind != "speedup" and isinstance(r.measured, float)
               and not isinstance(r.measured, bool)]
    named = [r for r in results if r not in speed and r not in numeric]
    ok = {True: "ok", False: "MISS"}
    out: list[Block] = [Table(
        [Col("case", whole=False), Col("basis", drop=3),
         Col("predicted", "x", numeric=True), Col("90% band", "x", numeric=True, drop=2),
         Col("measured", "x", numeric=True), Col("error", numeric=True),
         Col("naive", "error", numeric=True, drop=1), Col("tolerance", numeric=True, drop=4),
         Col("within")],
        [[r.id, r.basis, _value(r.predicted),
          f"{r.low:.2f}-{r.high:.2f}" if r.low is not None and r.high is not None else NA,
          _value(r.measured), _pct(r.error), _pct(r.naive_error), f"{r.tolerance:.0%}",
          ok[r.passed]] for r in speed],
        title=f"Speedup cases ({len(speed)})")]
    out.append(Table(
        [Col("case", whole=False), Col("basis", drop=3), Col("kind", drop=2), Col("unit"),
         Col("predicted", numeric=True), Col("measured", numeric=True),
         Col("error", numeric=True), Col("naive", "error", numeric=True, drop=1),
         Col("tolerance", numeric=True, drop=4), Col("within")],
        [[r.id, r.basis, r.kind, UNITS.get(r.kind, ""), _value(r.predicted),
          _value(r.measured), _pct(r.error), _pct(r.naive_error), f"{r.tolerance:.0%}",
          ok[r.passed]] for r in numeric],
        title=f"Other figures: memory, rates, bandwidth, costs ({len(numeric)})"))
    if named:
        out.append(Table(
            [Col("case", whole=False), Col("basis", drop=1), Col("kind"), Col("predicted"),
             Col("measured"), Col("within")],
            [[r.id, r.basis, r.kind, _value(r.predicted), _value(r.measured), ok[r.passed]]
             for r in named],
            title=f"Categories: verdicts, fits, binding resource ({len(named)})"))
    return out


def _blocks(summary: Summary, refits: list[Any], skipped: list[tuple[str, str]]) -> list[Block]:
    results = summary.results
    held = [r for r in results if r.basis == "held-out"]
    fitted = sum(r.basis == "in-sample" for r in results)
    missed = [r for r in results if not r.passed]
    out: list[Block] = [Heading("Validation against published measurements")]
    out.append(Para(
        f"{len(missed)} of {len(results)} cases outside their tolerance "
        f"({sum(not r.passed for r in held)} of them held out)" if missed
        else f"every one of the {len(results)} cases within its tolerance",
        lead="Result:"))
    out.append(_accuracy(summary))
    out.append(Para(
        f"every held-out numeric case ({len(held)}, memory, bandwidth and rates as well as "
        f"speedups): {summary.median_abs_error_held_out:.1%} median |error|; the band's model "
        f"sigma that would hold 90% of held-out speedups: {summary.suggested_model_sigma:.0%}"))
    out += _case_tables(results)
    counts = (f"{len(results)} cases: {len(held)} held out, {fitted} in-sample (calibration was "
              f"fitted to them), {len(results) - len(held) - fitted} pass-through (catalog "
              "figures or a write-up's arithmetic, left out of the accuracy figures)")
    out.append(Para(counts))
    if skipped:
        reasons = Counter(reason for _, reason in skipped)
        out.append(Bullets([f"{n} {reason}" for reason, n in reasons.most_common()],
                           title=f"{len(skipped)} published cases not scored at all"))
    if refits:
        out.append(Table(
            [Col("constant"), Col("shipped", numeric=True), Col("refit", numeric=True),
             Col("drift", numeric=True), Col("fitted to", drop=1)],
            [[r.name, f"{r.shipped:.5g}", f"{r.refit:.5g}", f"{r.drift:+.2%}", r.fitted_to]
             for r in refits],
            title="Refit from the cases (shipped constant vs solved again)"))
    if missed:
        out.append(Bullets([f"{r.id} ({r.basis}): {_pct(r.error)} against "
                            f"{r.tolerance:.0%}" for r in missed],
                           title="Outside tolerance"))
    return out


def cmd_validate(args: argparse.Namespace) -> int:
    """Exit 1 when any case is outside its tolerance, so a script or CI notices."""
    from advisor.core import refit, validate
    from advisor.io.cases import CASES_DIR, left_out, load_cases
    from advisor.io.catalog_store import load_catalog

    chosen(args)
    catalog = load_catalog()  # the shipped figures the cases were written against
    cases = load_cases(args.cases or CASES_DIR)
    if args.anchored:
        return _anchored(args, catalog, cases)
    summary = validate(catalog, cases)
    refits = refit(catalog, cases) if args.refit else []
    skipped = left_out(args.cases or CASES_DIR)

    def data() -> dict[str, Any]:
        out = summary.model_dump(mode="json")
        out["refit"] = [r.model_dump() | {"drift": r.drift} for r in refits]
        return out

    missed = [r for r in summary.results if not r.passed]
    show(args, lambda: _blocks(summary, refits, skipped), "advisor validate", data,
         lambda: [f"{len(missed)} of {len(summary.results)} cases outside tolerance"
                  + (": " + ", ".join(r.id for r in missed) if missed else "")],
         schema=VALIDATION)
    return EXIT_OUTSIDE_TOLERANCE if missed else 0


def _anchored(args: argparse.Namespace, catalog: Catalog, cases: list[CaseSpec]) -> int:
    """The transfer check: the target's absolute figure with and without the anchor."""
    from advisor.core import anchored_groups, validate_anchored

    rows = validate_anchored(catalog, cases)
    groups = anchored_groups(rows)

    def err(a: float | None, b: float) -> str:
        return _pct(a / b - 1) if a is not None else "refused"

    def blocks() -> list[Block]:
        return [
            Heading("Anchored validation: what carries from the current GPU to the target"),
            Para("Each case's current GPU is anchored on its published figure; the target's "
                 "absolute figure (per GPU) is compared with its published one, with and "
                 "without the anchor, and so is the speedup. Anchoring must not make the "
                 "speedup worse."),
            Table([Col("case", whole=False), Col("unit", drop=4),
                   Col("published", numeric=True), Col("model", numeric=True, drop=3),
                   Col("error", numeric=True), Col("anchored", numeric=True, drop=2),
                   Col("error", numeric=True), Col("speedup", "error", numeric=True, drop=1),
                   Col("anchored", "error", numeric=True)],
                  [[r.id, r.unit, _value(r.measured_to), _value(r.modelled_to or 0),
                    err(r.modelled_to, r.measured_to), _value(r.anchored_to or 0),
                    err(r.anchored_to, r.measured_to), _pct(r.ratio_error),
                    _pct(r.anchored_ratio_error)] for r in rows],
                  title=f"Cases that publish both figures ({len(rows)})"),
            Table([Col("group"), Col("cases", numeric=True),
                   Col("target", "|err| model", numeric=True),
                   Col("target", "|err| anchored", numeric=True),
                   Col("speedup", "|err| model", numeric=True),
                   Col("speedup", "|err| anchored", numeric=True)],
                  [[g.group, str(g.cases), f"{g.absolute:.1%}", f"{g.anchored:.1%}",
                    f"{g.ratio:.1%}", f"{g.anchored_ratio:.1%}"] for g in groups],
                  title="By source group (median |error|)")]

    show(args, blocks, "advisor validate --anchored",
         lambda: {"cases": [r.model_dump() for r in rows],
                  "groups": [g.model_dump() for g in groups]},
         lambda: [f"{g.group}: target {g.absolute:.1%} -> {g.anchored:.1%}, speedup "
                  f"{g.ratio:.1%} -> {g.anchored_ratio:.1%}" for g in groups],
         schema=ANCHORED_VALIDATION)
    return 0
