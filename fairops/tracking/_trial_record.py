"""What a trial's child run records: its name, params, metrics and tags, from the trial alone.

:func:`trial_record` is the ``(params, metrics, tags)`` of a finished trial that
:class:`~fairops.tracking.FairnessTrackingCallback` writes into the trial's run and into the study's
trials table; :func:`trial_run_name` names the run, :func:`rung_history` gives an asynchronous Fairband
trial's per-rung values as metric histories.

>>> import optuna
>>> trial = optuna.trial.create_trial(values=[0.8, 0.6], params={"model": "lightgbm"},
...     distributions={"model": optuna.distributions.CategoricalDistribution(["lightgbm"])},
...     user_attrs={"budget": 1 / 3})
>>> params, metrics, tags = trial_record("s", trial, alpha=0.5, family="lightgbm")
>>> params, metrics["weighted_score"], sorted(metrics), tags["family"], tags["budget"]
({'model': 'lightgbm'}, 0.7, ['accuracy', 'budget', 'fairness', 'trial_seconds', 'weighted_score'], 'lightgbm', '33%')
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

import fairops

from ..errors import InputError

if TYPE_CHECKING:
    from optuna.trial import FrozenTrial

METRIC_ATTRS = (
    "auc_y",
    "auc_s",
    "alpha",
    "budget",
    "weighted_score",
    "jaccard",
    "preservation",
    "outlier_fraction",
    "euclidean_disparity",
    "wasserstein_disparity",
    "n_predictors",
    "duality_gap",
)
TAG_ATTRS = ("bracket", "rung", "configuration_id", "iteration")
_RUNG_ATTR = re.compile(r"^rung(\d+)_(accuracy|fairness)$")


def finite(value) -> float | None:
    """``value`` as a float when it is a finite number (not a bool), else None.

    >>> finite(3), finite(float("nan")), finite(True), finite("1")
    (3.0, None, None, None)
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _interval_metrics(attrs: dict) -> dict:
    """``accuracy_low``, ``fairness_high``, ... and ``fairness.<attribute>`` from a fit's user attributes.

    >>> _interval_metrics({"intervals": {"fairness": [0.7, 1.0]}, "fairness_by_attribute": {"sex": 0.9}})
    {'fairness_low': 0.7, 'fairness_high': 1.0, 'fairness.sex': 0.9}
    """
    metrics = {}
    intervals = attrs.get("intervals")
    for name, bounds in (intervals.items() if isinstance(intervals, dict) else ()):
        if isinstance(bounds, (list, tuple)) and len(bounds) == 2:
            for side, value in zip(("low", "high"), bounds):
                if finite(value) is not None:
                    metrics[f"{name}_{side}"] = float(value)
    by_attribute = attrs.get("fairness_by_attribute")
    for attribute, value in (by_attribute.items() if isinstance(by_attribute, dict) else ()):
        if finite(value) is not None:
            metrics[f"fairness.{re.sub(r'[^A-Za-z0-9_./ -]', '_', str(attribute))}"] = float(value)
    return metrics


def budget_label(budget) -> str | None:
    """A budget (share of the training rows) as the percentage a run name shows.

    Parameters
    ----------
    budget : float or None
        The share.

    Returns
    -------
    str or None
        E.g. ``"33%"``; None without a finite budget.

    Examples
    --------
    >>> budget_label(1 / 3), budget_label(1 / 81), budget_label(1.0), budget_label(None)
    ('33%', '1.2%', '100%', None)
    """
    value = finite(budget)
    if value is None:
        return None
    percent = 100 * value
    return f"{percent:.0f}%" if percent >= 9.95 else f"{percent:.2g}%"


