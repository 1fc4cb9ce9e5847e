"""Tracking Optuna studies in MLflow, and the registry lifecycle of what they pick.

What an integrator calls is named here (``from fairops.tracking import ...``):

- :class:`FairnessTrackingCallback`: one parent run per Optuna study (its settings, anytime curve and
  trials table) and one child run per trial, the fairness metrics of each fit included. It takes the place
  of Optuna's ``MLflowCallback`` (deprecated in Optuna 4.9) for a fairness study: the same one-run-per-trial
  record, with both objectives named, the group counts and intervals, and the fitted model when the
  objective keeps it (:func:`keep_model`). Its store is a :class:`TrackingSession` (``callback.session``):
  the client, the study's experiment and parent run, which :func:`register_best` takes too (``session=``).
- :func:`register_best` (returning a :class:`RegisteredBest`): pick a trial by a rule, log and register its
  model, set an alias, attach a model card and a Pareto-front picture; its options are :class:`Refit` (the
  pick fitted anew and what is logged with it), :class:`Placement` (the alias it takes; ``once=True``: once
  per study and pick) and :class:`VersionDetails` (description, tags, card notes); :func:`describe` says
  what a pick is.
- :func:`promote` (returning a :class:`Verdict`): the fairness gate that moves ``@champion`` to a
  challenger only if it passes, the verdict recorded first; it leaves out the rows each version saw, by the
  row record :func:`log_rows` keeps with a version (rows known by the :class:`RecordColumns` the model reads).
- :func:`monitor` (returning a :class:`MonitorResult`): fairness of the champion over windows of labelled
  rows, as step metrics of a monitoring run, with an alert when a window falls significantly below the
  baseline; :func:`validation_tags` is what a registered version records of its validation figures.

The modules behind them (``callback``, ``registry``, ``promotion``, ``monitoring``, ...) are the
implementation. Models are saved and loaded by :mod:`fairops.mlflow`; this package only logs and
registers them. Names are imported on first use so ``import fairops.tracking`` stays cheap.

>>> import fairops.tracking
>>> sorted(fairops.tracking.__all__)[:3]
['FairnessTrackingCallback', 'MonitorResult', 'Placement']
>>> fairops.tracking.register_best.__module__
'fairops.tracking.registry'
"""

import importlib

# public name -> the module defining it
_PUBLIC = {
    "FairnessTrackingCallback": "callback",
    "keep_model": "callback",
    "TrackingSession": "session",
    "RegisteredBest": "registry",
    "describe": "registry",
    "register_best": "registry",
    "Placement": "registration_options",
    "Refit": "registration_options",
    "VersionDetails": "registration_options",
    "Verdict": "promotion",
    "promote": "promotion",
    "MonitorResult": "monitoring",
    "monitor": "monitoring",
    "validation_tags": "version_record",
    "RecordColumns": "row_record",
    "log_rows": "row_record",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name):
    if name in _PUBLIC:
        return getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *__all__})
