"""A fairness task: which class is positive, which accuracy metric at which operating point, and which
fairness ratio over which sensitive attribute.

The operating point is a target met on the rows the threshold is set on (a TPR, an FPR, a top-k) or a fixed
probability cut-off (``threshold``: positive at or above it, on every row alike).
"""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ..errors import InputError
from ._classification import RATES
from ._decisions import check_decision, group_thresholds
from ._intervals import LEVEL
from ._task_measure import ACCURACY_METRICS, measure as _measure
from ._thresholds import TARGETS, OperatingPoint, operating_point

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pandas as pd

    from .._typing import ArrayLike, Decision, Sensitive
    from ._decisions import GroupThresholds

GROUPINGS = ("lowest", "intersectional")
_RATE_NAMES = {"tpr": "TPR", "fpr": "FPR", "ppr": "positive rate"}
_SPEC = re.compile(r"^(?P<metric>\w+)@(?P<target>\w+)=(?P<value>[0-9.eE+-]+),ratio=(?P<rate>\w+)"
                   r"(,groups=(?P<groups>\w+))?$")


@dataclass(frozen=True)
class Task:
    """Accuracy at a target threshold plus a fairness ratio over sensitive attributes.

    Every sensitive attribute counts: with several, the fairness is the lowest of the attributes'
    ratios (``groups="lowest"``, the default) or the ratio over their intersectional groups
    (``groups="intersectional"``, e.g. female x Black; written ``,groups=intersectional`` in the spec).

    ``positive`` says what label 1 means (it decides what "precision" and "TPR" measure); it is
    descriptive only and does not enter any computation. The Fairband paper's Adult task is
    precision at 50% TPR with the TPR ratio over sex, where the positive class is income <= 50K (see Examples).

    Parameters
    ----------
    metric : {"precision", "recall"}
        The accuracy metric.
    target, target_value : str, float
        The operating point: ``"tpr"`` or ``"fpr"`` and a rate, ``"top_k"`` and a number of rows, or
        ``"threshold"`` and a probability.
    fairness : {"tpr", "fpr", "ppr"}
        The rate whose ratio over groups is the fairness.
    sensitive : str or tuple of str
        The sensitive attributes.
    positive : str or None, default=None
        What label 1 means.
    groups : {"lowest", "intersectional"}, default="lowest"
        How several attributes count.

    Examples
    --------
    >>> import numpy as np
    >>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex"], positive="income <= 50K")
    >>> str(task)
    'precision@tpr=0.5,ratio=tpr'
    >>> task.describe()
    'positive class: income <= 50K; accuracy: precision at 50% TPR; fairness: TPR ratio (lowest / highest) over sex'
    >>> y = np.array([1, 0, 1, 0, 1, 1]); s = {"sex": ["f", "f", "f", "m", "m", "m"]}
    >>> task.evaluate(y, np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4]), s)["accuracy"]
    0.6666666666666666
    """

    metric: str
    target: str
    target_value: float
    fairness: str
    sensitive: tuple[str, ...]
    positive: str | None = None
    groups: str = "lowest"

    def __post_init__(self):
        if self.metric not in ACCURACY_METRICS:
            raise InputError(f"task metric must be one of {sorted(ACCURACY_METRICS)}, got {self.metric!r}")
        if self.target not in TARGETS:
            raise InputError(f"task target must be one of {TARGETS}, got {self.target!r}")
        if self.fairness not in RATES:
            raise InputError(f"task fairness ratio must be one of {RATES}, got {self.fairness!r}")
        if isinstance(self.sensitive, str):
            object.__setattr__(self, "sensitive", (self.sensitive,))
        object.__setattr__(self, "sensitive", tuple(self.sensitive))
        if not self.sensitive:
            raise InputError("task needs at least one sensitive attribute")
        _check_target(self.target, self.target_value)
        if self.target == "top_k":
            object.__setattr__(self, "target_value", int(self.target_value))
        if self.positive is not None and (not isinstance(self.positive, str) or not self.positive.strip()):
            raise InputError(f"task positive must be None or a non-empty description, got {self.positive!r}")
        if self.groups not in GROUPINGS:
            raise InputError(f"task groups must be one of {GROUPINGS}, got {self.groups!r}")

    def check_rows(self, n_rows: int, where: str = "the evaluation rows") -> None:
        """Refuse a top-k task asking for more rows than ``where`` holds.

        Parameters
        ----------
        n_rows : int
            How many rows there are.
        where : str, default="the evaluation rows"
            Names the rows in the error.

        Examples
        --------
        >>> Task("precision", "top_k", 50, "tpr", ["sex"]).check_rows(40, "the validation split")
        Traceback (most recent call last):
        ...
        fairops.errors.InputError: task top_k=50 asks for more rows than the validation split holds (40)
        """
        if self.target == "top_k" and self.target_value > n_rows:
            raise InputError(f"task top_k={self.target_value} asks for more rows than {where} holds ({n_rows})")

    @classmethod
    def from_string(cls, spec: str, *, sensitive: str | Sequence[str], positive: str | None = None) -> Task:
        """Parse ``"<precision|recall>@<tpr|fpr|top_k|threshold>=<value>,ratio=<tpr|fpr|ppr>[,groups=intersectional]"``.

        Parameters
        ----------
        spec : str
            The task in that grammar (spaces are ignored).
        sensitive : str or sequence of str
            The sensitive attributes.
        positive : str or None, default=None
            What label 1 means.

        Returns
        -------
        Task
            The task.

        Examples
        --------
        >>> str(Task.from_string("recall@fpr=0.05,ratio=fpr,groups=intersectional", sensitive=["sex", "race"]))
        'recall@fpr=0.05,ratio=fpr,groups=intersectional'
        >>> Task.from_string("precision@threshold=0.5,ratio=fpr", sensitive=["sex"]).accuracy_name
        'precision at scores >= 0.5'
        """
        match = _SPEC.match(spec.replace(" ", ""))
        if not match:
            raise InputError(
                f"task spec {spec!r} is not of the form 'precision@tpr=0.5,ratio=tpr' "
                f"(metric in {sorted(ACCURACY_METRICS)}, target in {TARGETS}, ratio in {RATES}, "
                f"optionally ',groups=' one of {GROUPINGS})"
            )
        return cls(match["metric"], match["target"], float(match["value"]), match["rate"],
                   sensitive, positive, match["groups"] or "lowest")  # type: ignore[arg-type]  # made a tuple on init

    def __str__(self) -> str:
        spec = f"{self.metric}@{self.target}={self.target_value:g},ratio={self.fairness}"
        return spec if self.groups == "lowest" else f"{spec},groups={self.groups}"

    @property
    def accuracy_name(self) -> str:
        """The accuracy metric in words, e.g. ``"precision at 50% TPR"``."""
        if self.target == "top_k":
            return f"{self.metric} at top {self.target_value}"
        if self.target == "threshold":
            return f"{self.metric} at scores >= {self.target_value:g}"
        return f"{self.metric} at {100 * self.target_value:g}% {_RATE_NAMES[self.target]}"

    @property
    def fairness_label(self) -> str:
        """The fairness ratio's short name, e.g. ``"TPR ratio"`` (a column header)."""
        return f"{_RATE_NAMES[self.fairness]} ratio"

    @property
    def fairness_name(self) -> str:
        """The fairness ratio in words, e.g. ``"TPR ratio over sex"``."""
        return f"{self.fairness_label} over {self.over}"

    @property
    def over(self) -> str:
        """Which groups the ratio compares, e.g. ``"sex, race (the lowest of their ratios)"``.

        >>> Task("recall", "fpr", 0.05, "fpr", ("sex", "race"), groups="intersectional").over
        'sex x race (intersectional groups)'
        """
        if len(self.sensitive) == 1:
            return self.sensitive[0]
        if self.groups == "intersectional":
            return f"{' x '.join(self.sensitive)} (intersectional groups)"
        return f"{', '.join(self.sensitive)} (the lowest of their ratios)"

    def describe(self) -> str:
        """One line naming the positive class, the accuracy metric and the fairness ratio.

        Returns
        -------
        str
            The line.
        """
        positive = self.positive or "label 1"
        return (f"positive class: {positive}; accuracy: {self.accuracy_name}; "
                f"fairness: {self.fairness_label} (lowest / highest) over {self.over}")

    def as_params(self) -> dict[str, str]:
        """The task as flat string parameters (for a tracking run).

        Returns
        -------
        dict of str to str
            ``task`` and its ``task.*`` parts.

        Examples
        --------
        >>> Task("recall", "fpr", 0.05, "fpr", ("age",)).as_params()["task.target"]
        'fpr=0.05'
        """
        return {
            "task": str(self),
            "task.positive_class": self.positive or "label 1",
            "task.metric": self.metric,
            "task.target": f"{self.target}={self.target_value:g}",
            "task.fairness_ratio": self.fairness,
            "task.sensitive": ",".join(self.sensitive),
            "task.groups": self.groups,
        }

    @property
    def fixed_threshold(self) -> float | None:
        """The cut-off of a ``threshold`` task (the same on every row), else None.

        Without a fixed cut-off, the cut is set where the task's target is met.

        Examples
        --------
        >>> Task("precision", "threshold", 0.5, "fpr", ("sex",)).fixed_threshold
        0.5
        """
        return float(self.target_value) if self.target == "threshold" else None

    @property
    def threshold(self) -> dict:
        """Keyword arguments for :func:`fairops.metrics.binarize`."""
        return {self.target: self.target_value}

    def select_sensitive(self, sensitive_features: Sensitive) -> Sensitive:
        """The task's columns from a DataFrame or dict holding more sensitive columns.

        Parameters
        ----------
        sensitive_features : DataFrame, dict or array-like
            Sensitive columns; an array or Series is returned as it is.

        Returns
        -------
        DataFrame, dict or array-like
            The task's columns only.
        """
        if hasattr(sensitive_features, "columns") or isinstance(sensitive_features, dict):
            columns = cast("pd.DataFrame | dict[str, ArrayLike]", sensitive_features)
            missing = [name for name in self.sensitive if name not in columns]
            if missing:
                raise InputError(f"sensitive_features lacks the task's column(s) {missing}")
            if isinstance(sensitive_features, dict):
                return {name: sensitive_features[name] for name in self.sensitive}
            return cast("pd.DataFrame", sensitive_features)[list(self.sensitive)]
        return sensitive_features

    def operating_point(self, y_true: ArrayLike, y_score: ArrayLike, *, seed: int = 0) -> OperatingPoint:
        """Where the task's target cuts these rows (e.g. the validation rows), to score other rows with.

        Parameters
        ----------
        y_true, y_score : array-like of shape (n_samples,)
            Binary labels and scores.
        seed : int, default=0
            Breaks ties at the cut.

        Returns
        -------
        OperatingPoint
            The rule.
        """
        return operating_point(y_score, y_true, seed=seed, **self.threshold)

    def decision_rule(self, y_true: ArrayLike, y_score: ArrayLike, sensitive_features: Sensitive | None = None, *,
                      seed: int = 0, decision: Decision = "single") -> OperatingPoint | GroupThresholds:
        """Where the task's target cuts these rows, for everyone or per group.

        Parameters
        ----------
        y_true, y_score : array-like of shape (n_samples,)
            Binary labels and scores.
        sensitive_features : DataFrame, dict or array-like, optional
            The sensitive columns; needed with ``decision="per-group"``.
        seed : int, default=0
            Breaks ties at the cut.
        decision : {"single", "per-group"}, default="single"
            One rule for every row, or one per group of the task's attributes (their combinations when
            there are several), each meeting the target.

        Returns
        -------
        OperatingPoint or GroupThresholds
            The rule.
        """
        if check_decision(decision) == "single":
            return self.operating_point(y_true, y_score, seed=seed)
        return group_thresholds(y_score, y_true, self.select_sensitive(sensitive_features), seed=seed,
                                **self.threshold)

    def evaluate(self, y_true: ArrayLike, y_score: ArrayLike, sensitive_features: Sensitive, *, seed: int = 0,
                 at: OperatingPoint | GroupThresholds | None = None, level: float = LEVEL,
                 decision: Decision = "single", decided: ArrayLike | None = None) -> dict[str, float]:
        """The task's metrics of scores on labelled rows, all floats.

        ``accuracy`` and ``fairness`` with their ``level`` confidence intervals (``accuracy_low``,
        ``accuracy_high``, ``fairness_low``, ``fairness_high``), the ratio of every sensitive attribute alone
        with its interval (``fairness.<name>``, ``fairness_low.<name>``, ``fairness_high.<name>``), the share of
        rows decided positive (``positive_share``), ``auc_y`` and ``auc_s``: the figures of
        :func:`fairops.metrics.decision_figures`. :meth:`measure` also gives the counts behind them.

        Parameters
        ----------
        y_true, y_score : array-like of shape (n_samples,)
            Binary labels and scores.
        sensitive_features : DataFrame, dict or array-like
            The sensitive columns (more than the task's are allowed in a DataFrame or dict).
        seed : int, default=0
            Breaks ties at the cut.
        at : OperatingPoint or GroupThresholds, optional
            A rule set on other rows (see :meth:`decision_rule`), applied unchanged: the paper's rule for
            test rows. By default the rule is set on these rows, as ``decision`` says.
        level : float, default=0.95
            Confidence level of the intervals.
        decision : {"single", "per-group"}, default="single"
            One threshold meeting the task's target exactly on these rows, or one per group meeting it in
            every group.
        decided : array-like of shape (n_samples,), optional
            0/1 decisions made elsewhere (e.g. a served model's), scored instead of deciding here; ``y_score``
            still gives the AUCs.

        Returns
        -------
        dict of str to float
            The metrics.

        Examples
        --------
        >>> import numpy as np
        >>> task = Task("precision", "tpr", 0.5, "tpr", ("sex",))
        >>> y = np.array([1, 1, 0, 1, 1, 0]); s = {"sex": ["f", "f", "f", "m", "m", "m"]}
        >>> scores = np.array([0.9, 0.8, 0.7, 0.3, 0.2, 0.1])
        >>> task.evaluate(y, scores, s)["fairness"], task.evaluate(y, scores, s, decision="per-group")["fairness"]
        (0.0, 1.0)
        """
        return self.measure(y_true, y_score, sensitive_features, seed=seed, at=at, level=level,
                            decision=decision, decided=decided)[0]

    def measure(self, y_true: ArrayLike, y_score: ArrayLike, sensitive_features: Sensitive, *, seed: int = 0,
                at: OperatingPoint | GroupThresholds | None = None, level: float = LEVEL,
                decision: Decision = "single",
                decided: ArrayLike | None = None) -> tuple[dict[str, float], dict[str, Any]]:
        """``(metrics, counts)``: :meth:`evaluate`'s metrics and the counts behind accuracy and fairness.

        ``counts["accuracy"]`` is ``[hits, base]`` (true positives over predicted positives for
        precision, over positives for recall); ``counts["fairness"][attribute][group]`` is ``[events,
        base]`` of the group's rate (for FPR: false positives and negatives).

        Parameters
        ----------
        y_true, y_score : array-like of shape (n_samples,)
            Binary labels and scores.
        sensitive_features : DataFrame, dict or array-like
            The sensitive columns.
        seed, at, level, decision, decided : optional
            As in :meth:`evaluate`.

        Returns
        -------
        metrics : dict of str to float
            :meth:`evaluate`'s metrics.
        counts : dict
            The counts behind accuracy and fairness.

        Examples
        --------
        >>> task = Task("precision", "tpr", 0.5, "tpr", ("sex",))
        >>> metrics, counts = task.measure([1, 1, 0, 1, 1, 0], [.9, .8, .7, .6, .5, .4], {"sex": list("fffmmm")})
        >>> counts["accuracy"], counts["fairness"]["sex"]
        ([2, 2], {'f': [2, 2], 'm': [0, 2]})
        """
        return _measure(self, y_true, y_score, sensitive_features, seed=seed, at=at, level=level,
                        decision=decision, decided=decided)


def _check_target(target: str, value) -> None:
    """A rate target in (0, 1] (FPR may be 0), a top-k target a whole number >= 1, a threshold a probability."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value != value:
        raise InputError(f"task {target} target must be a number, got {value!r}")
    # typeshed's numbers.Real converts to int and compares with int in none of these lines
    if target == "top_k" and (value != int(value) or value < 1):  # type: ignore[call-overload, operator]
        raise InputError(f"task top_k must be a whole number of rows >= 1, got {value:g}")
    if target == "threshold":
        if not 0 <= value <= 1:  # type: ignore[operator]  # the task's scores are the model's probabilities
            raise InputError(f"task threshold target must be a probability in [0, 1], got {value:g}")
        return
    low_ok = value >= 0 if target == "fpr" else value > 0  # type: ignore[operator]
    if target != "top_k" and not (low_ok and value <= 1):
        interval = "[0, 1]" if target == "fpr" else "(0, 1]"
        raise InputError(f"task {target} target must be a rate in {interval}, got {value:g}")