def trial_run_name(number: int, family: str | None = None, budget=None) -> str:
    """``t<number> <family> <budget>``, leaving out what is not known.

    Parameters
    ----------
    number : int
        The trial number.
    family : str or None, default=None
        The model family.
    budget : float or None, default=None
        The trial's budget.

    Returns
    -------
    str
        The run name.

    Examples
    --------
    >>> trial_run_name(186, "lightgbm", 1 / 3), trial_run_name(7, budget=1.0), trial_run_name(3)
    ('t186 lightgbm 33%', 't7 100%', 't3')
    """
    parts = [f"t{number}", family, budget_label(budget)]
    return " ".join(part for part in parts if part)



def value_names(metric_names, n_values: int) -> tuple:
    """The metric names of a trial's ``n_values`` objective values: ``metric_names`` when given, else
    ``("accuracy", "fairness")`` for two, ``("value",)`` for one, ``value_0, value_1, ...`` otherwise.

    >>> value_names(None, 2), value_names(None, 3), value_names(("loss",), 1)
    (('accuracy', 'fairness'), ('value_0', 'value_1', 'value_2'), ('loss',))
    """
    if metric_names is not None:
        if len(metric_names) != n_values:
            raise InputError(f"metric_names has {len(metric_names)} names, the trial has {n_values} values")
        return metric_names
    if n_values == 2:
        return ("accuracy", "fairness")
    if n_values == 1:
        return ("value",)
    return tuple(f"value_{i}" for i in range(n_values))


def trial_record(study_name: str, trial, *, metric_names=None, alpha=None, family=None) -> tuple[dict, dict, dict]:
    """``(params, metrics, tags)`` of a trial's child run; ``alpha`` (a float, ``"auto"`` or None) fills in
    ``weighted_score`` when the trial has none, ``family`` is the trial's model family."""
    metrics = {}
    if trial.values is not None:
        for name, value in zip(value_names(metric_names, len(trial.values)), trial.values):
            if finite(value) is not None:
                metrics[name] = float(value)
    attrs = trial.user_attrs
    for name in METRIC_ATTRS:
        if finite(attrs.get(name)) is not None:
            metrics[name] = float(attrs[name])
    metrics.update(_interval_metrics(attrs))
    alpha = metrics.get("alpha", None if alpha == "auto" else alpha)
    if "weighted_score" not in metrics and alpha is not None and {"accuracy", "fairness"} <= metrics.keys():
        metrics["weighted_score"] = alpha * metrics["accuracy"] + (1 - alpha) * metrics["fairness"]
    if trial.duration is not None:
        metrics["trial_seconds"] = trial.duration.total_seconds()
    tags = {name: str(attrs[name]) for name in TAG_ATTRS if name in attrs}
    budget = budget_label(attrs.get("budget"))
    if family is not None:
        tags["family"] = family
    if budget is not None:
        tags["budget"] = budget
    tags.update({
        "trial_state": trial.state.name,
        "trial_number": str(trial.number),
        "study_name": study_name,
        "fairops_version": fairops.__version__,
    })
    params = {name: str(value)[:6000] for name, value in trial.params.items()}
    return params, metrics, tags


def rung_history(trial: FrozenTrial) -> list[tuple[str, float, int]]:
    """``(metric, value, step)`` for the per-rung values of an asynchronous Fairband trial.

    Parameters
    ----------
    trial : optuna.trial.FrozenTrial
        The trial, with its ``rung<i>_accuracy`` / ``rung<i>_fairness`` attributes.

    Returns
    -------
    list of tuple
        ``rung_accuracy`` and ``rung_fairness`` points with the rung as the step.

    Examples
    --------
    >>> import optuna
    >>> t = optuna.trial.create_trial(values=[0.5, 0.5], user_attrs={"rung0_accuracy": 0.4, "rung1_accuracy": 0.6})
    >>> rung_history(t)
    [('rung_accuracy', 0.4, 0), ('rung_accuracy', 0.6, 1)]
    """
    history = []
    for name, value in trial.user_attrs.items():
        match = _RUNG_ATTR.match(name)
        if match and finite(value) is not None:
            history.append((f"rung_{match[2]}", float(value), int(match[1])))
    return sorted(history, key=lambda entry: (entry[0], entry[2]))
