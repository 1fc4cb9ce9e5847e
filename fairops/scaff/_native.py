"""The one place that calls the compiled SCAFF kernels.

Arrays are checked for dtype, shape and contiguity here so the kernels can trust them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _tree

AGGREGATE_CODES = {"max": 0, "mean": 1}
# Gains at or below this are treated as zero: it absorbs rounding in |a - b| when a == b.
MIN_GAIN = 1e-12


@dataclass(frozen=True)
class GrowthData:
    """Everything a tree needs, shared read-only by all trees of a fit."""

    binned: np.ndarray  # (n_features, n_samples) uint8
    n_bins: np.ndarray  # (n_features,) int32
    y: np.ndarray  # (n_samples,) uint8 0/1
    groups: np.ndarray  # (n_samples, n_columns) int32 global group ids
    n_groups: int

    @classmethod
    def build(cls, binned, n_bins, y, groups, n_groups) -> "GrowthData":
        binned = np.ascontiguousarray(binned, dtype=np.uint8)
        n_samples = binned.shape[1]
        y = np.ascontiguousarray(y, dtype=np.uint8)
        groups = np.ascontiguousarray(groups, dtype=np.int32).reshape(n_samples, -1)
        n_bins = np.ascontiguousarray(n_bins, dtype=np.int32)
        if y.shape != (n_samples,) or n_bins.shape != (binned.shape[0],):
            raise ValueError("binned features, n_bins and y disagree in shape")
        if groups.size and (groups.min() < 0 or groups.max() >= n_groups):
            raise ValueError("group ids must lie in [0, n_groups)")
        return cls(binned, n_bins, y, groups, int(n_groups))


def grow_tree(data: GrowthData, weight, samples, *, max_depth, max_features, theta, aggregate, seed):
    """Node arrays of one tree: feature, bin, left, right, value, weight, gain."""
    weight = np.ascontiguousarray(weight, dtype=np.float64)
    samples = np.array(samples, dtype=np.intp, copy=True)  # reordered by the kernel
    if weight.shape != (data.y.shape[0],):
        raise ValueError("weight must have one entry per sample")
    return _tree.build_tree(
        data.binned,
        data.n_bins,
        data.y,
        data.groups,
        data.n_groups,
        weight,
        samples,
        -1 if max_depth is None else int(max_depth),
        int(max_features),
        float(theta),
        AGGREGATE_CODES[aggregate],
        np.uint64(seed),
        MIN_GAIN,
    )


def predict_mean_leaf_value(X, feature, threshold, left, right, value, offsets) -> np.ndarray:
    """Mean over trees of the leaf value each row of ``X`` reaches."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    out = np.empty(X.shape[0], dtype=np.float64)
    _tree.predict_forest(
        X,
        np.ascontiguousarray(feature, dtype=np.int32),
        np.ascontiguousarray(threshold, dtype=np.float64),
        np.ascontiguousarray(left, dtype=np.int32),
        np.ascontiguousarray(right, dtype=np.int32),
        np.ascontiguousarray(value, dtype=np.float64),
        np.ascontiguousarray(offsets, dtype=np.int64),
        out,
    )
    return out
