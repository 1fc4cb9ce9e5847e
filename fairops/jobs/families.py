"""The SCAFF forest as a Fairband model family, so fair training competes with fair tuning.

Fairband's families are plain ``fit(X, y)`` estimators; :class:`SCAFFOnColumns` reads the
sensitive attributes for SCAFF's criterion from named columns of ``X`` (the bundled data sets
keep them among the features). Importing this module registers the family ``"scaff_forest"``.
"""

from __future__ import annotations

from sklearn.base import BaseEstimator, ClassifierMixin

from ..fairband.search_space import FAMILIES, PAPER_FAMILIES, register_family  # noqa: F401 (doctests)
from ..scaff import SCAFFClassifier

SCAFF_FAMILY = "scaff_forest"


class SCAFFOnColumns(ClassifierMixin, BaseEstimator):
    """A :class:`~fairops.scaff.SCAFFClassifier` whose sensitive features are columns of ``X``.

    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"x": rng.normal(size=300), "sex": pd.Categorical(rng.choice(["F", "M"], 300))})
    >>> y = (X["x"] > 0).astype(int).to_numpy()
    >>> model = SCAFFOnColumns(sensitive_columns=("sex",), n_estimators=5).fit(X, y)
    >>> model.predict_proba(X).shape
    (300, 2)
    """

    def __init__(self, sensitive_columns=("sex",), theta=0.5, n_estimators=100, max_depth=4,
                 max_features="sqrt", random_state=0):
        self.sensitive_columns = sensitive_columns
        self.theta = theta
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.max_features = max_features
        self.random_state = random_state

    def fit(self, X, y):
        columns = list(self.sensitive_columns)
        missing = [c for c in columns if c not in getattr(X, "columns", ())]
        if missing:
            raise ValueError(f"X lacks the sensitive column(s) {missing} SCAFF needs")
        self.forest_ = SCAFFClassifier(
            n_estimators=self.n_estimators, theta=self.theta, max_depth=self.max_depth,
            max_features=self.max_features, random_state=self.random_state, n_jobs=1,
        ).fit(X, y, sensitive_features=X[columns])
        self.classes_ = self.forest_.classes_
        return self

    def predict_proba(self, X):
        return self.forest_.predict_proba(X)

    def predict(self, X):
        return self.forest_.predict(X)


def register_scaff_family(sensitive_columns) -> str:
    """(Re)register ``"scaff_forest"`` for the given sensitive columns; returns the family name.

    >>> register_scaff_family(["sex"]) in FAMILIES
    True
    """
    columns = tuple(sensitive_columns)

    def suggest(trial, profile, seed):
        return SCAFFOnColumns(
            sensitive_columns=columns,
            theta=trial.suggest_float("scaff_theta", 0.0, 1.0),
            n_estimators=trial.suggest_int("scaff_n_estimators", 10, 50 if profile == "fast" else 500, log=True),
            max_depth=trial.suggest_int("scaff_max_depth", 2, 6 if profile == "fast" else 10),
            max_features=trial.suggest_categorical("scaff_max_features", ["sqrt", "log2"]),
            random_state=seed,
        )

    register_family(SCAFF_FAMILY, suggest, needs_encoding=False)
    return SCAFF_FAMILY


def tuning_families(sensitive_columns) -> list[str]:
    """The paper's five families plus the SCAFF forest over ``sensitive_columns``.

    >>> tuning_families(["sex"])[-1]
    'scaff_forest'
    """
    return [*PAPER_FAMILIES, register_scaff_family(sensitive_columns)]


class RestoreCategories(BaseEstimator):
    """First step of a served pipeline: give text columns back the categories seen in training.

    MLflow serving delivers categorical columns as plain strings; models trained on pandas
    ``category`` columns (LightGBM, SCAFF) need the same categories, in the same order.

    >>> import pandas as pd
    >>> train = pd.DataFrame({"c": pd.Categorical(["a", "b"]), "x": [1, 2]})
    >>> step = RestoreCategories().fit(train)
    >>> step.transform(pd.DataFrame({"c": ["b"], "x": [3]}))["c"].cat.categories.tolist()
    ['a', 'b']
    """

    def fit(self, X, y=None):
        import pandas as pd

        self.categories_ = {
            column: list(X[column].cat.categories)
            for column in X.columns if isinstance(X[column].dtype, pd.CategoricalDtype)
        }
        return self

    def transform(self, X):
        import pandas as pd

        X = X.copy()
        for column, categories in self.categories_.items():
            if column not in X.columns:
                raise ValueError(f"input lacks the column {column!r} the model was trained with")
            X[column] = pd.Categorical(X[column].astype(object), categories=categories)
        return X
