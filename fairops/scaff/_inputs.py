"""Checks and encodings of SCAFF's inputs: parameters, features, sensitive groups."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from fairops.metrics._validation import encode_sensitive

AGGREGATIONS = ("max", "mean")


def check_params(estimator, *, n_estimators: int, max_features, bootstrap: bool, n_jobs=None) -> None:
    """Raise ValueError/TypeError naming the first parameter out of range."""
    theta = estimator.theta
    if isinstance(theta, bool) or not isinstance(theta, numbers.Real) or not 0.0 <= float(theta) <= 1.0:
        raise ValueError(f"theta must be a number in [0, 1], got {theta!r}")
    depth = estimator.max_depth
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, numbers.Integral) or depth < 1):
        raise ValueError(f"max_depth must be None or an integer >= 1, got {depth!r}")
    bins = estimator.max_bins
    if isinstance(bins, bool) or not isinstance(bins, numbers.Integral) or not 2 <= bins <= 256:
        raise ValueError(f"max_bins must be an integer in [2, 256], got {bins!r}")
    if estimator.sensitive_aggregation not in AGGREGATIONS:
        raise ValueError(
            f"sensitive_aggregation must be one of {AGGREGATIONS}, got {estimator.sensitive_aggregation!r}"
        )
    if not isinstance(estimator.intersectional, (bool, np.bool_)):
        raise TypeError(f"intersectional must be True or False, got {estimator.intersectional!r}")
    if isinstance(n_estimators, bool) or not isinstance(n_estimators, numbers.Integral) or n_estimators < 1:
        raise ValueError(f"n_estimators must be an integer >= 1, got {n_estimators!r}")
    if not isinstance(bootstrap, (bool, np.bool_)):
        raise TypeError(f"bootstrap must be True or False, got {bootstrap!r}")
    resolve_max_features(max_features, 1)
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0):
        raise ValueError(f"n_jobs must be None or a non-zero integer (-1 = all cores), got {n_jobs!r}")


def resolve_max_features(max_features, n_features: int) -> int:
    """Number of features drawn per node, as scikit-learn's forests count them."""
    if max_features is None:
        return n_features
    if isinstance(max_features, str):
        if max_features == "sqrt":
            return max(1, int(np.sqrt(n_features)))
        if max_features == "log2":
            return max(1, int(np.log2(n_features))) if n_features > 1 else 1
        raise ValueError(f"max_features must be 'sqrt', 'log2', None, an int or a float, got {max_features!r}")
    if isinstance(max_features, numbers.Integral) and not isinstance(max_features, bool):
        if max_features < 1:
            raise ValueError(f"max_features must be >= 1 when an integer, got {max_features!r}")
        return min(int(max_features), n_features)
    if isinstance(max_features, numbers.Real) and not isinstance(max_features, bool):
        if not 0.0 < max_features <= 1.0:
            raise ValueError(f"max_features must be in (0, 1] when a float, got {max_features!r}")
        return max(1, int(max_features * n_features))
    raise ValueError(f"max_features must be 'sqrt', 'log2', None, an int or a float, got {max_features!r}")


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

    A category unseen during fit gets code -1, which lies below every threshold (goes left).
    A missing value raises.
    """
    if not categories:
        return X
    import pandas as pd

    X = X.copy()
    for position, known in categories.items():
        name = X.columns[position]
        column = X.iloc[:, position]
        if column.isna().any():
            raise ValueError(f"X column {name!r} contains missing values; SCAFF does not accept NaN")
        codes = pd.Index(known).get_indexer(column.astype(object)).astype(np.float64)
        X[name] = codes
    return X


def encode_groups(sensitive_features, n_rows: int, *, intersectional: bool, theta: float):
    """(groups (n, n_columns) int32 with global ids, n_groups, column names).

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
        return np.zeros((n_rows, 0), dtype=np.int32), 0, []
    encoded = encode_sensitive(sensitive_features, n_rows)
    if intersectional:
        encoded = encoded.intersection()
    columns, offset = [], 0
    for codes, labels in zip(encoded.codes, encoded.labels):
        columns.append(codes.astype(np.int32) + offset)
        offset += len(labels)
    groups = np.ascontiguousarray(np.stack(columns, axis=1), dtype=np.int32)
    return groups, offset, list(encoded.names)
