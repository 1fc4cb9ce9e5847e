"""The Lagrangian game of Agarwal et al. (2018): best responses, its value, the duality gap, the LP step.

``L(Q, lambda) = err(Q) + lambda . (gamma(Q) - bound)`` with ``||lambda||_1 <= B``. The Q player's best
response to ``lambda`` is a cost-sensitive classification: every row gets the label of its cheaper
prediction (the sign of its signed weight) and the size of the difference as its sample weight, and the
base estimator is fitted to that. The game keeps every predictor it has fitted that improved on the
ones before (for the lambda it was fitted for), with its training error and moments, so a randomized
classifier is a weight vector over them.

The duality gap of ``(Q, lambda)`` is ``max(L - L_low, L_high - L)``, where ``L_high`` is the Lagrangian
at the lambda player's best response (all of ``B`` on the most violated moment) and ``L_low`` the lowest
value found by best responses to ``lambda`` scaled by 1, 2, 5 and 10 (stopping at the first scale whose
gap already exceeds ``nu``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ._constraints import ErrorObjective, ParityConstraint

# A predictor joins the game only when it improves the best value by more than this (and equal gaps
# within it count as equal when the best iteration is chosen).
PRECISION = 1e-8
_GAP_SCALES = (1.0, 2.0, 5.0, 10.0)


@dataclass
class GapResult:
    """The Lagrangian at ``(Q, lambda)``, its bounds, and ``Q``'s moments and error."""

    value: float
    low: float
    high: float
    gamma: np.ndarray
    error: float

    @property
    def gap(self) -> float:
        return max(self.value - self.low, self.high - self.value)


class LagrangianGame:
    """The predictors fitted so far and the Lagrangian over them (see the module docstring).

    ``fit_best_response(X, labels, weights)`` returns a fitted predictor (the caller's base estimator, or a
    constant one when every row gets the same label); ``predict(predictor, X)`` its 0/1 decisions.
    """

    def __init__(self, X, constraint: ParityConstraint, objective: ErrorObjective, bound_norm: float,
                 fit_best_response, predict):
        self.X, self.constraint, self.objective = X, constraint, objective
        self.B = float(bound_norm)
        self._fit, self._predict = fit_best_response, predict
        self.predictors: list = []
        self.errors = np.zeros(0)
        self.gammas = np.zeros((0, constraint.n_moments))
        self.decisions: list[np.ndarray] = []
        self.n_fits = 0
        self.fit_seconds: list[float] = []
        self._linprog_cache: tuple[int, tuple] | None = None

    def _fit_for(self, lambdas: np.ndarray):
        signed = self.objective.signed_weights() + self.constraint.signed_weights(lambdas)
        labels = (signed > 0).astype(np.int64)
        weights = np.abs(signed)
        total = weights.sum()
        weights = weights * (len(weights) / total) if total > 0 else np.ones_like(weights)
        start = time.perf_counter()
        predictor = self._fit(self.X, labels, weights)
        self.fit_seconds.append(time.perf_counter() - start)
        self.n_fits += 1
        return predictor

    def best_response(self, lambdas: np.ndarray) -> int:
        """Fit the best response to ``lambdas``; keep it when it beats the kept ones; the best one's index."""
        predictor = self._fit_for(lambdas)
        decided = np.asarray(self._predict(predictor, self.X), dtype=np.float64).ravel()
        error, gamma = self.objective.error(decided), self.constraint.gamma(decided)
        value = error + float(gamma @ lambdas)
        if len(self.predictors):
            values = self.errors + self.gammas @ lambdas
            best = int(np.argmin(values))
            best_value = float(values[best])
        else:
            best, best_value = -1, np.inf
        if value < best_value - PRECISION:
            self.predictors.append(predictor)
            self.decisions.append(decided)
            self.errors = np.append(self.errors, error)
            self.gammas = np.vstack([self.gammas, gamma])
            best = len(self.predictors) - 1
        return best

    def evaluate(self, weights: np.ndarray, lambdas: np.ndarray) -> tuple[float, float, np.ndarray, float]:
        """``(L, L_high, gamma, error)`` of the randomized classifier ``weights`` at ``lambdas``."""
        weights = self.padded(weights)
        error = float(self.errors @ weights)
        gamma = weights @ self.gammas
        slack = gamma - self.constraint.bound()
        value = error + float(self.constraint.project(lambdas) @ slack)
        worst = float(slack.max())
        return value, error + (self.B * worst if worst > 0 else 0.0), gamma, error

    def gap(self, weights: np.ndarray, lambdas: np.ndarray, nu: float) -> GapResult:
        value, high, gamma, error = self.evaluate(weights, lambdas)
        result = GapResult(value, value, high, gamma, error)
        for scale in _GAP_SCALES:
            index = self.best_response(scale * lambdas)
            low = self.evaluate(self.one_hot(index), lambdas)[0]
            result.low = min(result.low, low)
            if result.gap > nu + PRECISION:
                break
        return result

    def one_hot(self, index: int) -> np.ndarray:
        weights = np.zeros(len(self.predictors))
        weights[index] = 1.0
        return weights

    def padded(self, weights: np.ndarray) -> np.ndarray:
        """``weights`` extended with zeros for predictors added after it was computed."""
        return np.concatenate([weights, np.zeros(len(self.predictors) - len(weights))])

    def solve_linprog(self, nu: float) -> tuple[np.ndarray, np.ndarray, GapResult]:
        """The saddle point over the predictors kept so far: ``(weights, lambda, its gap)``.

        Primal: minimize ``err . Q + B z`` over ``Q`` in the simplex and ``z >= 0`` with
        ``(gamma_h - bound) . Q <= z`` for every moment; the multipliers come from its dual
        (maximize ``mu`` with ``mu <= err_h + lambda . (gamma_h - bound)`` for every predictor,
        ``sum(lambda) <= B``, ``lambda >= 0``). Solved again only when a predictor was added.
        """
        from scipy.optimize import linprog

        n_predictors, n_moments = len(self.predictors), self.constraint.n_moments
        if self._linprog_cache is not None and self._linprog_cache[0] == n_predictors:
            return self._linprog_cache[1]
        slack = (self.gammas - self.constraint.bound()).T  # moments x predictors
        cost = np.concatenate([self.errors, [self.B]])
        upper = np.hstack([slack, -np.ones((n_moments, 1))])
        equal = np.hstack([np.ones((1, n_predictors)), np.zeros((1, 1))])
        primal = linprog(cost, A_ub=upper, b_ub=np.zeros(n_moments), A_eq=equal, b_eq=np.ones(1),
                         method="highs-ds")
        weights = primal.x[:-1]
        dual = linprog(np.concatenate([np.zeros(n_moments), [-1.0]]),
                       A_ub=np.hstack([-upper.T, equal.T]), b_ub=cost,
                       bounds=[(0, None)] * n_moments + [(None, None)], method="highs-ds")
        lambdas = dual.x[:-1]
        result = (weights, lambdas, self.gap(weights, lambdas, nu))
        # The gap's best responses may add predictors; the cache is keyed on the count the LP saw.
        self._linprog_cache = (n_predictors, result)
        return result
