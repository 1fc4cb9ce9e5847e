"""Fairband's score ``o = alpha*accuracy + (1-alpha)*fairness`` as a scikit-learn scorer.

scikit-learn's searches (``GridSearchCV``, ``RandomizedSearchCV``, ``cross_validate``) call a scorer with
``(estimator, X, y)`` only; the sensitive groups reach it through metadata routing: the scorer requests
``sensitive_features``, and with ``sklearn.set_config(enable_metadata_routing=True)`` the search splits
what was passed to ``fit(X, y, sensitive_features=...)`` with the same folds as ``X`` and hands each
fold's groups to the scorer. scikit-learn is imported only when a scorer is made, so the rest of
:mod:`fairops.metrics` stays NumPy only.
"""

from __future__ import annotations

from collections.abc import Callable

from .._param_checks import check_alpha
from ..errors import InputError
from ._task import Task


def _check_alpha(alpha) -> float:
    if alpha == "auto":
        raise InputError("alpha='auto' weighs by the means over all fits, which one scorer call cannot see; "
                         "give a float in [0, 1] (FB-bal: 0.5), or score 'accuracy' and 'fairness' "
                         "separately (alpha=1 and alpha=0) and pick with fairops.fairband.select_best")
    return float(check_alpha(alpha, auto=False))


def make_fairness_scorer(task: Task, alpha: float = 0.5, *, seed: int = 0) -> Callable[..., float]:
    """A scorer of ``alpha*accuracy + (1-alpha)*fairness`` under ``task``, requesting ``sensitive_features``.

    The figures are the ones Fairband ranks (:meth:`Task.evaluate`: the threshold meets the task's
    target exactly on the scored rows, ties broken with ``seed``); ``alpha=1`` scores accuracy alone,
    ``alpha=0`` fairness alone. The model's ``predict_proba`` (else ``decision_function``) is scored.

    Parameters
    ----------
    task : Task
        The accuracy and fairness metrics.
    alpha : float, default=0.5
        Weight of accuracy in [0, 1] (``"auto"`` is refused: one call cannot see the means over all fits).
    seed : int, default=0
        Breaks ties at the threshold.

    Returns
    -------
    callable
        A scikit-learn scorer ``scorer(estimator, X, y, sensitive_features=...)``.

    Examples
    --------
    >>> import numpy as np, pandas as pd, sklearn
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import GridSearchCV
    >>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["group"])
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)); y = (X[:, 0] + rng.normal(size=400) > 0).astype(int)
    >>> groups = pd.DataFrame({"group": np.where(X[:, 1] > 0, "a", "b")})
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     search = GridSearchCV(LogisticRegression(), {"C": [0.01, 1.0]}, cv=3,
    ...                           scoring=make_fairness_scorer(task, alpha=0.5))
    ...     search = search.fit(X, y, sensitive_features=groups)
    >>> bool(0 <= search.best_score_ <= 1)
    True
    """
    import sklearn
    from sklearn.metrics import make_scorer

    if not isinstance(task, Task):
        raise TypeError(f"task must be a fairops.metrics.Task, got {type(task).__name__}")
    weight = _check_alpha(alpha)

    def weighted_score(y_true, y_score, sensitive_features=None) -> float:
        if sensitive_features is None:
            raise InputError("the fairness scorer got no sensitive_features: turn on metadata routing "
                             "(sklearn.set_config(enable_metadata_routing=True)) and pass "
                             "sensitive_features=... to the search's fit")
        figures = task.evaluate(y_true, y_score, sensitive_features, seed=seed)
        return weight * figures["accuracy"] + (1 - weight) * figures["fairness"]

    scorer = make_scorer(weighted_score, response_method=("predict_proba", "decision_function"))
    with sklearn.config_context(enable_metadata_routing=True):  # a request can be recorded only with it on
        return scorer.set_score_request(sensitive_features=True)
