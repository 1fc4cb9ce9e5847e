"""Opt-in fast path: a finished run written in one transaction of a SQL tracking store.

MLflow's public client writes a run with its params and metrics in four to six commits (``create_run``,
``log_batch`` commits params and metrics apart, ``set_terminated``); on SQLite each commit syncs the
file, which dominates the cost of per-trial tracking. This module writes the same rows (run, tags,
params, metric history, latest metrics) through MLflow's own SQLAlchemy table models in one commit.
Those models are not a public API, so the path is used only when:

- the caller asks for it (``FairnessTrackingCallback(..., fast_sql=True)``),
- the client talks to a SQL store directly (``sqlite:///``, ``postgresql://``; never a tracking server),
- the installed MLflow is in :data:`WRITTEN_FOR`, the versions whose table models this was checked against
  (a test compares such runs field by field with runs written through the public client).

Outside that, :func:`sql_run_writer` returns None (with a warning when the version is the reason) and the
caller uses the public client.

>>> SqlRunWriter.version_supported("3.17.2"), SqlRunWriter.version_supported("4.0.0")
(True, False)
"""

from __future__ import annotations

import uuid
import warnings

from .._versions import in_range
from ..errors import InputError

#: MLflow versions (lowest included, highest excluded) whose run tables this module was written for.
WRITTEN_FOR = ((3, 17), (3, 18))


class SqlRunWriter:
    """Writes a finished run with its tags, params and metrics in one transaction of a SQL store."""

    def __init__(self, store):
        self.store = store
        self._artifact_roots: dict[str, str] = {}

    @staticmethod
    def version_supported(version: str) -> bool:
        return in_range(version, WRITTEN_FOR)

    def write(self, experiment_id, start, end, status, tags, params, metrics, history=()) -> str:
        """Insert one run (already in its final ``status``) and return its id."""
        from mlflow.entities import LifecycleStage, SourceType
        from mlflow.store.tracking.dbmodels.models import SqlLatestMetric, SqlMetric, SqlParam, SqlRun, SqlTag
        from mlflow.utils.mlflow_tags import MLFLOW_RUN_NAME, MLFLOW_USER
        from mlflow.utils.uri import append_to_uri_path

        if experiment_id not in self._artifact_roots:
            experiment = self.store.get_experiment(experiment_id)
            if experiment.lifecycle_stage != LifecycleStage.ACTIVE:
                raise InputError(f"experiment {experiment_id} is deleted")
            self._artifact_roots[experiment_id] = experiment.artifact_location
        run_id = uuid.uuid4().hex
        with self.store.ManagedSessionMaker(read_only=False) as session:
            session.add(SqlRun(
                name=tags.get(MLFLOW_RUN_NAME, run_id), run_uuid=run_id, experiment_id=int(experiment_id),
                artifact_uri=append_to_uri_path(self._artifact_roots[experiment_id], run_id, "artifacts"),
                source_type=SourceType.to_string(SourceType.UNKNOWN), source_name="", entry_point_name="",
                user_id=tags.get(MLFLOW_USER, "unknown"), status=status, start_time=start, end_time=end,
                deleted_time=None, source_version="", lifecycle_stage=LifecycleStage.ACTIVE,
            ))
            session.add_all(SqlTag(key=k, value=v, run_uuid=run_id) for k, v in tags.items())
            session.add_all(SqlParam(key=k, value=v, run_uuid=run_id) for k, v in params.items())
            latest: dict = {}
            for key, value, step in [(k, v, 0) for k, v in metrics.items()] + list(history):
                row = {"key": key, "value": value, "timestamp": end, "step": step, "is_nan": False, "run_uuid": run_id}
                session.add(SqlMetric(**row))
                if key not in latest or step >= latest[key]["step"]:
                    latest[key] = row
            session.add_all(SqlLatestMetric(**row) for row in latest.values())
        return run_id


def sql_run_writer(client) -> SqlRunWriter | None:
    """A writer for ``client``'s store, or None when the store or the MLflow version does not qualify."""
    import mlflow

    try:
        from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

        store = client._tracking_client.store
    except (ImportError, AttributeError):
        return None
    if not isinstance(store, SqlAlchemyStore):
        return None
    if not SqlRunWriter.version_supported(mlflow.__version__):
        low, high = WRITTEN_FOR
        warnings.warn(f"fast_sql: one-transaction run writes were written for MLflow {low[0]}.{low[1]} up to "
                      f"{high[0]}.{high[1]} (excluded), not {mlflow.__version__}; using the public client",
                      RuntimeWarning, stacklevel=3)
        return None
    return SqlRunWriter(store)
