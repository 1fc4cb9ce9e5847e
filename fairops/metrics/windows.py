"""Accuracy and fairness of one window of labelled rows at a fixed operating point, and the alert rule.

A monitored model decides with the operating point set on its validation rows (:class:`OperatingPoint`),
so a window is scored at that rule, not at a threshold re-set on the window. The window's fairness
gets the interval of :func:`fairops.metrics.intervals.ratio_interval` (``method="exact"``) at :data:`ALERT_LEVEL`; the window alerts
when its upper bound lies below the baseline's lower bound at the same level. Each bound is wrong with
probability at most ``1 - ALERT_LEVEL`` = 2.5%, so a window drawn like the baseline's rows alerts with
probability at most 5% (usually far less: the intervals are conservative). A baseline given as a
plain number (no interval) is compared with the window's upper bound alone (at most 2.5%).

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
from dataclasses import dataclass

import numpy as np

from .classification import group_rates
from .intervals import clopper_pearson, rate_counts, ratio_interval
from .task import Task
from .thresholds import OperatingPoint

ALERT_LEVEL = 0.975


@dataclass(frozen=True)
class WindowScore:
    """One window: rows, accuracy and fairness at the operating point, each with its interval."""

    rows: int
    accuracy: float
    accuracy_lower: float
    accuracy_upper: float
    fairness: float
    fairness_lower: float
    fairness_upper: float
    groups: dict

    def alerts(self, baseline: float, baseline_lower: float | None = None) -> bool:
        """True when the window's fairness is significantly below the baseline (see the module docstring)."""
        bound = baseline if baseline_lower is None else baseline_lower
        return math.isfinite(self.fairness_upper) and self.fairness_upper < bound

    def metrics(self) -> dict:
        """The numbers logged per window (NaN where a rate does not exist in the window)."""
        return {name: float(getattr(self, name)) for name in (
            "rows", "accuracy", "accuracy_lower", "accuracy_upper", "fairness", "fairness_lower", "fairness_upper")}


def _accuracy_counts(metric: str, y: np.ndarray, y_pred: np.ndarray) -> tuple[int, int]:
    hits = int(np.count_nonzero(y & y_pred))
    return hits, int(np.count_nonzero(y_pred if metric == "precision" else y))


def _ratio(successes: np.ndarray, trials: np.ndarray) -> float:
    defined = trials > 0
    if defined.sum() < 2:
        return float("nan")
    rates = successes[defined] / trials[defined]
    return float(rates.min() / rates.max()) if rates.max() > 0 else 1.0


def score_window(task: Task, y, score, sensitive, point: OperatingPoint, *, seed: int = 0,
                 level: float = ALERT_LEVEL, decided=None) -> WindowScore:
    """Score one window's labels ``y`` (0/1) and model scores at ``point`` for ``task``; ``decided``
    (0/1 per row, e.g. a served model's own decisions) replaces the decisions at ``point``."""
    y = np.asarray(y).astype(np.int8)
    y_pred = point.apply(score, seed=seed) if decided is None else np.asarray(decided, dtype=np.int8)
    if len(y_pred) != len(y):
        raise ValueError(f"decided holds {len(y_pred)} decisions for {len(y)} rows")
    rates = group_rates(y, y_pred, task.select_sensitive(sensitive))
    successes, trials = rate_counts(rates, task.fairness)
    hits, total = _accuracy_counts(task.metric, y, y_pred)
    if total:
        low, high = clopper_pearson([hits], [total], level)
        accuracy, accuracy_bounds = hits / total, (float(low[0]), float(high[0]))
    else:
        accuracy, accuracy_bounds = float("nan"), (float("nan"), float("nan"))
    lower, upper = ratio_interval((successes, trials), level=level, method="exact")
    groups = {str(group): [int(k), int(n)] for group, k, n in zip(rates.groups, successes, trials)}
    return WindowScore(len(y), accuracy, *accuracy_bounds, _ratio(successes, trials), lower, upper, groups)
