"""Accuracy and fairness of one window of labelled rows at a fixed operating point, and what makes it alert.

A monitored model decides with the operating point set on its validation rows (:class:`OperatingPoint`),
so a window is scored at that rule, not at a threshold re-set on the window. Its figures are those of
:func:`fairops.metrics.decision_figures` (the fairness ratio with its exact interval at the rule's
level), the same function that scores the model everywhere else. A window alerts when the interval of its
fairness lies below a bound (:meth:`WindowScore.alerts`): the fairness line of the version's
:class:`~fairops.metrics.FairnessRule`, and optionally the lower bound of the version's own validation
fairness (:mod:`fairops.registry._window_alerts` sets the bounds). For a window whose true ratio is at the
bound, the chance that it alerts is at most ``(1 - level) / 2``; above the bound it is lower still
(``benchmarks/monitor_false_alarms.py`` simulates it).

With several sensitive attributes each one's ratio is also compared with its own bound
(:meth:`WindowScore.alerting_attributes`): the lowest of the ratios can hide a drift in one attribute behind
another that is lower still, and the ratio over combined groups has wide intervals. The attributes'
intervals split the level among them, so they hold together.

>>> import numpy as np
>>> from fairops.metrics import OperatingPoint, Task
>>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["g"])
>>> rng = np.random.default_rng(0)
>>> y = rng.integers(0, 2, 4000); g = rng.choice(["a", "b"], 4000)
>>> score = np.where(g == "a", 0.9, 0.1) * y
>>> window = score_window(task, y, score, {"g": g}, OperatingPoint(0.5, 0.0))
>>> window.fairness, window.alerts(0.8)
(0.0, True)

Whether a window could alert at all depends on its rows, not on the decisions: the bases of the rate per group
(positives for TPR, negatives for FPR, rows for PPR) are fixed by the labels and the groups, and they bound
how low the upper bound can go (:func:`fairops.metrics._intervals.lowest_possible_upper`). :func:`rate_bases`
collects them; :meth:`RateBases.can_alert` says whether any decisions could make the window alert, and
:meth:`RateBases.rows_for_an_alert` estimates how many rows in the same group shares could.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ._classification import group_rates
from ._figures import RatioScore, decision_figures, task_columns
from ._intervals import LEVEL, lowest_possible_upper, rate_counts
from ._task import Task
from ._thresholds import OperatingPoint


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

    def alerts(self, bound: float) -> bool:
        """True when the interval of the window's fairness lies below ``bound`` (see the module docstring)."""
        return self.overall.below(bound)

    def alerting_attributes(self, bounds: dict) -> list[str]:
        """The attributes whose ratio's interval lies below their bound; ``bounds`` maps an attribute to the
        bound (an attribute it lacks is not compared)."""
        return [name for name, score in self.attributes.items() if name in bounds and score.below(bounds[name])]

    def metrics(self) -> dict:
        """The numbers logged per window (NaN where a rate does not exist in the window), each attribute's
        ratio as ``fairness.<attribute>`` with ``fairness_lower.<attribute>`` and ``fairness_upper.<attribute>``."""
        values = {name: float(getattr(self, name)) for name in (
            "rows", "accuracy", "accuracy_lower", "accuracy_upper", "fairness", "fairness_lower", "fairness_upper")}
        for attribute, score in self.attributes.items():
            values.update({f"fairness.{attribute}": score.value, f"fairness_lower.{attribute}": score.lower,
                           f"fairness_upper.{attribute}": score.upper})
        return values


def score_window(task: Task, y, score, sensitive, point: OperatingPoint, *, seed: int = 0,
                 level: float = LEVEL, decided=None) -> WindowScore:
    """Score one window's labels ``y`` (0/1) and model scores at ``point`` for ``task``; ``decided``
    (0/1 per row, e.g. a served model's own decisions) replaces the decisions at ``point``.

    ``sensitive`` may hold some of the task's attributes only: each is scored, the task's ratio is then NaN
    (see :func:`fairops.metrics._figures.fairness_ratios`)."""
    y = np.asarray(y).astype(np.int8)
    y_pred = point.apply(score, seed=seed) if decided is None else np.asarray(decided, dtype=np.int8)
    if len(y_pred) != len(y):
        raise InputError(f"decided holds {len(y_pred)} decisions for {len(y)} rows")
    columns = task_columns(task, sensitive)
    figures = decision_figures(task, y, y_pred, columns, level=level)
    rates = group_rates(y, y_pred, columns)
    successes, trials = rate_counts(rates, task.fairness)
    groups = {str(group): [int(k), int(n)] for group, k, n in zip(rates.groups, successes, trials)}
    (accuracy, low, high), overall = figures.accuracy, figures.fairness
    return WindowScore(len(y), accuracy, low, high, overall.value, overall.lower, overall.upper, groups,
                       figures.attributes)


