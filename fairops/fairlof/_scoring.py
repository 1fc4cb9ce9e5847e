r"""FairLOF scores for one lambda from the neighbour arrays of a fit (paper eqs 1-4, 10, 12, 14).

With g(x, y) = sum_S a_S(x) * [x.S != y.S] (the pair term, see ``corrections``) and its mean
over x's k neighbours, sum_S a_S(x) * Div_S(x):

    kd_F(x)    = kd(x) * max(floor, 1 - lambda * sum_S a_S(x) * Div_S(x))
    rd_F(x, y) = max(kd_F(y), d(x, y) * max(floor, 1 - lambda * g(x, y)))
    lrd_F(x)   = 1 / (mean_{y in N_k(x)} rd_F(x, y) + 1e-10)
    FairLOF(x) = mean_{y in N_k(x)} lrd_F(y) / lrd_F(x)

Neighbours and kd are plain LOF's (one search); the 1e-10 and the mean of ratios are
scikit-learn's, so lambda = 0 is its ``LocalOutlierFactor``. The paper has no floor: it
only acts where a factor would fall below ``floor`` (at most 1), and the rows and pairs
where it did are counted. The per-value variant scales the whole reach-distance instead,
``max(kd(y), d(x, y)) * max(floor, 1 - lambda * g(x, y))``, and leaves kd alone.

>>> import numpy as np
>>> hood = Neighbourhood(np.array([[1.0], [1.0]]), np.array([[1], [0]]), np.array([1.0, 1.0]), np.zeros((2, 1)))
>>> hood.scores(0.5, 0.01).scores.tolist()
[1.0, 1.0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _native


@dataclass(frozen=True)
class FairScores:
    """lrd_F, FairLOF and kd_F of the fitted rows for one lambda, and how often the floor acted."""

    lrd: np.ndarray
    scores: np.ndarray
    k_distances: np.ndarray
    clamped_rows: int
    clamped_pairs: int


@dataclass(frozen=True)
class Neighbourhood:
    """The (n, k) neighbour arrays of a fit and the lambda-free pair terms over them."""

    distances: np.ndarray
    neighbors: np.ndarray
    k_distances: np.ndarray
    terms: np.ndarray
    correction: str = "paper"

    def scores(self, lam: float, floor: float) -> FairScores:
        """Scores of the fitted rows at ``lam``."""
        if self.correction == "paper":
            kd, rows = _native.corrected_k_distances(self.k_distances, self.terms, lam, floor)
        else:
            kd, rows = self.k_distances, 0
        lrd, pairs = _native.corrected_lrd(self.distances, self.neighbors, kd, self.terms, lam, floor,
                                           scale_reach=self.correction != "paper")
        return FairScores(lrd, _native.local_outlier_factor(self.neighbors, lrd, lrd), kd, rows, pairs)

    def score_new(self, fitted: FairScores, distances: np.ndarray, neighbors: np.ndarray, terms: np.ndarray, lam: float,
                  floor: float) -> np.ndarray:
        """FairLOF of new rows whose neighbours are fitted rows, given the fitted rows' ``fitted`` scores."""
        lrd, _ = _native.corrected_lrd(distances, neighbors, fitted.k_distances, terms, lam, floor,
                                       scale_reach=self.correction != "paper")
        return _native.local_outlier_factor(neighbors, fitted.lrd, lrd)
