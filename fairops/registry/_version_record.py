"""What a registered version records for its life after registration: its task, its threshold, its baseline.

``fairops tune`` sets these tags on every version it registers, so that ``fairops promote`` and
``fairops monitor`` score new rows the way the version was chosen:

- ``fairops.task``, ``fairops.sensitive``, ``fairops.positive_class``: the task (accuracy metric at a
  target, fairness ratio, sensitive columns);
- ``fairops.threshold``, ``fairops.tie_share``, ``fairops.seed``: the operating point set on the
  validation rows (scores above the threshold are positive; of those equal to it, the share ``tie_share``),
  the rule applied unchanged to every later row;
- ``fairops.decision``: ``single`` (that one threshold for everyone) or ``per-group`` (one threshold per
  group of the sensitive columns, each at the task's target; the model serves those decisions, and the
  gate and the validation baseline measure them);
- ``fairops.fairness_line`` and ``fairops.interval_level``: the :class:`~fairops.metrics.FairnessRule` the
  version was chosen under, which the gate and the monitor apply to it unless told otherwise;
- ``fairops.validation_fairness`` and its interval ``fairops.validation_fairness_lower`` /
  ``_upper`` at the rule's level (``fairops.validation_accuracy`` with its bounds beside it): the version's
  figures on its validation rows (:func:`fairops.metrics.decision_figures`), the baseline a
  monitored window may also be compared with;
- ``fairops.validation_fairness_by_attribute``: each sensitive attribute's ratio there as JSON
  ``{attribute: [value, lower, upper]}``, the baseline of that attribute's own ratio (versions registered
  before it have none: their attributes are compared with the overall baseline, which is never above any
  attribute's ratio);
- ``fairops.test_accuracy``, ``fairops.test_fairness`` (each with ``_lower`` / ``_upper``), when known: the
  version's figures on the test rows it never saw, decided as it serves; ``fairops.figures`` says which rows
  and which fit the figures are of.

>>> from fairops.metrics import FairnessRule, OperatingPoint, Task
>>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex"])
>>> tags = record_tags(task, OperatingPoint(0.42, 1.0), seed=0, fairness=(0.9, 0.8, 1.0), rule=FairnessRule())
>>> record = VersionRecord.from_tags(tags)
>>> str(record.task), record.point.threshold, record.baseline_lower, record.rule.line
('precision@tpr=0.5,ratio=tpr', 0.42, 0.8, 0.8)
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fairops.metrics import FairnessRule, OperatingPoint, Task
from fairops.metrics._decisions import check_decision
from fairops.metrics._fairness_rule import DEFAULT_RULE

from ..errors import InputError

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pandas as pd

    from .._typing import ArrayLike, Decision

PREFIX = "fairops."
REQUIRED = ("task", "sensitive", "threshold", "tie_share")
BY_ATTRIBUTE = "validation_fairness_by_attribute"


def record_tags(task: Task, point: OperatingPoint, *, seed: int, fairness: tuple, rule: FairnessRule = DEFAULT_RULE,
                decision: str = "single", by_attribute: dict | None = None, accuracy: tuple | None = None) -> dict:
    """The version tags for a task, its validation operating point, ``fairness = (value, lower, upper)`` (and
    ``accuracy``, the same) on its validation rows at ``rule``'s level, and the rule itself; ``by_attribute``
    maps each sensitive attribute to its own ``(value, lower, upper)``."""
    value, lower, upper = (float(x) for x in fairness)
    extra = {} if by_attribute is None else {f"{PREFIX}{BY_ATTRIBUTE}": json.dumps(
        {str(name): [_finite_or_none(x) for x in bounds] for name, bounds in by_attribute.items()})}
    if accuracy is not None:
        extra.update(figure_tags("validation", accuracy=accuracy))
    return extra | rule.tags() | {f"{PREFIX}{key}": str(value) for key, value in {
        "task": str(task), "sensitive": ",".join(task.sensitive), "positive_class": task.positive or "label 1",
        "decision": check_decision(decision),
        "threshold": repr(float(point.threshold)), "tie_share": repr(float(point.tie_share)), "seed": int(seed),
        "validation_fairness": repr(value), "validation_fairness_lower": repr(lower),
        "validation_fairness_upper": repr(upper),
    }.items()}


def figure_tags(rows: str, *, accuracy: tuple | None = None, fairness: tuple | None = None) -> dict:
    """``fairops.<rows>_accuracy`` / ``_fairness`` tags, each with ``_lower`` and ``_upper``, from ``(value, lower,
    upper)`` triples.

    >>> figure_tags("test", fairness=(0.9, 0.8, 1.0))["fairops.test_fairness_lower"]
    '0.8'
    """
    tags = {}
    for name, figure in (("accuracy", accuracy), ("fairness", fairness)):
        if figure is not None:
            for suffix, value in zip(("", "_lower", "_upper"), figure):
                tags[f"{PREFIX}{rows}_{name}{suffix}"] = repr(float(value))
    return tags


def validation_tags(task: Task, y: ArrayLike, scores: ArrayLike, sensitive: pd.DataFrame | Mapping[str, ArrayLike], *,
                    seed: int = 0, decision: Decision = "single", rule: FairnessRule = DEFAULT_RULE) -> dict[str, str]:
    """The tags of a model whose validation rows got ``scores``: its operating point, its figures, the rule.

    The figures are taken at the operating point's decisions (``decision="per-group"``: each group at the
    task's target) by :func:`fairops.metrics.decision_figures`, with intervals at ``rule.level``.

    Parameters
    ----------
    task : Task
        The model's task.
    y : array-like of shape (n_samples,)
        The validation rows' labels.
    scores : array-like of shape (n_samples,)
        The model's probabilities on them.
    sensitive : DataFrame or dict
        Their sensitive columns.
    seed : int, default=0
        Breaks ties at the threshold.
    decision : {"single", "per-group"}, default="single"
        How the model decides.
    rule : FairnessRule, default=FairnessRule()
        The fairness line and the intervals' level the version is judged by.

    Returns
    -------
    dict of str to str
        ``fairops.*`` tags.

    Examples
    --------
    >>> import numpy as np
    >>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["g"])
    >>> y = np.array([1, 0, 1, 0] * 25); g = np.array(["a"] * 50 + ["b"] * 50)
    >>> tags = validation_tags(task, y, np.linspace(0, 1, 100), {"g": g})
    >>> tags["fairops.threshold"], tags["fairops.validation_fairness"], tags["fairops.fairness_line"]
    ('0.5050505050505051', '0.0', '0.8')
    """
    from fairops.metrics import group_decisions
    from fairops.metrics._figures import decision_figures

    point = task.operating_point(y, scores, seed=seed)
    groups = task.select_sensitive(sensitive)
    if check_decision(decision) == "per-group":
        decided = group_decisions(scores, y, groups, seed=seed, **task.threshold)
    else:
        decided = point.apply(scores, seed=seed)
    figures = decision_figures(task, y, decided, groups, level=rule.level)
    overall = figures.fairness
    return record_tags(task, point, seed=seed, fairness=(overall.value, overall.lower, overall.upper), rule=rule,
                       decision=decision, accuracy=figures.accuracy,
                       by_attribute={name: (a.value, a.lower, a.upper) for name, a in figures.attributes.items()})


def _finite_or_none(value) -> float | None:
    return float(value) if math.isfinite(value) else None


@dataclass(frozen=True)
class VersionRecord:
    """A version's task, operating point and validation fairness, read back from its tags."""

    task: Task
    point: OperatingPoint
    seed: int
    baseline: float | None
    baseline_lower: float | None
    decision: str = "single"
    #: attribute -> (its validation ratio, the ratio's lower bound); empty for versions registered without them
    attribute_baselines: dict = field(default_factory=dict)
    #: the level of the baseline's interval (``fairops.interval_level``); None when the version records none
    interval_level: float | None = None
    #: the fairness rule the version was chosen under (the default rule for versions that record none)
    rule: FairnessRule = DEFAULT_RULE

    @classmethod
    def from_tags(cls, tags: dict, *, where: str = "the model version") -> VersionRecord:
        missing = [f"{PREFIX}{key}" for key in REQUIRED if f"{PREFIX}{key}" not in tags]
        if missing:
            raise InputError(f"{where} has no tag(s) {missing}: it was not registered by fairops tune, so its task "
                             "and threshold are unknown")
        get: Any = tags.get  # the required tags are there (checked above), the others may be None
        sensitive = get(f"{PREFIX}sensitive").split(",")
        positive = get(f"{PREFIX}positive_class") or None
        task = Task.from_string(get(f"{PREFIX}task"), sensitive=sensitive, positive=positive)
        point = OperatingPoint(float(get(f"{PREFIX}threshold")), float(get(f"{PREFIX}tie_share")))

        def number(key):
            text = get(f"{PREFIX}{key}")
            return None if text is None else float(text)

        return cls(task, point, int(get(f"{PREFIX}seed", "0")), number("validation_fairness"),
                   number("validation_fairness_lower"), check_decision(get(f"{PREFIX}decision", "single")),
                   _attribute_baselines(get(f"{PREFIX}{BY_ATTRIBUTE}"), where), number("interval_level"),
                   FairnessRule.from_tags(tags))


def _attribute_baselines(text: str | None, where: str) -> dict:
    """``{attribute: (value, lower)}`` from the tag's JSON; a ValueError names a malformed tag."""
    if text is None:
        return {}
    try:
        document = json.loads(text)
        return {str(name): (float(bounds[0]), None if bounds[1] is None else float(bounds[1]))
                for name, bounds in document.items() if bounds[0] is not None}
    except (AttributeError, IndexError, TypeError, ValueError) as error:
        raise InputError(f"{where} has a malformed tag {PREFIX}{BY_ATTRIBUTE} ({error}): {text[:200]!r}") from None


def read_record(client, name: str, version: str) -> VersionRecord:
    """The :class:`VersionRecord` of a registered version (``ValueError`` naming the missing tags)."""
    tags = client.get_model_version(name, str(version)).tags
    return VersionRecord.from_tags(tags, where=f"model {name!r} version {version}")