@dataclass(frozen=True)
class RateBases:
    """The bases of the task's rate per group in one window (positives for TPR, negatives for FPR, rows for PPR),
    which the labels and groups fix whatever the decisions, so they bound what any decisions could show.

    ``attributes`` maps each attribute to ``{group: base}``; ``combined`` holds the attributes' combined groups
    when the task's ratio is over them (intersectional). ``task_ratio`` says how the task's ratio is scored:
    ``"lowest"`` of the attributes', over the ``"combined"`` groups, or ``"none"`` (the window lacks some of the
    task's attributes). Windows add up (``+``) to the bases of their rows together.
    """

    rows: int
    attributes: dict
    combined: dict | None = None
    task_ratio: str = "lowest"

    def lowest_uppers(self, level: float = LEVEL) -> tuple[float, dict]:
        """``(task's ratio, {attribute: its ratio})``: the lowest upper bound any decisions on these rows give
        each at ``level`` (split over the attributes as :func:`~fairops.metrics._figures.fairness_ratios` splits
        it); NaN where the ratio is not scored or needs more groups."""
        attributes = {name: lowest_possible_upper(list(groups.values()), level=level, attributes=len(self.attributes))
                      for name, groups in self.attributes.items()}
        if self.task_ratio == "combined":
            assert self.combined is not None  # a "combined" ratio is scored over its combined groups
            return lowest_possible_upper(list(self.combined.values()), level=level), attributes
        defined = [value for value in attributes.values() if math.isfinite(value)]
        return (min(defined) if defined and self.task_ratio == "lowest" else math.nan), attributes

    def can_alert(self, bounds: dict, overall: float, level: float = LEVEL) -> bool:
        """True when some decisions on these rows would alert: an attribute's lowest upper bound under its
        bound (``bounds``: attribute -> bound), or the task's ratio's under ``overall``.

        >>> bases = RateBases(50, {"sex": {"f": 10, "m": 25}})
        >>> bases.can_alert({"sex": 0.43}, 0.43, 0.975), bases.scaled(20).can_alert({}, 0.43, 0.975)
        (True, False)
        """
        task_ratio, attributes = self.lowest_uppers(level)
        return task_ratio < overall or any(attributes[name] < bound for name, bound in bounds.items()
                                           if name in attributes)

    def scaled(self, rows: int) -> RateBases:
        """The bases of ``rows`` rows in the same group shares (rounded down)."""

        def scale(groups: dict) -> dict:
            return {group: base * rows // self.rows for group, base in groups.items()}

        return RateBases(rows, {name: scale(groups) for name, groups in self.attributes.items()},
                         None if self.combined is None else scale(self.combined), self.task_ratio)

    def rows_for_an_alert(self, bounds: dict, overall: float, level: float = LEVEL,
                          limit: int = 10**9) -> int | None:
        """An estimate of the fewest rows, in these group shares, on which some decisions would alert (see
        :meth:`can_alert`): doubling, then bisection. None when no window up to ``limit`` rows could (a ratio
        with one group holding the rate, or a bound at 0).

        >>> RateBases(50, {"sex": {"f": 10, "m": 25}}).rows_for_an_alert({}, 0.43, 0.975)
        40
        """
        def can(rows: int) -> bool:
            return self.scaled(rows).can_alert(bounds, overall, level)

        low, high = 1, 2
        while not can(high):
            if high >= limit:
                return None
            low, high = high, high * 2
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (low, middle) if can(middle) else (middle, high)
        return high

    def __add__(self, other: RateBases) -> RateBases:
        def pooled(mine: dict | None, theirs: dict | None) -> dict | None:
            if mine is None or theirs is None:
                return None
            return {group: mine.get(group, 0) + theirs.get(group, 0) for group in {**mine, **theirs}}

        attributes = {name: pooled(self.attributes.get(name, {}), other.attributes.get(name, {}))
                      for name in {**self.attributes, **other.attributes}}
        return RateBases(self.rows + other.rows, attributes, pooled(self.combined, other.combined), self.task_ratio)


#: what a rate's base counts, in words
BASE_UNIT = {"tpr": "positives", "fpr": "negatives", "ppr": "rows"}


def rate_bases(task: Task, y, sensitive) -> RateBases:
    """The :class:`RateBases` of one window's labels ``y`` and its sensitive columns (those of the task it holds).

    >>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex"])
    >>> rate_bases(task, [1, 1, 0, 1], {"sex": list("ffmm")}).attributes
    {'sex': {'f': 2, 'm': 1}}
    """
    y = np.asarray(y).astype(np.int8)
    columns = task_columns(task, sensitive)
    undecided = np.zeros_like(y)

    def bases(rates) -> dict:
        return {str(group): int(base) for group, base in zip(rates.groups, rate_counts(rates, task.fairness)[1])}

    attributes = {rates.attribute: bases(rates) for rates in group_rates(y, undecided, columns, intersectional=False)}
    if len(columns) < len(task.sensitive):
        return RateBases(len(y), attributes, task_ratio="none")
    if task.groups == "intersectional" and len(columns) > 1:
        return RateBases(len(y), attributes, bases(group_rates(y, undecided, columns)), "combined")
    return RateBases(len(y), attributes)
