"""What a monitored window is compared with, what alerted in it, and its printed line.

A window alerts when the interval of a fairness ratio lies below its bound (:class:`Bound`): the fairness line of
the version's :class:`~fairops.metrics.FairnessRule` (the gate's line, so the monitor alerts on what the gate
would refuse), and, with ``against_baseline``, the lower bound of the version's own validation ratio (the ratio
fell beyond noise below what the version showed; a ``--baseline`` number replaces that). The higher of the two
is the bound. Each watched sensitive attribute has its own bound (its own validation ratio as the baseline; a
version registered before those were recorded gives every attribute the overall one), and so does the task's
ratio (``"overall"``). A window alerts for each attribute whose interval lies below its bound, and for the task's
ratio when no attribute says so already or when it is a ratio of its own (an intersectional task);
:func:`window_line` names them.

Before the windows, :func:`header_lines` say what they are compared with and how; a window on whose rows no
decisions could alert (too few rows of some group for the rate) is marked (:func:`unable_note`), and
:func:`unable_summary` counts those windows and estimates the window size that could alert.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fairops.metrics import FairnessRule
from fairops.metrics._fairness_rule import percent

from ..errors import InputError

#: What ``alerted`` and the bounds call the task's own ratio (beside the attributes' names).
OVERALL = "overall"


@dataclass(frozen=True)
class Bound:
    """What an interval's upper bound must fall under for an alert, and what that number is, in words.

    >>> Bound.of(FairnessRule(), (0.9, 0.7), against_baseline=True)
    Bound(value=0.8, words='the fairness line 0.8')
    >>> Bound.of(FairnessRule(), (0.95, 0.9), against_baseline=True).words
    "the baseline's lower bound 0.900 (baseline 0.950)"
    """

    value: float
    words: str

    @classmethod
    def of(cls, rule: FairnessRule, baseline: tuple | None, *, against_baseline: bool) -> Bound:
        """The higher of the rule's line and (``against_baseline``) the baseline's lower bound, or its value when it
        is a plain number (``baseline = (value, lower or None)``); ``-inf`` (nothing alerts) when neither applies."""
        candidates = [cls(rule.line, f"the fairness line {rule.line:g}")] if rule.active else []
        if against_baseline and baseline is not None:
            value, lower = baseline
            candidates.append(cls(value, f"the baseline {value:.3f}") if lower is None else
                              cls(lower, f"the baseline's lower bound {lower:.3f} (baseline {value:.3f})"))
        return max(candidates, key=lambda bound: bound.value, default=cls(-math.inf, "nothing (no line, no baseline)"))


def _bounds(low: float, high: float) -> str:
    return f"[{low:.3f}, {high:.3f}]" if math.isfinite(low) else "[undefined]"


def _ratio_text(score) -> str:
    return f"{score.value:.3f} {_bounds(score.lower, score.upper)}"


def _baseline_entry(what: str, pair: tuple) -> str:
    value, lower = pair
    return f"{what} {value:.3f}, " + ("no interval recorded" if lower is None else f"lower bound {lower:.3f}")


def header_lines(name: str, version: str, task, watched, baselines: dict, rule: FairnessRule, *,
                 given: float | None = None, against_baseline: bool = False) -> list[str]:
    """The lines printed before the windows: the rule, the baseline (the version's validation fairness with its
    lower bound, each watched attribute's own where it differs; or the number ``given``), and the alert rule.

    >>> from fairops.metrics import Task
    >>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex"])
    >>> print("\\n".join(header_lines("m", "3", task, ("sex",), {"overall": (0.9, 0.7), "sex": (0.9, 0.7)},
    ...                               FairnessRule())))
    rule: fairness line 0.8, 95% intervals (model 'm' version 3's)
    baseline: model 'm' version 3 on its validation rows: TPR ratio over sex 0.900, lower bound 0.700
    alert rule: a window alerts when the 95% interval of its TPR ratio lies below the fairness line 0.8 (the gate \
refuses such a model); windows show value [95% interval] (exact: Clopper-Pearson per group)
    """
    level = percent(rule.level)
    shown = f"windows show value [{level} interval] (exact: Clopper-Pearson per group)"
    below = [f"the fairness line {rule.line:g} (the gate refuses such a model)"] if rule.active else []
    if given is not None:
        baseline = (f"baseline: {given:.3f} as given, for the {task.fairness_name} of model {name!r} version "
                    f"{version} (a plain number, no interval)")
        below += [f"the baseline {given:.3f}"]
    else:
        entries = [_baseline_entry(task.fairness_name, baselines[OVERALL])] \
            if len(watched) == len(task.sensitive) else []
        entries += [_baseline_entry(f"{task.fairness_label} over {attribute}", baselines[attribute])
                    for attribute in watched if len(task.sensitive) > 1 and (
                        not entries or baselines[attribute] != baselines[OVERALL])]
        baseline = f"baseline: model {name!r} version {version} on its validation rows: {'; '.join(entries)}"
        if against_baseline:
            below += ["the lower bound of its own baseline (a drop beyond noise from what the version showed)"
                      if baselines[OVERALL][1] is not None else "its baseline (no interval recorded)"]
    rule_line = "alert rule: none (no fairness line, no baseline): no window alerts"
    if below:
        rule_line = (f"alert rule: a window alerts when the {level} interval of its {task.fairness_label} lies below "
                     + " or ".join(below))
    return [f"rule: {rule.describe()} (model {name!r} version {version}'s)", baseline, f"{rule_line}; {shown}"]


def unable_note(bases, task, bounds: dict, level: float) -> str | None:
    """Why no decisions on a window's rows could make it alert (``bases``: its
    :class:`~fairops.metrics._windows.RateBases`), or None when some could.

    >>> from fairops.metrics import Task
    >>> from fairops.metrics._windows import RateBases
    >>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex"])
    >>> bound = Bound(0.43, "the fairness line 0.43")
    >>> unable_note(RateBases(20, {"sex": {"f": 4, "m": 10}}), task, {"overall": bound, "sex": bound}, 0.975)
    'too few rows for an alert: no decisions bring the upper bound below 0.430 (1.000 at best)'
    """
    values = {name: bound.value for name, bound in bounds.items()}
    attribute_bounds = {name: value for name, value in values.items() if name != OVERALL}
    if bases.can_alert(attribute_bounds, values[OVERALL], level):
        return None
    task_ratio, reach = bases.lowest_uppers(level)
    if bases.task_ratio == "combined":
        reach = {**reach, OVERALL: task_ratio}
    base = {"tpr": "positives", "fpr": "negatives", "ppr": "rows"}[task.fairness]
    undefined = f"{base} in fewer than two groups"
    if len(reach) == 1:
        (name, lowest), = reach.items()
        return "too few rows for an alert: " + (
            f"no decisions bring the upper bound below {values[name]:.3f} ({lowest:.3f} at best)"
            if math.isfinite(lowest) else undefined)
    parts = [(f"{task.over}" if name == OVERALL else name) + (
        f" {lowest:.3f} at best (needs < {values[name]:.3f})" if math.isfinite(lowest)
        else f" undefined ({undefined})") for name, lowest in reach.items()]
    return "too few rows for an alert: no decisions bring an upper bound below its bound: " + ", ".join(parts)


def unable_summary(unable: list, windows: int, rows_needed: int | None, rows: int) -> str:
    """The closing line on the windows that could not alert whatever the decisions, and the window size that
    could, estimated from the group shares of their ``rows`` rows.

    >>> unable_summary([1, 2], 3, 85, 1000)
    '2 of 3 windows could not alert whatever the decisions (too few rows for the rate in some group); windows of \
about 85 rows could, at the most unequal decisions (an estimate from the group shares of their 1000 rows)'
    """
    could = (f"windows of about {rows_needed} rows could, at the most unequal decisions (an estimate from the "
             f"group shares of their {rows} rows)" if rows_needed is not None else
             "no window size could with these groups (the rate is in fewer than two groups, or the bound is 0)")
    return (f"{len(unable)} of {windows} windows could not alert whatever the decisions (too few rows for the rate "
            f"in some group); {could}")


def window_line(number: int, window, task, alerted, bounds: dict, note: str | None = None) -> str:
    """One printed line per window; an alerting window's line starts with ``ALERT window K:`` and names what
    fell: each attribute (``TPR ratio over sex``), or the task's ratio (``"overall"`` in ``alerted``), and the
    bound its interval lies below. A ``note`` (:func:`unable_note`) ends a line that does not alert, in
    parentheses. ``bounds`` maps each watched attribute, and ``"overall"``, to its :class:`Bound`.

    >>> from fairops.metrics import Task
    >>> from fairops.metrics._figures import RatioScore
    >>> from fairops.metrics._windows import WindowScore
    >>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex", "race"])
    >>> window = WindowScore(500, 0.9, 0.85, 0.93, 0.3, 0.2, 0.45, {}, {"sex": RatioScore(0.3, 0.2, 0.45),
    ...                                                                  "race": RatioScore(0.9, 0.7, 1.0)})
    >>> line = Bound(0.8, "the fairness line 0.8")
    >>> window_line(6, window, task, ["sex"], {"sex": line, "race": line, "overall": line})
    'ALERT window 6: TPR ratio over sex 0.300, interval [0.200, 0.450] lies below the fairness line 0.8; 500 rows, \
precision 0.900 [0.850, 0.930]'
    """
    accuracy = f"{task.metric} {window.accuracy:.3f} {_bounds(window.accuracy_lower, window.accuracy_upper)}"
    if not alerted:
        watched = window.attributes
        if len(task.sensitive) == 1 or not watched:
            fairness = f"{task.fairness_label} {_ratio_text(window.overall)}"
        elif len(watched) == len(task.sensitive):
            fairness = (f"{task.fairness_label} {_ratio_text(window.overall)} ("
                        + ", ".join(f"{name} {_ratio_text(score)}" for name, score in watched.items()) + ")")
        else:
            fairness = ", ".join(f"{task.fairness_label} over {name} {_ratio_text(score)}"
                                 for name, score in watched.items())
        return f"window {number}: {window.rows} rows, {accuracy}, {fairness}" + (f" ({note})" if note else "")
    fell = []
    for name in alerted:
        what, score = ((task.fairness_name, window.overall) if name == OVERALL
                       else (f"{task.fairness_label} over {name}", window.attributes[name]))
        fell.append(f"{what} {score.value:.3f}, interval {_bounds(score.lower, score.upper)} lies below "
                    f"{bounds[name].words}")
    return f"ALERT window {number}: {'; '.join(fell)}; {window.rows} rows, {accuracy}"


def what_alerted(window, task, bounds: dict) -> list[str]:
    """The attributes whose ratio's interval lies below their bound, then ``"overall"`` when the task's ratio's
    does and no attribute says so already (one attribute, an intersectional task, or a version whose attributes
    share the overall bound)."""
    alerted = window.alerting_attributes({name: bound.value for name, bound in bounds.items() if name != OVERALL})
    intersectional = task.groups == "intersectional" and len(task.sensitive) > 1
    if (intersectional or not alerted) and window.alerts(bounds[OVERALL].value):
        alerted.append(OVERALL)
    return alerted


def watched_attributes(task, sensitive, where: str) -> tuple[str, ...]:
    """The attributes to watch: ``sensitive`` (names of some or all of the task's attributes), or every one.

    >>> from fairops.metrics import Task
    >>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex", "race"])
    >>> watched_attributes(task, ["sex"], "model m version 1")
    ('sex',)
    >>> watched_attributes(task, ["sex", "age"], "model m version 1")
    Traceback (most recent call last):
    ...
    fairops.errors.InputError: sensitive column(s) ['age'] are not attributes of the task of model m version 1 (sex, race): it \
records no baseline for them
    """  # noqa: E501 - a doctest's expected output is one line
    if sensitive is None:
        return task.sensitive
    if isinstance(sensitive, str):
        sensitive = [sensitive]
    if not sensitive:
        raise InputError(f"sensitive names no column; give some of the task's attributes ({', '.join(task.sensitive)})")
    unknown = [name for name in sensitive if name not in task.sensitive]
    if unknown:
        raise InputError(f"sensitive column(s) {unknown} are not attributes of the task of {where} "
                         f"({', '.join(task.sensitive)}): it records no baseline for them")
    return tuple(name for name in task.sensitive if name in sensitive)


def baselines_of(record, watched, given: float | None) -> dict:
    """``(baseline, baseline_lower)`` per watched attribute and for ``"overall"``: a number ``given`` replaces
    them all; an attribute the version has no baseline of gets the overall one (never above its own).

    >>> from types import SimpleNamespace
    >>> record = SimpleNamespace(baseline=0.85, baseline_lower=0.6, attribute_baselines={"sex": (0.92, 0.72)})
    >>> baselines_of(record, ("sex", "race"), None)
    {'overall': (0.85, 0.6), 'sex': (0.92, 0.72), 'race': (0.85, 0.6)}
    """
    if given is not None:
        return {OVERALL: (given, None), **{name: (given, None) for name in watched}}
    overall = (record.baseline, record.baseline_lower)
    return {OVERALL: overall, **{name: record.attribute_baselines.get(name, overall) for name in watched}}


def bounds_of(rule: FairnessRule, baselines: dict, *, against_baseline: bool) -> dict:
    """Each watched attribute's, and ``"overall"``'s, :class:`Bound` (see the module docstring).

    >>> bounds_of(FairnessRule(), {"overall": (0.9, 0.85)}, against_baseline=True)["overall"].value
    0.85
    """
    return {name: Bound.of(rule, pair if pair[0] is not None else None, against_baseline=against_baseline)
            for name, pair in baselines.items()}
