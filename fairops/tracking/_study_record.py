"""The parent run's record of a study, kept by :class:`~fairops.tracking.FairnessTrackingCallback`.

:class:`StudyRecord`, the callback's base class, writes what defines the study (its params), its running
pick (the anytime curve, :mod:`fairops.tracking._anytime`) and, when the study ends, the trials table
(:mod:`fairops.tracking._trials_table`); the callback holds the client, the lock and the picks it reads.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ._anytime import pick_metrics, running_pick
from ._trials_table import append_trials_table, logged_trials_table, trials_table

if TYPE_CHECKING:
    import optuna
    import pandas as pd


class StudyRecord:
    """The parent-run methods of :class:`~fairops.tracking.FairnessTrackingCallback`, its base class."""

    # what the callback this class is the base of holds (declared for the type checker only)
    alpha: Any
    _lock: Any
    _picks: dict
    _selections: dict

    if TYPE_CHECKING:
        @property
        def client(self) -> Any: ...

        def parent_run_id(self, study) -> str: ...

        def flush(self) -> None: ...

        def trial_record(self, study, trial) -> tuple[dict, dict, dict]: ...

        def run_name(self, trial) -> str: ...

    def log_study_params(self, study: optuna.Study, params: dict[str, Any]) -> None:
        """Record what defines the study as params of its parent run (data, task, method, seed, ...).

        Params cannot change in MLflow: a key already recorded with another value (a later run of the
        same study with more ``--iterations``) keeps its first value and the new one goes into the tag
        of the same name.

        Parameters
        ----------
        study : optuna.Study
            The study.
        params : dict
            Name -> value (written as text, at most 6000 characters).
        """
        from mlflow.entities import Param, RunTag
        from mlflow.exceptions import MlflowException

        parent = self.parent_run_id(study)
        text = {str(key): str(value)[:6000] for key, value in params.items()}
        for attempt in range(3):
            recorded = self.client.get_run(parent).data.params
            new = [Param(k, v) for k, v in text.items() if k not in recorded]
            changed = [RunTag(k, v) for k, v in text.items() if k in recorded and recorded[k] != v]
            if not (new or changed):
                return
            try:
                self.client.log_batch(parent, params=new, tags=changed)
                return
            except MlflowException:
                # Workers started together log the same params at once; the store refuses the
                # second insert of a key. Read what the other worker wrote and log what is left.
                if attempt == 2:
                    raise
                time.sleep(0.2 * (attempt + 1))

    def reopen(self, study: optuna.Study) -> None:
        """Mark the parent run RUNNING again (a resumed or extended study).

        Parameters
        ----------
        study : optuna.Study
            The study.
        """
        parent = self.parent_run_id(study)
        if self.client.get_run(parent).info.status != "RUNNING":
            self.client.update_run(parent, status="RUNNING")

    def finish(self, study: optuna.Study, status: str = "FINISHED") -> None:
        """End the parent run with ``status`` (FINISHED, KILLED or FAILED).

        Before, log its last anytime-curve point and the fits not yet in its ``fairops_trials.json`` table.

        Parameters
        ----------
        study : optuna.Study
            The study.
        status : {"FINISHED", "KILLED", "FAILED"}, default="FINISHED"
            The parent run's final status.
        """
        if status not in ("FINISHED", "KILLED", "FAILED"):
            raise InputError(f"status must be FINISHED, KILLED or FAILED, got {status!r}")
        self.flush()
        parent = self.parent_run_id(study)
        if self.alpha is not None:
            self._log_running_pick(study, parent, final=True)
        append_trials_table(self.client, parent, self.trials_table(study))
        self.client.set_terminated(parent, status)

    # ------------------------------------------------------------------ parent-run summaries
    def _log_running_pick(self, study, parent: str, final: bool = False) -> None:
        """Log the pick so far when it changes (and at the end), with the budget spent as the step
        (:mod:`fairops.tracking._anytime`)."""
        from fairops.fairband._selection import RunningSelection

        with self._lock:  # what the study's picks read of each fit, read once
            selection = self._selections.get(study.study_name)
            if selection is None or selection.alpha != self.alpha:
                selection = self._selections[study.study_name] = RunningSelection(self.alpha)
        point = running_pick(study, self.alpha, selection)
        if point is None:
            return
        with self._lock:
            previous = self._picks.get(study.study_name)
            if previous is not None and previous.trial == point.trial and not final:
                return
            self._picks[study.study_name] = point
        self.client.log_batch(parent, metrics=pick_metrics(point, previous), synchronous=True)

    def trials_table(self, study: optuna.Study) -> pd.DataFrame:
        """One row per finished trial: number, state, name parts, metrics and the params (as JSON).

        Parameters
        ----------
        study : optuna.Study
            The study.

        Returns
        -------
        DataFrame
            The table.
        """
        return trials_table(study, lambda trial: self.trial_record(study, trial), self.run_name)

    def logged_trials_table(self, parent_run_id: str) -> pd.DataFrame | None:
        """The ``fairops_trials.json`` table of a parent run, or None before :meth:`finish` wrote it.

        Parameters
        ----------
        parent_run_id : str
            The parent run.

        Returns
        -------
        DataFrame or None
            The table.
        """
        return logged_trials_table(self.client, parent_run_id)
