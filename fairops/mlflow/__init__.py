"""MLflow integration: model flavors, per-trial tracking and registry selection.

- :mod:`fairops.mlflow.scaff`, :mod:`fairops.mlflow.fairlof`: flavors (``save_model``, ``log_model``,
  ``load_model``, pyfunc) storing models as JSON + ``.npz`` with a sha256 manifest, never pickles.
- :mod:`fairops.mlflow.tracking`: :class:`~fairops.mlflow.tracking.FairnessTrackingCallback`, one parent
  run per Optuna study and one child run per trial, written with batched calls.
- :mod:`fairops.mlflow.registry`: :func:`~fairops.mlflow.registry.register_best`, pick a trial by a rule,
  log and register its model, set an alias, attach a model card and a Pareto-front picture.

Submodules are imported on use so ``import fairops.mlflow`` stays cheap.

>>> import fairops.mlflow
>>> sorted(fairops.mlflow.__all__)
['fairlof', 'registry', 'scaff', 'tracking']
"""

import importlib

__all__ = ["fairlof", "registry", "scaff", "tracking"]


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
