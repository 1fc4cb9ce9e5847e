"""A refit model made ready to serve: the step that restores training categories in front, the decision it
serves, and the rows a client sends it.

>>> import pandas as pd
>>> from sklearn.linear_model import LogisticRegression
>>> X = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0], "g": pd.Categorical(list("abab"))})
>>> model = servable(LogisticRegression().fit(X[["x"]], [0, 0, 1, 1]), X[["x"]])
>>> [name for name, _ in model.steps], as_client_rows(X).dtypes["g"]
(['restore_categories', 'model'], dtype('O'))
"""

from __future__ import annotations

import dataclasses

from ._columns import RestoreCategories
from ._decision import ServedDecision


def servable(model, X_train):
    """The refit model behind a step that restores the training categories of text input."""
    from sklearn.pipeline import Pipeline

    return Pipeline([("restore_categories", RestoreCategories().fit(X_train)), ("model", model)])


def as_client_rows(frame):
    """Category columns as plain strings: what a client sends to a served model."""
    return frame.astype({c: object for c in frame.columns if str(frame[c].dtype) == "category"})


def served_decision(rule, positive: str, X_train, sensitive_train) -> ServedDecision:
    """What a registered model decides: the ``rule`` set on validation, the ``positive`` class and (when the
    model does not read every input the decision needs) the model's own input columns.

    A group column whose name is a model input holding other values (COMPAS's six-valued ``race``
    feature beside the Caucasian / non-Caucasian ``race`` it is judged on) is asked for as
    ``<name>_group``.
    """
    if not hasattr(rule, "columns"):
        return ServedDecision(positive, rule)
    renamed = tuple(
        f"{c}_group" if c in X_train.columns and not X_train[c].astype(str).equals(sensitive_train[c].astype(str))
        else c
        for c in rule.columns)
    rule = dataclasses.replace(rule, columns=renamed)
    needs_own = any(c not in X_train.columns for c in renamed)
    return ServedDecision(positive, rule, tuple(X_train.columns) if needs_own else None)


def with_decision_columns(decision: ServedDecision, sensitive_columns, X, sensitive):
    """``X`` with the group columns the decision reads that the model does not (a client's full row);
    ``sensitive_columns`` are the task's, in the order of the decision's columns."""
    extra = {}
    for served, column in zip(decision.columns, sensitive_columns):
        if served not in X.columns:
            extra[served] = sensitive[column].astype(str).to_numpy()
    return X.assign(**extra)
