"""Accuracy and fairness of one window of labelled rows at a fixed operating point, and the alert rule.

A monitored model decides with the operating point set on its validation rows (:class:`OperatingPoint`),
so a window is scored at that rule, not at a threshold re-set on the window. The window's fairness
gets the interval of :func:`fairops.metrics.intervals.ratio_interval` (``method="exact"``) at :data:`ALERT_LEVEL`;
the window alerts when its upper bound lies below the baseline's lower bound at the same level. Each bound is wrong with
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

Whether a window could alert at all depends on its rows, not on the decisions: the bases of the rate per group
(positives for TPR, negatives for FPR, rows for PPR) are fixed by the labels and the groups, and they bound
how low the upper bound can go (:func:`fairops.metrics.intervals.lowest_possible_upper`). :func:`rate_bases`
collects them; :meth:`RateBases.can_alert` says whether any decisions could make the window alert, and
:meth:`RateBases.rows_for_an_alert` estimates how many rows in the same group shares could.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from .classification import group_rates
from .intervals import clopper_pearson, exact_attribute_intervals, lowest_possible_upper, rate_counts, ratio_interval
from .task import Task
from .thresholds import OperatingPoint

ALERT_LEVEL = 0.975


def alert_bound(baseline: float, baseline_lower: float | None = None) -> float:
    """What a window's upper bound must fall under to alert: the baseline's lower bound, or the baseline itself
    when it is a plain number."""
    return baseline if baseline_lower is None else baseline_lower


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
        return math.isfinite(self.upper) and self.upper < alert_bound(baseline, baseline_lower)


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
        raise InputError(f"decided holds {len(y_pred)} decisions for {len(y)} rows")
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

    def lowest_uppers(self, level: float = ALERT_LEVEL) -> tuple[float, dict]:
        """``(task's ratio, {attribute: its ratio})``: the lowest upper bound any decisions on these rows give
        each at ``level`` (split over the attributes as :func:`fairness_ratios` splits it); NaN where the ratio
        is not scored or needs more groups."""
        attributes = {name: lowest_possible_upper(list(groups.values()), level=level, attributes=len(self.attributes))
                      for name, groups in self.attributes.items()}
        if self.task_ratio == "combined":
            assert self.combined is not None  # a "combined" ratio is scored over its combined groups
            return lowest_possible_upper(list(self.combined.values()), level=level), attributes
        defined = [value for value in attributes.values() if math.isfinite(value)]
        return (min(defined) if defined and self.task_ratio == "lowest" else math.nan), attributes

    def can_alert(self, baselines: dict, overall: tuple, level: float = ALERT_LEVEL) -> bool:
        """True when some decisions on these rows would alert: an attribute's lowest upper bound under its
        baseline's bound (``baselines``: attribute -> ``(baseline, baseline_lower)``), or the task's ratio's under
        that of ``overall`` = ``(baseline, baseline_lower)``.

        >>> bases = RateBases(50, {"sex": {"f": 10, "m": 25}})
        >>> bases.can_alert({"sex": (0.9, 0.43)}, (0.9, 0.43)), bases.scaled(20).can_alert({}, (0.9, 0.43))
        (True, False)
        """
        task_ratio, attributes = self.lowest_uppers(level)
        return task_ratio < alert_bound(*overall) or any(
            attributes[name] < alert_bound(*pair) for name, pair in baselines.items() if name in attributes)

    def scaled(self, rows: int) -> RateBases:
        """The bases of ``rows`` rows in the same group shares (rounded down)."""

        def scale(groups: dict) -> dict:
            return {group: base * rows // self.rows for group, base in groups.items()}

        return RateBases(rows, {name: scale(groups) for name, groups in self.attributes.items()},
                         None if self.combined is None else scale(self.combined), self.task_ratio)

    def rows_for_an_alert(self, baselines: dict, overall: tuple, level: float = ALERT_LEVEL,
                          limit: int = 10**9) -> int | None:
        """An estimate of the fewest rows, in these group shares, on which some decisions would alert (see
        :meth:`can_alert`): doubling, then bisection. None when no window up to ``limit`` rows could (a ratio
        with one group holding the rate, or a bound at 0).

        >>> RateBases(50, {"sex": {"f": 10, "m": 25}}).rows_for_an_alert({}, (0.9, 0.43))
        40
        """
        def can(rows: int) -> bool:
            return self.scaled(rows).can_alert(baselines, overall, level)

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
    columns = _task_columns(task, sensitive)
    undecided = np.zeros_like(y)

    def bases(rates) -> dict:
        return {str(group): int(base) for group, base in zip(rates.groups, rate_counts(rates, task.fairness)[1])}

    attributes = {rates.attribute: bases(rates) for rates in group_rates(y, undecided, columns, intersectional=False)}
    if len(columns) < len(task.sensitive):
        return RateBases(len(y), attributes, task_ratio="none")
    if task.groups == "intersectional" and len(columns) > 1:
        return RateBases(len(y), attributes, bases(group_rates(y, undecided, columns)), "combined")
    return RateBases(len(y), attributes)
