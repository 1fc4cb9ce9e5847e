"""Column adapters that end up inside a served model.

- :class:`SCAFFOnColumns`: a :class:`~fairops.scaff.SCAFFClassifier` that reads its sensitive
  features from named columns of ``X``, so it is a plain ``fit(X, y)`` estimator (a Fairband family,
  a pipeline step).
- :class:`RestoreCategories`: the first step of a served pipeline; gives text columns back the
  categories seen in training.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

from sklearn.base import BaseEstimator, ClassifierMixin

from ..errors import InputError
from ..scaff import SCAFFClassifier

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

    from .._typing import ArrayLike, FloatArray, IntArray, MaxFeatures, RandomState


class SCAFFOnColumns(ClassifierMixin, BaseEstimator):
    """A :class:`~fairops.scaff.SCAFFClassifier` whose sensitive features are columns of ``X``.

    Parameters
    ----------
    sensitive_columns : sequence of str, default=("sex",)
        The columns of ``X`` passed as ``sensitive_features`` (they stay features too).
    theta, n_estimators, max_depth, max_features, random_state : optional
        The forest's, as in :class:`~fairops.scaff.SCAFFClassifier` (defaults 0.5, 100, 4, "sqrt", 0);
        it grows its trees in one thread.

    Attributes
    ----------
    forest_ : SCAFFClassifier
        The fitted forest.
    classes_ : ndarray of shape (2,)
        The two classes.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"x": rng.normal(size=300), "sex": pd.Categorical(rng.choice(["F", "M"], 300))})
    >>> y = (X["x"] > 0).astype(int).to_numpy()
    >>> model = SCAFFOnColumns(sensitive_columns=("sex",), n_estimators=5).fit(X, y)
    >>> model.predict_proba(X).shape
    (300, 2)
    """

    def __init__(self, sensitive_columns: Sequence[str] = ("sex",), theta: float = 0.5, n_estimators: int = 100,
                 max_depth: int | None = 4, max_features: MaxFeatures = "sqrt", random_state: RandomState = 0) -> None:
        self.sensitive_columns = sensitive_columns
        self.theta = theta
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.max_features = max_features
        self.random_state = random_state

    def fit(self, X: pd.DataFrame, y: ArrayLike, sample_weight: ArrayLike | None = None) -> Self:
        """Fit the forest, its sensitive features read from ``X``.

        Parameters
        ----------
        X : DataFrame
            Features, holding the sensitive columns.
        y : array-like of shape (n_samples,)
            Two classes.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Row weights.

        Returns
        -------
        self
            The fitted model.
        """
        columns = list(self.sensitive_columns)
        missing = [c for c in columns if c not in getattr(X, "columns", ())]
        if missing:
            raise InputError(f"X lacks the sensitive column(s) {missing} SCAFF needs")
        self.forest_ = SCAFFClassifier(
            n_estimators=self.n_estimators, theta=self.theta, max_depth=self.max_depth,
            max_features=self.max_features, random_state=self.random_state, n_jobs=1,
        ).fit(X, y, sensitive_features=X[columns], sample_weight=sample_weight)
        self.classes_ = self.forest_.classes_
        return self

    def predict_proba(self, X: pd.DataFrame) -> FloatArray:
        """The forest's class probabilities.

        Parameters
        ----------
        X : DataFrame
            Rows to score.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Probabilities of ``classes_[0]`` and ``classes_[1]``.
        """
        return self.forest_.predict_proba(X)

    def predict(self, X: pd.DataFrame) -> IntArray:
        """The forest's predicted classes.

        Parameters
        ----------
        X : DataFrame
            Rows to classify.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted classes.
        """
        return self.forest_.predict(X)


class RestoreCategories(BaseEstimator):
    """First step of a served pipeline: give text columns back the categories seen in training.

    MLflow serving delivers categorical columns as plain strings; models trained on pandas
    ``category`` columns (LightGBM, SCAFF) need the same categories, in the same order. A value
    outside them becomes missing, so the step itself takes missing values (what the model behind
    it does with them is the model's business).

    Attributes
    ----------
    categories_ : dict
        ``{column: categories}`` of the training frame's ``category`` columns.

    Examples
    --------
    >>> import pandas as pd
    >>> train = pd.DataFrame({"c": pd.Categorical(["a", "b"]), "x": [1, 2]})
    >>> step = RestoreCategories().fit(train)
    >>> step.transform(pd.DataFrame({"c": ["b"], "x": [3]}))["c"].cat.categories.tolist()
    ['a', 'b']
    """

    def fit(self, X: pd.DataFrame, y: None = None) -> Self:
        """Record the categories of the ``category`` columns of ``X``.

        Parameters
        ----------
        X : DataFrame
            Training rows.
        y : None
            Ignored.

        Returns
        -------
        self
            The fitted step.
        """
        import pandas as pd

        self.categories_ = {
            column: list(X[column].cat.categories)
            for column in X.columns if isinstance(X[column].dtype, pd.CategoricalDtype)
        }
        return self

    def transform(self, X: pd.DataFrame) -> pd.DataFrame:
        """Give the recorded columns their categories back; other values become missing.

        Parameters
        ----------
        X : DataFrame
            Rows holding every recorded column.

        Returns
        -------
        DataFrame
            A copy with those columns as ``category`` columns.
        """
        import pandas as pd

        X = X.copy()
        for column, categories in self.categories_.items():
            if column not in X.columns:
                raise InputError(f"input lacks the column {column!r} the model was trained with")
            values = X[column].astype(object)
            X[column] = pd.Categorical(values.where(values.isin(categories)), categories=categories)
        return X

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags
