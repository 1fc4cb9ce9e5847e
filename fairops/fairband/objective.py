"""A ready (accuracy, fairness) objective for a data set: budget slices, a model family, a task.

The training part is split once (train / validation / test, stratified by label x group); a fit with
budget ``r`` uses the nested stratified slice of ``r`` of the training rows
(:class:`fairops.datasets.BudgetSlicer`) and is scored on the validation rows with the data set's task.
:meth:`FairnessObjective.test` refits a picked trial and scores it on the test rows.
"""

from __future__ import annotations

import math

import numpy as np
from optuna.trial import FixedTrial

from .sampler import budget as trial_budget
from .search_space import make_model


class FairnessObjective:
    """Callable Optuna objective returning (validation accuracy, validation fairness).

    >>> from fairops.datasets import load_german
    >>> objective = FairnessObjective(load_german(), families=["logistic_regression"], seed=0)
    >>> objective.n_train > 0
    True
    """

    def __init__(self, dataset, *, profile: str = "fast", families=None, seed: int = 0,
                 validation: float = 0.2, test: float = 0.2, max_train_rows: int | None = None) -> None:
        from fairops.datasets import BudgetSlicer, train_validation_test_split

        self.dataset = dataset
        self.task = dataset.task
        self.profile = profile
        self.families = families
        self.seed = seed
        groups = dataset.sensitive[list(self.task.sensitive)]
        split = train_validation_test_split(dataset.y, groups, validation=validation, test=test, seed=seed)
        train = split.train
        if max_train_rows is not None and len(train) > max_train_rows:
            rng = np.random.default_rng(seed)
            train = np.sort(rng.choice(train, max_train_rows, replace=False))
        self._train, self._validation, self._test = train, split.validation, split.test
        self._slicer = BudgetSlicer(np.asarray(dataset.y)[train], groups.iloc[train], seed=seed)
        self.n_train = len(train)

    def _rows(self, rows):
        d = self.dataset
        return d.X.iloc[rows], np.asarray(d.y)[rows], d.sensitive.iloc[rows]

    def _fit(self, trial, fraction):
        model = make_model(trial, profile=self.profile, families=self.families, seed=self.seed,
                           X_example=self.dataset.X)
        rows = self._train[self._slicer.indices(fraction)]
        X, y, _ = self._rows(rows)
        if len(np.unique(y)) < 2:
            raise ValueError(f"budget slice {fraction:.4f} holds a single class")
        model.fit(X, y)
        return model

    def _metrics(self, model, rows) -> dict:
        X, y, sensitive = self._rows(rows)
        scores = model.predict_proba(X)[:, 1]
        return self.task.evaluate(y, scores, sensitive, seed=self.seed)

    def _score(self, model, rows):
        result = self._metrics(model, rows)
        accuracy, fairness = float(result["accuracy"]), float(result["fairness"])
        return accuracy, (fairness if math.isfinite(fairness) else float("nan"))

    def __call__(self, trial):
        model = self._fit(trial, trial_budget(trial))
        result = self._metrics(model, self._validation)
        # AUC_Y and AUC_S travel with the trial so trackers can log them beside the two objectives.
        for name in ("auc_y", "auc_s"):
            trial.set_user_attr(name, float(result[name]))
        fairness = float(result["fairness"])
        return float(result["accuracy"]), (fairness if math.isfinite(fairness) else float("nan"))

    def test(self, frozen_trial) -> tuple[float, float]:
        """Refit a finished trial's configuration at its budget; (test accuracy, test fairness)."""
        fraction = float(frozen_trial.user_attrs.get("budget", 1.0))
        return self._score(self.refit(frozen_trial, fraction), self._test)

    def refit(self, frozen_trial, fraction: float = 1.0):
        """The trial's configuration fitted on ``fraction`` of the training rows (all of them by default)."""
        return self._fit(FixedTrial(frozen_trial.params, number=frozen_trial.number), fraction)

    def evaluate(self, model, part: str = "test") -> dict:
        """The task's metrics (accuracy, fairness, auc_y, auc_s) of a fitted model on one part of the split."""
        rows = {"validation": self._validation, "test": self._test}.get(part)
        if rows is None:
            raise ValueError(f"part must be 'validation' or 'test', got {part!r}")
        return {name: float(value) for name, value in self._metrics(model, rows).items()}

    def rows(self, part: str):
        """(X, y, sensitive) of ``"train"``, ``"validation"`` or ``"test"``."""
        chosen = {"train": self._train, "validation": self._validation, "test": self._test}.get(part)
        if chosen is None:
            raise ValueError(f"part must be 'train', 'validation' or 'test', got {part!r}")
        return self._rows(chosen)
