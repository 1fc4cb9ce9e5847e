"""The registry lifecycle of what a tuned study picks: register, gate, monitor.

What an integrator calls is named here (``from fairops.registry import ...``):

- :func:`register_best` (returning a :class:`RegisteredBest`): pick a trial by a rule, log and register its
  model, set an alias, attach a model card and a Pareto-front picture; its options are :class:`Refit` (the
  pick fitted anew and what is logged with it), :class:`Placement` (the alias it takes; ``once=True``: once
  per study and pick) and :class:`VersionDetails` (description, tags, card notes); :func:`describe` says
  what a pick is.
- :func:`promote` (returning a :class:`Verdict`): the fairness gate that moves ``@champion`` to a
  challenger only if it passes, the verdict recorded first; it leaves out the rows each version saw, by the
  row record :func:`log_rows` keeps with a version (rows known by the :class:`RecordColumns` the model reads).
- :func:`monitor` (returning a :class:`MonitorResult`): fairness of the champion over windows of labelled
  rows, as step metrics of a monitoring run, with an alert when a window's interval lies below the fairness
  rule's line; :func:`validation_tags` is what a registered version records of its validation figures.

Studies are tracked by :mod:`fairops.tracking` (its :class:`~fairops.tracking.TrackingSession` is what
:func:`register_best` reads a study from); models are saved and loaded by :mod:`fairops.mlflow`. Names are
imported on first use so ``import fairops.registry`` stays cheap.

>>> import fairops.registry
>>> sorted(fairops.registry.__all__)[:3]
['MonitorResult', 'Placement', 'RecordColumns']
>>> fairops.registry.register_best.__module__
'fairops.registry._registration'
"""

import importlib
from typing import Any

# public name -> the private module defining it
_PUBLIC = {
    "RegisteredBest": "_registration",
    "describe": "_registration",
    "register_best": "_registration",
    "Placement": "_registration_options",
    "Refit": "_registration_options",
    "VersionDetails": "_registration_options",
    "Verdict": "_promotion",
    "promote": "_promotion",
    "MonitorResult": "_monitoring",
    "monitor": "_monitoring",
    "validation_tags": "_version_record",
    "RecordColumns": "_row_record",
    "log_rows": "_row_record",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
