"""A number in [0, 1) per row that depends on the row's values alone: a fixed, group-blind tie-break.

A reduction's ``"decisions"`` score is its randomized classifier's chance of deciding positive, which
takes few values: many rows tie, and a task's threshold falls inside such a tie. Broken at random (as
the task's evaluation does), the tie leaves each group's rate as the randomized classifier had it; broken
all one way (as a served row must be, alone in its request), it does not (on COMPAS, a tree reduction
measured at 87.9% test FPR ratio served 59.1%). :func:`row_uniforms` gives each row a pseudo-random
number computed from its own values, so the tie is broken the same way in evaluation and in serving,
for a row alone or in any batch, on any machine, and without regard to the group (the hash mixes every
value; it is not ordered by any of them).

The hash is splitmix64's finaliser over the row's 64-bit values, column by column (a zero and a negative
zero are one value, every NaN is one value; a category column hashes its category's text, a text or
object column its values' text).

>>> import numpy as np
>>> X = np.array([[0.0, 1.0], [0.0, 1.0], [2.0, -0.0]])
>>> u = row_uniforms(X)
>>> bool(u[0] == u[1]), bool(0 <= u.min() and u.max() < 1), bool(row_uniforms(X[2:])[0] == u[2])
(True, True, True)
"""

from __future__ import annotations

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MUL_1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL_2 = np.uint64(0x94D049BB133111EB)
_CHUNK_ROWS = 65_536


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser (a bijection of 64-bit words that spreads every input bit)."""
    h = (h ^ (h >> np.uint64(30))) * _MUL_1
    h = (h ^ (h >> np.uint64(27))) * _MUL_2
    return h ^ (h >> np.uint64(31))


def _float_words(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64) + 0.0  # -0.0 becomes 0.0
    values = np.where(np.isnan(values), np.nan, values)  # one NaN
    return values.view(np.uint64)


def _text_words(values) -> np.ndarray:
    """64-bit words of text values, from their UTF-8 bytes (eight at a time, mixed); each distinct text once."""
    texts, inverse = np.unique(np.asarray([str(value) for value in values], dtype=object), return_inverse=True)
    words = np.empty(len(texts), dtype=np.uint64)
    for i, text in enumerate(texts):
        data = text.encode("utf-8")
        data += b"\0" * (-len(data) % 8) + len(data).to_bytes(8, "little")
        h = np.zeros(1, dtype=np.uint64)
        for chunk in np.frombuffer(data, dtype="<u8"):
            h = _mix(h ^ chunk)
        words[i] = h[0]
    return words[inverse.reshape(-1)]


def _column_words(X):
    """Each column's 64-bit words (a DataFrame's category and object columns through their text)."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    if hasattr(X, "columns") and hasattr(X, "iloc"):
        for name in X.columns:
            column = X[name]
            if str(column.dtype) == "category":
                categories = _text_words(column.cat.categories)
                codes = column.cat.codes.to_numpy()
                yield np.where(codes >= 0, categories[np.maximum(codes, 0)], _float_words(np.array([np.nan]))[0])
            elif is_numeric_dtype(column.dtype) or is_bool_dtype(column.dtype):
                yield _float_words(column.to_numpy(dtype=np.float64, na_value=np.nan))
            else:  # object, string and anything else: through its text
                yield _text_words(column.to_numpy())
        return
    array = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
    for j in range(array.shape[1]):
        yield _float_words(array[:, j])


def row_uniforms(X) -> np.ndarray:
    """One number in [0, 1) per row of ``X`` (an array, a sparse matrix or a DataFrame), from its values alone."""
    n_rows = X.shape[0]
    if hasattr(X, "toarray") and n_rows > _CHUNK_ROWS:  # a sparse matrix, densified a slice at a time
        return np.concatenate([row_uniforms(X[start:start + _CHUNK_ROWS]) for start in range(0, n_rows, _CHUNK_ROWS)])
    h = np.full(n_rows, _GOLDEN, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for words in _column_words(X):
            h = _mix(h ^ words) + _GOLDEN
        h = _mix(h)
    return (h >> np.uint64(11)).astype(np.float64) / float(1 << 53)
