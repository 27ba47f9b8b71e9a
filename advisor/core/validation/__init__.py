"""Published cases: what the model predicts against what was measured, with the error stated.

Each case file (advisor/published_cases/*.toml with [[case]] entries) cites its source.
A case is *in-sample* when a calibration constant was fitted to it (its `group` is in a
constant's `fitted_to`), *input* when it only checks that a catalog figure or a formula
is passed through, and *held-out* otherwise. Only held-out cases back the accuracy
claim: end-to-end system benchmarks (MLPerf, vendor and framework performance tables)
are always held out, never fitted. Speedup cases run through `decide()`, the same path
`advisor compare` takes, and the naive predictor beside ours is the geometric mean of
the peak-FLOPS and HBM-bandwidth ratios. `refit()` solves the fitted constants again from
the cases, so the shipped values can be checked, not trusted.
"""

from advisor.core.validation.anchored import (
    AnchoredGroup,
    AnchoredRow,
    anchored_groups,
    validate_anchored,
)
from advisor.core.validation.cases import Accuracy, CaseResult, CaseSpec, Summary
from advisor.core.validation.predict import naive_ratio, predict
from advisor.core.validation.refit import RefitRow, refit
from advisor.core.validation.score import evaluate, fitted_groups, validate

__all__ = ["Accuracy", "AnchoredGroup", "AnchoredRow", "CaseResult", "CaseSpec", "RefitRow",
           "Summary", "anchored_groups", "evaluate", "fitted_groups", "naive_ratio", "predict",
           "refit", "validate", "validate_anchored"]
