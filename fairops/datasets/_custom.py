"""Load a data set of one's own from a CSV or Parquet file."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd

from .._column_names import describe, near_misses, space_clashes
from ..errors import InputError
from ..metrics import Task
from ._bundled import Dataset, _finish

READERS = {".csv": pd.read_csv, ".parquet": pd.read_parquet}


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _binary_target(column: pd.Series, name: str, positive=None) -> tuple[np.ndarray, str]:
    """0/1 labels from a two-valued column without missing values and which value is positive: ``positive``
    when given (matched as written, e.g. ``"10"`` or ``">50K"``), else the larger value (numbers by value,
    text in sorted order).

    >>> _binary_target(pd.Series([9, 10, 10]), "y")[1], _binary_target(pd.Series([9, 10]), "y", "9")[1]
    ('y = 10', 'y = 9')
    """
    values = column.unique().tolist()
    numeric = all(_is_number(value) for value in values)
    values = sorted(values) if numeric else sorted(values, key=str)
    if len(values) != 2:
        shown = values[:6]
        raise InputError(f"target column {name!r} must have exactly two classes, found {len(values)}: {shown}")
    if positive is not None:
        matches = [value for value in values if str(value) == str(positive)
                   or (numeric and _as_float(positive) == value)]
        if len(matches) != 1:
            raise InputError(f"--positive {positive!r} is not one of the values of target column {name!r}: {values}")
        chosen = matches[0]
    else:
        chosen = values[1]
    if positive is None and (set(values) <= {0, 1} or set(values) <= {False, True}):
        return column.astype(int).to_numpy(), f"{name} = {values[1]!s}"
    return (column == chosen).to_numpy(), f"{name} = {chosen!s}"


def _as_float(text) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def _duplicate_columns(path: Path, frame: pd.DataFrame) -> list[str]:
    """Column names the file repeats (pandas renames a repeated CSV header ``x`` to ``x.1``)."""
    if path.suffix.lower() == ".csv":
        header = pd.read_csv(path, header=None, nrows=1, dtype=str).iloc[0].tolist()
    else:
        header = list(frame.columns)
    return sorted({str(name) for name in header if header.count(name) > 1})


def _check_names(path: Path, frame: pd.DataFrame) -> None:
    """Refuse a file repeating a column name, or naming two that differ only by surrounding spaces.

    Names are compared exactly, never stripped (see :mod:`fairops._column_names`): ``x1`` and `` x1 ``
    would train as two columns, and a served request could not tell them apart.
    """
    repeated = _duplicate_columns(path, frame)
    if repeated:
        raise InputError(f"{path.name} names column(s) {repeated} more than once; rename them")
    clashes = space_clashes(list(frame.columns))
    if clashes:
        shown = "; ".join(describe(group) for group in clashes)
        raise InputError(f"{path.name} has columns that differ only by surrounding spaces: {shown}; rename them "
                         "(column names are compared exactly)")


def check_features(frame: pd.DataFrame) -> None:
    """Refuse feature columns no model can learn from: all missing, or holding an infinite value.

    >>> check_features(pd.DataFrame({"x": [1.0, float("inf")]}))
    Traceback (most recent call last):
    ...
    fairops.errors.InputError: feature column 'x' holds an infinite value (row 1); replace it or drop the column
    """
    for name in frame.columns:
        column = frame[name]
        if column.isna().all():
            raise InputError(f"feature column {name!r} is empty (every value missing); drop it")
        if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
            infinite = np.isinf(column.to_numpy(dtype=np.float64, na_value=0.0))
            if infinite.any():
                raise InputError(f"feature column {name!r} holds an infinite value (row {int(np.argmax(infinite))});"
                                 " replace it or drop the column")


def _missing_text(column: pd.Series) -> str:
    """``has 2 missing values in 1,000 rows (rows 3, 17)``: how many, of how many, and the first rows."""
    rows = np.flatnonzero(column.isna().to_numpy())
    shown = ", ".join(str(r) for r in rows[:5]) + (", ..." if len(rows) > 5 else "")
    return f"has {len(rows):,} missing value{'s' if len(rows) != 1 else ''} in {len(column):,} rows (rows {shown})"


def _read(reader, path: Path) -> pd.DataFrame:
    """The file's rows, or a ValueError naming the file when it has no columns or no rows."""
    try:
        frame = reader(path)
    except pd.errors.EmptyDataError:
        raise InputError(f"data file {str(path)!r} is empty: give a header line naming the columns, then one "
                         "line per row") from None
    except (ValueError, OSError) as error:  # a malformed CSV, a damaged Parquet file, bytes that are not text
        raise InputError(f"data file {str(path)!r} cannot be read as {path.suffix.lower()[1:]}: {error}") from None
    if len(frame) == 0:
        raise InputError(f"data file {str(path)!r} has a header but 0 rows (columns: {list(frame.columns)}); "
                         "add the rows to learn from") from None
    return frame


