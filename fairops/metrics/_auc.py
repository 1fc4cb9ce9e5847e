"""Threshold-free metrics: AUC of the label and AUC of the sensitive groups.

Both use the rank-sum form, so one sort of the scores serves every group:
``AUC(group) = (rank sum of the group - n_g (n_g + 1) / 2) / (n_g (n - n_g))``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..errors import InputError
from ._inputs import as_binary_labels, as_scores, check_same_length, encode_sensitive
from ._ranks import average_ranks

if TYPE_CHECKING:
    from .._typing import ArrayLike, Sensitive


def _ranks(y_score: np.ndarray) -> np.ndarray:
    order = np.argsort(y_score, kind="stable").astype(np.intp, copy=False)
    return average_ranks(y_score, order)


def _auc_from_rank_sums(rank_sums: np.ndarray, sizes: np.ndarray, n: int) -> np.ndarray:
    return (rank_sums - sizes * (sizes + 1) / 2.0) / (sizes * (n - sizes))


def auc_y(y_true: ArrayLike, y_score: ArrayLike) -> float:
    """Area under the ROC curve of ``y_score`` for the 0/1 label ``y_true``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels, both classes present.
    y_score : array-like of shape (n_samples,)
        Finite scores, higher for label 1.

    Returns
    -------
    float
        The AUC in [0, 1].

    Examples
    --------
    >>> auc_y([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    0.75
    """
    y_true = as_binary_labels(y_true, "y_true")
    y_score = as_scores(y_score, "y_score")
    n = check_same_length(y_true=y_true, y_score=y_score)
    n_pos = int(y_true.sum())
    if n_pos in (0, n):
        raise InputError("auc_y is undefined: y_true holds a single class")
    rank_sum = float(_ranks(y_score)[y_true == 1].sum())
    return float(_auc_from_rank_sums(np.array([rank_sum]), np.array([n_pos]), n)[0])


def group_aucs(y_score: ArrayLike, sensitive_features: Sensitive) -> dict[tuple[str, Any], float]:
    """Folded one-vs-rest AUC of every value of every sensitive column.

    Parameters
    ----------
    y_score : array-like of shape (n_samples,)
        Finite scores.
    sensitive_features : DataFrame, Series, dict or array-like
        The sensitive columns, each with at least two values.

    Returns
    -------
    dict
        ``{(column, value): max(AUC, 1 - AUC)}``; 0.5 means the score does not
        separate that group from the rest.

    Examples
    --------
    >>> group_aucs([0.1, 0.2, 0.3, 0.4], {"g": ["a", "a", "b", "b"]})
    {('g', 'a'): 1.0, ('g', 'b'): 1.0}
    """
    y_score = as_scores(y_score, "y_score")
    n = check_same_length(y_score=y_score)
    encoded = encode_sensitive(sensitive_features, n)
    ranks = _ranks(y_score)
    result = {}
    for name, codes, labels in zip(encoded.names, encoded.codes, encoded.labels):
        sizes = np.bincount(codes, minlength=len(labels)).astype(np.float64)
        rank_sums = np.bincount(codes, weights=ranks, minlength=len(labels))
        aucs = _auc_from_rank_sums(rank_sums, sizes, n)
        for label, auc in zip(labels, aucs):
            result[(name, label)] = float(max(auc, 1.0 - auc))
    return result


def auc_s(y_score: ArrayLike, sensitive_features: Sensitive, *, aggregate: Literal["max", "mean"] = "max") -> float:
    """How well the score separates sensitive groups, in [0.5, 1]; 0.5 is demographic parity.

    One-vs-rest AUC for every value of every sensitive column, folded to
    ``max(AUC, 1 - AUC)``, then the max (default) or the mean over all of them.
    A column with a single value raises ``ValueError``.

    Parameters
    ----------
    y_score : array-like of shape (n_samples,)
        Finite scores.
    sensitive_features : DataFrame, Series, dict or array-like
        The sensitive columns.
    aggregate : {"max", "mean"}, default="max"
        How the folded AUCs of all groups are combined.

    Returns
    -------
    float
        AUC_S in [0.5, 1].

    Examples
    --------
    >>> auc_s([0.1, 0.2, 0.3, 0.4], ["a", "b", "a", "b"])
    0.75
    """
    if aggregate not in ("max", "mean"):
        raise InputError(f"aggregate must be 'max' or 'mean', got {aggregate!r}")
    values = np.fromiter(group_aucs(y_score, sensitive_features).values(), dtype=np.float64)
    return float(values.max() if aggregate == "max" else values.mean())
