"""The quota baseline (FairLOF paper, section 6.4): per-group top lists spliced in
the data's proportions, for one sensitive attribute.

>>> import numpy as np
>>> scores = np.array([9.0, 8.0, 7.0, 6.0, 1.0, 2.0, 3.0, 0.5])
>>> quota_outliers(scores, ["a", "a", "a", "a", "b", "b", "b", "b"], 4).tolist()
[0, 1, 6, 5]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fairops.metrics._inputs import as_scores, encode_sensitive

from ..errors import InputError

if TYPE_CHECKING:
    from .._typing import ArrayLike, NDArray, Sensitive


def group_quotas(counts: np.ndarray, t: int) -> np.ndarray:
    """t split over the groups in proportion to ``counts`` (largest remainders, ties to the larger group).

    Parameters
    ----------
    counts : array-like of int
        Rows per group.
    t : int
        Length of the list to split.

    Returns
    -------
    ndarray of int64
        Each group's quota, at most its count.

    Examples
    --------
    >>> group_quotas(np.array([70, 20, 10]), 7).tolist()
    [5, 1, 1]
    """
    counts = np.asarray(counts, dtype=np.int64)
    exact = t * counts / counts.sum()
    quotas = np.floor(exact).astype(np.int64)
    remainder = exact - quotas
    order = np.lexsort((-counts, -remainder))
    for group in order[: t - int(quotas.sum())]:
        quotas[group] += 1
    quotas_met: np.ndarray = np.minimum(quotas, counts)
    return quotas_met


def quota_outliers(scores: ArrayLike, sensitive_feature: Sensitive, top_t: int) -> NDArray[np.intp]:
    """Top-t rows by ``scores`` chosen group by group, each group getting its data share of t.

    Within a group, rows are taken by descending score (ties to the lower index); the
    result lists the groups in code order, each group's rows most outlying first.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Outlier scores (higher = more outlying).
    sensitive_feature : array-like, Series, dict or DataFrame
        One sensitive column.
    top_t : int
        Length of the list, in [1, n_samples].

    Returns
    -------
    ndarray of intp
        The rows picked.
    """
    scores = as_scores(scores, "scores")
    encoded = encode_sensitive(sensitive_feature, len(scores), min_values=1)
    if len(encoded.codes) != 1:
        raise InputError(f"the quota baseline takes one sensitive column, got {len(encoded.codes)}")
    _check_top_t(top_t, len(scores))
    codes = encoded.codes[0]
    quotas = group_quotas(np.bincount(codes, minlength=len(encoded.labels[0])), int(top_t))
    order = np.argsort(-scores, kind="stable")
    picked = []
    for group, quota in enumerate(quotas):
        in_group = order[codes[order] == group]
        picked.append(in_group[:quota])
    return np.concatenate(picked).astype(np.intp)


def partial_quota_outliers(scores: ArrayLike, sensitive_feature: Sensitive, top_t: int,
                           strength: float) -> NDArray[np.intp]:
    """The top-t moved part of the way from plain ranking to the quota baseline.

    Each group's count among the top-t is ``(1 - strength)`` x its count in the plain top-t plus
    ``strength`` x its proportional share of t (largest remainders), and the group contributes its
    highest-scored rows: strength 0 is the plain top-t, 1 is :func:`quota_outliers`. Sweeping it
    traces how far the quota re-ranking trades Jaccard with the plain list for representation.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Outlier scores (higher = more outlying).
    sensitive_feature : array-like, Series, dict or DataFrame
        One sensitive column.
    top_t : int
        Length of the list, in [1, n_samples].
    strength : float
        How far to move, in [0, 1].

    Returns
    -------
    ndarray of intp
        The rows picked, group by group.

    Examples
    --------
    >>> scores = np.array([9.0, 8.0, 7.0, 6.0, 1.0, 2.0, 3.0, 0.5])
    >>> groups = ["a", "a", "a", "a", "b", "b", "b", "b"]
    >>> partial_quota_outliers(scores, groups, 4, 0.5).tolist()
    [0, 1, 2, 6]
    """
    scores = as_scores(scores, "scores")
    if not 0.0 <= float(strength) <= 1.0:
        raise InputError(f"strength must be in [0, 1], got {strength!r}")
    if float(strength) == 1.0:
        return quota_outliers(scores, sensitive_feature, top_t)
    encoded = encode_sensitive(sensitive_feature, len(scores), min_values=1)
    if len(encoded.codes) != 1:
        raise InputError(f"the quota baseline takes one sensitive column, got {len(encoded.codes)}")
    _check_top_t(top_t, len(scores))
    codes = encoded.codes[0]
    n_groups = len(encoded.labels[0])
    plain = np.bincount(codes[_top(scores, int(top_t))], minlength=n_groups)
    counts = np.bincount(codes, minlength=n_groups)
    exact = (1.0 - strength) * plain + strength * group_quotas(counts, int(top_t))
    quotas = np.floor(exact + 1e-9).astype(np.int64)
    for group in np.lexsort((-counts, -(exact - quotas)))[: int(top_t) - int(quotas.sum())]:
        quotas[group] += 1
    order = np.argsort(-scores, kind="stable")
    return np.concatenate([order[codes[order] == group][:quota] for group, quota in enumerate(quotas)]).astype(np.intp)


def _check_top_t(top_t: object, n_rows: int) -> None:
    if isinstance(top_t, bool) or not isinstance(top_t, (int, np.integer)) or not 1 <= top_t <= n_rows:
        raise InputError(f"top_t must be an integer in [1, {n_rows}], got {top_t!r}")


def _top(scores: np.ndarray, t: int) -> np.ndarray:
    return np.argsort(-scores, kind="stable")[:t]
