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

import numpy as np

from fairops.metrics import (
    euclidean_disparity,
    jaccard,
    outlier_fraction,
    preservation,
    wasserstein_disparity,
)

from .scoring import Neighbourhood

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


def guide_lambda(lambdas, jaccards, target: float) -> float:
    """The guide point: the lambda where the Jaccard first falls to about ``target``.

    Scanning the grid upwards, at the first lambda whose Jaccard is at or below the
    target, keep whichever of it and the previous lambda has the Jaccard nearer to
    the target (the previous one on a tie). If the Jaccard never falls that low,
    the largest lambda is the nearest.

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
