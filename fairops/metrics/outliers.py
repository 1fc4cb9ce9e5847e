"""Metrics that compare a fair outlier ranking with a plain one (the FairLOF paper's)."""

from __future__ import annotations

import numpy as np

from ._validation import as_scores, encode_sensitive


def _as_index_set(indices, name: str, n: int | None = None) -> np.ndarray:
    array = np.asarray(indices)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of row indices, got shape {array.shape}")
    if array.size and array.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer row indices, got dtype {array.dtype}")
    array = array.astype(np.intp)
    if n is not None and array.size and (array.min() < 0 or array.max() >= n):
        raise ValueError(f"{name} holds indices outside [0, {n})")
    if len(np.unique(array)) != len(array):
        raise ValueError(f"{name} holds repeated indices")
    return array


def jaccard(a, b) -> float:
    """|A ∩ B| / |A ∪ B| of two sets of row indices (1.0 for two empty sets).

    >>> jaccard([1, 2, 3], [2, 3, 4])
    0.5
    """
    a = set(_as_index_set(a, "a").tolist())
    b = set(_as_index_set(b, "b").tolist())
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def preservation(scores, fair_top, plain_top) -> float:
    """Sum of the plain outlier scores over the fair top list / the same sum over the plain top list.

    1.0 means the fair list keeps as much outlierness as the plain one.

    >>> preservation([3.0, 2.0, 1.0, 1.0], fair_top=[0, 2], plain_top=[0, 1])
    0.8
    """
    scores = as_scores(scores, "scores")
    fair_top = _as_index_set(fair_top, "fair_top", len(scores))
    plain_top = _as_index_set(plain_top, "plain_top", len(scores))
    denominator = scores[plain_top].sum()
    if denominator == 0:
        raise ValueError("preservation is undefined: the scores of plain_top sum to 0")
    return float(scores[fair_top].sum() / denominator)


def outlier_fraction(scores, top) -> float:
    """Share of the rows in ``top`` whose plain LOF score is at least 1 (real outliers).

    >>> outlier_fraction([1.5, 0.9, 1.0], [0, 1])
    0.5
    """
    scores = as_scores(scores, "scores")
    top = _as_index_set(top, "top", len(scores))
    if top.size == 0:
        raise ValueError("outlier_fraction is undefined for an empty top list")
    return float(np.mean(scores[top] >= 1.0))


def _distributions(sensitive_features, top):
    """Per attribute: (share of each value among ``top``, share in all rows)."""
    encoded = encode_sensitive(sensitive_features, min_values=1)
    top = _as_index_set(top, "top", encoded.n_rows)
    if top.size == 0:
        raise ValueError("top must hold at least one row index")
    for codes, labels in zip(encoded.codes, encoded.labels):
        in_data = np.bincount(codes, minlength=len(labels)) / len(codes)
        in_top = np.bincount(codes[top], minlength=len(labels)) / len(top)
        yield in_top, in_data


def euclidean_disparity(sensitive_features, top) -> float:
    """Sum over sensitive attributes of the Euclidean distance between the value shares
    among the outliers ``top`` and in the whole data; 0 is proportional representation.

    >>> round(euclidean_disparity({"sex": ["m", "m", "f", "f"]}, [0, 1]), 4)
    0.7071
    """
    return float(sum(np.sqrt(np.sum((p - q) ** 2)) for p, q in _distributions(sensitive_features, top)))


def wasserstein_disparity(sensitive_features, top) -> float:
    """Sum over sensitive attributes of the 1-D Wasserstein distance between the value
    distribution among the outliers ``top`` and in the whole data.

    Values are placed at 0, 1, 2, ... in their sorted order (what
    ``scipy.stats.wasserstein_distance`` computes on the value codes); for a binary
    attribute this is the difference of the two shares.

    >>> wasserstein_disparity({"sex": ["m", "m", "f", "f"]}, [0, 1])
    0.5
    """
    return float(
        sum(np.abs(np.cumsum(p - q)[:-1]).sum() for p, q in _distributions(sensitive_features, top))
    )
