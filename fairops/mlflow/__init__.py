"""MLflow integration: model flavors, per-trial tracking and registry selection.

- :mod:`fairops.mlflow.scaff`, :mod:`fairops.mlflow.fairlof`: flavors (``save_model``, ``log_model``,
  ``load_model``, pyfunc) storing models as JSON + ``.npz``, never pickles.
- :mod:`fairops.mlflow.classifier`: the flavor of every other classifier fairops logs (pipelines,
  LightGBM): skops with a trust list fixed in code, an input schema checked on every request.
- :mod:`fairops.mlflow.loader`: load any of them verified, with fairops' loaders only.
- :mod:`fairops.mlflow.sealing`: the manifest over every file of a model directory, HMAC-signed when
  ``FAIROPS_MODEL_KEY`` is set.
- :mod:`fairops.mlflow.tracking`: :class:`~fairops.mlflow.tracking.FairnessTrackingCallback`, one parent
  run per Optuna study (its settings, anytime curve and trials table) and one child run per trial.
- :mod:`fairops.mlflow.registry`: :func:`~fairops.mlflow.registry.register_best`, pick a trial by a rule,
  log and register its model, set an alias, attach a model card and a Pareto-front picture.
- :mod:`fairops.mlflow.promotion`: :func:`~fairops.mlflow.promotion.promote` (also ``fairops.mlflow.promote``),
  the fairness gate that moves ``@champion`` to a challenger only if it passes, the verdict recorded first.
- :mod:`fairops.mlflow.monitoring`: fairness of the champion over windows of labelled rows, as step
  metrics of a monitoring run, with an alert when a window falls significantly below the baseline.
- :mod:`fairops.mlflow.ui_links`, :mod:`fairops.mlflow.study_views`: links that open MLflow's UI on a
  study's trials, on its Pareto front and pick, and on its anytime curve.

Submodules are imported on use so ``import fairops.mlflow`` stays cheap.

>>> import fairops.mlflow
>>> sorted(fairops.mlflow.__all__)
['classifier', 'fairlof', 'loader', 'monitoring', 'promotion', 'registry', 'scaff', 'sealing', 'study_views', 'tracking', 'ui_links', 'version_record']
"""

import importlib

__all__ = ["classifier", "fairlof", "loader", "monitoring", "promotion", "registry", "scaff", "sealing",
           "study_views", "tracking", "ui_links", "version_record"]


def promote(*args, **kwargs):
    """:func:`fairops.mlflow.promotion.promote`: gate a challenger, move ``@champion`` only if it passes."""
    from .promotion import promote as gate

    return gate(*args, **kwargs)


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
