"""Tracking Optuna studies in MLflow, and the registry lifecycle of what they pick.

- :mod:`fairops.tracking.callback`: :class:`~fairops.tracking.callback.FairnessTrackingCallback`, one
  parent run per Optuna study (its settings, anytime curve and trials table) and one child run per trial;
  :mod:`fairops.tracking.parent_run` elects the study's parent run among concurrent workers.
- :mod:`fairops.tracking.registry`: :func:`~fairops.tracking.registry.register_best`, pick a trial by a
  rule, log and register its model, set an alias, attach a model card and a Pareto-front picture.
- :mod:`fairops.tracking.promotion`: :func:`~fairops.tracking.promotion.promote` (also
  ``fairops.tracking.promote``), the fairness gate that moves ``@champion`` to a challenger only if it
  passes, the verdict recorded first.
- :mod:`fairops.tracking.monitoring`: fairness of the champion over windows of labelled rows, as step
  metrics of a monitoring run, with an alert when a window falls significantly below the baseline;
  :mod:`fairops.tracking.window_alerts` holds each attribute to its own baseline and names what fell.
- :mod:`fairops.tracking.version_record`: what a registered version records of its validation figures.
- :mod:`fairops.tracking.ui_links`, :mod:`fairops.tracking.study_views`: links that open MLflow's UI on a
  study's trials, on its Pareto front and pick, and on its anytime curve.

Models are saved and loaded by :mod:`fairops.mlflow`; this package only logs and registers them.
Submodules are imported on use so ``import fairops.tracking`` stays cheap.

>>> import fairops.tracking
>>> sorted(fairops.tracking.__all__)[:3]
['callback', 'monitoring', 'parent_run']
"""

import importlib

__all__ = ["callback", "monitoring", "parent_run", "promotion", "registry", "study_views", "ui_links",
           "version_record", "window_alerts"]


def promote(*args, **kwargs):
    """:func:`fairops.tracking.promotion.promote`: gate a challenger, move ``@champion`` only if it passes."""
    from .promotion import promote as gate

    return gate(*args, **kwargs)


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
