"""MLflow's process-wide default tracking URI set for a block: ``mlflow.models.evaluate`` and ``models:/``
URIs resolve against it, not against a client's URI."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..mlflow._mlflow_internals import use_tracking_uri

if TYPE_CHECKING:
    from contextlib import AbstractContextManager


def tracking_uri(uri: str | None) -> AbstractContextManager[None]:
    """Point the default tracking URI at ``uri`` (unchanged when None) and restore it afterwards.

    Restored as it was, ``MLFLOW_TRACKING_URI`` included (see
    :func:`fairops.mlflow._mlflow_internals.use_tracking_uri`, the one block every fairops entry point uses).
    """
    return use_tracking_uri(uri)
