"""The grid search reduction (Agarwal et al. 2018, section 3.4): one best response per multiplier vector.

The grid holds ``grid_size`` multiplier vectors of L1 norm at most ``grid_limit``. Its coordinates are
the groups of each block (attribute) but the last in order of first appearance (the parity moments of
a block sum to zero over its groups, so one is free); a positive coordinate is a ``+`` multiplier of its
group, a negative one a ``-`` multiplier. The points are the integer vectors of L1 norm at most ``u``
(each coordinate from ``-u`` to ``u``, in lexicographic order), scaled by ``grid_limit / u``, for the
smallest ``u`` that gives ``grid_size`` of them, starting from ``u = floor((grid_size / 2^d)^(1/d) - 1)``
for ``d`` coordinates. Each vector's cost-sensitive problem (its signed weights, not renormalized) is
fitted, and the predictor with the smallest ``(1 - constraint_weight) * error + constraint_weight *
max(gamma)`` on the training rows is the result.

This follows fairlearn's ``GridSearch`` (0.15), which the tests use as an oracle.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Literal, Self

import numpy as np

from .._param_checks import Interval
from ._base import ReductionBase

if TYPE_CHECKING:
    from collections.abc import Mapping

    from sklearn.base import ClassifierMixin

    from .._typing import ArrayLike, Matrix, RandomState, Rate, Sensitive


class GridSearch(ReductionBase):
    """The best of ``grid_size`` cost-sensitive fits of any scikit-learn classifier, by error and fairness.

    Its score is the chosen predictor's 0/1 decision, ties broken by a hash of the row
    (``mix="decisions"``, the default), or its probability (``mix="probabilities"``); see
    :mod:`fairops.reductions._base`.

    Parameters
    ----------
    estimator, constraint, difference_bound, ratio_bound, ratio_bound_slack, groups, costs : optional
        The base estimator and the constraint, as :class:`~fairops.reductions.ExponentiatedGradient`'s.
    grid_size : int, default=10
        Number of multiplier vectors.
    grid_limit : float, default=2.0
        The multipliers' L1 bound.
    constraint_weight : float in [0, 1], default=0.5
        The weight of the largest moment against the error when the predictor is chosen.
    mix : {"decisions", "probabilities"}, default="decisions"
        The score, as above.
    sample_weight_name : str, default="sample_weight"
        The argument of the base estimator's ``fit`` that takes the weights.
    random_state : int, RandomState or None, default=None
        Seeds the base estimator's ``random_state``, when it has one.

    Attributes
    ----------
    predictors_ : list of classifier
        One per grid point.
    weights_ : ndarray
        1 on the chosen one.
    best_index_ : int
        The chosen one.
    lambdas_ : ndarray
        The grid, one row per point.
    errors_, gammas_ : ndarray
        Each predictor's error and moments on the training rows.
    classes_ : ndarray of shape (2,)
        The two classes.
    n_oracle_calls_ : int
        Base fits.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> s = rng.integers(0, 2, 1000); X = np.column_stack([rng.normal(size=1000) + s, s])
    >>> y = (X[:, 0] + rng.normal(size=1000) > 0.5).astype(int)
    >>> model = GridSearch(constraint="ppr", grid_size=7, random_state=0).fit(X, y, sensitive_features=s)
    >>> model.lambdas_.shape, len(model.predictors_)
    ((7, 4), 7)
    """

    _param_constraints = {
        **ReductionBase._param_constraints,
        "grid_size": [Interval("int", 1, None)],
        "grid_limit": [Interval("real", 0, None, "neither")],
        "constraint_weight": [Interval("real", 0, 1)],
    }

    def __init__(self, estimator: ClassifierMixin | None = None, *, constraint: Rate = "tpr",
                 difference_bound: float | None = None, ratio_bound: float | None = None,
                 ratio_bound_slack: float = 0.0, groups: Literal["lowest", "intersectional"] = "lowest",
                 costs: Mapping[str, float] | None = None, grid_size: int = 10, grid_limit: float = 2.0,
                 constraint_weight: float = 0.5, mix: Literal["decisions", "probabilities"] = "decisions",
                 sample_weight_name: str = "sample_weight", random_state: RandomState = None) -> None:
        self.estimator = estimator
        self.constraint = constraint
        self.difference_bound = difference_bound
        self.ratio_bound = ratio_bound
        self.ratio_bound_slack = ratio_bound_slack
        self.groups = groups
        self.costs = costs
        self.grid_size = grid_size
        self.grid_limit = grid_limit
        self.constraint_weight = constraint_weight
        self.mix = mix
        self.sample_weight_name = sample_weight_name
        self.random_state = random_state

    def fit(self, X: Matrix, y: ArrayLike, *, sensitive_features: Sensitive | None = None) -> Self:
        """Fit one predictor per grid point on ``(X, y)``; choose one (see the module docstring).

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
            Features, as the base estimator takes them.
        y : array-like of shape (n_samples,)
            Two classes.
        sensitive_features : DataFrame, Series, dict or array-like
            The groups the constraint compares (required).

        Returns
        -------
        self
            The fitted reduction.
        """
        X, _, constraint, objective, groups = self._prepare(X, y, sensitive_features)
        self.lambdas_ = grid_points(constraint, groups.codes, int(self.grid_size), float(self.grid_limit))
        fit = self._best_response_fitter()
        predictors, errors, gammas = [], [], []
        for lambdas in self.lambdas_:
            signed = constraint.signed_weights(lambdas) + objective.signed_weights()
            predictor = fit(X, (signed > 0).astype(np.int64), np.abs(signed))
            decided = np.asarray(self._decide(predictor, X), dtype=np.float64)
            predictors.append(predictor)
            errors.append(objective.error(decided))
            gammas.append(constraint.gamma(decided))
        self.errors_, self.gammas_ = np.asarray(errors), np.asarray(gammas)
        loss = (1.0 - self.constraint_weight) * self.errors_ + self.constraint_weight * self.gammas_.max(axis=1)
        self.best_index_ = int(np.argmin(loss))
        weights = np.zeros(len(predictors))
        weights[self.best_index_] = 1.0
        self._set_fitted(predictors, weights)
        self.n_oracle_calls_ = len(predictors)
        return self


def _coordinates(constraint, blocks) -> list[int | None]:
    """Per grid coordinate, the constraint pair it moves (None: the group has no event rows)."""
    pairs = {(int(b), int(g)): k for k, (b, g) in enumerate(zip(constraint.pair_block, constraint.pair_group))}
    coordinates = []
    for block, codes in enumerate(blocks):
        _, first = np.unique(codes, return_index=True)
        in_order = np.asarray(codes)[np.sort(first)]
        coordinates += [pairs.get((block, int(group))) for group in in_order[:-1]]
    return coordinates


def _integer_points(dim: int, units: int):
    """Integer vectors of ``dim`` coordinates and L1 norm <= ``units``, in lexicographic order."""
    if dim == 0:
        yield ()
        return
    for first in range(-units, units + 1):
        for rest in _integer_points(dim - 1, units - abs(first)):
            yield (first, *rest)


def grid_points(constraint, blocks, grid_size: int, grid_limit: float) -> np.ndarray:
    """The grid's multiplier vectors, one row per point (see the module docstring).

    >>> from fairops.reductions._constraints import ParityConstraint
    >>> parity = ParityConstraint("ppr", np.array([0, 1, 0, 1]), [np.array([0, 0, 1, 1])])
    >>> grid_points(parity, [np.array([0, 0, 1, 1])], 3, 2.0).tolist()
    [[0.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0]]
    """
    coordinates = _coordinates(constraint, blocks)
    dim = len(coordinates)
    units = max(0, int(np.floor((grid_size / 2.0 ** dim) ** (1.0 / dim) - 1))) if dim else 0
    while True:
        points = list(itertools.islice(_integer_points(dim, units), grid_size))
        if len(points) >= grid_size or dim == 0:
            break
        units += 1
    scale = grid_limit / units if units else 0.0
    grid = np.zeros((len(points), constraint.n_moments))
    for row, point in enumerate(points):
        for value, pair in zip(point, coordinates):
            if pair is not None and value:
                grid[row, pair if value > 0 else constraint.n_pairs + pair] = abs(value) * scale
    return grid
