"""Checks and encodings of the metric functions' inputs: scores, labels, sensitive groups.

Every check raises ``ValueError``/``TypeError`` naming the offending argument.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError


def as_scores(values, name: str) -> np.ndarray:
    """A finite 1-D float64 array."""
    array = np.asarray(values)
    if array.ndim != 1:
        raise InputError(f"{name} must be 1-D, got shape {array.shape}")
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got dtype {array.dtype}")
    array = np.ascontiguousarray(array, dtype=np.float64)
    if not np.all(np.isfinite(array)):
        raise InputError(f"{name} contains NaN or infinite values")
    return array


def as_binary_labels(values, name: str) -> np.ndarray:
    """A 1-D int8 array of 0/1 labels (booleans accepted)."""
    array = np.asarray(values)
    if array.ndim != 1:
        raise InputError(f"{name} must be 1-D, got shape {array.shape}")
    if array.dtype.kind == "b":
        return array.astype(np.int8)
    if array.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold 0/1 labels, got dtype {array.dtype}")
    if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        raise InputError(f"{name} contains NaN or infinite values")
    labels = array.astype(np.int8)
    if not np.all((labels == 0) | (labels == 1)) or not np.array_equal(labels, array):
        found = np.unique(array)[:5]
        raise InputError(f"{name} must hold only 0 and 1, found values such as {found.tolist()}")
    return labels


def check_same_length(**arrays) -> int:
    """The common length of the given arrays; a ValueError names the mismatch."""
    lengths = {name: len(array) for name, array in arrays.items()}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{name}={length}" for name, length in lengths.items())
        raise InputError(f"length mismatch: {listed}")
    (length,) = set(lengths.values()) or {0}
    if length == 0:
        raise InputError(f"{', '.join(lengths)} must not be empty")
    return length


@dataclass(frozen=True)
class EncodedGroups:
    """Sensitive columns as integer codes.

    ``codes[j]`` holds column ``j``'s code per row; ``labels[j][c]`` is the readable
    value behind code ``c``; ``names[j]`` is the column's name.
    """

    names: tuple[str, ...]
    codes: tuple[np.ndarray, ...]
    labels: tuple[tuple, ...]

    @property
    def n_rows(self) -> int:
        return len(self.codes[0])

    def intersection(self) -> EncodedGroups:
        """One column whose values are the tuples of all columns' values seen together."""
        if len(self.codes) == 1:
            return self
        sizes = [len(labels) for labels in self.labels]
        combined = np.zeros(self.n_rows, dtype=np.intp)
        for codes, size in zip(self.codes, sizes):
            combined = combined * size + codes
        used, codes = compact_codes(combined, int(np.prod(sizes)))
        labels = tuple(
            tuple(self.labels[j][index] for j, index in enumerate(np.unravel_index(value, sizes)))
            for value in used
        )
        return EncodedGroups(("&".join(self.names),), (codes,), (labels,))


