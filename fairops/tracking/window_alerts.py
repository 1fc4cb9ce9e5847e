"""What a monitored window is compared with, what alerted in it, and its printed line.

Each watched sensitive attribute has its own baseline (the version's validation ratio of that attribute; a
version registered before those were recorded, or a ``--baseline`` number, gives every attribute the overall
one), and so does the task's ratio (``"overall"``). A window alerts for each attribute whose ratio is
significantly below its baseline, and for the task's ratio when no attribute says so already or when it is
a ratio of its own (an intersectional task); :func:`window_line` names them.
"""

from __future__ import annotations

import math

#: What ``alerted`` and the baselines call the task's own ratio (beside the attributes' names).
OVERALL = "overall"


def _bounds(low: float, high: float) -> str:
    return f"[{low:.3f}, {high:.3f}]" if math.isfinite(low) else "[undefined]"


def _against(baseline: float, baseline_lower) -> str:
    return (f"the baseline's lower bound {baseline_lower:.3f} (baseline {baseline:.3f})"
            if baseline_lower is not None else f"the baseline {baseline:.3f}")


def _ratio_text(score) -> str:
    return f"{score.value:.3f} {_bounds(score.lower, score.upper)}"


def window_line(number: int, window, task, alerted, baselines: dict) -> str:
    """One printed line per window; an alerting window's line starts with ``ALERT window K:`` and names what
    fell: each attribute (``TPR ratio over sex``), or the task's ratio (``"overall"`` in ``alerted``).

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
        return f"window {number}: {window.rows} rows, {accuracy}, {fairness}"
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
    ValueError: sensitive column(s) ['age'] are not attributes of the task of model m version 1 (sex, race): it \
records no baseline for them
    """
    if sensitive is None:
        return task.sensitive
    if isinstance(sensitive, str):
        sensitive = [sensitive]
    if not sensitive:
        raise ValueError(f"sensitive names no column; give some of the task's attributes ({', '.join(task.sensitive)})")
    unknown = [name for name in sensitive if name not in task.sensitive]
    if unknown:
        raise ValueError(f"sensitive column(s) {unknown} are not attributes of the task of {where} "
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
