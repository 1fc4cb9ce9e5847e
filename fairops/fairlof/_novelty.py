"""Scoring new rows with a fitted FairLOF (``novelty=True``), as scikit-learn's LocalOutlierFactor does.

:class:`NoveltyScoring` holds ``score_samples``, ``decision_function`` and ``predict``;
:class:`~fairops.fairlof.FairLOF` inherits them. A new row's neighbours are searched among the fitted rows and
its pair terms come from the one module that calls the scoring kernel (``fairops.fairlof._native``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from ..errors import InputError
from . import _native
from ._inputs import check_finite, encode_new_groups, finite_scores, no_groups

if TYPE_CHECKING:
    from .._typing import ArrayLike, FloatArray, IntArray, Sensitive


def _novelty(detector) -> bool:
    if not detector.novelty:
        raise AttributeError(
            "score_samples, decision_function and predict are not available when novelty=False; "
            "refit with novelty=True to score new rows (fit_predict and outlier_scores_ cover the fitted rows)"
        )
    return True


class NoveltyScoring:
    """The methods of a fitted FairLOF that score new rows; only when ``novelty=True``."""

    # what the detector this class is mixed into holds once fitted (declared for the type checker only)
    floor: Any
    n_neighbors_: int
    sensitive_names_: Any
    sensitive_labels_: Any
    coefficients_: Any
    fitted_lambda_: float
    offset_: float
    _codes: Any
    _hood: Any
    _fair: Any

    def _searcher(self):
        """The fitted neighbour search, built from the fitted rows on first use after loading a saved state."""
        if self._search is None:
            self._search, _ = self._neighbor_search(self._fit_X.shape)
            self._search.fit(self._fit_X)
        return self._search

    @available_if(_novelty)
    def score_samples(self, X: ArrayLike, sensitive_features: Sensitive | None = None) -> FloatArray:
        """Minus the FairLOF score of new rows (higher = more normal), as scikit-learn's LOF.

        Neighbours are searched among the fitted rows. A new row x gets
        rd_F(x, y) = max(kd_F(y), d(x, y) * max(floor, 1 - lambda * sum_S a_S(x) [x.S != y.S]))
        with its own sensitive values in a_S(x) and the fitted rows' kd_F and lrd_F. Only when
        ``novelty=True``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New rows, finite.
        sensitive_features : DataFrame, Series, dict, array-like or None, default=None
            Their sensitive columns (the fitted ones); None only for a detector fitted without them.

        Returns
        -------
        ndarray of shape (n_samples,)
            The scores.

        Examples
        --------
        >>> import numpy as np
        >>> from fairops.fairlof import FairLOF
        >>> rng = np.random.default_rng(0)
        >>> det = FairLOF(novelty=True).fit(rng.normal(size=(100, 2)), sensitive_features=rng.integers(0, 2, 100))
        >>> new = np.array([[0.0, 0.0], [9.0, 9.0]])
        >>> bool(det.score_samples(new, sensitive_features=[0, 1])[1] < -3)
        True
        >>> det.predict(new, sensitive_features=[0, 1]).tolist()
        [1, -1]
        """
        check_is_fitted(self)
        X = cast(np.ndarray, validate_data(self, X, dtype=np.float64, reset=False, ensure_all_finite=False))
        X = check_finite(X)
        if self.sensitive_names_:
            codes = encode_new_groups(sensitive_features, X.shape[0], self.sensitive_names_, self.sensitive_labels_)
        elif sensitive_features is not None:
            raise InputError("sensitive_features given, but the detector was fitted without sensitive_features")
        else:
            codes = no_groups(X.shape[0]).codes
        distances, neighbors = self._searcher().kneighbors(X, n_neighbors=self.n_neighbors_)
        neighbors = np.ascontiguousarray(neighbors, dtype=np.intp)
        terms = _native.pair_terms(neighbors, codes, self._codes, self.coefficients_)
        scores = self._hood.score_new(self._fair, distances, neighbors, terms, self.fitted_lambda_, float(self.floor))
        return -finite_scores(scores)

    @available_if(_novelty)
    def decision_function(self, X: ArrayLike, sensitive_features: Sensitive | None = None) -> FloatArray:
        """score_samples - offset_: negative for rows more outlying than every fitted inlier.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New rows.
        sensitive_features : DataFrame, Series, dict, array-like or None, default=None
            As in :meth:`score_samples`.

        Returns
        -------
        ndarray of shape (n_samples,)
            The decision values.

        Examples
        --------
        >>> import numpy as np
        >>> from fairops.fairlof import FairLOF
        >>> det = FairLOF(n_neighbors=2, novelty=True, top_t=1)
        >>> det = det.fit(np.arange(8.0)[:, None], sensitive_features=[0, 1] * 4)
        >>> bool(det.decision_function([[50.0]], sensitive_features=[0])[0] < 0)
        True
        """
        return self.score_samples(X, sensitive_features=sensitive_features) - self.offset_

    @available_if(_novelty)
    def predict(self, X: ArrayLike, sensitive_features: Sensitive | None = None) -> IntArray:
        """-1 for outliers (decision_function < 0), +1 for inliers (example in ``score_samples``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            New rows.
        sensitive_features : DataFrame, Series, dict, array-like or None, default=None
            As in :meth:`score_samples`.

        Returns
        -------
        ndarray of shape (n_samples,)
            -1 or +1 per row.
        """
        decision = self.decision_function(X, sensitive_features=sensitive_features)
        return np.where(decision < 0, -1, 1)
