"""What both reductions share: parameters, inputs, the best-response fit, and the deterministic score.

A fitted reduction is a weight vector ``weights_`` over fitted predictors ``predictors_`` (each trained on
the cost-sensitive relabelling of one Lagrange multiplier vector). Agarwal et al.'s classifier is the
randomized one: for each row, draw a predictor by its weight and apply it. A task thresholds a score
instead, so a reduction answers a deterministic one, a weighted mean over its predictors of (``mix``):

- ``"decisions"`` (the default): their 0/1 decisions, i.e. the randomized classifier's chance of deciding
  positive (fairlearn's ``_pmf_predict``, which the Fairband paper's reductions were scored with). It
  takes at most ``2^k`` values for ``k`` predictors, so rows tie; ties are broken by a number in [0, 1)
  hashed from the row's own values (:mod:`fairops.reductions._row_hash`), scaled by
  :data:`TIE_BREAK_SCALE` so it never reorders chances further apart than that. A threshold inside a
  tie then takes the same rows in evaluation and in serving, and takes them without regard to group, as a
  random draw would;
- ``"probabilities"``: their probabilities of the positive class.

Measured on COMPAS (``benchmarks/reductions_scores.py``): the constraint holds at the predictors' own
decisions, not at a task's target rate, so thresholded at 10% FPR the probabilities score kept a 63.5%
test FPR ratio (a tree base) where the decisions score kept 79.3%; without the tie-break that score
was fair when evaluated (ties broken at random) but not when served (ties broken all one way).
Either way the same rows give the same scores, always; ``predict`` is the score at 0.5.
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.dummy import DummyClassifier
from sklearn.utils import check_random_state, get_tags
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, column_or_1d, has_fit_parameter, validate_data

from .._param_checks import RANDOM_STATE, Interval, Options, Satisfies, checked_params
from ..errors import InputError
from ..metrics._inputs import encode_sensitive
from . import _state_checks
from ._constraints import CONSTRAINTS, ErrorObjective, ParityConstraint
from ._row_hash import row_uniforms

if TYPE_CHECKING:
    from .._typing import FloatArray, Matrix, NDArray

GROUPINGS = ("lowest", "intersectional")
MIXES = ("decisions", "probabilities")
#: How far a row's tie-break may move a "decisions" score: chances closer than this may swap order.
TIE_BREAK_SCALE = 1e-10
DEFAULT_DIFFERENCE_BOUND = 0.01


def _is_costs(value) -> bool:
    return (isinstance(value, dict) and set(value) == {"fp", "fn"}
            and all(isinstance(v, numbers.Real) and np.isfinite(v) and v >= 0  # type: ignore[call-overload, operator]
                    for v in value.values())  # (typeshed's numbers ABCs support neither call)
            and value["fp"] + value["fn"] > 0)


def _is_classifier_like(value) -> bool:
    return hasattr(value, "fit") and hasattr(value, "predict") and hasattr(value, "get_params")


def _n_rows(X) -> int:
    return X.shape[0] if hasattr(X, "shape") else len(X)


def positive_probability(predictor, X) -> np.ndarray:
    """A predictor's probability of label 1 (one it never saw: probability 0)."""
    classes = list(np.asarray(predictor.classes_).tolist())
    if 1 not in classes:
        return np.zeros(_n_rows(X))
    return np.asarray(predictor.predict_proba(X), dtype=np.float64)[:, classes.index(1)]


