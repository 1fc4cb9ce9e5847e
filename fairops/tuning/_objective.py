"""A ready (accuracy, fairness) objective for a data set: budget slices, a model family, a task.

The data is split once (train / validation / test, stratified by label x group); a fit with budget
``r`` uses the nested stratified slice of ``r`` of the training rows
(:class:`fairops.datasets.BudgetSlicer`) and is scored on the validation rows with the data set's task,
whose threshold meets the task's target exactly there. Test rows are scored the paper's way: with
the threshold set on the validation rows, applied unchanged, each row decided as the registered model
serves it (:meth:`FairnessObjective.test`, :meth:`FairnessObjective.evaluate`). Every figure is that of
:func:`fairops.metrics.decision_figures`, with intervals at ``level`` (the fairness rule's).

A fit whose validation scores are all equal (a constant model, e.g. L1 logistic regression with a
tiny ``C``) ranks nothing: its "accuracy" is the base rate and its "fairness" is whatever the random
tie-break gives. The objective returns NaN for it, which Optuna records as a failed trial (no
``catch=`` needed), with the user attribute ``failure = "constant validation scores"``; it ranks last
in its rung and is never picked.

``decision="per-group"`` sets one threshold per group of the task's attributes on the validation rows
of every fit, so each group meets the task's target there (:func:`fairops.metrics.group_thresholds`):
accuracy and fairness are measured at those thresholds, and the tuner searches models and
thresholds together. ``blind=True`` leaves the data set's sensitive columns out of the models'
inputs; they still define the groups fairness is measured over (and the per-group thresholds).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from optuna.trial import FixedTrial

from fairops.fairband import budget as trial_budget

from ..errors import InputError
from ..metrics._intervals import LEVEL
from ._outcome import CONSTANT_SCORES, FAILURE_ATTR, outcome_values, record_measures  # shared with own objectives
from ._reduction_record import reduction_record
from ._search_space import fit_model, make_model
from ._split_checks import cell_sizes, check_split, floor_fraction

if TYPE_CHECKING:
    from collections.abc import Sequence

    import optuna
    import pandas as pd
    from optuna.trial import FrozenTrial
    from sklearn.base import BaseEstimator
    from sklearn.pipeline import Pipeline

    from .._typing import ArrayLike, Decision
    from ..datasets import Dataset
    from ..metrics import GroupThresholds, OperatingPoint

# The floor on small data: a fit gets at least this many training rows and positives (when the training
# set has them). At 1.2% of 1,200 training rows a fit would see 15 rows and 3 positives; the search
# space's trees need up to 404 rows to split once (min_samples_split) and 2 x 183 (min_samples_leaf).
# Measured on a 2,000-row Adult sample: at 300 rows 27 of 206 fits were constant, at 500 rows 11.
SMALL_DATA_FLOOR = {"min_rows": 500, "min_positives": 50}


def blind_features(dataset):
    """The data set's features without its sensitive columns (a group-blind model's inputs).

    Blindness to a column is not blindness to what encodes it: Adult's ``relationship`` (husband /
    wife) still tells sex apart.

    >>> from fairops.datasets import load_german
    >>> "sex" in blind_features(load_german()).columns
    False
    """
    dropped = [c for c in dataset.sensitive.columns if c in dataset.X.columns]
    return dataset.X.drop(columns=dropped)


class ConstantScoresError(ValueError):
    """A fit gave every validation row the same score, so no threshold can rank them (raised when such
    a model is evaluated; during a study the fit fails with NaN values instead)."""


def failure_reason(frozen_trial) -> str | None:
    """Why a finished fit failed: ``"constant validation scores"``, ``"error"`` or None (it did not fail).

    >>> import optuna
    >>> failure_reason(optuna.trial.create_trial(values=[0.5, 0.5])) is None
    True
    """
    if frozen_trial.state.name != "FAIL":
        return None
    return frozen_trial.user_attrs.get(FAILURE_ATTR, "error")


class FairnessObjective:
    """Callable Optuna objective returning (validation accuracy, validation fairness).

    The paper's protocol keeps one split for all runs and varies only the tuner's seed: pass the same
    ``split_seed`` to every run for that.

    Parameters
    ----------
    dataset : Dataset
        The data and its task.
    profile : {"fast", "paper"}, default="fast"
        The search space's profile.
    families : list of str or None, default=None
        The model families to search (None: the paper's five).
    seed : int, default=0
        Seeds the models and the tie-breaks.
    validation, test : float, default=0.2
        Shares of the rows in the validation and test parts.
    max_train_rows : int or None, default=None
        Subsample the training part to at most this many rows.
    split_seed : int or None, default=None
        Seeds the train / validation / test split and the budget slices (default: ``seed``).
    score_test : bool, default=False
        Also score every fit on the test rows (at the validation threshold) and store ``test_accuracy``
        and ``test_fairness`` as user attributes, so a pick's test figures can be read at any point of a
        run without a refit.
    min_rows, min_positives : int or None, default=None
        Raise a fit's share of the training rows to at least that many rows / positives
        (``**SMALL_DATA_FLOOR`` is the floor that ``fairops tune`` and ``fairops compare`` use with the
        robust selection); without them every fit gets exactly its budget fraction, as in the paper.
    decision : {"single", "per-group"}, default="single"
        One threshold, or one per group (see the module docstring).
    blind : bool, default=False
        Leave the sensitive columns out of the models' inputs (see the module docstring).
    test_rows : array-like of int or None, default=None
        Row positions fixing the test part beforehand, e.g. a file's held-out rows
        (:func:`~fairops.datasets._row_ids.content_holdout`); ``test`` is then unused and the other rows
        are split train / validation at ``split_seed``.
    level : float, default=0.95
        The confidence level of every interval (:class:`~fairops.metrics.FairnessRule`'s).

    Attributes
    ----------
    n_train : int
        Rows of the training part.

    Examples
    --------
    >>> from fairops.datasets import load_german
    >>> objective = FairnessObjective(load_german(), families=["logistic_regression"], seed=0)
    >>> objective.n_train > 0
    True
    """

    def __init__(self, dataset: Dataset, *, profile: str = "fast", families: Sequence[str] | None = None, seed: int = 0,
                 validation: float = 0.2, test: float = 0.2, max_train_rows: int | None = None,
                 split_seed: int | None = None, score_test: bool = False, min_rows: int | None = None,
                 min_positives: int | None = None, decision: Decision = "single", blind: bool = False,
                 test_rows: ArrayLike | None = None, level: float = LEVEL) -> None:
        from fairops.datasets import BudgetSlicer, train_validation_test_split
        from fairops.datasets._splits import split_around
        from fairops.metrics._decisions import check_decision, check_per_group_target
        from fairops.metrics._fairness_rule import FairnessRule

        self.dataset = dataset
        self.level = FairnessRule(level=level).level  # checked as the rule checks it
        self.decision = check_decision(decision)
        if self.decision == "per-group":
            check_per_group_target(dataset.task.target)  # one refusal up front, not one per fit
        self.blind = bool(blind)
        self._X = blind_features(dataset) if self.blind else dataset.X
        self.task = dataset.task
        self.profile = profile
        self.families = families
        self.seed = seed
        self.split_seed = seed if split_seed is None else split_seed
        self.score_test = bool(score_test)
        groups = dataset.sensitive[list(self.task.sensitive)]
        if test_rows is None:
            split = train_validation_test_split(dataset.y, groups, validation=validation, test=test,
                                                seed=self.split_seed)
        else:
            split = split_around(dataset.y, groups, test_rows, validation=validation, seed=self.split_seed)
        train = split.train
        if max_train_rows is not None and len(train) > max_train_rows:
            rng = np.random.default_rng(self.split_seed)
            train = np.sort(rng.choice(train, max_train_rows, replace=False))
        self._train, self._validation, self._test = train, split.validation, split.test
        cells = cell_sizes(dataset.y, groups)
        check_split(self.task, dataset.y, {"train": train, "validation": split.validation, "test": split.test},
                    n_cells=len(cells), n_small_cells=int((cells < 3).sum()))
        self._slicer = BudgetSlicer(np.asarray(dataset.y)[train], groups.iloc[train], seed=self.split_seed)
        self.n_train = len(train)
        self._floor = floor_fraction(min_rows, min_positives, self.n_train,
                                     int(np.asarray(dataset.y)[train].sum()))

    def fraction(self, budget: float) -> float:
        """The share of the training rows a fit of ``budget`` gets: the budget, raised to the floor.

        Parameters
        ----------
        budget : float
            The fit's budget in (0, 1].

        Returns
        -------
        float
            The share.

        Examples
        --------
        >>> from fairops.datasets import load_german
        >>> objective = FairnessObjective(load_german(), seed=0, min_rows=300)
        >>> objective.n_train, round(objective.fraction(1 / 81), 3), objective.fraction(1.0)
        (600, 0.5, 1.0)
        """
        return max(float(budget), self._floor)

    def _rows(self, rows):
        d = self.dataset
        return self._X.iloc[rows], np.asarray(d.y)[rows], d.sensitive.iloc[rows]

    def _fit(self, trial, fraction):
        model = make_model(trial, profile=self.profile, families=self.families, seed=self.seed,
                           X_example=self._X, sensitive_columns=self.task.sensitive, task=self.task)
        rows = self._train[self._slicer.indices(self.fraction(fraction))]
        X, y, sensitive = self._rows(rows)
        if len(np.unique(y)) < 2:
            raise InputError(f"budget slice {fraction:.4f} holds a single class")
        return fit_model(model, X, y, self.task.select_sensitive(sensitive))

    @staticmethod
    def _scores(model, X) -> np.ndarray:
        return model.predict_proba(X)[:, 1]

    def _validation_metrics(self, model: BaseEstimator, counts: dict[str, Any] | None = None,
                            ) -> tuple[dict[str, float], OperatingPoint | GroupThresholds]:
        """The task's metrics on the validation rows and the operating point set there (``counts``, when
        given, receives the counts behind them)."""
        X, y, sensitive = self._rows(self._validation)
        scores = self._scores(model, X)
        if np.ptp(scores) == 0:
            raise ConstantScoresError(f"the model scores all {len(scores)} validation rows {scores[0]:.6g}")
        metrics, behind = self.task.measure(y, scores, sensitive, seed=self.seed, decision=self.decision,
                                            level=self.level)
        if counts is not None:
            counts.update(behind)
        return metrics, self.task.decision_rule(y, scores, sensitive, seed=self.seed, decision=self.decision)

    def _test_metrics(self, model, point, counts: dict | None = None) -> dict:
        from ..models._decision import ServedDecision  # each test row decided as the registered model serves it

        X, y, sensitive = self._rows(self._test)
        scores = self._scores(model, X)
        decided = ServedDecision(self.task.positive or "label 1", point).decide(scores, sensitive)
        metrics, behind = self.task.measure(y, scores, sensitive, seed=self.seed, level=self.level, decided=decided)
        if counts is not None:
            counts.update(behind)
        return metrics

    _pair = staticmethod(outcome_values)

    def __call__(self, trial: optuna.Trial) -> tuple[float, float]:
        """Fit the trial's model on its budget slice and score it on the validation rows.

        Parameters
        ----------
        trial : optuna.Trial
            The trial; its budget comes from :func:`~fairops.fairband.budget`.

        Returns
        -------
        tuple of float
            (accuracy, fairness); NaN twice for constant validation scores.
        """
        model = self._fit(trial, trial_budget(trial))
        for name, value in reduction_record(model).items():
            trial.set_user_attr(name, value)
        counts: dict[str, Any] = {}
        try:
            result, point = self._validation_metrics(model, counts)
        except ConstantScoresError:
            trial.set_user_attr(FAILURE_ATTR, CONSTANT_SCORES)
            return math.nan, math.nan  # Optuna marks the trial FAIL; it ranks last
        record_measures(trial, result, counts)
        if self.score_test:
            test_accuracy, test_fairness = self._pair(self._test_metrics(model, point))
            trial.set_user_attr("test_accuracy", test_accuracy)
            trial.set_user_attr("test_fairness", test_fairness)
        return self._pair(result)

    def test(self, frozen_trial: FrozenTrial) -> tuple[float, float]:
        """Refit a finished trial's configuration at its budget and score it on the test rows.

        Parameters
        ----------
        frozen_trial : optuna.trial.FrozenTrial
            The finished trial.

        Returns
        -------
        tuple of float
            (test accuracy, test fairness) at the threshold set on the validation rows.
        """
        fraction = float(frozen_trial.user_attrs.get("budget", 1.0))
        model = self.refit(frozen_trial, fraction)
        _, point = self._validation_metrics(model)
        return self._pair(self._test_metrics(model, point))

    def unfitted(self, frozen_trial: FrozenTrial) -> Pipeline:
        """A new, unfitted model of a finished trial's configuration.

        Parameters
        ----------
        frozen_trial : optuna.trial.FrozenTrial
            The finished trial.

        Returns
        -------
        Pipeline
            The unfitted model.
        """
        return make_model(FixedTrial(frozen_trial.params, number=frozen_trial.number), profile=self.profile,
                          families=self.families, seed=self.seed, X_example=self._X,
                          sensitive_columns=self.task.sensitive, task=self.task)

    def refit(self, frozen_trial: FrozenTrial, fraction: float = 1.0) -> Pipeline:
        """The trial's configuration fitted on ``fraction`` of the training rows (all of them by default).

        Parameters
        ----------
        frozen_trial : optuna.trial.FrozenTrial
            The finished trial.
        fraction : float, default=1.0
            The budget slice.

        Returns
        -------
        Pipeline
            The fitted model.
        """
        return self._fit(FixedTrial(frozen_trial.params, number=frozen_trial.number), fraction)

    def evaluate(self, model: BaseEstimator, part: str = "test") -> dict[str, float]:
        """The task's metrics (accuracy, fairness, auc_y, auc_s) of a fitted model on one part of the split.

        Parameters
        ----------
        model : estimator
            A fitted model.
        part : {"test", "validation"}, default="test"
            ``"validation"``: the threshold meets the task's target there. ``"test"``: the validation
            threshold, applied unchanged, each row decided as the registered model serves it.

        Returns
        -------
        dict of str to float
            The metrics.
        """
        return self.measure(model, part)[0]

    def measure(self, model: BaseEstimator, part: str = "test") -> tuple[dict[str, float], dict[str, Any]]:
        """:meth:`evaluate`'s metrics and the counts behind them (:meth:`fairops.metrics.Task.measure`'s).

        Parameters
        ----------
        model, part : optional
            As in :meth:`evaluate`.

        Returns
        -------
        metrics : dict of str to float
            The metrics.
        counts : dict
            The counts behind them.
        """
        if part not in ("validation", "test"):
            raise InputError(f"part must be 'validation' or 'test', got {part!r}")
        counts: dict = {}
        result, point = self._validation_metrics(model, counts)
        if part == "test":
            counts.clear()
            result = self._test_metrics(model, point, counts)
        return {name: float(value) for name, value in result.items()}, counts

    def decision_rule(self, model: BaseEstimator) -> OperatingPoint | GroupThresholds:
        """The fitted model's rule set on the validation rows (what a registered model applies when served).

        Parameters
        ----------
        model : estimator
            A fitted model.

        Returns
        -------
        OperatingPoint or GroupThresholds
            The latter with ``decision="per-group"``.
        """
        return self._validation_metrics(model)[1]

    def rows(self, part: str) -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame]:
        """(X, y, sensitive) of ``"train"``, ``"validation"`` or ``"test"``.

        Parameters
        ----------
        part : {"train", "validation", "test"}
            The part of the split.

        Returns
        -------
        tuple
            Its features (DataFrame), labels (ndarray) and sensitive columns (DataFrame).
        """
        chosen = {"train": self._train, "validation": self._validation, "test": self._test}.get(part)
        if chosen is None:
            raise InputError(f"part must be 'train', 'validation' or 'test', got {part!r}")
        return self._rows(chosen)
