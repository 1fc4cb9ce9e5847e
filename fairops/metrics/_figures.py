"""A model's figures on some rows: accuracy and fairness of its 0/1 decisions, each with its interval at one
confidence level, the counts behind them, and whether the decisions say anything at all.

:func:`decision_figures` is the one place these are computed; every surface reads it, so the same model on the
same rows shows the same figures everywhere: tuning's validation and test figures
(:meth:`fairops.metrics.Task.measure`), the registered version's record, the promotion gate (the fairops
evaluator) and the monitor's windows.

- accuracy (precision or recall) with Wilson's score interval; a precision without a positive decision is 0;
- each sensitive attribute's ratio (lowest group rate / highest) with its exact interval
  (:func:`~fairops.metrics._intervals.exact_attribute_intervals`: Clopper-Pearson per group, the level split
  over the groups and the attributes, so all hold together at the level, at any counts);
- the task's ratio: the lowest of the attributes' (value and bounds), or for an intersectional task the ratio
  over the attributes' combined groups at the full level. Groups without the rate's rows are left out; with
  fewer than two groups holding it the ratio is NaN;
- :attr:`Figures.degenerate`: decisions of one class for every row, or a precision not above the base rate
  beyond noise (its interval's lower bound at or under the share of positives), say nothing about the rows:
  such a fit is never picked (:func:`fairops.fairband.select_best`).

>>> import numpy as np
>>> from fairops.metrics import Task
>>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex"])
>>> y = np.array([1, 0] * 50); sex = np.array(["f"] * 50 + ["m"] * 50)
>>> figures = decision_figures(task, y, np.ones(100, dtype=int), {"sex": sex})
>>> figures.fairness.value, figures.degenerate
(1.0, 'one class')
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ._classification import group_rates
from ._intervals import LEVEL, exact_attribute_intervals, rate_counts, ratio_interval, wilson_interval

if TYPE_CHECKING:
    from .._typing import ArrayLike, Sensitive


class TaskFields(Protocol):
    """What the figures read of a :class:`fairops.metrics.Task` (which imports this module, so is not named)."""

    @property
    def metric(self) -> str: ...
    @property
    def fairness(self) -> str: ...
    @property
    def sensitive(self) -> tuple[str, ...]: ...
    @property
    def groups(self) -> str: ...
    def select_sensitive(self, sensitive_features: Sensitive) -> Sensitive: ...


#: Why a fit's decisions are set aside (:attr:`Figures.degenerate`), in words.
DEGENERATE = {
    "one class": "decided one class for every validation row",
    "base rate": "were no more precise than the base rate beyond noise (the lower bound of their precision at or "
                 "under the share of positives)",
}


@dataclass(frozen=True)
class RatioScore:
    """A fairness ratio and its exact interval (NaN where the ratio does not exist)."""

    value: float
    lower: float
    upper: float

    def below(self, bound: float) -> bool:
        """True when the interval lies below ``bound``: its upper bound is under it.

        >>> RatioScore(0.3, 0.2, 0.45).below(0.7), RatioScore(0.3, 0.2, 0.45).below(0.4)
        (True, False)
        """
        return math.isfinite(self.upper) and self.upper < bound


_UNDEFINED = RatioScore(math.nan, math.nan, math.nan)


def _ratio(successes: np.ndarray, trials: np.ndarray) -> float:
    defined = trials > 0
    if defined.sum() < 2:
        return float("nan")
    rates = successes[defined] / trials[defined]
    return float(rates.min() / rates.max()) if rates.max() > 0 else 1.0


def task_columns(task, sensitive) -> dict:
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


def _group_key(group) -> str:
    """A group's name as text (an intersectional group joined with " & ")."""
    return " & ".join(map(str, group)) if isinstance(group, tuple) else str(group)


def fairness_ratios(task, y, y_pred, sensitive, *, level: float = LEVEL):
    """``(task's ratio, {attribute: its ratio}, counts)`` of 0/1 decisions, each ratio a :class:`RatioScore`.

    The attributes are the task's columns ``sensitive`` holds; their intervals split ``level`` among them, so
    all hold together with probability ``level``. The task's ratio needs every attribute of the task: it is
    undefined (NaN) when ``sensitive`` lacks some. ``counts`` maps each attribute (the combined groups' name
    for an intersectional task) to ``{group: [events, base]}``.

    >>> from fairops.metrics import Task
    >>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex", "race"])
    >>> y, decided = [1] * 8, [1, 1, 1, 0, 1, 0, 1, 1]
    >>> overall, by_attribute, _ = fairness_ratios(task, y, decided, {"sex": list("ffffmmmm"),
    ...                                                               "race": list("abababab")})
    >>> overall.value, by_attribute["sex"].value, by_attribute["race"].value
    (0.5, 1.0, 0.5)
    >>> fairness_ratios(task, y, decided, {"sex": list("ffffmmmm")})[0].value
    nan
    """
    columns = task_columns(task, sensitive)
    per_column = group_rates(y, y_pred, columns, intersectional=False)
    pairs = rate_counts(per_column, task.fairness)
    attributes = {rates.attribute: RatioScore(_ratio(*pair), *bounds)
                  for rates, pair, bounds in zip(per_column, pairs, exact_attribute_intervals(pairs, level=level))}
    behind = per_column
    if len(columns) < len(task.sensitive):
        overall = _UNDEFINED
    elif task.groups == "intersectional" and len(columns) > 1:
        behind = [group_rates(y, y_pred, columns)]
        pair = rate_counts(behind[0], task.fairness)
        overall = RatioScore(_ratio(*pair), *ratio_interval(pair, level=level, method="exact"))
    else:
        defined = [score for score in attributes.values() if math.isfinite(score.value)]
        overall = RatioScore(*(min(getattr(score, side) for score in defined)
                               for side in ("value", "lower", "upper"))) if defined else _UNDEFINED
    counts = {}
    for rates in behind:
        events, bases = rate_counts(rates, task.fairness)
        counts[rates.attribute] = {_group_key(g): [int(e), int(b)] for g, e, b in zip(rates.groups, events, bases)}
    return overall, attributes, counts


