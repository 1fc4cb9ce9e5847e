"""Input checks for the FairLOF detector; every error names the argument.

>>> import numpy as np
>>> check_finite(np.array([[0.0, 1.0], [2.0, 3.0]])).shape
(2, 2)
>>> encoded = encode_fit_groups({"sex": ["f", "m", "m", "f"]}, 4)
>>> encoded.names, encoded.labels, encoded.codes[:, 0].tolist()
(('sex',), (('f', 'm'),), [0, 1, 1, 0])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairops.metrics._inputs import encode_sensitive

from ..errors import InputError

# Neighbour distances square and sum the features (in float32 on the fast kernels): beyond this size
# they overflow, and a fit failed deep inside the search (from about 1e155) or scores came out infinite.
MAX_ABS_VALUE = 1e15


def check_finite(X: np.ndarray) -> np.ndarray:
    """X itself, or a ValueError if it holds NaN, infinite or extreme values (naming row and column).

    >>> check_finite(np.array([[0.0, 1.0], [2.0, 1e200]]))
    Traceback (most recent call last):
    ...
    fairops.errors.InputError: X[1, 1] = 1e+200 is beyond +-1e+15: FairLOF's distances square the features; rescale that column
    """  # noqa: E501 - a doctest's expected output is one line
    if not np.all(np.isfinite(X)):
        bad = ~np.isfinite(X)
        column = int(np.flatnonzero(bad.any(axis=0))[0])
        rows = np.flatnonzero(bad[:, column])
        what = "missing value (NaN)" if np.isnan(X[rows[0], column]) else "infinite value"
        raise InputError(f"X contains NaN or infinite values: column {column} has {len(rows)}, the first a {what} "
                         f"in row {int(rows[0])}; FairLOF measures distances between complete rows, so impute or drop "
                         "them before FairLOF")
    if X.size and np.abs(X).max() > MAX_ABS_VALUE:
        row, far = np.unravel_index(int(np.argmax(np.abs(X))), X.shape)
        raise InputError(f"X[{row}, {far}] = {X[row, far]:g} is beyond +-{MAX_ABS_VALUE:g}: FairLOF's distances "
                         "square the features; rescale that column")
    return X


def finite_scores(scores: np.ndarray) -> np.ndarray:
    """``scores`` or a ValueError naming the first row whose score is not finite."""
    if not np.all(np.isfinite(scores)):
        row = int(np.flatnonzero(~np.isfinite(scores))[0])
        raise InputError(f"row {row} scores {scores[row]}: it is too far from the fitted rows (or too close to a "
                         "duplicated one) for a finite FairLOF score")
    return scores


@dataclass(frozen=True)
class FitGroups:
    """Sensitive columns as an (n, n_attributes) code matrix with their names and readable values."""

    names: tuple
    labels: tuple
    codes: np.ndarray

    @property
    def n_values(self) -> np.ndarray:
        return np.array([len(values) for values in self.labels], dtype=np.intp)


def encode_fit_groups(sensitive_features, n_rows: int) -> FitGroups:
    """Encode the fit-time sensitive columns; refuse NaN, constant columns and groups of one row."""
    encoded = encode_sensitive(sensitive_features, n_rows, min_values=2)
    for name, codes, labels in zip(encoded.names, encoded.codes, encoded.labels):
        counts = np.bincount(codes, minlength=len(labels))
        if counts.min() < 2:
            lonely = labels[int(np.argmin(counts))]
            raise InputError(
                f"sensitive_features column {name!r} has a group of one row (value {lonely!r}); "
                "group statistics need at least 2 rows per value: merge rare values first"
            )
    codes = np.ascontiguousarray(np.stack(encoded.codes, axis=1), dtype=np.intp)
    return FitGroups(encoded.names, encoded.labels, codes)


def no_groups(n_rows: int) -> FitGroups:
    """No sensitive attribute: codes of shape (n_rows, 0).

    >>> no_groups(3).codes.shape
    (3, 0)
    """
    return FitGroups((), (), np.zeros((n_rows, 0), dtype=np.intp))


def encode_new_groups(sensitive_features, n_rows: int, names, labels) -> np.ndarray:
    """Codes of new rows in the fitted value order; a value unseen at fit time raises.

    >>> encode_new_groups(["m", "f"], 2, ("sex",), (("f", "m"),)).tolist()
    [[1], [0]]
    """
    if sensitive_features is None:
        raise InputError("sensitive_features is required to score new rows (their groups set the correction)")
    encoded = encode_sensitive(sensitive_features, n_rows, min_values=1)
    if len(encoded.names) != len(names):
        raise InputError(
            f"sensitive_features has {len(encoded.names)} column(s), the detector was fitted with "
            f"{len(names)}: {list(names)}"
        )
    order = list(range(len(names)))
    default = all(name.startswith("sensitive_") for name in encoded.names)
    if not default and tuple(encoded.names) != tuple(names):
        if sorted(encoded.names) != sorted(names):
            raise InputError(f"sensitive_features columns {list(encoded.names)} differ from the fitted {list(names)}")
        order = [list(encoded.names).index(name) for name in names]  # same columns, other order
    columns = []
    for position, name, fit_labels in zip(order, names, labels):
        new_codes, new_labels = encoded.codes[position], encoded.labels[position]
        lookup = {value: code for code, value in enumerate(fit_labels)}
        unseen = [value for value in new_labels if value not in lookup]
        if unseen:
            raise InputError(
                f"sensitive_features column {name!r} holds value(s) {unseen[:5]} unseen at fit time; "
                f"known values: {list(fit_labels)}"
            )
        mapping = np.array([lookup[value] for value in new_labels], dtype=np.intp)
        columns.append(mapping[new_codes])
    return np.ascontiguousarray(np.stack(columns, axis=1), dtype=np.intp)


def group_weights(c, names) -> np.ndarray:
    """c as one non-negative value per attribute (None -> 1/|S|; a scalar, sequence or dict by name)."""
    n_attributes = len(names)
    if n_attributes == 0:
        return np.zeros(0)
    if c is None:
        return np.full(n_attributes, 1.0 / n_attributes)
    if isinstance(c, dict):
        missing = [name for name in names if name not in c]
        if missing or len(c) != n_attributes:
            raise InputError(f"c must give one value per sensitive column {list(names)}, got keys {list(c)}")
        values = np.array([c[name] for name in names], dtype=np.float64)
    else:
        values = np.asarray(c, dtype=np.float64)
        if values.ndim == 0:
            values = np.full(n_attributes, float(values))
        if values.shape != (n_attributes,):
            raise InputError(f"c must be a scalar or hold {n_attributes} values, got shape {values.shape}")
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise InputError(f"c must hold finite non-negative values, got {values.tolist()}")
    return values
