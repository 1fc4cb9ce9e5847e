"""The FairLOF / FairLOF-Flex detector (Deepak P. and Abraham, "FairLOF: Fairness in
Outlier Detection", WISE 2020 / Data Science and Engineering 2021), a scikit-learn
outlier detector.

The equations are written out in ``fairops.fairlof._corrections`` (the per-attribute
terms) and ``fairops.fairlof._scoring`` (the corrected distances). Neighbours come from
one search (``fairops.fairlof._neighbor_search``): by default scikit-learn's
``NearestNeighbors`` with ``algorithm="auto"``, exactly as ``LocalOutlierFactor``; on
request fairops' blocked exact search, a choice by data shape, or an approximate
graph. The corrections, lrd and LOF are compiled kernels over the (n, k) neighbour arrays,
so ``correction_strength=0`` reproduces scikit-learn's LOF and a lambda path reuses the
neighbours. Scoring new rows (``novelty=True``) is in ``fairops.fairlof._novelty``.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(200, 3)); sex = rng.choice(["f", "m"], 200)
>>> det = FairLOF(n_neighbors=5, correction_strength=0.3).fit(X, sensitive_features={"sex": sex})
>>> det.outliers_.shape, det.outlier_scores_.shape, det.clamped_pairs_
((10,), (200,), 0)
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Literal, Self, cast

import numpy as np
from sklearn.base import BaseEstimator, OutlierMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from .._param_checks import Interval, Options, Satisfies, checked_params
from ..errors import InputError
from . import _native, _neighbor_search as neighbor_search, _state
from ._corrections import CORRECTIONS, group_statistics
from ._inputs import check_finite, encode_fit_groups, group_weights, no_groups
from ._novelty import NoveltyScoring
from ._path import DEFAULT_LAMBDAS, LambdaPath, guide_lambda, jaccard_path, top_outliers
from ._scoring import FairScores, Neighbourhood
from ._top_recheck import RecheckedSearch

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from .._typing import ArrayLike, IntArray, NDArray, Sensitive

#: Smallest factor a k-distance or a pair distance is scaled by (see ``floor``).
DEFAULT_FLOOR = 0.01

#: A Flex exponent: a finite number > 0.
_EXPONENT = [Interval("real", 0, None, "neither")]


def _outlier_detection(detector) -> bool:
    if detector.novelty:
        raise AttributeError("fit_predict is not available when novelty=True; use fit, then predict on new rows")
    return True


class FairLOF(NoveltyScoring, LambdaPath, OutlierMixin, BaseEstimator):
    """Local outlier factor with the FairLOF distance corrections.

    The corrections pull sensitive groups towards their share of the data among the top-t outliers
    (equations and design: ``docs/fairlof/equations.md``; searches for large n: ``docs/fairlof/large_n.md``).

    Parameters
    ----------
    n_neighbors : int, default=5
        k of LOF (must be < number of rows).
    correction_strength : float in [0, 1] or "auto", default=0.3
        The paper's lambda: 0 is plain LOF, 1 the full correction; "auto" takes the guide point for
        ``target_jaccard`` on the grid 0.0, 0.1, ..., 1.0. The lambda used is ``fitted_lambda_``.
    c : float, list, dict or None, default=None
        The constant c_S of W_S = c_S + |P_S(v*) - Q_S(v*)| (eq. 11): a scalar, one per attribute, a
        dict by column name, or None (1/|S| per attribute).
    weight_exponent, share_exponent : float, default=1.0
        FairLOF-Flex exponents on W_S and on D_S(x) = P_S(x.S) (eq. 13; 1 and 1 are FairLOF).
    correction : {"paper", "per_value"}, default="paper"
        The paper's equations (6-14) or fairops' per-value variant.
    top_t : int or None, default=None
        Size of the outlier list; None -> min(500, 5% of n), at least 1.
    metric : str or callable, default="euclidean"
        Any metric scikit-learn's NearestNeighbors accepts.
    novelty : bool, default=False
        True enables ``score_samples``/``decision_function``/``predict`` on new rows (and disables
        ``fit_predict``), as in scikit-learn's LocalOutlierFactor.
    target_jaccard : float in (0, 1], default=0.9
        Jaccard guide point used when ``correction_strength == "auto"``.
    floor : float in (0, 1], default=0.01
        Least correction factor of a k-distance or pair distance; clamps are counted in
        ``clamped_rows_`` / ``clamped_pairs_`` and fit warns.
    algorithm : str, default="auto"
        The neighbour search: scikit-learn's "auto", "ball_tree", "kd_tree", "brute"; fairops' exact
        "blocked" and "fast" (a choice by data shape), or "approximate" (a neighbour graph, then exact
        searches of the top of the rankings). The last three need ``metric="euclidean"``.
    leaf_size : int, default=30
        Passed to scikit-learn's trees.
    n_jobs : int or None, default=None
        Threads of the neighbour search (None: scikit-learn's default; every core for "blocked" and
        "approximate").
    search_params : dict or None, default=None
        Settings of ``algorithm="approximate"``: ``graph`` ("hnsw", faiss's, the extra ``fairops[ann]``;
        or "nndescent", fairops' own), the graph's settings and ``recheck`` (0 = off); defaults in
        ``fairops.fairlof._search_params.GRAPH_PARAMS``.

    Attributes
    ----------
    outlier_scores_, negative_outlier_factor_ : ndarray of shape (n_samples,)
        FairLOF scores (higher = more outlying), and their negative (scikit-learn's sign).
    lof_scores_ : ndarray of shape (n_samples,)
        Plain LOF on the same neighbours.
    outliers_, plain_outliers_ : ndarray of int
        Top-t FairLOF rows, most outlying first, and plain LOF's.
    fitted_lambda_, offset_ : float
        The lambda used; ``decision_function`` is ``score_samples - offset_``.
    top_t_, n_neighbors_, clamped_rows_, clamped_pairs_ : int
        The list size and k used; the k-distances and pair distances the floor clamped.
    search_algorithm_ : str
        The neighbour search used.
    data_share_, outlier_share_, majority_, c_, skew_, direction_ : list
        The group statistics per attribute: P, Q, v*, c, W and Dir.
    coefficients_, k_distances_ : ndarray
        Dir * W^weight_exponent * P(v)^share_exponent per attribute and value; each row's k-distance.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.r_[np.zeros((5, 2)) + np.arange(5)[:, None] * 0.1, [[5.0, 5.0]]]
    >>> det = FairLOF(n_neighbors=2, correction_strength=0.0, top_t=1).fit(X, sensitive_features=[0, 0, 0, 1, 1, 1])
    >>> det.outliers_.tolist()
    [5]
    """

    #: What each parameter may be; checked once per fit and on loading (with what depends on the rows).
    _param_constraints = {
        "n_neighbors": [Interval("int", 1, None)],
        "correction_strength": [Interval("real", 0, 1), Options("auto")],
        "c": [None, Interval("real", 0, None), dict,
              Satisfies(lambda value: isinstance(value, (list, tuple, np.ndarray)), "a list or array")],
        "weight_exponent": _EXPONENT,
        "share_exponent": _EXPONENT,
        "correction": [Options(*sorted(CORRECTIONS))],
        "top_t": [None, Interval("int", 1, None)],
        "metric": [str, callable],
        "novelty": [bool],
        "target_jaccard": [Interval("real", 0, 1, "right")],
        "floor": [Interval("real", 0, 1, "right")],
        "algorithm": [Options(*neighbor_search.ALGORITHMS)],
        "leaf_size": [Interval("int", 1, None)],
        "n_jobs": [None, Interval("int", None, None)],
        "search_params": [None, dict],
    }

    def __init__(
        self,
        n_neighbors: int = 5,
        correction_strength: float | Literal["auto"] = 0.3,
        c: float | Sequence[float] | NDArray[np.floating] | Mapping[str, float] | None = None,
        weight_exponent: float = 1.0,
        share_exponent: float = 1.0,
        correction: Literal["paper", "per_value"] = "paper",
        top_t: int | np.integer[Any] | None = None,
        metric: str | Callable[..., float] = "euclidean",
        novelty: bool = False,
        target_jaccard: float = 0.9,
        floor: float = DEFAULT_FLOOR,
        algorithm: Literal["auto", "ball_tree", "kd_tree", "brute", "blocked", "fast", "approximate"] = "auto",
        leaf_size: int = 30,
        n_jobs: int | None = None,
        search_params: dict[str, Any] | None = None,
    ) -> None:
        self.n_neighbors = n_neighbors
        self.correction_strength = correction_strength
        self.c = c
        self.weight_exponent = weight_exponent
        self.share_exponent = share_exponent
        self.correction = correction
        self.top_t = top_t
        self.metric = metric
        self.novelty = novelty
        self.target_jaccard = target_jaccard
        self.floor = floor
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.n_jobs = n_jobs
        self.search_params = search_params

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags

    def __sklearn_is_fitted__(self) -> bool:
        # fit sets some attributes before it can still fail; a detector is fitted once it has scores.
        return hasattr(self, "outlier_scores_")

    # ------------------------------------------------------------------ fit
    def _check_params(self, n_rows: int) -> tuple[float | str, float, float]:
        """(correction strength, weight exponent, share exponent) once every parameter is checked: against
        ``_param_constraints``, against the ``n_rows`` fitted rows, and the neighbour search's against each other."""
        checked_params(self)
        if self.n_neighbors >= n_rows:
            raise InputError(f"n_neighbors={self.n_neighbors} must be smaller than the number of rows ({n_rows})")
        if self.top_t is not None and self.top_t > n_rows:
            raise InputError(f"top_t={self.top_t} is larger than the number of rows ({n_rows})")
        neighbor_search.check_options(self.algorithm, self.metric, self.search_params)
        strength = self.correction_strength
        return (strength if strength == "auto" else float(strength)), float(self.weight_exponent), \
            float(self.share_exponent)

    def _neighbor_search(self, shape: tuple[int, int]):
        """The unfitted search for fitted rows of ``shape``, and the name of the algorithm it uses."""
        return neighbor_search.make_search(self.algorithm, shape, n_neighbors=self.n_neighbors_, metric=self.metric,
                                           leaf_size=self.leaf_size, n_jobs=self.n_jobs,
                                           search_params=self.search_params, top_t=self.top_t_)

    def fit(self, X: ArrayLike, y: None = None, sensitive_features: Sensitive | None = None) -> Self:
        """Find the neighbours once, then score every row with plain LOF and FairLOF.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite features.
        y : None
            Ignored.
        sensitive_features : DataFrame, Series, dict, array-like or None, default=None
            One or more columns (1-D/2-D array), one row per row of X. Without them there is no group
            to correct for: the scores are plain LOF and a warning says so.

        Returns
        -------
        self
            The fitted detector.
        """
        X = cast(np.ndarray, validate_data(self, X, dtype=np.float64, ensure_min_samples=2, ensure_all_finite=False))
        X = np.ascontiguousarray(check_finite(X))
        n_rows = X.shape[0]
        strength, weight_exponent, share_exponent = self._check_params(n_rows)
        if sensitive_features is None:
            warnings.warn(
                "FairLOF was fitted without sensitive_features: there is no group to correct for, "
                "so its scores are plain LOF", UserWarning, stacklevel=2,
            )
            groups = no_groups(n_rows)
        else:
            groups = encode_fit_groups(sensitive_features, n_rows)
        self.n_neighbors_ = int(self.n_neighbors)
        self.top_t_ = int(self.top_t) if self.top_t is not None else max(1, min(500, int(0.05 * n_rows)))
        self.c_ = group_weights(self.c, groups.names)

        search, self.search_algorithm_ = self._neighbor_search(X.shape)
        self._search = search.fit(X)
        distances, neighbors = self._search.kneighbors(n_neighbors=self.n_neighbors_)
        self._fit_X = X
        self._codes = groups.codes
        self.sensitive_names_ = groups.names
        self.sensitive_labels_ = groups.labels

        def fair_scores(distances, neighbors):
            self._score_neighbours(distances, neighbors, groups.n_values, strength, weight_exponent, share_exponent)
            return self.outlier_scores_

        approximate = isinstance(self._search, RecheckedSearch)
        if approximate and self.sensitive_names_:
            # the search made the top of plain LOF exact; the top of FairLOF at the fitted lambda holds rows
            # beyond it, so it is made exact too. Each round scores everything from the current neighbours,
            # the last one from the final neighbours.
            self._search.recheck_ranking(distances, neighbors, fair_scores)
        else:
            fair_scores(distances, neighbors)
        if approximate:
            self._search.end_recheck()
        if self.clamped_rows_ or self.clamped_pairs_:
            warnings.warn(
                f"at lambda = {self.fitted_lambda_:g} the paper's correction factor fell below floor={self.floor} "
                f"for {self.clamped_rows_} of {n_rows} k-distances and {self.clamped_pairs_} of "
                f"{n_rows * self.n_neighbors_} pair distances; those factors were clamped at the floor "
                "(see clamped_rows_ / clamped_pairs_)", UserWarning, stacklevel=2,
            )
        return self

    def _score_neighbours(self, distances, neighbors, n_values, strength, weight_exponent, share_exponent) -> None:
        """Everything fit derives from the neighbours and the sensitive codes, down to the scores."""
        self.k_distances_ = np.ascontiguousarray(distances[:, -1], dtype=np.float64)
        plain = Neighbourhood(distances, np.ascontiguousarray(neighbors, dtype=np.intp), self.k_distances_,
                              np.zeros(neighbors.shape))
        self.lof_scores_ = plain.scores(0.0, 1.0).scores
        self.plain_outliers_ = top_outliers(self.lof_scores_, self.top_t_)

        stats = group_statistics(self._codes, n_values, self.plain_outliers_)
        coefficients = CORRECTIONS[self.correction](stats, self.c_, weight_exponent, share_exponent)
        self.n_values_ = stats.n_values
        self.data_share_ = stats.data_share
        self.outlier_share_ = stats.outlier_share
        self.majority_ = stats.majority
        self.skew_ = coefficients.skew
        self.direction_ = coefficients.direction
        self.coefficients_ = coefficients.table
        terms = _native.pair_terms(plain.neighbors, self._codes, self._codes, self.coefficients_)
        self._hood = Neighbourhood(plain.distances, plain.neighbors, self.k_distances_, terms, self.correction)

        if not self.sensitive_names_:
            self.fitted_lambda_ = 0.0
        elif strength == "auto":
            jaccards = jaccard_path(self._hood, DEFAULT_LAMBDAS, float(self.floor), self.plain_outliers_, self.top_t_)
            self.fitted_lambda_ = guide_lambda(DEFAULT_LAMBDAS, jaccards, float(self.target_jaccard))
        else:
            self.fitted_lambda_ = float(strength)
        self._set_scores(self._hood.scores(self.fitted_lambda_, float(self.floor)))

    def _set_scores(self, fair: FairScores) -> None:
        self._fair = fair
        self.outlier_scores_ = fair.scores
        self.negative_outlier_factor_ = -fair.scores
        self.clamped_rows_ = int(fair.clamped_rows)
        self.clamped_pairs_ = int(fair.clamped_pairs)
        self.outliers_ = top_outliers(fair.scores, self.top_t_)
        if self.top_t_ < len(fair.scores):
            # minus the most outlying fitted inlier: decision_function < 0 exactly for rows beyond it
            inliers = np.ones(len(fair.scores), dtype=bool)
            inliers[self.outliers_] = False
            self.offset_ = -float(fair.scores[inliers].max())
        else:
            self.offset_ = float(np.nextafter(-fair.scores.min(), np.inf))

    @available_if(_outlier_detection)
    def fit_predict(self, X: ArrayLike, y: None = None, sensitive_features: Sensitive | None = None) -> IntArray:
        """Fit, then -1 for the top-t FairLOF outliers of the fitted rows and +1 for the rest.

        Only when ``novelty=False`` (as scikit-learn's LocalOutlierFactor).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite features.
        y : None
            Ignored.
        sensitive_features : DataFrame, Series, dict, array-like or None, default=None
            As in :meth:`fit`.

        Returns
        -------
        ndarray of shape (n_samples,)
            -1 or +1 per row.

        Examples
        --------
        >>> import numpy as np
        >>> X = np.r_[np.arange(6.0), [40.0]][:, None]
        >>> FairLOF(n_neighbors=2, top_t=1).fit_predict(X, sensitive_features=[0, 1] * 3 + [0]).tolist()
        [1, 1, 1, 1, 1, 1, -1]
        """
        self.fit(X, sensitive_features=sensitive_features)
        labels = np.ones(len(self.outlier_scores_), dtype=np.intp)
        labels[self.outliers_] = -1
        return labels

    # ---------------------------------------------------------------- state
    def _get_state(self) -> tuple[dict, dict]:
        """(meta, arrays): JSON-able scalars/lists and NumPy arrays that rebuild the fitted detector
        (see :mod:`fairops.fairlof._state`)."""
        check_is_fitted(self)
        return _state.get_state(self)

    @classmethod
    def _from_state(cls, meta: dict, arrays: dict) -> FairLOF:
        """Rebuild a fitted detector from ``_get_state()``'s output (no pickles involved), checked: a ValueError
        (TypeError for a wrong dtype) names the first bad entry (see :mod:`fairops.fairlof._state`)."""
        return _state.from_state(cls, meta, arrays)
