"""A task's figures on scored rows: the decisions, the metrics with their intervals, and the counts behind
them (what :meth:`fairops.metrics.Task.measure` returns)."""

from __future__ import annotations

import numpy as np

from .auc import auc_s, auc_y
from .classification import group_rates, precision, ratio_of, recall
from .decisions import GroupThresholds, check_decision, group_decisions
from .intervals import rate_counts, ratio_interval, wilson_interval
from .thresholds import OperatingPoint, binarize

ACCURACY_METRICS = {"precision": precision, "recall": recall}


def _decisions(task, y_true, y_score, sensitive_features, seed, at, decision):
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


def _accuracy_counts(task, y_true, y_pred) -> tuple[int, int]:
    y_true, y_pred = np.asarray(y_true, dtype=bool), np.asarray(y_pred, dtype=bool)
    hits = int((y_true & y_pred).sum())
    return hits, int(y_pred.sum() if task.metric == "precision" else y_true.sum())


def measure(task, y_true, y_score, sensitive_features, *, seed, at, level: float,
            decision: str) -> tuple[dict, dict]:
    """``(metrics, counts)`` of ``task`` on these rows; :meth:`fairops.metrics.Task.measure` says which."""
    groups = task.select_sensitive(sensitive_features)
    y_pred = _decisions(task, y_true, y_score, sensitive_features, seed, at, decision)
    columns = group_rates(y_true, y_pred, groups, intersectional=False)
    every = [group_rates(y_true, y_pred, groups)] if task.groups == "intersectional" else columns
    # A group without rows for the rate (e.g. no negatives for an FPR) has no rate: it is left out
    # of the ratio, and its zero counts are kept.
    rates = [column.defined(task.fairness) for column in every]
    hits, base = _accuracy_counts(task, y_true, y_pred)
    metrics = {"accuracy": ACCURACY_METRICS[task.metric](y_true, y_pred),
               "fairness": ratio_of(rates, task.fairness)}
    metrics["accuracy_low"], metrics["accuracy_high"] = wilson_interval(hits, base, level=level)
    metrics["fairness_low"], metrics["fairness_high"] = ratio_interval(rate_counts(rates, task.fairness),
                                                                       level=level)
    for column in columns:
        metrics[f"fairness.{column.attribute}"] = ratio_of(column.defined(task.fairness), task.fairness)
    metrics["auc_y"], metrics["auc_s"] = auc_y(y_true, y_score), auc_s(y_score, groups)
    counts: dict = {"accuracy": [hits, base], "fairness": {}}
    for column in every:
        events, bases = rate_counts(column, task.fairness)
        counts["fairness"][column.attribute] = {
            _group_key(group): [int(e), int(b)] for group, e, b in zip(column.groups, events, bases)}
    return {name: float(value) for name, value in metrics.items()}, counts


def _group_key(group) -> str:
    """A group's name as text (an intersectional group joined with " & ")."""
    return " & ".join(map(str, group)) if isinstance(group, tuple) else str(group)
