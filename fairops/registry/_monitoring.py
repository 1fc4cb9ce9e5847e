"""Fairness monitoring after deployment: the champion scored over windows of labelled rows.

:func:`monitor` loads a registered version (``@champion`` by default, verified by
:mod:`fairops.mlflow.loader`), scores each window of rows with the decisions the model serves (its
``decision`` output: the validation threshold, or one per group; a model without one at the operating
point it was registered with, :mod:`fairops.registry._version_record`), and for every window logs its accuracy and
fairness with their intervals (:func:`fairops.metrics.decision_figures`, at the rule's level) as step
metrics (step = window number, from 1) of one ``monitoring`` run in the model's experiment. A window alerts
when the interval of its fairness lies below the fairness line of the version's
:class:`~fairops.metrics.FairnessRule` (the line the gate refuses below), and with ``against_baseline`` also
when it lies below the lower bound of the version's own validation fairness (or below a baseline given as a
number); see :mod:`fairops.registry._window_alerts` and ``benchmarks/monitor_false_alarms.py`` for the error
rates. Each sensitive attribute is also held to its own bound (``fairness.<attribute>`` and
``alert.<attribute>`` per window; the alert line names the attribute), since the lowest ratio over several
attributes can hide a drift in one of them. ``sensitive`` may name some of the task's attributes only: those
are watched, each against its bound, and the task's own ratio, which needs them all, is not scored.

Before the windows the monitor prints what they are compared with: the rule (line and level), the version's
baseline with its lower bound, each watched attribute's own baseline where it differs, and the alert rule. A
window whose group counts (the rate's bases: positives for TPR, negatives for FPR, rows for PPR) are too small
for any decisions to alert is marked on its line and logged with ``alert_possible`` 0; the closing line counts
those windows and estimates, from their rows' group shares, the window size that could alert (run tags
``fairops.unable_to_alert`` and ``fairops.rows_for_an_alert``).

Windows arrive as an iterable of ``(X, y, sensitive)``, so any reader can feed it; ``fairops monitor``
reads files in chunks and holds one window at a time.
"""

from __future__ import annotations

import math
import re
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from fairops.metrics._windows import rate_bases, score_window

