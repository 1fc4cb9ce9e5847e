"""A task's figures on scored rows: the decisions, then the figures of :func:`fairops.metrics.decision_figures`
with the ranking metrics beside them (what :meth:`fairops.metrics.Task.measure` returns)."""

from __future__ import annotations

import math

from ._auc import auc_s, auc_y
from ._classification import group_rates, precision, ratio_of, recall
from ._decisions import GroupThresholds, check_decision, group_decisions
from ._figures import decision_figures
from ._thresholds import OperatingPoint, binarize

ACCURACY_METRICS = {"precision": precision, "recall": recall}


def decisions(task, y_true, y_score, sensitive_features, seed, at, decision):
    """The 0/1 decisions :meth:`fairops.metrics.Task.measure` scores (its arguments say which)."""
    if at is None and check_decision(decision) == "single":
        return binarize(y_score, y_true, seed=seed, **task.threshold)
    if at is None:
        return group_decisions(y_score, y_true, task.select_sensitive(sensitive_features), seed=seed,
                               **task.threshold)
    if isinstance(at, GroupThresholds):
        return at.apply(y_score, sensitive_features, seed=seed)
    if not isinstance(at, OperatingPoint):
        raise TypeError(f"at must be an OperatingPoint or GroupThresholds, got {type(at).__name__}")
    return at.apply(y_score, seed=seed)


def measure(task, y_true, y_score, sensitive_features, *, seed, at, level: float, decision: str,
            decided=None) -> tuple[dict, dict]:
    """``(metrics, counts)`` of ``task`` on these rows; :meth:`fairops.metrics.Task.measure` says which."""
    groups = task.select_sensitive(sensitive_features)
    if decided is None:
        decided = decisions(task, y_true, y_score, sensitive_features, seed, at, decision)
    figures = decision_figures(task, y_true, decided, groups, level=level)
    if not all(math.isfinite(score.value) for score in figures.attributes.values()):
        # a ratio over fewer than two groups holding the rate: refused, naming the groups without it
        ratio_of([rates.defined(task.fairness) for rates in group_rates(y_true, decided, groups, intersectional=False)],
                 task.fairness)
    metrics = figures.metrics()
    metrics["auc_y"], metrics["auc_s"] = auc_y(y_true, y_score), auc_s(y_score, groups)
    return {name: float(value) for name, value in metrics.items()}, {**figures.counts, "level": level}
