"""Which FairLOF variant a fit ran, and where it stands: its ED change against the same correction
recomputed from permuted sensitive labels (the null) and against the quota re-ranking."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...metrics import euclidean_disparity, jaccard
from .report import _percent, relative_change

if TYPE_CHECKING:
    from ...fairlof import FairLOF

VARIANTS = {
    "paper": "paper = the paper's eqs 6-14 as printed (the default)",
    "per_value": "per_value = fairops' own variant, not the paper's method",
}


def frontier_lines(detector: FairLOF, sensitive, n_permutations: int = 5) -> list[str]:
    """Two lines for the command's output: the variant, then its place against the null and the quota."""
    from ...fairlof import permuted_label_paths, quota_outliers

    lam = float(detector.fitted_lambda_)
    plain_top = detector.plain_outliers_
    ed = relative_change(euclidean_disparity(sensitive, detector.outliers_),
                         euclidean_disparity(sensitive, plain_top))
    changes = [relative_change(path["euclidean_disparity"][1], path["euclidean_disparity"][0])
               for path in permuted_label_paths(detector, n_permutations, random_state=0, lambdas=[0.0, lam])]
    nulls = np.array([value for value in changes if np.isfinite(value)])
    joint = sensitive.astype(str).agg("|".join, axis=1)
    quota = quota_outliers(detector.lof_scores_, joint, detector.top_t_)
    quota_ed = relative_change(euclidean_disparity(sensitive, quota), euclidean_disparity(sensitive, plain_top))
    lines = [f"variant: {VARIANTS[detector.correction]}"]
    if len(nulls) < 2 or not np.isfinite(ed):
        return lines
    mean, sd = float(nulls.mean()), float(nulls.std(ddof=1))
    verdict = "within" if abs(ed - mean) <= 2 * sd else "beyond"
    lines.append(f"frontier: ED {_percent(ed)} vs LOF at Jaccard {jaccard(detector.outliers_, plain_top):.3f}; "
                 f"the same correction from permuted sensitive labels at lambda {lam:.2f}: {_percent(mean)} "
                 f"+/- {100 * sd:.1f} points ({len(nulls)} permutations), so {verdict} the null's 2-sd band; "
                 f"quota on the joint groups: ED {_percent(quota_ed)} at Jaccard {jaccard(quota, plain_top):.3f}")
    return lines