from ..errors import InputError
from ._registration import _alias_holder
from ._served_rows import extra_columns_line, model_inputs, probability, served_output, take_inputs
from ._tracking_uri import tracking_uri as tracking_uri_set
from ._version_record import read_record
from ._window_alerts import (
    OVERALL,
    baselines_of,
    bounds_of,
    header_lines,
    unable_note,
    unable_summary,
    watched_attributes,
    what_alerted,
    window_line,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    import pandas as pd

    from .._typing import ArrayLike, Sensitive


@dataclass
class MonitorResult:
    """Every window's score, the windows that alerted, and the monitoring run.

    Parameters
    ----------
    name, version : str
        The registered model and the version monitored.
    baseline : float
        The fairness the windows are compared with.
    baseline_lower : float or None
        The lower bound of the version's validation fairness interval (None for a given baseline).
    windows : list of WindowScore, default=[]
        Every window's score (:func:`fairops.metrics._windows.score_window`).
    alerts : list of int, default=[]
        Numbers of the windows that alerted.
    run_id : str or None, default=None
        The monitoring run.
    alerted : dict, default={}
        Window number -> what alerted there: attribute names, and the task's ratio as ``"overall"``.
    unable : list of int, default=[]
        The windows on whose rows no decisions could have alerted (too few rows of some group for the rate).
    rows_for_an_alert : int or None, default=None
        When some window could not alert: an estimate of the fewest rows per window on which some
        decisions could.
    """

    name: str
    version: str
    baseline: float
    baseline_lower: float | None
    windows: list = field(default_factory=list)
    alerts: list = field(default_factory=list)
    run_id: str | None = None
    #: window number -> what alerted there: attribute names, and the task's ratio as ``"overall"``
    alerted: dict = field(default_factory=dict)
    #: the windows on whose rows no decisions could have alerted (too few rows of some group for the rate)
    unable: list = field(default_factory=list)
    #: when some window could not alert: an estimate of the fewest rows per window on which some decisions could
    rows_for_an_alert: int | None = None

    @property
    def exit_code(self) -> int:
        """3 when any window alerted, else 0."""
        return 3 if self.alerts else 0

    @property
    def blind(self) -> bool:
        """True when no window could have alerted whatever the decisions: exit status 0 then says nothing."""
        return bool(self.windows) and len(self.unable) == len(self.windows)


def _served_decisions(output) -> np.ndarray | None:
    """The 0/1 decisions a served model answered with, or None when it answers scores only."""
    if hasattr(output, "columns") and "decision" in output.columns:
        return np.asarray(output["decision"], dtype=np.int8)
    return None


def _watched_columns(groups, watched, task):
    """The watched attributes' columns of a window's sensitive columns (a missing one is named)."""
    if not (hasattr(groups, "columns") or isinstance(groups, dict)):
        return groups  # one attribute's values
    missing = [column for column in watched if column not in groups]
    if missing:
        raise InputError(f"the rows lack the sensitive column(s) {missing} of the task ({', '.join(task.sensitive)})")
    return {column: groups[column] for column in watched}


def _first_window_read(windows, inputs, watched, task, source: str):
    """``(the windows, the first's columns no one reads)``: the first window's columns checked before the
    monitoring run starts (a file's columns are those of every window)."""
    import itertools

    windows = iter(windows)
    first = next(windows, None)
    if first is None:
        return iter(()), []
    X, _, groups = first
    _, extra = take_inputs(inputs, X, source)
    _watched_columns(groups, watched, task)
    named = set(groups.columns) if hasattr(groups, "columns") else set()
    named |= set(watched) | set(task.sensitive)
    return itertools.chain([first], windows), [column for column in extra if column not in named]


def _metric_name(name: str) -> str:
    """A metric name MLflow accepts (letters, digits, ``_ - . / `` and spaces), other characters as ``_``."""
    return re.sub(r"[^A-Za-z0-9_./ -]", "_", name)


def _start_run(client, name, version, record, rule, baseline, baseline_lower, experiment_id, params):
    from mlflow.utils.mlflow_tags import MLFLOW_RUN_NAME

    source = client.get_model_version(name, version).run_id
    experiment = experiment_id or client.get_run(source).info.experiment_id
    tags = {MLFLOW_RUN_NAME: f"monitor {name} v{version}", "fairops.role": "monitoring",
            "fairops.model": name, "fairops.version": version}
    run_id = client.create_run(experiment, tags=tags).info.run_id
    logged = {"model": f"models:/{name}/{version}", "task": str(record.task), "threshold": record.point.threshold,
              "baseline": baseline, "baseline_lower": baseline_lower, "fairness_line": rule.line,
              "interval_level": rule.level, **params}
    for key, value in logged.items():
        client.log_param(run_id, key, str(value))
    return run_id


def _version(client, name: str, version) -> tuple[str, Any]:
    """The version number ``version`` (a number or ``@alias``, default ``@champion``) names, and its record."""
    text = str(version or "@champion")
    resolved = _alias_holder(client, name, text[1:]) if text.startswith("@") else text
    if resolved is None:
        raise InputError(f"registered model {name!r} has no alias {text[1:]!r}")
    return resolved, read_record(client, name, resolved)


def _baseline(record, baseline, where: str) -> tuple[float | None, float, float | None]:
    """``(the number given or None, the baseline, its lower bound or None)``."""
    if baseline is not None and not 0 <= baseline <= 1:
        raise InputError(f"baseline must be a fairness ratio in [0, 1], got {baseline!r}")
    if baseline is not None:
        return float(baseline), float(baseline), None
    if record.baseline is None:
        raise InputError(f"{where} records no validation fairness; give a baseline")
    return None, record.baseline, record.baseline_lower


@dataclass
class _Watch:
    """What scoring one window needs: the model, the version's record, the rule, the watched attributes and their
    bounds (:class:`~fairops.registry._window_alerts.Bound`)."""

    client: Any
    model: Any
    record: Any
    rule: Any
    watched: tuple
    bounds: dict
    result: MonitorResult
    out: Any
    inputs: Any
    source: str
    #: the rate's bases per group over the windows that could not alert, together
    unable_bases: Any = None

    def window(self, number: int, X, y, groups) -> None:
        """Score, log and print one window."""
        from mlflow.entities import Metric

        task, record = self.record.task, self.record
        columns = _watched_columns(groups, self.watched, task)
        rows, _ = take_inputs(self.inputs, X, self.source)
        output = served_output(self.model, rows, self.source, self.inputs.schema)
        window = score_window(task, y, probability(output), columns, record.point, seed=record.seed,
                              level=self.rule.level, decided=_served_decisions(output))
        alerted = what_alerted(window, task, self.bounds)
        bases = rate_bases(task, y, columns)
        note = None if alerted else unable_note(bases, task, self.bounds, self.rule.level)
        stamp = int(time.time() * 1000)
        values = {**window.metrics(), "alert": float(bool(alerted)), "alert_possible": float(note is None),
                  **{f"alert.{attribute}": float(attribute in alerted) for attribute in self.watched}}
        self.client.log_batch(self.result.run_id, metrics=[Metric(_metric_name(k), v, stamp, number)
                                                           for k, v in values.items() if math.isfinite(v)])
        self.result.windows.append(window)
        if alerted:
            self.result.alerts.append(number)
            self.result.alerted[number] = alerted
        if note:
            self.result.unable.append(number)
            self.unable_bases = bases if self.unable_bases is None else self.unable_bases + bases
        print(window_line(number, window, task, alerted, self.bounds, note), file=self.out, flush=True)

    def close(self) -> None:
        """Count the windows that could not alert, estimate from their group shares the window size that could,
        tag the run."""
        result, client, pooled = self.result, self.client, self.unable_bases
        if result.unable:
            attributes = {name: bound.value for name, bound in self.bounds.items() if name != OVERALL}
            result.rows_for_an_alert = pooled.rows_for_an_alert(attributes, self.bounds[OVERALL].value,
                                                                self.rule.level)
            print(unable_summary(result.unable, len(result.windows), result.rows_for_an_alert, pooled.rows),
                  file=self.out, flush=True)
            if result.rows_for_an_alert is not None:
                client.set_tag(result.run_id, "fairops.rows_for_an_alert", str(result.rows_for_an_alert))
        client.set_tag(result.run_id, "fairops.alerts", ",".join(map(str, result.alerts)) or "none")
        client.set_tag(result.run_id, "fairops.unable_to_alert", ",".join(map(str, result.unable)) or "none")


def monitor(name: str, windows: Iterable[tuple[pd.DataFrame, ArrayLike, Sensitive]], *, version: str | None = None,
            baseline: float | None = None, fairness_line: float | None = None, level: float | None = None,
            against_baseline: bool = False, tracking_uri: str | None = None, experiment_id: str | None = None,
            params: dict[str, Any] | None = None, out: TextIO | None = None, sensitive: list[str] | None = None,
            source: str = "the rows") -> MonitorResult:
    """Score ``windows`` (an iterable of ``(X, y, sensitive)``) with a registered version; see the module docstring.

    Parameters
    ----------
    name : str
        The registered model.
    windows : iterable of tuple
        ``(X, y, sensitive)`` per window of labelled rows.
    version : str or None, default=None
        A number or ``@alias`` (default ``@champion``).
    baseline : float or None, default=None
        A fairness ratio a window's interval must not lie below, in place of the version's validation fairness
        (``against_baseline`` is then implied).
    fairness_line, level : float or None, default=None
        Replace the line and the level of the :class:`~fairops.metrics.FairnessRule` the version was registered
        under (a line of 0: windows alert against the baseline only).
    against_baseline : bool, default=False
        Also alert when a window's interval lies below the lower bound of the version's validation fairness.
    tracking_uri : str or None, default=None
        MLflow tracking URI (None: MLflow's default).
    experiment_id : str or None, default=None
        Experiment of the monitoring run.
    params : dict or None, default=None
        More params of the monitoring run.
    out : file-like or None, default=None
        Where the report lines go (None: standard output).
    sensitive : list of str or None, default=None
        The attributes to watch, some or all of the task's (default: all, and every window must hold them).
    source : str, default="the rows"
        How messages name the rows (e.g. the file's name); each window's index names each row in it.

    Returns
    -------
    MonitorResult
        Every window's score and the alerts.
    """
    from mlflow.tracking import MlflowClient

    from ..mlflow.loader import load_model

    out = out or sys.stdout
    client = MlflowClient(tracking_uri)
    resolved, record = _version(client, name, version)
    given, baseline, baseline_lower = _baseline(record, baseline, f"model {name!r} version {resolved}")
    if not isinstance(against_baseline, bool):
        raise TypeError(f"against_baseline must be True or False, got {against_baseline!r}")
    task, rule, against_baseline = record.task, record.rule.replaced(line=fairness_line, level=level), \
        against_baseline or given is not None
    watched = watched_attributes(task, sensitive, f"model {name!r} version {resolved}")
    baselines = baselines_of(record, watched, given)
    bounds = bounds_of(rule, baselines, against_baseline=against_baseline)
    with tracking_uri_set(tracking_uri):
        model = load_model(f"models:/{name}/{resolved}")
    inputs = model_inputs(model)
    windows, ignored = _first_window_read(windows, inputs, watched, task, source)
    result = MonitorResult(name, resolved, baseline, baseline_lower)
    result.run_id = _start_run(client, name, resolved, record, rule, baseline, baseline_lower, experiment_id,
                               {**(params or {}), "watched": ",".join(watched), "against_baseline": against_baseline})
    for line in header_lines(name, resolved, task, watched, baselines, rule, given=given,
                             against_baseline=against_baseline):
        print(line, file=out, flush=True)
    if len(watched) < len(task.sensitive):
        print(f"watching {', '.join(watched)} only, each against its own bound: the task's {task.fairness_name} "
              "needs every attribute", file=out, flush=True)
    if ignored:
        print(extra_columns_line(ignored, source).strip(), file=out, flush=True)
    watch = _Watch(client, model, record, rule, watched, bounds, result, out, inputs, source)
    try:
        for number, (X, y, groups) in enumerate(windows, start=1):
            watch.window(number, X, y, groups)
        watch.close()
        client.set_terminated(result.run_id, "FINISHED")
    except BaseException:
        client.set_terminated(result.run_id, "FAILED")
        raise
    return result
