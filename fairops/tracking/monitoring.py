"""Fairness monitoring after deployment: the champion scored over windows of labelled rows.

:func:`monitor` loads a registered version (``@champion`` by default, verified by
:mod:`fairops.mlflow.loader`), scores each window of rows with the decisions the model serves (its
``decision`` output: the validation threshold, or one per group; a model without one at the operating
point it was registered with, :mod:`fairops.tracking.version_record`), and for every window logs its accuracy and
fairness with their intervals as step metrics (step = window number, from 1) of one ``monitoring``
run in the model's experiment. A window alerts when its fairness is significantly below the
baseline: the upper bound of its interval under the lower bound of the version's validation fairness
(or under a baseline given as a number); see :mod:`fairops.metrics.windows` for the error rate. Each
sensitive attribute is also held to its own baseline (``fairness.<attribute>`` and ``alert.<attribute>`` per
window; the alert line names the attribute), since the lowest ratio over several attributes can hide a
drift in one of them. ``sensitive`` may name some of the task's attributes only: those are watched, each
against its baseline, and the task's own ratio, which needs them all, is not scored.

Windows arrive as an iterable of ``(X, y, sensitive)``, so any reader can feed it; ``fairops monitor``
reads files in chunks and holds one window at a time.
"""

from __future__ import annotations

import math
import re
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from fairops.metrics.windows import ALERT_LEVEL, score_window

from ._tracking_uri import tracking_uri as tracking_uri_set
from .registry import _alias_holder
from .version_record import read_record
from .window_alerts import baselines_of, watched_attributes, what_alerted, window_line


@dataclass
class MonitorResult:
    """Every window's score, the windows that alerted, and the monitoring run."""

    name: str
    version: str
    baseline: float
    baseline_lower: float | None
    windows: list = field(default_factory=list)
    alerts: list = field(default_factory=list)
    run_id: str | None = None
    #: window number -> what alerted there: attribute names, and the task's ratio as ``"overall"``
    alerted: dict = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """3 when any window alerted, else 0."""
        return 3 if self.alerts else 0


def _probability(output) -> np.ndarray:
    column = output["probability"] if hasattr(output, "columns") else output
    return np.asarray(column, dtype=np.float64).ravel()


def _served_decisions(output) -> np.ndarray | None:
    """The 0/1 decisions a served model answered with, or None when it answers scores only."""
    if hasattr(output, "columns") and "decision" in output.columns:
        return np.asarray(output["decision"], dtype=np.int8)
    return None


def _inputs(model, X):
    """The model's input columns of ``X`` (a file also holds the label, maybe ids and times)."""
    schema = model.metadata.get_input_schema()
    if schema is None or not schema.has_input_names():
        return X
    return X[[name for name in schema.input_names() if name in X.columns]]


def _watched_columns(groups, watched, task):
    """The watched attributes' columns of a window's sensitive columns (a missing one is named)."""
    if not (hasattr(groups, "columns") or isinstance(groups, dict)):
        return groups  # one attribute's values
    missing = [column for column in watched if column not in groups]
    if missing:
        raise ValueError(f"the rows lack the sensitive column(s) {missing} of the task ({', '.join(task.sensitive)})")
    return {column: groups[column] for column in watched}


def _metric_name(name: str) -> str:
    """A metric name MLflow accepts (letters, digits, ``_ - . / `` and spaces), other characters as ``_``."""
    return re.sub(r"[^A-Za-z0-9_./ -]", "_", name)


def _start_run(client, name, version, record, baseline, baseline_lower, experiment_id, params):
    from mlflow.utils.mlflow_tags import MLFLOW_RUN_NAME

    source = client.get_model_version(name, version).run_id
    experiment = experiment_id or client.get_run(source).info.experiment_id
    tags = {MLFLOW_RUN_NAME: f"monitor {name} v{version}", "fairops.role": "monitoring",
            "fairops.model": name, "fairops.version": version}
    run_id = client.create_run(experiment, tags=tags).info.run_id
    logged = {"model": f"models:/{name}/{version}", "task": str(record.task), "threshold": record.point.threshold,
              "baseline": baseline, "baseline_lower": baseline_lower, "interval_level": ALERT_LEVEL, **params}
    for key, value in logged.items():
        client.log_param(run_id, key, str(value))
    return run_id


def monitor(name: str, windows, *, version=None, baseline: float | None = None, tracking_uri=None,
            experiment_id=None, params: dict | None = None, out=None, sensitive=None) -> MonitorResult:
    """Score ``windows`` (an iterable of ``(X, y, sensitive)``) with a registered version; see the module docstring.

    ``version``: a number or ``@alias`` (default ``@champion``). ``baseline``: a fairness ratio to
    compare with instead of the version's validation fairness interval. ``sensitive``: the attributes to
    watch, some or all of the task's (default: all, and every window must hold them).
    """
    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient

    from ..mlflow.loader import load_model

    out = out or sys.stdout
    client = MlflowClient(tracking_uri)
    text = str(version or "@champion")
    resolved = _alias_holder(client, name, text[1:]) if text.startswith("@") else text
    if resolved is None:
        raise ValueError(f"registered model {name!r} has no alias {text[1:]!r}")
    record = read_record(client, name, resolved)
    if baseline is not None and not 0 <= baseline <= 1:
        raise ValueError(f"baseline must be a fairness ratio in [0, 1], got {baseline!r}")
    given = None if baseline is None else float(baseline)
    baseline_lower = None if given is not None else record.baseline_lower
    baseline = record.baseline if given is None else given
    if baseline is None:
        raise ValueError(f"model {name!r} version {resolved} records no validation fairness; give a baseline")
    task = record.task
    watched = watched_attributes(task, sensitive, f"model {name!r} version {resolved}")
    baselines = baselines_of(record, watched, given)
    with tracking_uri_set(tracking_uri):
        model = load_model(f"models:/{name}/{resolved}")
    result = MonitorResult(name, resolved, baseline, baseline_lower)
    result.run_id = _start_run(client, name, resolved, record, baseline, baseline_lower, experiment_id,
                               {**(params or {}), "watched": ",".join(watched)})
    if len(watched) < len(task.sensitive):
        print(f"watching {', '.join(watched)} only, each against its own baseline: the task's {task.fairness_name} "
              "needs every attribute", file=out, flush=True)
    try:
        for number, (X, y, groups) in enumerate(windows, start=1):
            output = model.predict(_inputs(model, X))
            window = score_window(task, y, _probability(output), _watched_columns(groups, watched, task),
                                  record.point, seed=record.seed, decided=_served_decisions(output))
            alerted = what_alerted(window, task, baselines)
            stamp = int(time.time() * 1000)
            values = {**window.metrics(), "alert": float(bool(alerted)),
                      **{f"alert.{attribute}": float(attribute in alerted) for attribute in watched}}
            client.log_batch(result.run_id, metrics=[Metric(_metric_name(k), v, stamp, number)
                                                     for k, v in values.items() if math.isfinite(v)])
            result.windows.append(window)
            if alerted:
                result.alerts.append(number)
                result.alerted[number] = alerted
            print(window_line(number, window, task, alerted, baselines), file=out, flush=True)
        client.set_tag(result.run_id, "fairops.alerts", ",".join(map(str, result.alerts)) or "none")
        client.set_terminated(result.run_id, "FINISHED")
    except BaseException:
        client.set_terminated(result.run_id, "FAILED")
        raise
    return result

