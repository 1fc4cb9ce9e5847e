"""Accuracy and fairness of one window of labelled rows at a fixed operating point, and the alert rule.

A monitored model decides with the operating point set on its validation rows (:class:`OperatingPoint`),
so a window is scored at that rule, not at a threshold re-set on the window. The window's fairness
gets the interval of :func:`fairops.metrics.intervals.ratio_interval` (``method="exact"``) at :data:`ALERT_LEVEL`; the window alerts
when its upper bound lies below the baseline's lower bound at the same level. Each bound is wrong with
probability at most ``1 - ALERT_LEVEL`` = 2.5%, so a window drawn like the baseline's rows alerts with
probability at most 5% (usually far less: the intervals are conservative). A baseline given as a
plain number (no interval) is compared with the window's upper bound alone (at most 2.5%).

With several sensitive attributes each one's ratio is also compared with its own baseline
(:meth:`WindowScore.alerting_attributes`): the lowest of the ratios can hide a drift in one attribute behind
another that is lower still, and the ratio over combined groups has wide intervals. The attributes'
intervals split the level among them (:func:`fairness_ratios`), so they hold together and the 5% bound is
for all of them at once; the lowest of them adds no comparison of its own (its bounds are the lowest of
the attributes'), the ratio of an intersectional task is one more comparison.

>>> import numpy as np
>>> from fairops.metrics import OperatingPoint, Task
>>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["g"])
>>> rng = np.random.default_rng(0)
>>> y = rng.integers(0, 2, 4000); g = rng.choice(["a", "b"], 4000)
>>> score = np.where(g == "a", 0.9, 0.1) * y
>>> window = score_window(task, y, score, {"g": g}, OperatingPoint(0.5, 0.0))
>>> window.fairness, window.alerts(0.9)
(0.0, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .classification import group_rates
from .intervals import clopper_pearson, exact_attribute_intervals, rate_counts, ratio_interval
from .task import Task
from .thresholds import OperatingPoint

ALERT_LEVEL = 0.975


@dataclass(frozen=True)
class RatioScore:
    """A fairness ratio and its exact interval (NaN where the ratio does not exist)."""

    value: float
    lower: float
    upper: float

    def below(self, baseline: float, baseline_lower: float | None = None) -> bool:
        """True when significantly below the baseline: the upper bound under the baseline's lower bound (or
        under a baseline given as a plain number).

        >>> RatioScore(0.3, 0.2, 0.45).below(0.9, 0.7), RatioScore(0.3, 0.2, 0.45).below(0.4)
        (True, False)
        """
        bound = baseline if baseline_lower is None else baseline_lower
        return math.isfinite(self.upper) and self.upper < bound


_UNDEFINED = RatioScore(math.nan, math.nan, math.nan)


@dataclass(frozen=True)
class WindowScore:
    """One window: rows, accuracy and fairness at the operating point, each with its interval.

    ``fairness`` is the task's ratio (NaN when the window lacks some of the task's attributes);
    ``attributes`` holds each attribute's own ratio; ``groups`` the counts behind the rate per group
    (the attributes' combinations when there are several).
    """

    rows: int
    accuracy: float
    accuracy_lower: float
    accuracy_upper: float
    fairness: float
    fairness_lower: float
    fairness_upper: float
    groups: dict
    attributes: dict = field(default_factory=dict)

    @property
    def overall(self) -> RatioScore:
        return RatioScore(self.fairness, self.fairness_lower, self.fairness_upper)

    def alerts(self, baseline: float, baseline_lower: float | None = None) -> bool:
        """True when the window's fairness is significantly below the baseline (see the module docstring)."""
        return self.overall.below(baseline, baseline_lower)

    def alerting_attributes(self, baselines: dict) -> list[str]:
        """The attributes whose ratio is significantly below their own baseline; ``baselines`` maps an
        attribute to ``(baseline, baseline_lower)`` (an attribute it lacks is not compared)."""
        return [name for name, score in self.attributes.items()
                if name in baselines and score.below(*baselines[name])]

    def metrics(self) -> dict:
        """The numbers logged per window (NaN where a rate does not exist in the window), each attribute's
        ratio as ``fairness.<attribute>`` with ``fairness_lower.<attribute>`` and ``fairness_upper.<attribute>``."""
        values = {name: float(getattr(self, name)) for name in (
            "rows", "accuracy", "accuracy_lower", "accuracy_upper", "fairness", "fairness_lower", "fairness_upper")}
        for attribute, score in self.attributes.items():
            values.update({f"fairness.{attribute}": score.value, f"fairness_lower.{attribute}": score.lower,
                           f"fairness_upper.{attribute}": score.upper})
        return values


def _accuracy_counts(metric: str, y: np.ndarray, y_pred: np.ndarray) -> tuple[int, int]:
    hits = int(np.count_nonzero(y & y_pred))
    return hits, int(np.count_nonzero(y_pred if metric == "precision" else y))


def _ratio(successes: np.ndarray, trials: np.ndarray) -> float:
    defined = trials > 0
    if defined.sum() < 2:
        return float("nan")
    rates = successes[defined] / trials[defined]
    return float(rates.min() / rates.max()) if rates.max() > 0 else 1.0


def _task_columns(task: Task, sensitive) -> dict:
    """The task's columns that ``sensitive`` (a DataFrame, a dict, or one attribute's values) holds."""
    if not (hasattr(sensitive, "columns") or isinstance(sensitive, dict)):
        if len(task.sensitive) > 1:
            raise TypeError(f"sensitive must be a DataFrame or a dict of the task's columns {list(task.sensitive)}, "
                            f"got {type(sensitive).__name__}")
        return {task.sensitive[0]: np.asarray(sensitive)}
    held = {name: np.asarray(sensitive[name]) for name in task.sensitive if name in sensitive}
    if not held:
        task.select_sensitive(sensitive)  # raises, naming the task's columns
    return held


def fairness_ratios(task: Task, y, y_pred, sensitive, *, level: float = ALERT_LEVEL):
    """``(task's ratio, {attribute: its ratio})`` of 0/1 decisions, each a :class:`RatioScore` with an exact
    interval.

    The attributes are the task's columns ``sensitive`` holds; their intervals split ``level`` among them, so
    all hold together with probability ``level``. The task's ratio is the lowest of the attributes' (over
    their combined groups for an intersectional task) and needs every attribute of the task: it is undefined
    (NaN) when ``sensitive`` lacks some.

    >>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex", "race"])
    >>> y, decided = [1] * 8, [1, 1, 1, 0, 1, 0, 1, 1]
    >>> overall, by_attribute = fairness_ratios(task, y, decided, {"sex": list("ffffmmmm"), "race": list("abababab")})
    >>> overall.value, by_attribute["sex"].value, by_attribute["race"].value
    (0.5, 1.0, 0.5)
    >>> fairness_ratios(task, y, decided, {"sex": list("ffffmmmm")})[0].value
    nan
    """
    columns = _task_columns(task, sensitive)
    per_column = group_rates(y, y_pred, columns, intersectional=False)
    counts = rate_counts(per_column, task.fairness)
    attributes = {rates.attribute: RatioScore(_ratio(*pair), *bounds)
                  for rates, pair, bounds in zip(per_column, counts, exact_attribute_intervals(counts, level=level))}
    if len(columns) < len(task.sensitive):
        return _UNDEFINED, attributes
    if task.groups == "intersectional" and len(columns) > 1:
        pair = rate_counts(group_rates(y, y_pred, columns), task.fairness)
        return RatioScore(_ratio(*pair), *ratio_interval(pair, level=level, method="exact")), attributes
    defined = [score for score in attributes.values() if math.isfinite(score.value)]
    if not defined:
        return _UNDEFINED, attributes
    return RatioScore(*(min(getattr(score, side) for score in defined) for side in ("value", "lower", "upper"))), \
        attributes


def score_window(task: Task, y, score, sensitive, point: OperatingPoint, *, seed: int = 0,
                 level: float = ALERT_LEVEL, decided=None) -> WindowScore:
    """Score one window's labels ``y`` (0/1) and model scores at ``point`` for ``task``; ``decided``
    (0/1 per row, e.g. a served model's own decisions) replaces the decisions at ``point``.

    ``sensitive`` may hold some of the task's attributes only: each is scored, the task's ratio is then NaN
    (see :func:`fairness_ratios`)."""
    y = np.asarray(y).astype(np.int8)
    y_pred = point.apply(score, seed=seed) if decided is None else np.asarray(decided, dtype=np.int8)
    if len(y_pred) != len(y):
        raise ValueError(f"decided holds {len(y_pred)} decisions for {len(y)} rows")
    overall, attributes = fairness_ratios(task, y, y_pred, sensitive, level=level)
    rates = group_rates(y, y_pred, _task_columns(task, sensitive))
    successes, trials = rate_counts(rates, task.fairness)
    hits, total = _accuracy_counts(task.metric, y, y_pred)
    if total:
        low, high = clopper_pearson([hits], [total], level)
        accuracy, accuracy_bounds = hits / total, (float(low[0]), float(high[0]))
    else:
        accuracy, accuracy_bounds = float("nan"), (float("nan"), float("nan"))
    groups = {str(group): [int(k), int(n)] for group, k, n in zip(rates.groups, successes, trials)}
    return WindowScore(len(y), accuracy, *accuracy_bounds, overall.value, overall.lower, overall.upper, groups,
                       attributes)