_TRUE, _FALSE = {"1", "true", "yes"}, {"0", "false", "no"}


def holdout_rows(column: pd.Series, name: str) -> np.ndarray:
    """Row positions a yes/no column marks as held out (1 / true / yes; 0 / false / no, any case).

    >>> holdout_rows(pd.Series(["no", "Yes", "0", "1"]), "fresh").tolist()
    [1, 3]
    """
    if column.isna().any():
        raise InputError(f"holdout column {name!r} {_missing_text(column)}; mark every row held out or not")
    if pd.api.types.is_numeric_dtype(column):  # bools and numbers: 1 / 0 by value (1.0 is 1)
        text = column.map(lambda value: {1: "1", 0: "0"}.get(value, str(value)))
    else:
        text = column.astype(str).str.strip().str.lower()
    unknown = sorted(set(text) - _TRUE - _FALSE)
    if unknown:
        raise InputError(f"holdout column {name!r} must say yes or no per row (1/0, true/false, yes/no), "
                         f"found {unknown[:6]}")
    held = np.flatnonzero(text.isin(_TRUE).to_numpy())
    if len(held) == 0 or len(held) == len(text):
        raise InputError(f"holdout column {name!r} marks {len(held)} of {len(text)} rows held out; it must "
                         "leave some rows on each side")
    return held


def _check_roles(path: Path, frame: pd.DataFrame, target: str, columns: list, holdout) -> None:
    """Refuse target, sensitive and holdout columns the file lacks, or that name one column twice."""
    missing = [c for c in [target, *columns] if c not in frame.columns]
    if missing:
        similar = "".join(f"; {describe(names)} differ(s) from {name!r} only by surrounding spaces (rename the "
                          "column: names are compared exactly)"
                          for name, names in near_misses(missing, list(frame.columns)).items())
        raise InputError(f"column(s) {missing} not in {path.name}; it has {list(frame.columns)}{similar}")
    if not columns:
        raise InputError("name at least one sensitive column")
    if holdout is not None:
        if holdout not in frame.columns:
            raise InputError(f"holdout column {holdout!r} not in {path.name}; it has {list(frame.columns)}")
        if holdout == target or holdout in columns:
            raise InputError(f"holdout column {holdout!r} is the target or a sensitive column")
    if target in columns:
        raise InputError(f"sensitive column {target!r} is the target column; a fairness ratio over the label "
                         "itself measures nothing")
    repeated = sorted({c for c in columns if columns.count(c) > 1})
    if repeated:
        raise InputError(f"sensitive column(s) {repeated} named more than once")


def _unlabelled(frame: pd.DataFrame, target: str) -> tuple[pd.DataFrame, int]:
    """The rows with a label, renumbered, and how many were left out for a missing one.

    >>> _unlabelled(pd.DataFrame({"x": [1, 2, 3], "y": [0, None, 1]}), "y")
    (   x    y
    0  1  0.0
    1  3  1.0, 1)
    """
    missing = frame[target].isna().to_numpy()
    if missing.all():
        raise InputError(f"target column {target!r} is empty (every value missing); there is nothing to learn from")
    return frame.loc[~missing].reset_index(drop=True), int(missing.sum())


