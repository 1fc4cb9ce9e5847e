"""Category columns as integer codes, the first half of a fast one-hot encoding inside a model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from ..errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from .._typing import FloatArray


class CategoryCodes(TransformerMixin, BaseEstimator):
    """pandas ``category`` columns as their integer codes, for a one-hot encoder to expand.

    pandas keeps the categories of ``astype("category")`` sorted, so the codes sort like the labels
    and the one-hot columns come out the same as from the labels themselves, several times faster
    (no per-row string comparisons). The categories seen in ``fit`` must be those of every later input.

    Attributes
    ----------
    categories_ : list of list
        Each column's categories.
    n_features_in_ : int
        Number of columns.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"c": pd.Categorical(["b", "a", "b"])})
    >>> CategoryCodes().fit(X).transform(X).ravel().tolist()
    [1, 0, 1]
    """

    def fit(self, X: pd.DataFrame, y: None = None) -> Self:
        """Record each column's categories.

        Parameters
        ----------
        X : DataFrame
            Columns of pandas ``category`` dtype only.
        y : None
            Ignored.

        Returns
        -------
        self
            The fitted step.
        """
        self.categories_ = [list(self._column(X, c).cat.categories) for c in X.columns]
        self.n_features_in_ = X.shape[1]
        return self

    @staticmethod
    def _column(X, name):
        import pandas as pd

        column = X[name]
        if not isinstance(column.dtype, pd.CategoricalDtype):
            raise TypeError(f"column {name!r} must have pandas category dtype, got {column.dtype}")
        return column

    def transform(self, X: pd.DataFrame) -> FloatArray:
        """The columns' integer codes.

        Parameters
        ----------
        X : DataFrame
            ``category`` columns with the categories seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples, n_columns)
            The codes.
        """
        codes = []
        for name, categories in zip(X.columns, self.categories_):
            column = self._column(X, name)
            if list(column.cat.categories) != categories:
                raise InputError(f"column {name!r} has other categories than in fit; codes would change meaning")
            codes.append(column.cat.codes.to_numpy())
        return np.column_stack(codes) if codes else np.empty((len(X), 0), dtype=np.int8)
