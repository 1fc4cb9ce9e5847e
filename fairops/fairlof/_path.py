"""Scores for one lambda, the lambda path with the paper's metrics, and guide points.

All functions reuse the neighbour arrays of a fit (``scoring.Neighbourhood``): one
lambda costs three passes over the (n, k) arrays plus a partial sort for the top-t list.

>>> import numpy as np
>>> top_outliers(np.array([0.5, 2.0, 2.0, 1.0]), 2).tolist()
[1, 2]
>>> guide_lambda([0.0, 0.1, 0.2, 0.3], [1.0, 0.95, 0.85, 0.7], target=0.9)
0.1
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from fairops.metrics import (
    euclidean_disparity,
    jaccard,
    outlier_fraction,
    preservation,
    wasserstein_disparity,
)

from ..errors import InputError
from ._scoring import Neighbourhood

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from .._typing import ArrayLike, NDArray

DEFAULT_LAMBDAS = tuple(round(0.1 * step, 1) for step in range(11))
PATH_COLUMNS = (
    "lambda",
    "jaccard",
    "preservation",
    "outlier_fraction",
    "euclidean_disparity",
    "wasserstein_disparity",
    "clamped_rows",
    "clamped_pairs",
)


def top_outliers(scores: np.ndarray, t: int) -> np.ndarray:
    """Indices of the ``t`` highest scores, highest first; ties go to the lower index.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Outlier scores.
    t : int
        Length of the list.

    Returns
    -------
    ndarray of int
        The top ``t`` rows (all rows when ``t`` is at least their number).

    Examples
    --------
    >>> top_outliers(np.array([1.0, 3.0, 2.0]), 1).tolist()
    [1]
    """
    scores = np.asarray(scores)
    if t >= len(scores):
        return np.argsort(-scores, kind="stable")
    # O(n) cut at the t-th largest value; every row tied with it stays a candidate.
    cut = np.partition(scores, len(scores) - t)[len(scores) - t]
    candidates = np.flatnonzero(scores >= cut)
    return candidates[np.argsort(-scores[candidates], kind="stable")[:t]]


def path_metrics(lof_scores, fair, plain_top, t: int, sensitive) -> dict:
    """Jacc, Pres, OF, ED and Wass of the fair scores' top-t list against plain LOF's.

    >>> lof = np.array([3.0, 2.0, 1.0, 0.5]); s = {"g": np.array([0, 0, 1, 1])}
    >>> m = path_metrics(lof, np.array([3.0, 0.0, 2.0, 0.0]), np.array([0, 1]), 2, s)
    >>> m["jaccard"], m["preservation"], m["euclidean_disparity"]
    (0.3333333333333333, 0.8, 0.0)
    """
    fair_top = top_outliers(fair, t)
    return {
        "jaccard": jaccard(fair_top, plain_top),
        "preservation": preservation(lof_scores, fair_top, plain_top),
        "outlier_fraction": outlier_fraction(lof_scores, fair_top),
        "euclidean_disparity": euclidean_disparity(sensitive, fair_top),
        "wasserstein_disparity": wasserstein_disparity(sensitive, fair_top),
    }


def jaccard_path(hood: Neighbourhood, lambdas, floor: float, plain_top, t: int) -> np.ndarray:
    """Jaccard of each lambda's top-t list against plain LOF's (what guide points need).

    >>> hood = Neighbourhood(np.array([[1.0], [2.0], [1.0]]), np.array([[2], [0], [0]]), np.array([1.0, 2.0, 1.0]),
    ...                      np.zeros((3, 1)))
    >>> jaccard_path(hood, [0.0, 1.0], 0.01, np.array([1]), 1).tolist()
    [1.0, 1.0]
    """
    return np.asarray([jaccard(top_outliers(hood.scores(lam, floor).scores, t), plain_top) for lam in lambdas])


def guide_lambda(lambdas: Iterable[float], jaccards: ArrayLike, target: float) -> float:
    """The guide point: the lambda where the Jaccard first falls to about ``target``.

    Scanning the grid upwards, at the first lambda whose Jaccard is at or below the
    target, keep whichever of it and the previous lambda has the Jaccard nearer to
    the target (the previous one on a tie). If the Jaccard never falls that low,
    the largest lambda is the nearest.

    Parameters
    ----------
    lambdas : sequence of float
        The grid of correction strengths.
    jaccards : sequence of float
        Jaccard of each lambda's top-t list against plain LOF's.
    target : float
        The Jaccard aimed at.

    Returns
    -------
    float
        The guide lambda.

    Examples
    --------
    >>> guide_lambda([0.0, 0.1, 0.2], [1.0, 0.82, 0.7], target=0.8)
    0.1
    >>> guide_lambda([0.0, 0.1], [1.0, 0.99], target=0.9)
    0.1
    """
    lambdas = [float(value) for value in lambdas]
    jaccards = np.asarray(jaccards, dtype=np.float64)
    order = np.argsort(lambdas, kind="stable")
    previous = None
    for position in order:
        if jaccards[position] <= target:
            if previous is not None and abs(jaccards[previous] - target) <= abs(jaccards[position] - target):
                return lambdas[previous]
            return lambdas[position]
        previous = position
    return lambdas[order[-1]]


def _check_unit_interval(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= float(value) <= 1.0:
        raise InputError(f"{name} must be a number in [0, 1], got {value!r}")
    return float(value)


class LambdaPath:
    """The lambda path of a fitted FairLOF; :class:`~fairops.fairlof.FairLOF` inherits it."""

    # what the detector this class is mixed into holds once fitted (declared for the type checker only)
    floor: Any
    top_t_: int
    lof_scores_: np.ndarray
    plain_outliers_: np.ndarray
    sensitive_names_: Any
    _codes: Any
    _hood: Any

    def path(self, lambdas: float | Sequence[float] = DEFAULT_LAMBDAS) -> dict[str, NDArray[Any]]:
        """Per lambda: Jacc, Pres, OF, ED and Wass of FairLOF's top-t against plain LOF's, and the clamps.

        The clamps: how many k-distances / pair distances the floor clamped. Reuses the fit's neighbours.

        Parameters
        ----------
        lambdas : float or sequence of float, default=(0.0, 0.1, ..., 1.0)
            Correction strengths in [0, 1], at least one.

        Returns
        -------
        dict of str to ndarray
            Equal-length arrays keyed by ``PATH_COLUMNS`` (``pandas.DataFrame(det.path())`` prints it as a
            table).

        Examples
        --------
        >>> import numpy as np
        >>> from fairops.fairlof import FairLOF
        >>> rng = np.random.default_rng(1)
        >>> det = FairLOF().fit(rng.normal(size=(100, 2)), sensitive_features=rng.integers(0, 2, 100))
        >>> table = det.path([0.0, 0.5])
        >>> float(table["jaccard"][0]), float(table["preservation"][0]), int(table["clamped_pairs"][0])
        (1.0, 1.0, 0)
        """
        check_is_fitted(self)
        lambdas = [_check_unit_interval(value, "lambdas") for value in np.atleast_1d(lambdas).tolist()]
        if not lambdas:
            raise InputError("lambdas must hold at least one value")
        if not self.sensitive_names_:
            raise InputError("the detector was fitted without sensitive_features: a lambda path has no groups "
                             "to measure")
        sensitive = {name: self._codes[:, j] for j, name in enumerate(self.sensitive_names_)}
        rows = []
        for lam in lambdas:
            fair = self._hood.scores(lam, float(self.floor))
            row = path_metrics(self.lof_scores_, fair.scores, self.plain_outliers_, self.top_t_, sensitive)
            rows.append({**row, "clamped_rows": fair.clamped_rows, "clamped_pairs": fair.clamped_pairs})
        table = {"lambda": np.array(lambdas)}
        for column in PATH_COLUMNS[1:]:
            table[column] = np.array([row[column] for row in rows])
        return table
