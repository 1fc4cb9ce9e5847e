"""MLflow's scoring server as an ASGI app, for ``fairops serve`` to put limits in front of.

``mlflow models serve`` starts uvicorn on ``mlflow.pyfunc.scoring_server.app``, an app built by
``mlflow.pyfunc.scoring_server.init(model)``; that function is not in MLflow's documented API, so it is
used only for the MLflow versions in :data:`WRITTEN_FOR` (the range ``pyproject.toml`` allows, whose
scoring server is this FastAPI app) and only after checking it returns an ASGI app. The routes, request
formats, error answers and timeout stay MLflow's own.

>>> scoring_app_supported("3.17.2"), scoring_app_supported("2.22.0"), scoring_app_supported("4.0.0")
(True, False, False)
"""

from __future__ import annotations

import inspect

from .._versions import describe, in_range

#: MLflow versions (lowest included, highest excluded) whose ``scoring_server.init`` this was written for.
WRITTEN_FOR = ((3, 17), (4, 0))


def scoring_app_supported(version: str) -> bool:
    return in_range(version, WRITTEN_FOR)


def scoring_app(model):
    """The ASGI app ``mlflow models serve`` would run for ``model`` (a loaded ``PyFuncModel``)."""
    import mlflow
    from mlflow.pyfunc import scoring_server

    if not scoring_app_supported(mlflow.__version__):
        raise RuntimeError(f"fairops serve was written for MLflow {describe(WRITTEN_FOR)}; this is MLflow "
                           f"{mlflow.__version__}: serve with mlflow models serve instead")
    app = scoring_server.init(model)
    if not (callable(app) and inspect.iscoroutinefunction(type(app).__call__)):
        raise RuntimeError(f"MLflow {mlflow.__version__}'s scoring server is not an ASGI app; "
                           "serve with mlflow models serve instead")
    return app
