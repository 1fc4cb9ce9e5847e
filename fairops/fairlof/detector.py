"""The FairLOF / FairLOF-Flex detector (Deepak P. and Abraham, "FairLOF: Fairness in
Outlier Detection", 2020/2021).

The equations implemented are written out in ``fairops.fairlof.corrections``.
Neighbours come from one scikit-learn ``NearestNeighbors`` search (tree or brute
force as its ``algorithm="auto"`` picks, exactly as ``LocalOutlierFactor`` does);
the corrections, reachability distances, lrd and LOF are compiled kernels over
the (n, k) neighbour arrays, so ``lambda_ = 0`` reproduces scikit-learn's LOF and
a lambda path reuses the neighbours.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(200, 3)); sex = rng.choice(["f", "m"], 200)
>>> det = FairLOF(n_neighbors=5, lambda_=0.3).fit(X, sensitive_features={"sex": sex})
>>> det.outliers_.shape, det.outlier_scores_.shape
((10,), (200,))
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.neighbors import NearestNeighbors

from . import _native
from ._inputs import as_features, encode_fit_groups, encode_new_groups, group_weights
from .corrections import correction_coefficients, group_statistics
from .path import DEFAULT_LAMBDAS, PATH_COLUMNS, fair_scores, guide_lambda, jaccard_path, path_metrics, top_outliers

#: Smallest correction factor a pair can get: reach-dist' >= 0.01 * reach-dist, so lrd stays finite.
DEFAULT_FLOOR = 0.01

_STATE_ARRAYS = (
    "fit_X",
    "neighbors",
    "reach",
    "k_distances",
    "codes",
    "n_values",
    "data_share",
    "outlier_share",
    "propensity",
    "skew",
    "direction",
    "coefficients",
    "weights",
    "lof_scores",
    "outlier_scores",
    "lrd",
    "outliers",
    "plain_outliers",
)


def _check_unit_interval(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
    return float(value)


def _check_exponent(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return float(value)


class FairLOF:
    """Local outlier factor with distance corrections that keep sensitive groups
    proportionally represented among the top-t outliers.

    Parameters
    ----------
    n_neighbors : int, k of LOF (must be < number of rows).
    lambda_ : float in [0, 1] or "auto" (the guide point for ``target_jaccard``, searched on
        the 0.1 grid, see ``fairops.fairlof.path.guide_lambda``).
    c : None (1/|S| per attribute), a scalar, one weight per attribute, or a dict by column name.
    alpha, beta : FairLOF-Flex exponents of the W and D terms (1, 1 = FairLOF).
    top_t : size of the outlier list; None -> min(500, 5% of n), at least 1.
    metric : any metric scikit-learn's NearestNeighbors accepts ("euclidean" is the
        Minkowski p=2 that LocalOutlierFactor uses by default).
    novelty : True enables ``score_samples``/``decision_function``/``predict`` on new rows.
    target_jaccard : Jaccard guide point used when ``lambda_ == "auto"``.
    floor : smallest correction factor of a pair (see ``DEFAULT_FLOOR``).
    algorithm, leaf_size, n_jobs : passed to NearestNeighbors.

    Fitted attributes: ``outlier_scores_`` (FairLOF), ``lof_scores_`` (plain LOF on the same
    neighbours), ``outliers_`` (top-t FairLOF rows, most outlying first), ``plain_outliers_``,
    ``fitted_lambda_``, ``top_t_``, ``n_neighbors_``, ``offset_`` and the group statistics
    ``data_share_``, ``outlier_share_``, ``propensity_``, ``skew_``, ``direction_``.

    >>> import numpy as np
    >>> X = np.r_[np.zeros((5, 2)) + np.arange(5)[:, None] * 0.1, [[5.0, 5.0]]]
    >>> det = FairLOF(n_neighbors=2, lambda_=0.0, top_t=1).fit(X, sensitive_features=[0, 0, 0, 1, 1, 1])
    >>> det.outliers_.tolist()
    [5]
    """

    def __init__(
        self,
        n_neighbors=5,
        lambda_=0.3,
        c=None,
        alpha=1.0,
        beta=1.0,
        top_t=None,
        metric="euclidean",
        novelty=False,
        target_jaccard=0.9,
        floor=DEFAULT_FLOOR,
        algorithm="auto",
        leaf_size=30,
        n_jobs=None,
    ):
        self.n_neighbors = n_neighbors
        self.lambda_ = lambda_
        self.c = c
        self.alpha = alpha
        self.beta = beta
        self.top_t = top_t
        self.metric = metric
        self.novelty = novelty
        self.target_jaccard = target_jaccard
        self.floor = floor
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------ fit
    def _check_params(self, n_rows: int) -> None:
        k = self.n_neighbors
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
            raise ValueError(f"n_neighbors must be a positive integer, got {k!r}")
        if k >= n_rows:
            raise ValueError(f"n_neighbors={k} must be smaller than the number of rows ({n_rows})")
        if isinstance(self.lambda_, str):
            if self.lambda_ != "auto":
                raise ValueError(f"lambda_ must be a number in [0, 1] or 'auto', got {self.lambda_!r}")
            target = self.target_jaccard
            if isinstance(target, bool) or not isinstance(target, numbers.Real) or not 0.0 < target <= 1.0:
                raise ValueError(f"target_jaccard must be a number in (0, 1], got {target!r}")
        else:
            _check_unit_interval(self.lambda_, "lambda_")
        _check_exponent(self.alpha, "alpha")
        _check_exponent(self.beta, "beta")
        floor = self.floor
        if isinstance(floor, bool) or not isinstance(floor, numbers.Real) or not 0.0 < floor <= 1.0:
            raise ValueError(f"floor must be a number in (0, 1], got {floor!r}")
        top_t = self.top_t
        if top_t is not None:
            if isinstance(top_t, bool) or not isinstance(top_t, numbers.Integral) or top_t < 1:
                raise ValueError(f"top_t must be a positive integer or None, got {top_t!r}")
            if top_t > n_rows:
                raise ValueError(f"top_t={top_t} is larger than the number of rows ({n_rows})")
        if not isinstance(self.novelty, bool):
            raise ValueError(f"novelty must be True or False, got {self.novelty!r}")

    def _neighbor_search(self) -> NearestNeighbors:
        metric, params = self.metric, {}
        if metric == "euclidean":  # LocalOutlierFactor's default spelling, for identical neighbours
            metric, params = "minkowski", {"p": 2}
        return NearestNeighbors(
            n_neighbors=self.n_neighbors_,
            algorithm=self.algorithm,
            leaf_size=self.leaf_size,
            metric=metric,
            n_jobs=self.n_jobs,
            **params,
        )

    def fit(self, X, y=None, *, sensitive_features=None):
        """Find the neighbours once, then score every row with plain LOF and FairLOF."""
        X = as_features(X)
        n_rows = X.shape[0]
        self._check_params(n_rows)
        groups = encode_fit_groups(sensitive_features, n_rows)
        self.n_neighbors_ = int(self.n_neighbors)
        self.top_t_ = int(self.top_t) if self.top_t is not None else max(1, min(500, int(0.05 * n_rows)))
        self.weights_ = group_weights(self.c, groups.names)

        self._search = self._neighbor_search().fit(X)
        distances, neighbors = self._search.kneighbors(n_neighbors=self.n_neighbors_)
        self._fit_X = X
        self._neighbors = np.ascontiguousarray(neighbors, dtype=np.intp)
        self.k_distances_ = np.ascontiguousarray(distances[:, -1], dtype=np.float64)
        self._reach = _native.reachability(distances, self._neighbors, self.k_distances_)
        self._codes = groups.codes
        self.sensitive_names_ = groups.names
        self.sensitive_labels_ = groups.labels

        no_correction = np.zeros_like(self._reach)
        _, self.lof_scores_ = fair_scores(self._reach, no_correction, self._neighbors, 0.0, 1.0)
        self.plain_outliers_ = top_outliers(self.lof_scores_, self.top_t_)
        stats = group_statistics(groups.codes, groups.n_values, self.plain_outliers_)
        self.n_values_ = stats.n_values
        self.data_share_ = stats.data_share
        self.outlier_share_ = stats.outlier_share
        self.propensity_ = stats.propensity
        self.skew_ = stats.skew
        self.direction_ = stats.direction
        self.coefficients_ = correction_coefficients(stats, self.weights_, self.alpha, self.beta)
        self._pair_weights = _native.pair_weights(self._neighbors, groups.codes, groups.codes, self.coefficients_)

        if self.lambda_ == "auto":
            jaccards = self._jaccards(DEFAULT_LAMBDAS)
            self.fitted_lambda_ = guide_lambda(DEFAULT_LAMBDAS, jaccards, float(self.target_jaccard))
        else:
            self.fitted_lambda_ = float(self.lambda_)
        self._score_fitted()
        return self

    def _score_fitted(self) -> None:
        self._lrd, self.outlier_scores_ = fair_scores(
            self._reach, self._pair_weights, self._neighbors, self.fitted_lambda_, float(self.floor)
        )
        self.outliers_ = top_outliers(self.outlier_scores_, self.top_t_)
        self.offset_ = -float(self.outlier_scores_[self.outliers_[-1]])

    def _check_fitted(self) -> None:
        if not hasattr(self, "outlier_scores_"):
            raise AttributeError("this FairLOF instance is not fitted yet; call fit(X, sensitive_features=S) first")

    def _jaccards(self, lambdas) -> np.ndarray:
        return jaccard_path(
            self._reach, self._pair_weights, self._neighbors, lambdas, float(self.floor),
            self.plain_outliers_, self.top_t_,
        )

    def fit_predict(self, X, y=None, *, sensitive_features=None) -> np.ndarray:
        """Fit, then -1 for the top-t FairLOF outliers of the fitted rows and +1 for the rest.

        >>> import numpy as np
        >>> X = np.r_[np.arange(6.0), [40.0]][:, None]
        >>> FairLOF(n_neighbors=2, top_t=1).fit_predict(X, sensitive_features=[0, 1] * 3 + [0]).tolist()
        [1, 1, 1, 1, 1, 1, -1]
        """
        if self.novelty:
            raise AttributeError("fit_predict is not available when novelty=True; use fit then predict")
        self.fit(X, sensitive_features=sensitive_features)
        labels = np.ones(len(self.outlier_scores_), dtype=np.intp)
        labels[self.outliers_] = -1
        return labels

    # ----------------------------------------------------------------- path
    def path(self, lambdas=DEFAULT_LAMBDAS) -> dict:
        """Per lambda: Jacc, Pres, OF, ED and Wass of FairLOF's top-t against plain LOF's.

        Returns a dict of equal-length NumPy arrays keyed by ``PATH_COLUMNS``
        (``pandas.DataFrame(det.path())`` prints it as a table). Reuses the fit's neighbours.

        >>> import numpy as np
        >>> rng = np.random.default_rng(1)
        >>> det = FairLOF().fit(rng.normal(size=(100, 2)), sensitive_features=rng.integers(0, 2, 100))
        >>> table = det.path([0.0, 0.5])
        >>> float(table["jaccard"][0]), float(table["preservation"][0])
        (1.0, 1.0)
        """
        self._check_fitted()
        lambdas = [_check_unit_interval(value, "lambdas") for value in np.atleast_1d(lambdas).tolist()]
        if not lambdas:
            raise ValueError("lambdas must hold at least one value")
        sensitive = {name: self._codes[:, j] for j, name in enumerate(self.sensitive_names_)}
        rows = []
        for lam in lambdas:
            _, scores = fair_scores(self._reach, self._pair_weights, self._neighbors, lam, float(self.floor))
            rows.append(path_metrics(self.lof_scores_, scores, self.plain_outliers_, self.top_t_, sensitive))
        table = {"lambda": np.array(lambdas)}
        for column in PATH_COLUMNS[1:]:
            table[column] = np.array([row[column] for row in rows])
        return table

    # -------------------------------------------------------------- novelty
    def _check_novelty(self, method: str) -> None:
        if not self.novelty:
            raise AttributeError(
                f"{method} is not available when novelty=False; refit with novelty=True to score new rows"
            )
        self._check_fitted()

    def score_samples(self, X, *, sensitive_features=None) -> np.ndarray:
        """Minus the FairLOF score of new rows (higher = more normal), as scikit-learn's LOF.

        Neighbours are searched in the fitted rows; each new row's correction uses its
        own sensitive values with W, D and the direction from the fit.

        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> det = FairLOF(novelty=True).fit(rng.normal(size=(100, 2)), sensitive_features=rng.integers(0, 2, 100))
        >>> new = np.array([[0.0, 0.0], [9.0, 9.0]])
        >>> bool(det.score_samples(new, sensitive_features=[0, 1])[1] < -3)
        True
        >>> det.predict(new, sensitive_features=[0, 1]).tolist()
        [1, -1]
        """
        self._check_novelty("score_samples")
        X = as_features(X, self._fit_X.shape[1])
        codes = encode_new_groups(sensitive_features, X.shape[0], self.sensitive_names_, self.sensitive_labels_)
        distances, neighbors = self._search.kneighbors(X, n_neighbors=self.n_neighbors_)
        neighbors = np.ascontiguousarray(neighbors, dtype=np.intp)
        reach = _native.reachability(distances, neighbors, self.k_distances_)
        weights = _native.pair_weights(neighbors, codes, self._codes, self.coefficients_)
        lrd = _native.local_reachability_density(reach, weights, self.fitted_lambda_, float(self.floor))
        return -_native.local_outlier_factor(neighbors, self._lrd, lrd)

    def decision_function(self, X, *, sensitive_features=None) -> np.ndarray:
        """score_samples - offset_: at most 0 for rows at least as outlying as the t-th fitted outlier.

        >>> import numpy as np
        >>> det = FairLOF(n_neighbors=2, novelty=True, top_t=1).fit(np.arange(8.0)[:, None], sensitive_features=[0, 1] * 4)
        >>> bool(det.decision_function([[50.0]], sensitive_features=[0])[0] < 0)
        True
        """
        return self.score_samples(X, sensitive_features=sensitive_features) - self.offset_

    def predict(self, X, *, sensitive_features=None) -> np.ndarray:
        """-1 for outliers (decision_function <= 0), +1 for inliers (example in ``score_samples``)."""
        decision = self.decision_function(X, sensitive_features=sensitive_features)
        return np.where(decision <= 0, -1, 1)

    # ---------------------------------------------------------------- state
    def get_params(self, deep=True) -> dict:
        """The constructor parameters (scikit-learn convention).

        >>> FairLOF(lambda_=0.5).get_params()["lambda_"]
        0.5
        """
        names = (
            "n_neighbors", "lambda_", "c", "alpha", "beta", "top_t", "metric", "novelty",
            "target_jaccard", "floor", "algorithm", "leaf_size", "n_jobs",
        )
        return {name: getattr(self, name) for name in names}

    def set_params(self, **params):
        """Set constructor parameters (scikit-learn convention).

        >>> FairLOF().set_params(alpha=2.0).alpha
        2.0
        """
        valid = self.get_params()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"unknown parameter {name!r}; valid: {sorted(valid)}")
            setattr(self, name, value)
        return self

    def _get_state(self) -> tuple[dict, dict]:
        """(meta, arrays): JSON-able scalars/lists and NumPy arrays that rebuild the fitted detector."""
        self._check_fitted()
        params = self.get_params()
        if isinstance(params["c"], np.ndarray):
            params["c"] = params["c"].tolist()
        meta = {
            "params": params,
            "fitted_lambda": self.fitted_lambda_,
            "top_t": self.top_t_,
            "n_neighbors": self.n_neighbors_,
            "offset": self.offset_,
            "sensitive_names": list(self.sensitive_names_),
            "sensitive_labels": [list(values) for values in self.sensitive_labels_],
        }
        arrays = {
            "fit_X": self._fit_X,
            "neighbors": self._neighbors,
            "reach": self._reach,
            "k_distances": self.k_distances_,
            "codes": self._codes,
            "n_values": self.n_values_,
            "data_share": self.data_share_,
            "outlier_share": self.outlier_share_,
            "propensity": self.propensity_,
            "skew": self.skew_,
            "direction": self.direction_,
            "coefficients": self.coefficients_,
            "weights": self.weights_,
            "lof_scores": self.lof_scores_,
            "outlier_scores": self.outlier_scores_,
            "lrd": self._lrd,
            "outliers": self.outliers_,
            "plain_outliers": self.plain_outliers_,
        }
        return meta, {name: np.asarray(value) for name, value in arrays.items()}

    @classmethod
    def _from_state(cls, meta: dict, arrays: dict) -> "FairLOF":
        """Rebuild a fitted detector from ``_get_state()``'s output (no pickles involved)."""
        missing = [name for name in _STATE_ARRAYS if name not in arrays]
        if missing:
            raise ValueError(f"state arrays are missing {missing}")
        det = cls(**meta["params"])
        det.fitted_lambda_ = float(meta["fitted_lambda"])
        det.top_t_ = int(meta["top_t"])
        det.n_neighbors_ = int(meta["n_neighbors"])
        det.offset_ = float(meta["offset"])
        det.sensitive_names_ = tuple(meta["sensitive_names"])
        det.sensitive_labels_ = tuple(tuple(values) for values in meta["sensitive_labels"])
        det._fit_X = np.ascontiguousarray(arrays["fit_X"], dtype=np.float64)
        det._neighbors = np.ascontiguousarray(arrays["neighbors"], dtype=np.intp)
        det._reach = np.ascontiguousarray(arrays["reach"], dtype=np.float64)
        det.k_distances_ = np.ascontiguousarray(arrays["k_distances"], dtype=np.float64)
        det._codes = np.ascontiguousarray(arrays["codes"], dtype=np.intp)
        det.n_values_ = np.asarray(arrays["n_values"], dtype=np.intp)
        for name in ("data_share", "outlier_share", "propensity", "skew", "direction", "coefficients", "weights"):
            setattr(det, name + "_", np.asarray(arrays[name], dtype=np.float64))
        det.lof_scores_ = np.asarray(arrays["lof_scores"], dtype=np.float64)
        det.outlier_scores_ = np.asarray(arrays["outlier_scores"], dtype=np.float64)
        det._lrd = np.ascontiguousarray(arrays["lrd"], dtype=np.float64)
        det.outliers_ = np.asarray(arrays["outliers"], dtype=np.intp)
        det.plain_outliers_ = np.asarray(arrays["plain_outliers"], dtype=np.intp)
        det._pair_weights = _native.pair_weights(det._neighbors, det._codes, det._codes, det.coefficients_)
        det._search = det._neighbor_search().fit(det._fit_X)
        return det
