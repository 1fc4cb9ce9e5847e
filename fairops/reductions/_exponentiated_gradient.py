"""The exponentiated gradient reduction (Agarwal et al. 2018, "A Reductions Approach to Fair Classification").

The game of :mod:`fairops.reductions._lagrangian` is played for up to ``max_iter`` rounds. The lambda
player keeps ``theta`` and plays ``lambda = B exp(theta) / (1 + sum exp(theta))`` (so ``||lambda||_1 < B
= 1 / eps``); the Q player answers with a best response, and ``theta`` moves by ``eta (gamma(h) - bound)``
(multiplicative weights), ``eta = eta0 / B`` shrunk by 0.8 whenever the best gap has not fallen by a
fifth since the last check (checks at iterations 5, 8, 13, ...). Each round's randomized classifier is
the better (smaller duality gap) of the average of the best responses so far and, with
``run_linprog_step``, the saddle point of the game restricted to the predictors found so far (an LP).
The run stops when that gap is below ``nu`` after at least 5 rounds; ``nu`` defaults to half the
standard error of the first best response's error, ``0.5 std(|h(x) - y|) / sqrt(n)``. The result is the
last round whose gap is within 1e-8 of the smallest.

This follows fairlearn's ``ExponentiatedGradient`` (0.15) step by step, which the tests use as an oracle;
what differs is listed in :mod:`fairops.reductions`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Self

import numpy as np

from .._param_checks import Interval
from ._base import ReductionBase
from ._lagrangian import PRECISION, LagrangianGame

if TYPE_CHECKING:
    from collections.abc import Mapping

    from sklearn.base import ClassifierMixin

    from .._typing import ArrayLike, Matrix, RandomState, Rate, Sensitive

_MIN_ITER = 5
_ACCURACY_MUL = 0.5
_REGRET_CHECK_START, _REGRET_CHECK_GROWTH = 5, 1.6
_SHRINK_REGRET, _SHRINK_ETA = 0.8, 0.8


class ExponentiatedGradient(ReductionBase):
    """A fair randomized classifier over any scikit-learn classifier that takes sample weights.

    The groups are needed to fit, never to predict.

    Parameters
    ----------
    estimator : classifier or None, default=None
        The base estimator, cloned for each best response; its ``fit`` must take the rows' weights.
        None: ``DecisionTreeClassifier(random_state=0)``.
    constraint : {"tpr", "fpr", "ppr"}, default="tpr"
        Equal opportunity, predictive equality or demographic parity.
    difference_bound : float or None, default=None
        Hold each group's rate within this of the overall rate (None: 0.01, unless ``ratio_bound``).
    ratio_bound : float in (0, 1] or None, default=None
        Hold each group's rate and the overall rate at a ratio of at least this instead (plus
        ``ratio_bound_slack``).
    ratio_bound_slack : float, default=0.0
        The ratio constraint's additive slack.
    groups : {"lowest", "intersectional"}, default="lowest"
        Constrain every group of every attribute, or of their combinations.
    costs : dict or None, default=None
        ``{"fp": cost, "fn": cost}``: the error's cost of a false positive and a false negative
        (default 1 and 1).
    eps : float, default=0.01
        The multipliers' bound is ``B = 1/eps``.
    max_iter : int, default=50
        Most rounds played.
    nu : float or None, default=None
        The duality gap that ends the run (None: half the standard error of the first best response's error).
    eta0 : float, default=2.0
        Initial step of the multipliers (divided by ``B``).
    run_linprog_step : bool, default=True
        Also try the game's saddle point over the predictors found so far each round.
    mix : {"decisions", "probabilities"}, default="decisions"
        What ``predict_proba`` answers (see :mod:`fairops.reductions._base`).
    sample_weight_name : str, default="sample_weight"
        The argument of the base estimator's ``fit`` that takes the weights.
    random_state : int, RandomState or None, default=None
        Seeds the base estimator's ``random_state``, when it has one.

    Attributes
    ----------
    predictors_ : list of classifier
        The fitted best responses.
    weights_ : ndarray
        The randomized classifier's weight of each predictor.
    classes_ : ndarray of shape (2,)
        The two classes.
    n_iter_, best_iter_ : int
        Rounds played, and the one chosen.
    best_gap_ : float
        The duality gap of the result.
    nu_ : float
        The ``nu`` used.
    n_oracle_calls_ : int
        Base fits.
    train_error_, train_gamma_ : float, ndarray
        The result's error and moments on the training rows, moments minus their bound: all <= 0 means
        the constraint holds there.
    oracle_seconds_ : float
        Time spent in base fits.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> s = rng.integers(0, 2, 2000); X = np.column_stack([rng.normal(size=2000) + s, s])
    >>> y = (X[:, 0] + rng.normal(size=2000) > 0.5).astype(int)
    >>> model = ExponentiatedGradient(constraint="tpr", random_state=0).fit(X, y, sensitive_features=s)
    >>> bool(model.train_gamma_.max() < 0.02), model.predict_proba(X[:3]).shape
    (True, (3, 2))
    """

    _param_constraints = {
        **ReductionBase._param_constraints,
        "eps": [Interval("real", 0, None, "neither")],
        "max_iter": [Interval("int", 1, None)],
        "nu": [None, Interval("real", 0, None, "neither")],
        "eta0": [Interval("real", 0, None, "neither")],
        "run_linprog_step": [bool],
    }

    def __init__(self, estimator: ClassifierMixin | None = None, *, constraint: Rate = "tpr",
                 difference_bound: float | None = None, ratio_bound: float | None = None,
                 ratio_bound_slack: float = 0.0, groups: Literal["lowest", "intersectional"] = "lowest",
                 costs: Mapping[str, float] | None = None, eps: float = 0.01, max_iter: int = 50,
                 nu: float | None = None, eta0: float = 2.0, run_linprog_step: bool = True,
                 mix: Literal["decisions", "probabilities"] = "decisions", sample_weight_name: str = "sample_weight",
                 random_state: RandomState = None) -> None:
        self.estimator = estimator
        self.constraint = constraint
        self.difference_bound = difference_bound
        self.ratio_bound = ratio_bound
        self.ratio_bound_slack = ratio_bound_slack
        self.groups = groups
        self.costs = costs
        self.eps = eps
        self.max_iter = max_iter
        self.nu = nu
        self.eta0 = eta0
        self.run_linprog_step = run_linprog_step
        self.mix = mix
        self.sample_weight_name = sample_weight_name
        self.random_state = random_state

    def fit(self, X: Matrix, y: ArrayLike, *, sensitive_features: Sensitive | None = None) -> Self:
        """Play the game on ``(X, y)`` with the groups of ``sensitive_features`` (a column or a DataFrame).

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
        X, y01, constraint, objective, _ = self._prepare(X, y, sensitive_features)
        bound_norm = 1.0 / float(self.eps)
        game = LagrangianGame(X, constraint, objective, bound_norm, self._best_response_fitter(), self._decide)
        rounds = _play(game, y01, bound_norm, max_iter=self.max_iter, nu=self.nu, eta0=float(self.eta0),
                       run_linprog_step=self.run_linprog_step)
        self._set_fitted(game.predictors, game.padded(rounds.weights))
        value, _, gamma, error = game.evaluate(self.weights_, np.zeros(constraint.n_moments))
        self.n_iter_, self.best_iter_, self.best_gap_, self.nu_ = rounds.n_rounds, rounds.best, rounds.gap, rounds.nu
        self.n_oracle_calls_ = game.n_fits
        self.oracle_seconds_ = float(sum(game.fit_seconds))
        self.train_error_ = float(error)
        self.train_gamma_ = gamma - constraint.bound()
        return self


class _Rounds:
    """What a run of the game left: the chosen round's weights and gap, the rounds played, ``nu``."""

    def __init__(self, weights, best, gap, n_rounds, nu):
        self.weights, self.best, self.gap, self.n_rounds, self.nu = weights, best, gap, n_rounds, nu


def _play(game: LagrangianGame, y01, bound_norm: float, *, max_iter: int, nu, eta0: float,
          run_linprog_step: bool) -> _Rounds:
    """The rounds of exponentiated gradient (see the module docstring)."""
    n_moments = game.constraint.n_moments
    theta, lambda_sum, chosen_count = np.zeros(n_moments), np.zeros(n_moments), np.zeros(0)
    gaps_eg, gaps, choices = [], [], []
    last_checked, last_gap, eta = _REGRET_CHECK_START, np.inf, eta0 / bound_norm
    for t in range(max_iter):
        lambdas = bound_norm * np.exp(theta) / (1.0 + np.exp(theta).sum())
        lambda_sum += lambdas
        lambda_average = lambda_sum / (t + 1)
        best = game.best_response(lambdas)
        if t == 0 and nu is None:
            misses = np.abs(game.decisions[best] - y01)
            nu = _ACCURACY_MUL * float(np.std(misses, ddof=1)) / np.sqrt(len(y01))
        chosen_count = game.padded(chosen_count)
        chosen_count[best] += 1.0
        gamma = game.gammas[best]
        average = chosen_count / chosen_count.sum()
        result = game.gap(average, lambda_average, nu)
        gaps_eg.append(result.gap)
        choice, gap = average, result.gap
        if t > 0 and run_linprog_step:
            weights_lp, _, result_lp = game.solve_linprog(nu)
            if result_lp.gap <= result.gap:
                choice, gap = weights_lp, result_lp.gap
        choices.append(choice)
        gaps.append(gap)
        if gap < nu and t >= _MIN_ITER:
            break
        if t >= last_checked * _REGRET_CHECK_GROWTH:
            best_gap = min(gaps_eg)
            if best_gap > last_gap * _SHRINK_REGRET:
                eta *= _SHRINK_ETA
            last_checked, last_gap = t, best_gap
        theta = theta + eta * (gamma - game.constraint.bound())
    gap_values = np.asarray(gaps)
    chosen = int(np.flatnonzero(gap_values <= gap_values.min() + PRECISION)[-1])
    return _Rounds(choices[chosen], chosen, float(gap_values[chosen]), len(gaps), float(nu))
