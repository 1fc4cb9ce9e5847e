"""One FairLOF fit and its comparison with plain LOF: the paper's metrics and the printed table."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ...errors import InputError
from ...metrics import euclidean_disparity, jaccard, outlier_fraction, preservation, wasserstein_disparity

if TYPE_CHECKING:
    from ...fairlof import FairLOF
    from .data import OutlierData

METRICS = ("jaccard", "preservation", "outlier_fraction", "euclidean_disparity", "wasserstein_disparity")
SHORT = {"jaccard": "Jacc", "preservation": "Pres", "outlier_fraction": "OF",
         "euclidean_disparity": "ED", "wasserstein_disparity": "Wass"}


def fit_detector(data: OutlierData, *, n_neighbors=5, correction_strength="auto", target_jaccard=0.9,
                 weight_exponent=1.0, share_exponent=1.0, correction="paper", top_t=None, rows=None) -> FairLOF:
    """A ``FairLOF(novelty=True)`` fitted on ``data`` (or its ``rows``).

    k is capped at rows - 1 as scikit-learn's LocalOutlierFactor does.

    Parameters
    ----------
    data : OutlierData
        The rows.
    n_neighbors, correction_strength, target_jaccard, weight_exponent, share_exponent, correction, top_t : optional
        :class:`~fairops.fairlof.FairLOF`'s (defaults 5, "auto", 0.9, 1.0, 1.0, "paper", None).
    rows : array-like of int or None, default=None
        Fit on these rows only.

    Returns
    -------
    FairLOF
        The fitted detector.
    """
    from ...fairlof import FairLOF  # imported on use: ``fairops --help`` stays quick

    features, sensitive = data.features, data.sensitive
    if rows is not None:
        features, sensitive = features.iloc[rows], sensitive.iloc[rows]
    n_rows = len(features)
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, (int, np.integer)) or n_neighbors < 1:
        raise InputError(f"--neighbors must be a positive integer, got {n_neighbors!r}")
    if top_t is not None and (isinstance(top_t, bool) or not isinstance(top_t, (int, np.integer)) or top_t < 1):
        raise InputError(f"--top-t must be a positive integer, got {top_t!r}")
    if top_t is not None and top_t > n_rows:
        raise InputError(f"--top-t={top_t} is larger than the number of rows ({n_rows})")
    detector = FairLOF(n_neighbors=int(min(n_neighbors, n_rows - 1)), correction_strength=correction_strength,
                       weight_exponent=weight_exponent, share_exponent=share_exponent, correction=correction,
                       top_t=top_t, target_jaccard=target_jaccard, novelty=True)
    return detector.fit(features.to_numpy(dtype=np.float64), sensitive_features=sensitive)


def outlier_metrics(lof_scores, top, plain_top, sensitive) -> dict:
    """Jacc, Pres, OF, ED and Wass of the outlier list ``top`` against plain LOF's ``plain_top``.

    Parameters
    ----------
    lof_scores : array-like of shape (n_samples,)
        Plain LOF scores.
    top, plain_top : array-like of int
        The outlier list and plain LOF's.
    sensitive : DataFrame
        The rows' sensitive columns.

    Returns
    -------
    dict of str to float
        Keyed by ``METRICS``.
    """
    return {
        "jaccard": jaccard(top, plain_top),
        "preservation": preservation(lof_scores, top, plain_top),
        "outlier_fraction": outlier_fraction(lof_scores, top),
        "euclidean_disparity": euclidean_disparity(sensitive, top),
        "wasserstein_disparity": wasserstein_disparity(sensitive, top),
    }


def relative_change(value: float, anchor: float) -> float:
    """(value - anchor) / anchor; 0 when both are 0, NaN when only the anchor is 0.

    Parameters
    ----------
    value, anchor : float
        The new value and the one it is compared with.

    Returns
    -------
    float
        The relative change.

    Examples
    --------
    >>> relative_change(0.1, 0.2), relative_change(0.0, 0.0)
    (-0.5, 0.0)
    """
    if anchor == 0:
        return 0.0 if value == 0 else math.nan
    return (value - anchor) / anchor


def compare(detector: FairLOF, sensitive) -> dict:
    """LOF and FairLOF rows of the paper's metrics plus the relative ED / Wass change.

    Parameters
    ----------
    detector : FairLOF
        A fitted detector.
    sensitive : DataFrame
        Its rows' sensitive columns.

    Returns
    -------
    dict
        ``{"LOF": ..., "FairLOF": ..., "change": ...}``.
    """
    lof = outlier_metrics(detector.lof_scores_, detector.plain_outliers_, detector.plain_outliers_, sensitive)
    fair = outlier_metrics(detector.lof_scores_, detector.outliers_, detector.plain_outliers_, sensitive)
    change = {name: relative_change(fair[name], lof[name]) for name in ("euclidean_disparity", "wasserstein_disparity")}
    return {"LOF": lof, "FairLOF": fair, "change": change}


def format_table(result: dict, lambdas: dict) -> str:
    """The LOF vs FairLOF table as printed by the command.

    Parameters
    ----------
    result : dict
        What :func:`compare` returned.
    lambdas : dict
        The lambda of ``"LOF"`` and ``"FairLOF"``.

    Returns
    -------
    str
        The table.
    """
    header = f"{'':<10}{'lambda':>7}{'Jacc':>8}{'Pres':>8}{'OF':>7}{'ED':>9}{'ED chg':>9}{'Wass':>9}{'Wass chg':>10}"
    lines = [header]
    for label in ("LOF", "FairLOF"):
        row = result[label]
        if label == "LOF":
            ed_change = wass_change = "-"
        else:
            ed_change, wass_change = (_percent(result["change"][name])
                                      for name in ("euclidean_disparity", "wasserstein_disparity"))
        lines.append(f"{label:<10}{lambdas[label]:>7.2f}{row['jaccard']:>8.3f}{row['preservation']:>8.4f}"
                     f"{row['outlier_fraction']:>7.3f}{row['euclidean_disparity']:>9.4f}{ed_change:>9}"
                     f"{row['wasserstein_disparity']:>9.4f}{wass_change:>10}")
    return "\n".join(lines)


#: One line per column of the table: what it measures and which way is better.
LEGEND = (
    "Jacc: of the rows either FairLOF or LOF puts in its top-t outliers, the share both do (1 = the same list)",
    "Pres: LOF score of FairLOF's top-t / of LOF's own top-t (1 = as outlying as LOF's list; higher is better)",
    "OF: share of FairLOF's top-t with LOF score >= 1, i.e. less dense than their neighbours (higher is better)",
    "ED, Wass: distance between the groups' shares among the outliers and in the data, Euclidean and "
    "Wasserstein, summed over the sensitive columns (0 = every group flagged in proportion; lower is fairer)",
    "ED chg, Wass chg: FairLOF's against LOF's; negative = fairer than LOF, positive = less fair",
)


def verdict(result: dict) -> str:
    """One line: whether FairLOF's outliers are fairer than LOF's, and what it cost in agreement with LOF.

    >>> row = {"jaccard": 0.9, "preservation": 0.97, "euclidean_disparity": 0.1, "wasserstein_disparity": 0.02}
    >>> verdict({"FairLOF": row, "change": {"euclidean_disparity": -0.25, "wasserstein_disparity": -0.1}})
    'FairLOF is fairer than LOF (ED -25.0%, Wass -10.0%), at Jaccard 0.900 with its outliers and 97% of their LOF score'
    """
    changes = [result["change"][name] for name in ("euclidean_disparity", "wasserstein_disparity")]
    if any(math.isnan(change) for change in changes):
        judged = "LOF's outliers already hold every group in proportion (ED and Wass 0): nothing to improve"
    elif all(change < 0 for change in changes):
        judged = "FairLOF is fairer than LOF"
    elif all(change > 0 for change in changes):
        judged = "FairLOF is less fair than LOF"
    elif all(change == 0 for change in changes):
        judged = "FairLOF is as fair as LOF"
    else:
        judged = "FairLOF is fairer than LOF by one distance and less fair by the other"
    fair = result["FairLOF"]
    shown = "" if judged.endswith("improve") else f" (ED {_percent(changes[0])}, Wass {_percent(changes[1])})"
    return (f"{judged}{shown}, at Jaccard {fair['jaccard']:.3f} with its outliers and "
            f"{100 * fair['preservation']:.0f}% of their LOF score")


def explained(result: dict) -> str:
    """The verdict and the legend of the table, as printed under it."""
    return f"{verdict(result)}\n{legend_text()}"


def legend_text() -> str:
    """The table's legend, one indented line per column."""
    return "\n".join(f"  {line}" for line in LEGEND)


def _percent(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{100 * value:+.1f}%"
