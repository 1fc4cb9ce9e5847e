"""Quantile binning of features, done once per fit.

Each feature gets sorted cut points ``edges``; a value's bin is the number of edges
strictly below it, so ``bin <= b`` is the same test as ``value <= edges[b]``. A split
learned on bins therefore predicts on raw values with the threshold ``edges[b]``.

A feature with at most ``max_bins`` distinct values gets one cut point between each pair
of neighbours (every distinct split is available); otherwise the cut points are the
``max_bins`` quantiles of its values, so at most ``max_bins`` bins (<= 256: bins fit uint8).

>>> import numpy as np
>>> edges, offsets = fit_bin_edges(np.array([[1.0], [2.0], [4.0]]), max_bins=256)
>>> edges.tolist(), offsets.tolist()
([1.5, 3.0], [0, 2])
>>> apply_bins(np.array([[1.0], [3.0], [9.0]]), edges, offsets).tolist()
[[0, 1, 2]]
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError


def _feature_edges(column: np.ndarray, max_bins: int) -> np.ndarray:
    distinct = np.unique(column)
    if len(distinct) <= 1:
        return np.empty(0, dtype=np.float64)
    if len(distinct) <= max_bins:
        middle = (distinct[:-1] + distinct[1:]) / 2.0
        # Rounding can put a midpoint on the upper value; the lower one then separates them.
        return np.where(middle == distinct[1:], distinct[:-1], middle)
    probabilities = np.linspace(0.0, 1.0, max_bins + 1)[1:-1]
    edges = np.unique(np.quantile(column, probabilities, method="linear"))
    return edges[edges < distinct[-1]]


def fit_bin_edges(X: np.ndarray, max_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Cut points of every column, concatenated, and the (n_features + 1) offsets into them.

    >>> edges, offsets = fit_bin_edges(np.array([[0.0, 5.0], [1.0, 5.0]]), max_bins=4)
    >>> edges.tolist(), offsets.tolist()  # the constant second column has no cut point
    ([0.5], [0, 1, 1])
    """
    if not 2 <= max_bins <= 256:
        raise InputError(f"max_bins must be an integer in [2, 256], got {max_bins!r}")
    per_feature = [_feature_edges(X[:, j], max_bins) for j in range(X.shape[1])]
    offsets = np.zeros(X.shape[1] + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(edges) for edges in per_feature])
    edges = np.concatenate(per_feature) if per_feature else np.empty(0)
    return np.ascontiguousarray(edges, dtype=np.float64), offsets


def apply_bins(X: np.ndarray, edges: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Bin codes as a C-contiguous ``(n_features, n_samples)`` uint8 array (features as rows).

    >>> apply_bins(np.array([[0.2], [0.7]]), np.array([0.5]), np.array([0, 1])).tolist()
    [[0, 1]]
    """
    binned = np.empty((X.shape[1], X.shape[0]), dtype=np.uint8)
    for j in range(X.shape[1]):
        feature_edges = edges[offsets[j] : offsets[j + 1]]
        binned[j] = np.searchsorted(feature_edges, X[:, j], side="left")
    return binned


def bin_counts(offsets: np.ndarray) -> np.ndarray:
    """Number of bins per feature (cut points + 1).

    >>> bin_counts(np.array([0, 1, 1])).tolist()
    [2, 1]
    """
    return np.ascontiguousarray(np.diff(offsets) + 1, dtype=np.int32)
