"""The one place that calls SCAFF's compiled kernel, ``fairops.scaff._tree``
(``cython_ext/scaff/_tree.pyx``; which module calls each kernel: ``cython_ext/README.md``).

Arrays are checked for dtype, shape and contiguity here so the kernels can trust them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from . import _tree  # type: ignore[attr-defined]  # a compiled kernel: no source for mypy to read

AGGREGATE_CODES = {"max": 0, "mean": 1}
# Gains within this of zero are zero (an exact balance of the label and sensitive terms, up to rounding).
MIN_GAIN = 1e-12


@dataclass(frozen=True)
class GrowthData:
    """Everything a tree needs, shared read-only by all trees of a fit."""

    binned: np.ndarray  # (n_features, n_samples) uint8
    n_bins: np.ndarray  # (n_features,) int32, the missing values' bin included
    has_missing: np.ndarray  # (n_features,) uint8: 1 when the feature's last bin holds its missing values
    y: np.ndarray  # (n_samples,) uint8 0/1
    groups: np.ndarray  # (n_samples, n_columns) int32 global group ids
    column_start: np.ndarray  # (n_columns + 1,) int32: column c owns ids column_start[c] ..< [c + 1]

    @classmethod
    def build(cls, binned, n_bins, has_missing, y, groups, column_start) -> GrowthData:
        binned = np.ascontiguousarray(binned, dtype=np.uint8)
        has_missing = np.ascontiguousarray(has_missing, dtype=np.uint8)
        n_samples = binned.shape[1]
        y = np.ascontiguousarray(y, dtype=np.uint8)
        groups = np.ascontiguousarray(groups, dtype=np.int32).reshape(n_samples, -1)
        n_bins = np.ascontiguousarray(n_bins, dtype=np.int32)
        column_start = np.ascontiguousarray(column_start, dtype=np.int32)
        if y.shape != (n_samples,) or n_bins.shape != (binned.shape[0],) or has_missing.shape != n_bins.shape:
            raise InputError("binned features, n_bins, has_missing and y disagree in shape")
        if np.any(has_missing > 1) or np.any(n_bins < 1 + has_missing):
            raise InputError("has_missing must be 0/1 flags of features with a bin for their missing values")
        if column_start.shape != (groups.shape[1] + 1,) or column_start[0] != 0 or np.any(np.diff(column_start) < 1):
            raise InputError("column_start must rise from 0 with one entry per sensitive column plus one")
        for c in range(groups.shape[1]):
            ids = groups[:, c]
            if ids.size and (ids.min() < column_start[c] or ids.max() >= column_start[c + 1]):
                raise InputError(f"group ids of sensitive column {c} must lie in its own id range")
        return cls(binned, n_bins, has_missing, y, groups, column_start)


def grow_tree(data: GrowthData, weight, *, max_depth, max_features, min_samples_split, min_samples_leaf, theta,
              aggregate, seed):
    """Node arrays of one tree grown on the rows of positive ``weight``: feature, bin, left, right, value, weight,
    gain, and whether missing values go left."""
    weight = np.ascontiguousarray(weight, dtype=np.float64)
    if weight.shape != (data.y.shape[0],):
        raise InputError("weight must have one entry per sample")
    samples = np.flatnonzero(weight > 0)  # reordered in place by the kernel
    return _tree.build_tree(
        data.binned,
        data.n_bins,
        data.has_missing,
        data.y,
        data.groups,
        data.column_start,
        weight,
        samples,
        -1 if max_depth is None else int(max_depth),
        int(max_features),
        int(min_samples_split),
        int(min_samples_leaf),
        float(theta),
        AGGREGATE_CODES[aggregate],
        np.uint64(seed),
        MIN_GAIN,
    )


def _tree_arrays(feature, threshold, left, right, missing_left) -> tuple:
    return (
        np.ascontiguousarray(feature, dtype=np.int32),
        np.ascontiguousarray(threshold, dtype=np.float64),
        np.ascontiguousarray(left, dtype=np.int32),
        np.ascontiguousarray(right, dtype=np.int32),
        np.ascontiguousarray(missing_left, dtype=np.uint8),
    )


def predict_mean_leaf_value(X, feature, threshold, left, right, missing_left, value, offsets) -> np.ndarray:
    """Mean over trees of the leaf value each row of ``X`` reaches."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    out = np.empty(X.shape[0], dtype=np.float64)
    _tree.predict_forest(
        X,
        *_tree_arrays(feature, threshold, left, right, missing_left),
        np.ascontiguousarray(value, dtype=np.float64),
        np.ascontiguousarray(offsets, dtype=np.int64),
        out,
    )
    return out


def leaf_ids(X, feature, threshold, left, right, missing_left, offsets) -> np.ndarray:
    """``(n_rows, n_trees)`` tree-local id of the leaf each row of ``X`` reaches in each tree."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    out = np.empty((X.shape[0], len(offsets) - 1), dtype=np.int64)
    _tree.apply_forest(X, *_tree_arrays(feature, threshold, left, right, missing_left),
                       np.ascontiguousarray(offsets, dtype=np.int64), out)
    return out
