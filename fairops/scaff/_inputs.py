"""Checks and encodings of SCAFF's inputs: features, sensitive groups, weights; parameters resolved for fit."""

from __future__ import annotations

import math
import warnings

import numpy as np

from fairops.metrics._inputs import encode_sensitive

from .._param_checks import is_int
from ..errors import InputError

AGGREGATIONS = ("max", "mean")


def resolve_min_samples(estimator, n_samples: int) -> tuple[int, int]:
    """(min_samples_split, min_samples_leaf) as counts, as scikit-learn's trees resolve them.

    A float is a share of the ``n_samples`` rows given to ``fit``; a node needs at least
    ``2 * min_samples_leaf`` samples to be split.
    """
    leaf = estimator.min_samples_leaf
    leaf = int(leaf) if is_int(leaf) else int(math.ceil(leaf * n_samples))
    split = estimator.min_samples_split
    split = int(split) if is_int(split) else max(2, int(math.ceil(split * n_samples)))
    return max(split, 2 * leaf), max(1, leaf)


def check_sample_weight(sample_weight, n_samples: int) -> np.ndarray | None:
    """``sample_weight`` as a float array of ``n_samples`` finite weights >= 0 (None stays None)."""
    if sample_weight is None:
        return None
    weight = np.asarray(sample_weight)
    if weight.dtype == object or not (np.issubdtype(weight.dtype, np.number) or weight.dtype == bool):
        raise TypeError(f"sample_weight must hold numbers, got dtype {weight.dtype}")
    weight = weight.astype(np.float64)
    if weight.ndim != 1 or weight.shape[0] != n_samples:
        raise InputError(f"sample_weight must have shape ({n_samples},), got {weight.shape}")
    if not np.all(np.isfinite(weight)):
        raise InputError("sample_weight contains NaN or infinite values")
    if np.any(weight < 0):
        raise InputError("sample_weight must be >= 0 everywhere")
    if not np.any(weight > 0):
        raise InputError("sample_weight is zero for every row; at least one row needs a positive weight")
    return weight


def resolve_max_features(max_features, n_features: int) -> int:
    """Number of features drawn per node, as scikit-learn's forests count them (``max_features`` checked)."""
    if max_features is None:
        return n_features
    if isinstance(max_features, str):
        if max_features == "sqrt":
            return max(1, int(np.sqrt(n_features)))
        return max(1, int(np.log2(n_features))) if n_features > 1 else 1  # "log2"
    if is_int(max_features):
        return min(int(max_features), n_features)
    return max(1, int(max_features * n_features))


def categorical_columns(X) -> dict:
    """``{position: categories}`` of the pandas category columns of a DataFrame (empty otherwise)."""
    dtypes = getattr(X, "dtypes", None)
    if dtypes is None or not hasattr(X, "columns"):
        return {}
    found = {}
    for position, (name, dtype) in enumerate(zip(X.columns, dtypes)):
        if getattr(dtype, "name", "") == "category":
            found[position] = [c.item() if hasattr(c, "item") else c for c in dtype.categories]
        elif dtype.kind not in "biuf":
            raise TypeError(
                f"X column {name!r} has dtype {dtype}; SCAFF needs numbers or the pandas 'category' dtype"
            )
    return found


def encode_categoricals(X, categories: dict):
    """Replace category columns by their codes in the fitted category order.

    A category unseen during fit gets code -1, which lies below every threshold (goes left); a
    missing value stays missing (NaN), to go where its splits learnt.
    """
    if not categories:
        return X
    import pandas as pd

    X = X.copy()
    for position, known in categories.items():
        name = X.columns[position]
        column = X.iloc[:, position]
        codes = pd.Index(known).get_indexer(column.astype(object)).astype(np.float64)
        codes[column.isna().to_numpy()] = np.nan
        X[name] = codes
    return X


def encode_groups(sensitive_features, n_rows: int, *, intersectional: bool, theta: float):
    """(groups (n, n_columns) int32 with global ids, column_start (n_columns + 1,), column names).

    Column c's values get the ids ``column_start[c]`` to ``column_start[c + 1] - 1``.
    ``None`` means no sensitive attribute: the AUC_S term is then 0.5 (no penalty), which
    makes every theta < 1 grow the same tree as theta = 0; a warning says so when theta > 0.
    """
    if sensitive_features is None:
        if theta > 0:
            warnings.warn(
                "sensitive_features was not given: SCAFF grows a plain AUC tree (theta only rescales "
                "the gain, theta = 1 gives single leaves)",
                UserWarning,
                stacklevel=3,
            )
        return np.zeros((n_rows, 0), dtype=np.int32), np.zeros(1, dtype=np.int32), []
    encoded = encode_sensitive(sensitive_features, n_rows)
    if intersectional:
        encoded = encoded.intersection()
    columns, starts = [], [0]
    for codes, labels in zip(encoded.codes, encoded.labels):
        columns.append(codes.astype(np.int32) + starts[-1])
        starts.append(starts[-1] + len(labels))
    groups = np.ascontiguousarray(np.stack(columns, axis=1), dtype=np.int32)
    return groups, np.asarray(starts, dtype=np.int32), list(encoded.names)
