"""A fairness task: which accuracy metric at which operating point, and which fairness ratio."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .classification import RATES, fairness_ratio, precision, recall
from .ranking import auc_s, auc_y
from .thresholds import binarize

ACCURACY_METRICS = {"precision": precision, "recall": recall}
TARGETS = ("tpr", "fpr", "top_k")
_SPEC = re.compile(r"^(?P<metric>\w+)@(?P<target>\w+)=(?P<value>[0-9.eE+-]+),ratio=(?P<rate>\w+)$")


@dataclass(frozen=True)
class Task:
    """Accuracy at a target threshold plus a fairness ratio over sensitive attributes.

    The Fairband paper's Adult task is precision at 50% TPR with the TPR ratio over sex:

    >>> import numpy as np
    >>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex"])
    >>> str(task)
    'precision@tpr=0.5,ratio=tpr'
    >>> y = np.array([1, 0, 1, 0, 1, 1]); s = {"sex": ["f", "f", "f", "m", "m", "m"]}
    >>> task.evaluate(y, np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4]), s)["accuracy"]
    0.6666666666666666
    """

    metric: str
    target: str
    target_value: float
    fairness: str
    sensitive: tuple[str, ...]

    def __post_init__(self):
        if self.metric not in ACCURACY_METRICS:
            raise ValueError(f"task metric must be one of {sorted(ACCURACY_METRICS)}, got {self.metric!r}")
        if self.target not in TARGETS:
            raise ValueError(f"task target must be one of {TARGETS}, got {self.target!r}")
        if self.fairness not in RATES:
            raise ValueError(f"task fairness ratio must be one of {RATES}, got {self.fairness!r}")
        if isinstance(self.sensitive, str):
            object.__setattr__(self, "sensitive", (self.sensitive,))
        object.__setattr__(self, "sensitive", tuple(self.sensitive))
        if not self.sensitive:
            raise ValueError("task needs at least one sensitive attribute")
        if self.target == "top_k":
            object.__setattr__(self, "target_value", int(self.target_value))

    @classmethod
    def from_string(cls, spec: str, *, sensitive) -> "Task":
        """Parse ``"<precision|recall>@<tpr|fpr|top_k>=<value>,ratio=<tpr|fpr|ppr>"``."""
        match = _SPEC.match(spec.replace(" ", ""))
        if not match:
            raise ValueError(
                f"task spec {spec!r} is not of the form 'precision@tpr=0.5,ratio=tpr' "
                f"(metric in {sorted(ACCURACY_METRICS)}, target in {TARGETS}, ratio in {RATES})"
            )
        return cls(match["metric"], match["target"], float(match["value"]), match["rate"], sensitive)

    def __str__(self) -> str:
        return f"{self.metric}@{self.target}={self.target_value:g},ratio={self.fairness}"

    @property
    def threshold(self) -> dict:
        """Keyword arguments for :func:`fairops.metrics.binarize`."""
        return {self.target: self.target_value}

    def select_sensitive(self, sensitive_features):
        """The task's columns from a DataFrame or dict holding more sensitive columns."""
        if hasattr(sensitive_features, "columns") or isinstance(sensitive_features, dict):
            missing = [name for name in self.sensitive if name not in sensitive_features]
            if missing:
                raise ValueError(f"sensitive_features lacks the task's column(s) {missing}")
            if isinstance(sensitive_features, dict):
                return {name: sensitive_features[name] for name in self.sensitive}
            return sensitive_features[list(self.sensitive)]
        return sensitive_features

    def evaluate(self, y_true, y_score, sensitive_features, *, seed=0) -> dict:
        """``{"accuracy", "fairness", "auc_y", "auc_s"}`` of scores on labelled rows."""
        groups = self.select_sensitive(sensitive_features)
        y_pred = binarize(y_score, y_true, seed=seed, **self.threshold)
        return {
            "accuracy": ACCURACY_METRICS[self.metric](y_true, y_pred),
            "fairness": fairness_ratio(y_true, y_pred, groups, rate=self.fairness),
            "auc_y": auc_y(y_true, y_score),
            "auc_s": auc_s(y_score, groups),
        }
