"""What a fitted model takes, read off the model: missing values per column, and categories unseen in training.

:meth:`fairops.models.InputSchema.for_model` records both in a served model's input schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    from sklearn.base import BaseEstimator


def _leaves(model):
    """The estimators a fitted model is made of (pipeline steps and column-transformer parts, recursively)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline

    if isinstance(model, Pipeline):
        for _, step in model.steps:
            yield from _leaves(step)
    elif isinstance(model, ColumnTransformer):
        parts = getattr(model, "transformers_", model.transformers)
        for _, part, _ in parts:
            if not isinstance(part, str):  # "drop" and "passthrough" are strings
                yield from _leaves(part)
    elif model is not None and not isinstance(model, str):
        yield model


def columns_taking_missing_values(model: BaseEstimator, frame: pd.DataFrame) -> list[str]:
    """The columns of ``frame`` where ``model`` answers a training row with that value missing.

    Each column is probed on the first row with that column's value missing: the model must return
    finite probabilities without raising. The probes go to the model as one batch, a row per column;
    a batch that raises (one refused row is enough) is probed again as two, its number columns and its
    other columns, and a batch of one kind that raises one column at a time. Each row of a batch is
    answered on its own (scikit-learn's contract for ``predict_proba``), so the answer is the one the
    probes one at a time give.

    Parameters
    ----------
    model : estimator
        A fitted model with ``predict_proba``.
    frame : DataFrame
        Its training rows.

    Returns
    -------
    list of str
        The columns it takes missing.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0], "b": [1.0, 0.0, 1.0, 0.0]})
    >>> columns_taking_missing_values(LogisticRegression().fit(X, [0, 0, 1, 1]), X)
    []
    >>> columns_taking_missing_values(DecisionTreeClassifier().fit(X, [0, 0, 1, 1]), X)
    ['a', 'b']
    """
    return columns_taking(model, frame, list(frame.columns))


def columns_taking(model: BaseEstimator, frame: pd.DataFrame, columns: list[str]) -> list[str]:
    """:func:`columns_taking_missing_values` probing ``columns`` of ``frame`` only, in their order."""
    import pandas as pd

    row = frame.iloc[[0]].astype({c: object for c in frame.columns
                                  if isinstance(frame[c].dtype, pd.CategoricalDtype)})
    kinds = {column: _probe_kind(row[column]) for column in columns}
    taking = set().union(*(_taken(model, row, [column], kinds) for column in columns if kinds[column] is None))
    taking |= _taken(model, row, [column for column in columns if kinds[column] is not None], kinds)
    return [column for column in columns if column in taking]


def _probe_kind(series: pd.Series) -> type | None:
    """The dtype a probe's missing value needs in its column: object for an object column, float for a
    number or boolean one; None for any other column (probed alone, as its values need not read as either)."""
    if series.dtype == object:
        return object
    if isinstance(series.dtype, np.dtype) and series.dtype.kind in "biuf":
        return float
    return None


def _taken(model: BaseEstimator, row: pd.DataFrame, columns: list[str], kinds: dict) -> set[str]:
    """The columns of ``columns`` that ``model`` takes missing, probed as one batch; a batch that raises is
    split by kind, and a batch of one kind into single columns."""
    if len(columns) <= 1:
        return {column for column in columns if _answers_alone(model, row, column)}
    answers = _answers(model, _probe_rows(row, columns))
    if answers is not None:
        return {column for column, answered in zip(columns, answers) if answered}
    parts = [[column for column in columns if kinds[column] is kind] for kind in (float, object)]
    if not all(parts):  # a batch of one kind: one column at a time
        parts = [[column] for column in columns]
    return set().union(*(_taken(model, row, part, kinds) for part in parts))


def _probe_rows(row: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """A copy of ``row`` per column of ``columns``, the i-th with the i-th column's value missing (None in
    an object column, NaN in a float one: a number column becomes float, as a served request makes it)."""
    import pandas as pd

    rows = row.iloc[[0] * len(columns)].set_axis(pd.RangeIndex(len(columns)))
    for position, column in enumerate(columns):
        dtype = object if row[column].dtype == object else float
        values = rows[column].to_numpy(dtype=dtype, copy=True)
        values[position] = None if dtype is object else np.nan
        rows[column] = values
    return rows


def _answers(model: BaseEstimator, rows: pd.DataFrame) -> np.ndarray | None:
    """Per row, whether ``model`` answers it with finite probabilities; None when the batch raises (or
    returns other than a row of probabilities per row)."""
    probabilities = _probabilities(model, rows)
    if probabilities is None or probabilities.ndim != 2 or len(probabilities) != len(rows):
        return None
    return np.isfinite(probabilities).all(axis=1)


def _answers_alone(model: BaseEstimator, row: pd.DataFrame, column: str) -> bool:
    """Whether ``model`` answers ``row`` with ``column``'s value missing with finite probabilities."""
    import pandas as pd

    probe = row.copy()
    probe[column] = pd.Series([None], index=probe.index, dtype=object if row[column].dtype == object else float)
    probabilities = _probabilities(model, probe)
    return probabilities is not None and bool(np.isfinite(probabilities).all())


def _probabilities(model: BaseEstimator, rows: pd.DataFrame) -> np.ndarray | None:
    """``model.predict_proba(rows)`` as floats, warnings silenced; None when it raises."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(model.predict_proba(rows), dtype=np.float64)
    except Exception:  # noqa: BLE001 - whatever the model raises, it does not take the value
        return None


def takes_unseen_categories(model: BaseEstimator) -> bool:
    """Whether ``model`` one-hot encodes its categories and ignores unknown ones.

    Parameters
    ----------
    model : estimator
        The model (pipeline steps and column-transformer parts are read recursively).

    Returns
    -------
    bool
        True when it holds a ``OneHotEncoder`` and every one ignores unknown categories.

    Examples
    --------
    >>> from sklearn.preprocessing import OneHotEncoder
    >>> takes_unseen_categories(OneHotEncoder(handle_unknown="ignore")), takes_unseen_categories(OneHotEncoder())
    (True, False)
    """
    from sklearn.preprocessing import OneHotEncoder

    encoders = [part for part in _leaves(model) if isinstance(part, OneHotEncoder)]
    return bool(encoders) and all(encoder.handle_unknown != "error" for encoder in encoders)