def compact_codes(codes: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(the code values that occur, sorted; codes renumbered 0..k-1 in that order), in O(n + size)."""
    used = np.flatnonzero(np.bincount(codes, minlength=size))
    lookup = np.zeros(size, dtype=np.intp)
    lookup[used] = np.arange(len(used))
    return used, lookup[codes]


def _column_values(sensitive_features):
    """(name, column) pairs from a DataFrame, Series, dict, 1-D or 2-D array."""
    columns = getattr(sensitive_features, "columns", None)
    if columns is not None:  # a DataFrame
        return [(str(name), sensitive_features[name]) for name in columns]
    if isinstance(sensitive_features, dict):
        return [(str(name), values) for name, values in sensitive_features.items()]
    if getattr(sensitive_features, "ndim", None) == 1 and hasattr(sensitive_features, "name"):
        name = sensitive_features.name  # a Series
        return [(str(name) if name is not None else "sensitive_0", sensitive_features)]
    array = np.asarray(sensitive_features)
    if array.ndim == 1:
        return [("sensitive_0", array)]
    if array.ndim == 2:
        return [(f"sensitive_{j}", array[:, j]) for j in range(array.shape[1])]
    raise InputError(f"sensitive_features must be 1-D or 2-D, got shape {array.shape}")


def _value_kind(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "boolean"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return "number"
    if isinstance(value, str):
        return "text"
    return type(value).__name__


# pandas' inferred types of an object column holding values of one kind (see _value_kind)
_ONE_KIND = frozenset({"string", "boolean", "integer", "floating", "mixed-integer-float", "empty"})


def _refuse_mixed_kinds(name: str, array: np.ndarray) -> None:
    """Refuse a column mixing numbers, text, booleans or other objects.

    Merging them (1 and "1" as one group, say) would silently change who is compared with whom.

    >>> _refuse_mixed_kinds("sex", np.array(["f", 1], dtype=object))
    Traceback (most recent call last):
    ...
    fairops.errors.InputError: sensitive_features column 'sex' mixes value types (number: 1, text: 'f'); give every value the same type
    """  # noqa: E501 - a doctest's expected output is one line
    examples: dict = {}
    for value in array:
        examples.setdefault(_value_kind(value), value)
        if len(examples) > 1:
            listed = ", ".join(f"{kind}: {examples[kind]!r}" for kind in sorted(examples))
            raise InputError(
                f"sensitive_features column {name!r} mixes value types ({listed}); give every value the same type"
            )


def _encode_column(name: str, column) -> tuple[np.ndarray, np.ndarray]:
    """(uniques, codes) of one column; missing values raise."""
    categorical = getattr(column, "cat", None)
    if categorical is not None:  # pandas categorical: reuse its codes, drop unused categories
        raw_codes = np.asarray(categorical.codes, dtype=np.intp)
        if np.any(raw_codes < 0):
            raise InputError(f"sensitive_features column {name!r} contains missing values")
        categories = np.asarray(categorical.categories, dtype=object)
        used, codes = compact_codes(raw_codes, len(categories))
        return categories[used], codes
    array = np.asarray(column)
    if array.ndim != 1:
        raise InputError(f"sensitive_features column {name!r} must be 1-D, got shape {array.shape}")
    if array.dtype.kind == "f" and np.isnan(array).any():
        raise InputError(f"sensitive_features column {name!r} contains missing values")
    if array.dtype.kind == "O":
        import pandas as pd  # only object columns need it: the checks and the encoding in compiled code

        if pd.isna(array).any():
            raise InputError(f"sensitive_features column {name!r} contains missing values")
        if pd.api.types.infer_dtype(array, skipna=False) not in _ONE_KIND:
            _refuse_mixed_kinds(name, array)  # names the kinds it finds
        codes, uniques = pd.factorize(array, sort=True)
        return np.asarray(uniques, dtype=object), codes.astype(np.intp, copy=False)
    return np.unique(array, return_inverse=True)


def encode_sensitive(sensitive_features, n_rows: int | None = None, *, min_values: int = 2) -> EncodedGroups:
    """Encode sensitive columns as integer codes per column, the way every fairops metric and model reads them.

    Accepts a DataFrame, a Series, a dict of columns, or a 1-D/2-D array. Refuses missing values, values of
    mixed types, columns of the wrong length and columns with fewer than ``min_values`` distinct values.

    >>> import pandas as pd
    >>> groups = encode_sensitive(pd.DataFrame({"sex": ["f", "m", "f"], "race": ["a", "a", "b"]}))
    >>> groups.names, [c.tolist() for c in groups.codes], groups.labels
    (('sex', 'race'), [[0, 1, 0], [0, 0, 1]], (('f', 'm'), ('a', 'b')))
    >>> joint = groups.intersection()
    >>> joint.names, joint.codes[0].tolist(), joint.labels[0]
    (('sex&race',), [0, 2, 1], (('f', 'a'), ('f', 'b'), ('m', 'a')))
    """
    if sensitive_features is None:
        raise InputError("sensitive_features is required")
    pairs = _column_values(sensitive_features)
    if not pairs:
        raise InputError("sensitive_features has no columns")
    names, codes, labels = [], [], []
    for name, column in pairs:
        if n_rows is not None and len(column) != n_rows:
            raise InputError(
                f"sensitive_features column {name!r} has {len(column)} rows, expected {n_rows}"
            )
        uniques, inverse = _encode_column(name, column)
        if len(uniques) < min_values:
            raise InputError(
                f"sensitive_features column {name!r} has {len(uniques)} distinct value(s) "
                f"({list(uniques)}); at least {min_values} are needed to compare groups"
            )
        names.append(name)
        codes.append(np.ascontiguousarray(inverse.ravel(), dtype=np.intp))
        labels.append(tuple(value.item() if hasattr(value, "item") else value for value in uniques))
    return EncodedGroups(tuple(names), tuple(codes), tuple(labels))
