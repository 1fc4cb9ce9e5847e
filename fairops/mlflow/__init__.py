"""MLflow model persistence: fairops' flavors, sealed on save and verified on load.

- :mod:`fairops.mlflow.scaff`, :mod:`fairops.mlflow.fairlof`: flavors (``save_model``, ``log_model``,
  ``load_model``, pyfunc) storing models as JSON + ``.npz``, never pickles.
- :mod:`fairops.mlflow.classifier`: the flavor of every other classifier fairops logs (pipelines,
  LightGBM): skops with a trust list fixed in code, an input schema checked on every request.
- :mod:`fairops.mlflow.answer`: what a classifier answers (a label by default, its scores on request).
- :mod:`fairops.mlflow.flavors`: the table of the three, shared by saving
  (:func:`~fairops.mlflow.flavors.log_estimator`) and loading.
- :mod:`fairops.mlflow.loader`: load any of them verified, with fairops' loaders only.
- :mod:`fairops.mlflow.sealing`: the manifest over every file of a model directory, HMAC-signed when
  ``FAIROPS_MODEL_KEY`` is set.

Tracking studies, the registry, promotion and monitoring live in :mod:`fairops.tracking`.
Submodules are imported on use so ``import fairops.mlflow`` stays cheap.

>>> import fairops.mlflow
>>> sorted(fairops.mlflow.__all__)
['answer', 'classifier', 'fairlof', 'flavors', 'loader', 'scaff', 'sealing']
"""

import importlib
from typing import Any

__all__ = ["answer", "classifier", "fairlof", "flavors", "loader", "scaff", "sealing"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