class ReductionBase(ClassifierMixin, BaseEstimator):
    """Common machinery of :class:`~fairops.reductions.ExponentiatedGradient` and
    :class:`~fairops.reductions.GridSearch` (see :mod:`fairops.reductions`)."""

    _param_constraints = {
        "estimator": [None, Satisfies(_is_classifier_like, "an estimator with fit, predict and get_params")],
        "constraint": [Options(*CONSTRAINTS)],
        "difference_bound": [None, Interval("real", 0, None)],
        "ratio_bound": [None, Interval("real", 0, 1, "right")],
        "ratio_bound_slack": [Interval("real", 0, None)],
        "groups": [Options(*GROUPINGS)],
        "costs": [None, Satisfies(_is_costs, "a dict {'fp': cost, 'fn': cost} of finite costs >= 0, not both 0")],
        "mix": [Options(*MIXES)],
        "sample_weight_name": [str],
        "random_state": RANDOM_STATE,
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        base = self._base_estimator()
        tags.input_tags.allow_nan = get_tags(base).input_tags.allow_nan
        tags.input_tags.categorical = get_tags(base).input_tags.categorical
        tags.input_tags.sparse = get_tags(base).input_tags.sparse
        return tags

    # ----------------------------------------------------------------- setup
    def _base_estimator(self):
        from sklearn.tree import DecisionTreeClassifier

        return DecisionTreeClassifier(random_state=0) if self.estimator is None else self.estimator

    def _check_params(self) -> tuple[float, float]:
        """Every parameter checked; ``(ratio r, bound)`` of the constraint."""
        params = checked_params(self)
        if params["difference_bound"] is not None and params["ratio_bound"] is not None:
            raise InputError("give difference_bound or ratio_bound, not both")
        base = self._base_estimator()
        if self.sample_weight_name == "sample_weight" and not has_fit_parameter(base, "sample_weight"):
            raise TypeError(f"estimator {type(base).__name__} takes no sample_weight in fit: a reduction fits it "
                            "to reweighted rows (set sample_weight_name to the argument that takes them)")
        if params["ratio_bound"] is not None:
            return float(params["ratio_bound"]), float(params["ratio_bound_slack"])
        bound = DEFAULT_DIFFERENCE_BOUND if params["difference_bound"] is None else params["difference_bound"]
        return 1.0, float(bound)

    def _prepare(self, X, y, sensitive_features):
        """``(X, y as 0/1, parity constraint, error objective)``, inputs checked, fitted names recorded."""
        ratio, bound = self._check_params()
        X = self._checked_X(X, reset=True)
        y = column_or_1d(np.asarray(y), warn=True)
        check_classification_targets(y)
        if len(y) != _n_rows(X):
            raise InputError(f"X has {_n_rows(X)} rows and y {len(y)}")
        kind = type_of_target(y, input_name="y")
        if kind != "binary":
            raise InputError(f"Only binary classification is supported. The type of the target is {kind}.")
        self.classes_, y01 = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise InputError(f"y holds one class ({self.classes_[0]!r}); a classifier needs two")
        if sensitive_features is None:
            raise InputError(f"{type(self).__name__}.fit needs sensitive_features: the groups its constraint "
                             "compares (they are not needed to predict)")
        groups = encode_sensitive(sensitive_features, len(y01))
        if self.groups == "intersectional":
            groups = groups.intersection()
        self.sensitive_columns_ = list(groups.names)
        constraint = ParityConstraint(self.constraint, y01, groups.codes, ratio=ratio, bound=bound)
        return X, y01, constraint, ErrorObjective(y01, self.costs), groups

    def _checked_X(self, X, *, reset: bool):
        """A DataFrame goes to the base estimator as it is (LightGBM reads its categories); anything else
        as a finite (NaN where the base estimator takes it) 2-D numeric array, sparse where it takes that."""
        if hasattr(X, "columns") and hasattr(X, "iloc"):
            validate_data(self, X, reset=reset, skip_check_array=True)
            return X
        takes = get_tags(self._base_estimator()).input_tags
        return validate_data(self, X, reset=reset, dtype="numeric",
                             accept_sparse=["csr", "csc"] if takes.sparse else False,
                             ensure_all_finite="allow-nan" if takes.allow_nan else True)

    def _best_response_fitter(self):
        """``fit(X, labels, weights)`` for the game: the base estimator cloned, with the reduction's seed."""
        base = self._base_estimator()
        seed = None
        if self.random_state is not None and "random_state" in base.get_params(deep=False):
            seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))

        def fit(X, labels, weights):
            if np.all(labels == labels[0]):  # every row is cheaper with one answer
                return DummyClassifier(strategy="constant", constant=int(labels[0])).fit(X, labels)
            model = clone(base)
            if seed is not None:
                model.set_params(random_state=seed)
            return model.fit(X, labels, **{self.sample_weight_name: weights})

        return fit

    @staticmethod
    def _decide(predictor, X) -> np.ndarray:
        return np.asarray(predictor.predict(X))

    def _set_fitted(self, predictors, weights) -> None:
        weights = np.clip(np.asarray(weights, dtype=np.float64), 0.0, None)
        self.predictors_ = list(predictors)
        self.weights_ = weights / weights.sum()

    # ----------------------------------------------------------------- predict
    def chance_and_lot(self, X: Matrix) -> tuple[np.ndarray, np.ndarray | None]:
        """The score's two parts: the predictors' weighted mean and each row's lot.

        With ``mix="decisions"`` the mean is the randomized classifier's chance of deciding positive, and the
        lot, a number in [0, 1) hashed from the row's values, breaks its ties (None with
        ``mix="probabilities"``, whose score has no tie-break).

        The score :meth:`predict_proba` answers is ``(1 - TIE_BREAK_SCALE) * chance + TIE_BREAK_SCALE * lot``.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
            Rows, as :meth:`predict_proba` takes them.

        Returns
        -------
        chance : ndarray of shape (n_samples,)
            The mixture's weighted mean, in [0, 1].
        lot : ndarray of shape (n_samples,) or None
            The rows' lot numbers.
        """
        check_is_fitted(self, "weights_")
        X = self._checked_X(X, reset=False)
        chance = np.zeros(_n_rows(X))
        for predictor, weight in zip(self.predictors_, self.weights_):
            if weight > 0:
                answer = positive_probability(predictor, X) if self.mix == "probabilities" \
                    else np.asarray(predictor.predict(X), dtype=np.float64)
                chance += weight * answer
        chance = np.clip(chance, 0.0, 1.0)
        return chance, (row_uniforms(X) if self.mix == "decisions" else None)

    def _score(self, X) -> np.ndarray:
        chance, lot = self.chance_and_lot(X)
        return chance if lot is None else (1.0 - TIE_BREAK_SCALE) * chance + TIE_BREAK_SCALE * lot

    def predict_proba(self, X: Matrix) -> FloatArray:
        """``[1 - score, score]`` per row, the score as ``mix`` says (see :mod:`fairops.reductions._base`).

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Scores of ``classes_[0]`` and ``classes_[1]``.
        """
        score = self._score(X)
        return np.column_stack([1.0 - score, score])

    def predict(self, X: Matrix) -> NDArray[np.int_]:
        """The class whose score is at least 0.5 (deterministic).

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
            Rows to classify.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted classes.
        """
        positive = self._score(X) >= 0.5
        return self.classes_[positive.astype(np.intp)]

    @property
    def n_predictors_(self) -> int:
        """How many predictors carry weight."""
        check_is_fitted(self, "weights_")
        return int(np.count_nonzero(self.weights_))

    def __setstate__(self, state):
        # Unpickling and skops rebuild a reduction through here: its weights and predictors are checked
        # before anything predicts with them.
        super().__setstate__(state)
        if "weights_" in self.__dict__:
            _state_checks.check_reduction(self)
