"""MLflow's process-wide default tracking URI set for a block: ``mlflow.models.evaluate`` and ``models:/``
URIs resolve against it, not against a client's URI."""

from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def tracking_uri(uri):
    """Point the default tracking URI at ``uri`` (unchanged when None) and restore it afterwards."""
    import mlflow

    before = mlflow.get_tracking_uri()
    if uri:
        mlflow.set_tracking_uri(uri)
    try:
        yield
    finally:
        mlflow.set_tracking_uri(before)
