"""What a monitored window is compared with, what alerted in it, and its printed line.

Each watched sensitive attribute has its own baseline (the version's validation ratio of that attribute; a
version registered before those were recorded, or a ``--baseline`` number, gives every attribute the overall
one), and so does the task's ratio (``"overall"``). A window alerts for each attribute whose ratio is
significantly below its baseline, and for the task's ratio when no attribute says so already or when it is
a ratio of its own (an intersectional task); :func:`window_line` names them.

Before the windows, :func:`header_lines` say what they are compared with and how; a window on whose rows no
decisions could alert (too few rows of some group for the rate) is marked (:func:`unable_note`), and
:func:`unable_summary` counts those windows and estimates the window size that could alert.
"""

from __future__ import annotations

import math

from fairops.metrics.windows import ALERT_LEVEL, alert_bound

from ..errors import InputError

#: What ``alerted`` and the baselines call the task's own ratio (beside the attributes' names).
OVERALL = "overall"


def _bounds(low: float, high: float) -> str:
    return f"[{low:.3f}, {high:.3f}]" if math.isfinite(low) else "[undefined]"


def _against(baseline: float, baseline_lower) -> str:
    return (f"the baseline's lower bound {baseline_lower:.3f} (baseline {baseline:.3f})"
            if baseline_lower is not None else f"the baseline {baseline:.3f}")


def _ratio_text(score) -> str:
    return f"{score.value:.3f} {_bounds(score.lower, score.upper)}"


def percent(level: float) -> str:
    """An interval level as a percentage, e.g. ``"97.5%"``.

    >>> percent(0.975), percent(0.9)
    ('97.5%', '90%')
    """
    return f"{level * 100:.4g}%"


def _baseline_entry(what: str, pair: tuple) -> str:
    value, lower = pair
    return f"{what} {value:.3f}, " + ("no interval recorded" if lower is None else f"lower bound {lower:.3f}")


def header_lines(name: str, version: str, task, watched, baselines: dict, *, given: float | None = None,
                 baseline_level: float | None = None, level: float = ALERT_LEVEL) -> list[str]:
    """The lines printed before the windows: the baseline (the version's validation fairness, with its lower
    bound and the interval's level, and each watched attribute's own where it differs; or the number
    ``given``) and the alert rule.

    >>> from fairops.metrics import Task
    >>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex"])
    >>> print("\\n".join(header_lines("m", "3", task, ("sex",), {"overall": (0.9, 0.7), "sex": (0.9, 0.7)},
    ...                               baseline_level=0.975)))
    baseline: model 'm' version 3 on its validation rows, with 97.5% intervals: TPR ratio over sex 0.900, \
lower bound 0.700
    alert rule: a window alerts when the upper bound of its 97.5% interval lies below the baseline's lower bound; \
windows show value [97.5% interval] (exact: Clopper-Pearson per group)
    """
    shown = f"windows show value [{percent(level)} interval] (exact: Clopper-Pearson per group)"
    if given is not None:
        return [f"baseline: {given:.3f} as given, for the {task.fairness_name} of model {name!r} version {version} "
                "(a plain number, no interval)",
                f"alert rule: a window alerts when the upper bound of its {percent(level)} interval lies below "
                f"{given:.3f}; {shown}"]
    entries = [_baseline_entry(task.fairness_name, baselines[OVERALL])] if len(watched) == len(task.sensitive) else []
    entries += [_baseline_entry(f"{task.fairness_label} over {attribute}", baselines[attribute])
                for attribute in watched if len(task.sensitive) > 1 and (
                    not entries or baselines[attribute] != baselines[OVERALL])]
    at = "" if baseline_level is None else f", with {percent(baseline_level)} intervals"
    against = "baseline's lower bound" if baselines[OVERALL][1] is not None else "baseline (no interval recorded)"
    return [f"baseline: model {name!r} version {version} on its validation rows{at}: {'; '.join(entries)}",
            f"alert rule: a window alerts when the upper bound of its {percent(level)} interval lies below the "
            f"{against}; {shown}"]


def unable_note(bases, task, baselines: dict, level: float = ALERT_LEVEL) -> str | None:
    """Why no decisions on a window's rows could make it alert (``bases``: its
    :class:`~fairops.metrics.windows.RateBases`), or None when some could.

    >>> from fairops.metrics import Task
    >>> from fairops.metrics.windows import RateBases
    >>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex"])
    >>> unable_note(RateBases(20, {"sex": {"f": 4, "m": 10}}), task, {"overall": (1.0, 0.43), "sex": (1.0, 0.43)})
    'too few rows for an alert: no decisions bring the upper bound below 0.430 (1.000 at best)'
    """
    attribute_baselines = {name: pair for name, pair in baselines.items() if name != OVERALL}
    if bases.can_alert(attribute_baselines, baselines[OVERALL], level):
        return None
    task_ratio, reach = bases.lowest_uppers(level)
    if bases.task_ratio == "combined":
        reach = {**reach, OVERALL: task_ratio}
    base = {"tpr": "positives", "fpr": "negatives", "ppr": "rows"}[task.fairness]
    undefined = f"{base} in fewer than two groups"
    if len(reach) == 1:
        (name, lowest), = reach.items()
        return "too few rows for an alert: " + (
            f"no decisions bring the upper bound below {alert_bound(*baselines[name]):.3f} ({lowest:.3f} at best)"
            if math.isfinite(lowest) else undefined)
    parts = [(f"{task.over}" if name == OVERALL else name) + (
        f" {lowest:.3f} at best (needs < {alert_bound(*baselines[name]):.3f})" if math.isfinite(lowest)
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


def window_line(number: int, window, task, alerted, baselines: dict, note: str | None = None) -> str:
    """One printed line per window; an alerting window's line starts with ``ALERT window K:`` and names what
    fell: each attribute (``TPR ratio over sex``), or the task's ratio (``"overall"`` in ``alerted``). A
    ``note`` (:func:`unable_note`) ends a line that does not alert, in parentheses.

    ``baselines`` maps each watched attribute, and ``"overall"``, to ``(baseline, baseline_lower)``.

    >>> from fairops.metrics import Task
    >>> from fairops.metrics.windows import RatioScore, WindowScore
    >>> task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex", "race"])
    >>> window = WindowScore(500, 0.9, 0.85, 0.93, 0.3, 0.2, 0.45, {}, {"sex": RatioScore(0.3, 0.2, 0.45),
    ...                                                                  "race": RatioScore(0.9, 0.7, 1.0)})
    >>> window_line(6, window, task, ["sex"], {"sex": (0.9, 0.7), "race": (0.9, 0.7), "overall": (0.9, 0.7)})
    "ALERT window 6: TPR ratio over sex 0.300, interval [0.200, 0.450] lies below the baseline's lower bound 0.700 \
(baseline 0.900); 500 rows, precision 0.900 [0.850, 0.930]"
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
                    f"{_against(*baselines[name])}")
    return f"ALERT window {number}: {'; '.join(fell)}; {window.rows} rows, {accuracy}"


def what_alerted(window, task, baselines: dict) -> list[str]:
    """The attributes whose ratio fell significantly below their baseline, then ``"overall"`` when the task's
    ratio did and no attribute says so already (one attribute, an intersectional task, or a version whose
    attributes share the overall baseline)."""
    alerted = window.alerting_attributes({name: pair for name, pair in baselines.items() if name != OVERALL})
    intersectional = task.groups == "intersectional" and len(task.sensitive) > 1
    if (intersectional or not alerted) and window.alerts(*baselines[OVERALL]):
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
