"""Tracking Optuna studies in MLflow.

What an integrator calls is named here (``from fairops.tracking import ...``):

- :class:`FairnessTrackingCallback`: one parent run per Optuna study (its settings, anytime curve and
  trials table) and one child run per trial, the fairness metrics of each fit included. It takes the place
  of Optuna's ``MLflowCallback`` (deprecated in Optuna 4.9) for a fairness study: the same one-run-per-trial
  record, with both objectives named, the group counts and intervals, and the fitted model when the
  objective keeps it (:func:`keep_model`). Its store is a :class:`TrackingSession` (``callback.session``):
  the client, the study's experiment and parent run, which :func:`fairops.registry.register_best` takes too.

The registry lifecycle of what a study picks (registering, the fairness gate, monitoring) lives in
:mod:`fairops.registry`; its names are still reachable from here for one release, with a ``FutureWarning``.
Models are saved and loaded by :mod:`fairops.mlflow`. Names are imported on first use so
``import fairops.tracking`` stays cheap.

>>> import fairops.tracking
>>> fairops.tracking.__all__
['FairnessTrackingCallback', 'TrackingSession', 'keep_model']
>>> fairops.tracking.FairnessTrackingCallback.__module__
'fairops.tracking._callback'
"""

import importlib
import warnings
from typing import Any

# public name -> the private module defining it
_PUBLIC = {
    "FairnessTrackingCallback": "_callback",
    "keep_model": "_callback",
    "TrackingSession": "_session",
}
# names that moved to fairops.registry
_MOVED = ("Placement", "Refit", "RecordColumns", "RegisteredBest", "MonitorResult", "Verdict", "VersionDetails",
          "describe", "log_rows", "monitor", "promote", "register_best", "validation_tags")

__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
    if name in _MOVED:
        warnings.warn(f"fairops.tracking.{name} moved to fairops.registry.{name}; import it from there",
                      FutureWarning, stacklevel=2)
        return getattr(importlib.import_module("fairops.registry"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
