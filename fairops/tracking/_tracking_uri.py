"""MLflow's process-wide default tracking URI set for a block: ``mlflow.models.evaluate`` and ``models:/``
URIs resolve against it, not against a client's URI."""

from __future__ import annotations

import os
from contextlib import contextmanager

ENV = "MLFLOW_TRACKING_URI"


@contextmanager
def tracking_uri(uri):
    """Point the default tracking URI at ``uri`` (unchanged when None) and restore it afterwards.

    Restored as it was, ``MLFLOW_TRACKING_URI`` included (``mlflow.set_tracking_uri`` writes that variable
    and clears it): setting back the resolved value instead would pin it, and a later change of the
    variable would be ignored.
    """
    import mlflow

    variable, before = os.environ.get(ENV), mlflow.get_tracking_uri()
    if uri:
        mlflow.set_tracking_uri(uri)
    try:
        yield
    finally:
        mlflow.set_tracking_uri(None)
        if variable is not None:
            os.environ[ENV] = variable
        if mlflow.get_tracking_uri() != before:  # it had been set in code only: set it again
            mlflow.set_tracking_uri(before)
