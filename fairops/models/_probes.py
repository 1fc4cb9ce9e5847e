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

    Probed one column at a time on the first row: the model must return finite probabilities
    without raising.

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
    import warnings

    import pandas as pd

    row = frame.iloc[[0]].astype({c: object for c in frame.columns
                                  if isinstance(frame[c].dtype, pd.CategoricalDtype)})
    taking = []
    for column in frame.columns:
        probe = row.copy()
        probe[column] = pd.Series([None], index=probe.index, dtype=object if row[column].dtype == object else float)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                answered = bool(np.isfinite(np.asarray(model.predict_proba(probe), dtype=np.float64)).all())
        except Exception:  # noqa: BLE001 - whatever the model raises, it does not take the value
            answered = False
        if answered:
            taking.append(column)
    return taking


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