@dataclass(frozen=True)
class Figures:
    """Accuracy and fairness of a model's decisions on some rows, at one confidence ``level``.

    Parameters
    ----------
    rows : int
        How many rows.
    accuracy : tuple of float
        ``(value, low, high)`` of the task's accuracy metric (NaN: a recall without positives).
    fairness : RatioScore
        The task's ratio.
    attributes : dict
        Each sensitive attribute's own :class:`RatioScore`.
    counts : dict
        ``accuracy``: ``[hits, base]``; ``fairness``: ``{attribute: {group: [events, base]}}``; ``decisions``:
        ``{"rows", "positive", "positives", "true_positives"}`` (positive decisions, positive labels).
    level : float
        The intervals' level.
    """

    rows: int
    accuracy: tuple
    fairness: RatioScore
    attributes: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)
    level: float = LEVEL

    @property
    def positive_share(self) -> float:
        """The share of rows decided positive (NaN without rows)."""
        decisions = self.counts["decisions"]
        return decisions["positive"] / decisions["rows"] if decisions["rows"] else math.nan

    @property
    def degenerate(self) -> str | None:
        """A key of :data:`DEGENERATE` when the decisions say nothing about the rows, else None."""
        return degenerate_of(self.counts["decisions"], self.level)

    def metrics(self) -> dict:
        """The figures as flat numbers.

        ``accuracy``, ``accuracy_low``, ``accuracy_high``, ``fairness``, ``fairness_low``, ``fairness_high``,
        ``positive_share``, and each attribute's ``fairness.<attribute>``, ``fairness_low.<attribute>``,
        ``fairness_high.<attribute>``.

        Returns
        -------
        dict of str to float
            The numbers (NaN where a figure does not exist).
        """
        values = dict(zip(("accuracy", "accuracy_low", "accuracy_high"), map(float, self.accuracy)))
        values.update(fairness=self.fairness.value, fairness_low=self.fairness.lower,
                      fairness_high=self.fairness.upper, positive_share=self.positive_share)
        for name, score in self.attributes.items():
            values.update({f"fairness.{name}": score.value, f"fairness_low.{name}": score.lower,
                           f"fairness_high.{name}": score.upper})
        return values


def degenerate_of(decisions: dict, level: float = LEVEL) -> str | None:
    """Why decisions with these counts (:func:`decision_counts`) say nothing about their rows, as a key of
    :data:`DEGENERATE`, or None: one class for every row, or a precision whose interval at ``level`` does not
    rise above the share of positives.

    >>> degenerate_of({"rows": 200, "positive": 199, "positives": 140, "true_positives": 140})
    'base rate'
    >>> degenerate_of({"rows": 200, "positive": 60, "positives": 140, "true_positives": 55}) is None
    True
    """
    rows, positive = decisions["rows"], decisions["positive"]
    if rows == 0:
        return None
    if positive in (0, rows):
        return "one class"
    low, _ = wilson_interval(decisions["true_positives"], positive, level=level)
    return "base rate" if low <= decisions["positives"] / rows else None


def decision_counts(y, y_pred) -> dict:
    """``{"rows", "positive", "positives", "true_positives"}`` of labels and 0/1 decisions.

    >>> decision_counts([1, 0, 1, 0], [1, 1, 0, 0])
    {'rows': 4, 'positive': 2, 'positives': 2, 'true_positives': 1}
    """
    y, y_pred = np.asarray(y).astype(bool), np.asarray(y_pred).astype(bool)
    return {"rows": len(y), "positive": int(y_pred.sum()), "positives": int(y.sum()),
            "true_positives": int((y & y_pred).sum())}


def decision_figures(task: TaskFields, y: ArrayLike, y_pred: ArrayLike, sensitive: Sensitive, *,
                     level: float = LEVEL) -> Figures:
    """The :class:`Figures` of 0/1 decisions ``y_pred`` on rows labelled ``y`` (0/1) for ``task``.

    Parameters
    ----------
    task : Task
        Which accuracy metric and which ratio over which attributes.
    y, y_pred : array-like of shape (n_samples,)
        Labels and decisions, 0/1.
    sensitive : DataFrame, dict or array-like
        The sensitive columns; some of the task's attributes only leave the task's ratio NaN.
    level : float, default=0.95
        The intervals' level.

    Returns
    -------
    Figures
        The figures and the counts behind them.
    """
    y, y_pred = np.asarray(y).astype(np.int8), np.asarray(y_pred).astype(np.int8)
    overall, attributes, fairness_counts = fairness_ratios(task, y, y_pred, sensitive, level=level)
    decisions = decision_counts(y, y_pred)
    hits = decisions["true_positives"]
    base = decisions["positive"] if task.metric == "precision" else decisions["positives"]
    value = hits / base if base else (0.0 if task.metric == "precision" else math.nan)
    low, high = wilson_interval(hits, base, level=level)
    return Figures(len(y), (value, low, high), overall, attributes,
                   {"accuracy": [hits, base], "fairness": fairness_counts, "decisions": decisions}, level)
