"""Metrics that compare a fair outlier ranking with a plain one (the FairLOF paper's)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np

from ..errors import InputError
from ._inputs import as_scores, encode_sensitive

if TYPE_CHECKING:
    from .._typing import ArrayLike, Sensitive


def _as_index_set(indices: ArrayLike, name: str, n: int | None = None) -> np.ndarray:
    array = np.asarray(indices)
    if array.ndim != 1:
        raise InputError(f"{name} must be a 1-D array of row indices, got shape {array.shape}")
    if array.size and array.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer row indices, got dtype {array.dtype}")
    array = array.astype(np.intp)
    if n is not None and array.size and (array.min() < 0 or array.max() >= n):
        raise InputError(f"{name} holds indices outside [0, {n})")
    if len(np.unique(array)) != len(array):
        raise InputError(f"{name} holds repeated indices")
    return array


def jaccard(a: ArrayLike, b: ArrayLike) -> float:
    """|A ∩ B| / |A ∪ B| of two sets of row indices (1.0 for two empty sets).

    Parameters
    ----------
    a, b : array-like of int
        Row indices, none repeated.

    Returns
    -------
    float
        The Jaccard index in [0, 1].

    Examples
    --------
    >>> jaccard([1, 2, 3], [2, 3, 4])
    0.5
    """
    in_a = set(_as_index_set(a, "a").tolist())
    in_b = set(_as_index_set(b, "b").tolist())
    union = in_a | in_b
    return len(in_a & in_b) / len(union) if union else 1.0


def preservation(scores: ArrayLike, fair_top: ArrayLike, plain_top: ArrayLike) -> float:
    """Sum of the plain outlier scores over the fair top list / the same sum over the plain top list.

    1.0 means the fair list keeps as much outlierness as the plain one.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Plain outlier scores (e.g. LOF's).
    fair_top, plain_top : array-like of int
        Row indices of the fair and the plain top lists.

    Returns
    -------
    float
        The ratio of the two sums.

    Examples
    --------
    >>> preservation([3.0, 2.0, 1.0, 1.0], fair_top=[0, 2], plain_top=[0, 1])
    0.8
    """
    scores = as_scores(scores, "scores")
    fair_top = _as_index_set(fair_top, "fair_top", len(scores))
    plain_top = _as_index_set(plain_top, "plain_top", len(scores))
    denominator = scores[plain_top].sum()
    if denominator == 0:
        raise InputError("preservation is undefined: the scores of plain_top sum to 0")
    return float(scores[fair_top].sum() / denominator)


def outlier_fraction(scores: ArrayLike, top: ArrayLike) -> float:
    """Share of the rows in ``top`` whose plain LOF score is at least 1 (real outliers).

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Plain LOF scores.
    top : array-like of int
        Row indices of the top list, at least one.

    Returns
    -------
    float
        The share in [0, 1].

    Examples
    --------
    >>> outlier_fraction([1.5, 0.9, 1.0], [0, 1])
    0.5
    """
    scores = as_scores(scores, "scores")
    top = _as_index_set(top, "top", len(scores))
    if top.size == 0:
        raise InputError("outlier_fraction is undefined for an empty top list")
    return float(np.mean(scores[top] >= 1.0))


def _distributions(sensitive_features, top):
    """Per attribute: (share of each value among ``top``, share in all rows)."""
    encoded = encode_sensitive(sensitive_features, min_values=1)
    top = _as_index_set(top, "top", encoded.n_rows)
    if top.size == 0:
        raise InputError("top must hold at least one row index")
    for codes, labels in zip(encoded.codes, encoded.labels):
        in_data = np.bincount(codes, minlength=len(labels)) / len(codes)
        in_top = np.bincount(codes[top], minlength=len(labels)) / len(top)
        yield in_top, in_data


def euclidean_disparity(sensitive_features: Sensitive, top: ArrayLike) -> float:
    """Sum over sensitive attributes of the Euclidean distance between outliers' and data's value shares.

    The shares of each attribute's values among the outliers ``top`` are compared with those in the
    whole data; 0 is proportional representation.

    Parameters
    ----------
    sensitive_features : DataFrame, Series, dict or array-like
        The sensitive columns of all rows.
    top : array-like of int
        Row indices of the outliers, at least one.

    Returns
    -------
    float
        The disparity, 0 or more.

    Examples
    --------
    >>> round(euclidean_disparity({"sex": ["m", "m", "f", "f"]}, [0, 1]), 4)
    0.7071
    """
    return float(sum(np.sqrt(np.sum((p - q) ** 2)) for p, q in _distributions(sensitive_features, top)))


WASSERSTEIN_MODES = ("shares", "ordinal")


def _wasserstein_of_shares(in_top: np.ndarray, in_data: np.ndarray) -> float:
    """1-D Wasserstein distance between the two share vectors taken as equal-size samples:
    the mean absolute difference of the sorted entries (what ``scipy.stats.wasserstein_distance``
    returns for two samples of the same length)."""
    return float(np.mean(np.abs(np.sort(in_top) - np.sort(in_data))))


def _wasserstein_of_values(in_top: np.ndarray, in_data: np.ndarray) -> float:
    """1-D Wasserstein distance between two distributions over the values 0, 1, ..., m-1."""
    return float(np.abs(np.cumsum(in_top - in_data)[:-1]).sum())


def wasserstein_disparity(sensitive_features: Sensitive, top: ArrayLike, *,
                          mode: Literal["shares", "ordinal"] = "shares") -> float:
    """Sum over sensitive attributes of a 1-D Wasserstein distance between outliers' and data's value shares.

    The shares of each attribute's values among the outliers ``top`` are compared with those in the
    whole data; 0 is proportional representation.

    ``mode="shares"`` (default, as the FairLOF paper's source of this metric computes it): the
    two share vectors are compared as samples, ``scipy.stats.wasserstein_distance(shares_top,
    shares_data)``. It is blind to which value holds which share: a binary attribute whose two
    shares are swapped among the outliers scores 0. ``mode="ordinal"``: the values are placed at
    0, 1, 2, ... in their sorted order and the shares are their weights, so the result depends on
    that order (for a binary attribute it is the difference of the two shares).

    Parameters
    ----------
    sensitive_features : DataFrame, Series, dict or array-like
        The sensitive columns of all rows.
    top : array-like of int
        Row indices of the outliers, at least one.
    mode : {"shares", "ordinal"}, default="shares"
        How the two distributions are compared, as above.

    Returns
    -------
    float
        The disparity, 0 or more.

    Examples
    --------
    >>> wasserstein_disparity({"sex": ["m", "m", "m", "f"]}, [0, 1])
    0.25
    >>> wasserstein_disparity({"sex": ["m", "m", "m", "f"]}, [0, 1], mode="ordinal")
    0.25
    >>> groups = {"g": ["a"] * 6 + ["b"] * 4}  # shares a 0.6, b 0.4; among rows 0, 1, 6, 7, 8: 0.4, 0.6
    >>> top = [0, 1, 6, 7, 8]
    >>> wasserstein_disparity(groups, top), round(wasserstein_disparity(groups, top, mode="ordinal"), 6)
    (0.0, 0.2)
    """
    if mode == "shares":
        distance = _wasserstein_of_shares
    elif mode == "ordinal":
        distance = _wasserstein_of_values
    else:
        raise InputError(f"mode must be one of {list(WASSERSTEIN_MODES)}, got {mode!r}")
    return float(sum(distance(p, q) for p, q in _distributions(sensitive_features, top)))
