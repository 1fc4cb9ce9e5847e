"""A confidence interval for a fairness ratio from the group counts behind it.

A fairness ratio is ``min_g p_g / max_g p_g`` over group rates ``p_g = k_g / n_g`` (true positives over
positives for TPR, false positives over negatives for FPR, predicted positives over rows for the
positive rate). Each group gets an exact Clopper-Pearson interval at level ``1 - (1 - level) / G``
(Bonferroni over the ``G`` groups), so all ``G`` rates lie inside their intervals together with
probability at least ``level``; whenever they do, the ratio lies inside
``[min_g L_g / max_g U_g, min(1, min_g U_g / max_g L_g)]``. The interval is therefore valid at ``level``
for any number of groups, including the choice of which group is lowest, and conservative (wider than
needed) because it protects both sides of every group at once.

Groups where the rate does not exist (no positives for TPR) are left out; with fewer than two groups
left the interval is ``(nan, nan)``: there is nothing to compare.

>>> from fairops.metrics import group_rates
>>> rates = group_rates([1] * 8 + [0] * 2 + [1] * 8 + [0] * 2, [1] * 6 + [0] * 4 + [1] * 3 + [0] * 7,
...                     ["f"] * 10 + ["m"] * 10)
>>> lower, upper = ratio_interval(rates, "tpr")
>>> 0.0 < lower < 0.5 < upper <= 1.0
True
"""

from __future__ import annotations

import numpy as np

from .classification import RATES, GroupRates


def rate_counts(rates: GroupRates, rate: str) -> tuple[np.ndarray, np.ndarray]:
    """``(successes, trials)`` per group behind ``rate`` (``"tpr"``, ``"fpr"`` or ``"ppr"``).

    >>> from fairops.metrics import group_rates
    >>> k, n = rate_counts(group_rates([1, 1, 0, 1], [1, 0, 1, 1], ["a", "a", "b", "b"]), "tpr")
    >>> k.tolist(), n.tolist()
    ([1, 1], [2, 1])
    """
    if rate not in RATES:
        raise ValueError(f"rate must be one of {RATES}, got {rate!r}")
    if rate == "tpr":
        return np.asarray(rates.true_positives), np.asarray(rates.positives)
    if rate == "fpr":
        return np.asarray(rates.false_positives), np.asarray(rates.negatives)
    return np.asarray(rates.predicted_positive), np.asarray(rates.count)


def clopper_pearson(successes, trials, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact two-sided binomial intervals (arrays in, arrays out); ``trials`` must be positive.

    >>> lower, upper = clopper_pearson([0, 5], [10, 10], 0.95)
    >>> round(float(lower[0]), 4), round(float(upper[0]), 4), round(float(lower[1]), 4)
    (0.0, 0.3085, 0.1871)
    """
    from scipy.stats import beta

    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    tail = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore"):
        lower = np.where(k > 0, beta.ppf(tail, k, n - k + 1), 0.0)
        upper = np.where(k < n, beta.ppf(1.0 - tail, k + 1, n - k), 1.0)
    return lower, upper


def interval_from_counts(successes, trials, *, level: float = 0.95) -> tuple[float, float]:
    """The ratio's interval from per-group counts (see the module docstring).

    >>> interval_from_counts([50, 50], [100, 100], level=0.95)[1]
    1.0
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    k = np.asarray(successes, dtype=np.int64)
    n = np.asarray(trials, dtype=np.int64)
    defined = n > 0
    k, n = k[defined], n[defined]
    if len(n) < 2:
        return float("nan"), float("nan")
    lower, upper = clopper_pearson(k, n, 1.0 - (1.0 - level) / len(n))
    top_upper, top_lower = upper.max(), lower.max()
    low = float(lower.min() / top_upper) if top_upper > 0 else 0.0
    high = float(min(1.0, upper.min() / top_lower)) if top_lower > 0 else 1.0
    return low, high


def ratio_interval(rates: GroupRates, rate: str = "tpr", *, level: float = 0.95) -> tuple[float, float]:
    """``(lower, upper)`` for the fairness ratio of :func:`~fairops.metrics.group_rates` at ``level``."""
    if not isinstance(rates, GroupRates):
        raise TypeError(f"rates must be the GroupRates of one (or the intersection of) sensitive columns, "
                        f"got {type(rates).__name__}")
    return interval_from_counts(*rate_counts(rates, rate), level=level)
