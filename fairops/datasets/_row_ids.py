"""Rows known by their content: a 64-bit hash per row, and a held-out part chosen by it.

Two rules. :func:`row_hashes` covers a row's feature and sensitive values, not its label or its place in the
file, so the same person hashes the same in a re-ordered or grown copy of the file; :func:`content_holdout`
chooses test rows by these hashes, so a file's held-out rows do not depend on the tuning seed or the row order:
two tunes of one file hold out the same rows, and a gate on those rows judges both models on data neither saw.

:func:`record_hashes` (rule :data:`RECORD_RULE`) is what a version's row record keeps and the gate compares:
a row by the columns the model reads, its sensitive columns and its label, each column taken by name, so a
file's other columns (pandas' index written as a first column, an ID) change nothing. In both rules numbers are
hashed by value (``3`` and ``3.0`` agree), text as written.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError

#: The rule of :func:`row_hashes` (every column given): the record of versions registered before
#: :data:`RECORD_RULE`, refused by name now.
HASH_RULE = "fairops-row-v1"
#: The rule of :func:`record_hashes`, stored with a row record so another rule is never compared with it.
RECORD_RULE = "fairops-row-v2"


def _canonical(frame: pd.DataFrame) -> pd.DataFrame:
    """Every column as text: numbers through float64 (so ints and floats of one value agree), the rest as
    written; columns in name order, so a file with its columns re-ordered hashes the same."""
    columns = {}
    for name in sorted(frame.columns, key=str):
        column = frame[name]
        if pd.api.types.is_bool_dtype(column):
            column = column.astype(int)
        if pd.api.types.is_numeric_dtype(column):
            columns[str(name)] = column.astype("float64").map(repr)
        else:
            columns[str(name)] = column.astype(str)
    return pd.DataFrame(columns, index=frame.index)


def row_hashes(X: pd.DataFrame, sensitive: pd.DataFrame | None = None) -> np.ndarray:
    """One uint64 per row of ``X`` (plus the ``sensitive`` columns ``X`` does not hold).

    >>> import pandas as pd
    >>> a = pd.DataFrame({"x": [1, 2], "g": ["a", "b"]})
    >>> b = pd.DataFrame({"g": ["b", "a"], "x": [2.0, 1.0]})
    >>> bool((row_hashes(a) == row_hashes(b)[::-1]).all())
    True
    """
    frame = pd.DataFrame(X).reset_index(drop=True)
    if sensitive is not None:
        groups = pd.DataFrame(sensitive).reset_index(drop=True)
        extra = [c for c in groups.columns if c not in frame.columns]
        if len(groups) != len(frame):
            raise InputError(f"sensitive has {len(groups)} rows, X has {len(frame)}")
        frame = pd.concat([frame, groups[extra]], axis=1)
    if frame.shape[1] == 0:
        raise InputError("rows without columns have no content to know them by")
    return pd.util.hash_pandas_object(_canonical(frame), index=False).to_numpy(dtype=np.uint64)


def record_hashes(X: pd.DataFrame, y, sensitive: pd.DataFrame, columns) -> np.ndarray:
    """One uint64 per row (rule :data:`RECORD_RULE`) over the named ``columns`` and the 0/1 label ``y``.

    A column is taken from ``X``, else from ``sensitive``; any other column of ``X`` is ignored.

    Parameters
    ----------
    X : DataFrame
        The rows (the model's input columns among others).
    y : array-like of shape (n_samples,)
        Their 0/1 labels.
    sensitive : DataFrame
        Their sensitive columns.
    columns : iterable of str
        The columns to hash (the model's inputs and the sensitive columns), by name.

    Returns
    -------
    ndarray of uint64
        One hash per row.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"x": [1, 2], "g": ["a", "b"]})
    >>> with_id = rows.assign(id=[7, 8])[["id", "x", "g"]]
    >>> bool((record_hashes(rows, [0, 1], rows[["g"]], ["x", "g"])
    ...       == record_hashes(with_id, [0, 1], rows[["g"]], ["g", "x"])).all())
    True
    """
    frame = pd.DataFrame(X).reset_index(drop=True)
    groups = pd.DataFrame(sensitive).reset_index(drop=True)
    labels = np.asarray(y)
    if len(groups) != len(frame) or len(labels) != len(frame):
        raise InputError(f"{len(frame)} rows, {len(groups)} rows of sensitive columns and {len(labels)} labels")
    names = sorted(set(columns), key=str)
    missing = [name for name in names if name not in frame.columns and name not in groups.columns]
    if missing or not names:
        raise InputError(f"the rows lack the column(s) {missing} a row is known by; they have "
                         f"{[*frame.columns, *(c for c in groups.columns if c not in frame.columns)]}" if missing
                         else "rows without columns have no content to know them by")
    picked = pd.DataFrame({str(name): frame[name] if name in frame.columns else groups[name] for name in names})
    canonical = _canonical(picked)
    canonical["\0label"] = pd.Series(labels.astype(np.int64), index=canonical.index).map(repr)
    return pd.util.hash_pandas_object(canonical, index=False).to_numpy(dtype=np.uint64)


def content_holdout(y, sensitive_features, hashes: np.ndarray, *, share: float = 0.2) -> np.ndarray:
    """Sorted row indices of a held-out part of ``share`` of the rows, stratified by label x group, chosen
    in each (label, group) cell by row hash (the lowest hashes) rather than by a seed. Identical rows fall
    on the same side, so the part is the same whatever the row order (a cell may give a row or two more).

    >>> import numpy as np
    >>> y = np.array([0, 1] * 50); s = np.array(["a"] * 50 + ["b"] * 50)
    >>> hashes = np.arange(100, dtype=np.uint64)[::-1]
    >>> held = content_holdout(y, s, hashes, share=0.2)
    >>> len(held), held[:3].tolist()
    (20, [40, 41, 42])
    """
    from ._splits import strata

    if not 0 < share < 1:
        raise InputError(f"share must be in (0, 1), got {share}")
    hashes = np.asarray(hashes, dtype=np.uint64)
    cells = strata(y, sensitive_features)
    if len(hashes) != len(cells):
        raise InputError(f"{len(hashes)} row hashes for {len(cells)} rows")
    order = np.lexsort((np.arange(len(cells)), hashes, cells))  # by cell, then hash, then position
    bounds = np.flatnonzero(np.diff(cells[order])) + 1
    held = []
    for members in np.split(order, bounds):
        count = int(round(share * len(members)))
        if count:  # copies of the last row taken go along, so identical rows never straddle the cut
            count = int(np.searchsorted(hashes[members], hashes[members[count - 1]], side="right"))
        held.append(members[:count])
    return np.sort(np.concatenate(held))