def _fill_groups(frame: pd.DataFrame, columns, missing_group, source: str) -> None:
    """Refuse a sensitive column with missing values (their count and first rows), or, with ``missing_group``,
    make those rows a group of that name (in the features too), in place."""
    for column in columns:
        values = frame[column]
        if not values.isna().any():
            continue
        if missing_group is None:
            raise InputError(f"sensitive column {column!r} of {source} {_missing_text(values)}; fairness is "
                             "measured per group and these rows have none: give --missing-group NAME to make "
                             "them a group of their own, or drop those rows")
        if (values.astype(str) == str(missing_group)).any():
            raise InputError(f"--missing-group {missing_group!r} is already a value of sensitive column {column!r}; "
                             "choose a name it does not hold")
        frame[column] = values.astype(object).where(values.notna(), str(missing_group))


def load_table(path: str | Path, *, target: str, sensitive: str | list[str], task: str = "precision@tpr=0.5,ratio=tpr",
               drop_sensitive: bool = False, positive: str | None = None, holdout: str | None = None,
               missing_group: str | None = None) -> Dataset:
    """A :class:`Dataset` from a ``.csv`` or ``.parquet`` file.

    Refused with an error: repeated column names, names differing only by surrounding spaces (``x1``, `` x1 ``:
    never stripped), feature columns all missing or holding an infinite value, a top-k task over the file's row count.
    Missing feature values stay missing (each model family takes them its own way); a row without a label is
    left out (the dataset's ``unlabelled`` counts them); a row without a sensitive value is refused with the
    count and the first rows, unless ``missing_group`` names a group for such rows.

    Parameters
    ----------
    path : str or Path
        The ``.csv`` or ``.parquet`` file.
    target : str
        The label column: two values; a row missing it is left out and counted.
    sensitive : str or list of str
        One or more columns (a list or a comma-separated string); the fairness ratio counts each (the lowest of
        their ratios, or their intersectional groups with ``,groups=intersectional``).
    task : str, default="precision@tpr=0.5,ratio=tpr"
        The task in :meth:`~fairops.metrics.Task.from_string`'s grammar.
    drop_sensitive : bool, default=False
        Drop the sensitive columns from the features.
    positive, holdout : str or None, default=None
        The target value that is label 1 (default: the larger value); a yes/no column marking rows held out
        (the dataset's ``held_out`` row positions; not a feature).
    missing_group : str or None, default=None
        The group of rows missing a sensitive value (None: such rows are refused). Refusing is the default:
        those rows belong to no group a fairness ratio counts, and making them a group of unknown make-up
        can decide which model looks fairest (the lowest ratio over the groups), so it is the user's call.

    Returns
    -------
    Dataset
        The file's data, named after the file, with the task.

    Examples
    --------
    >>> import tempfile, pandas as pd
    >>> path = tempfile.mkdtemp() + "/toy.csv"
    >>> pd.DataFrame({"x": [1, 2, 3, 4], "g": list("abab"), "y": [0, 1, 1, 0]}).to_csv(path, index=False)
    >>> data = load_table(path, target="y", sensitive="g")
    >>> data.X.columns.tolist(), data.y.tolist(), str(data.task), data.task.positive
    (['x', 'g'], [0, 1, 1, 0], 'precision@tpr=0.5,ratio=tpr', 'y = 1')
    """
    path = Path(path)
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        raise InputError(f"data file {str(path)!r} must end in one of {sorted(READERS)}")
    if not path.is_file():
        raise InputError(f"data file {str(path)!r} does not exist")
    frame = _read(reader, path)
    _check_names(path, frame)
    columns = [c.strip() for c in sensitive.split(",")] if isinstance(sensitive, str) else list(sensitive)
    _check_roles(path, frame, target, columns, holdout)
    frame, unlabelled = _unlabelled(frame, target)
    held_out = None if holdout is None else holdout_rows(frame.pop(holdout), holdout)
    y, positive = _binary_target(frame.pop(target), target, positive)
    check_features(frame)
    _fill_groups(frame, columns, missing_group, path.name)
    groups = frame[columns]
    for column in columns:
        if groups[column].nunique() < 2:
            raise InputError(f"sensitive column {column!r} has a single value; fairness needs two groups")
    spec = Task.from_string(task, sensitive=columns, positive=positive)
    spec.check_rows(len(frame), f"{path.name}")
    data = dataclasses.replace(_finish(path.stem, frame, y, groups.astype(str), spec, str(path), drop_sensitive),
                               unlabelled=unlabelled)
    return data if held_out is None else dataclasses.replace(data, held_out=held_out)
