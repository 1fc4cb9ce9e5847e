"""The parent run's ``fairops_trials.json``: one row per finished fit, its metrics and settings.

:class:`~fairops.tracking.FairnessTrackingCallback` appends to it when the study's run ends
(``finish``); MLflow's ``log_table`` appends, so only the fits not in the table yet are logged.

>>> import optuna
>>> optuna.logging.set_verbosity(optuna.logging.WARNING)
>>> study = optuna.create_study(directions=["maximize", "maximize"])
>>> study.add_trial(optuna.trial.create_trial(values=[0.8, 0.6]))
>>> table = trials_table(study, lambda trial: ({}, {"accuracy": 0.8}, {}), lambda trial: f"t{trial.number}")
>>> table[["trial", "state", "run_name", "accuracy", "params"]].values.tolist()
[[0, 'COMPLETE', 't0', 0.8, '{}']]
"""

from __future__ import annotations

import json
import warnings

TRIALS_TABLE = "fairops_trials.json"


def trials_table(study, record, run_name):
    """One row per finished trial: number, state, name parts, metrics and the params (as JSON);
    ``record(trial)`` gives a trial's ``(params, metrics, tags)``, ``run_name(trial)`` its run's name."""
    import pandas as pd

    rows = []
    for trial in study.get_trials(deepcopy=False):
        if not trial.state.is_finished():
            continue
        params, metrics, tags = record(trial)
        row = {"trial": trial.number, "state": trial.state.name, "run_name": run_name(trial),
               "family": tags.get("family"), "bracket": tags.get("bracket"), "rung": tags.get("rung")}
        row.update(metrics)
        row["params"] = json.dumps(trial.params, default=str, sort_keys=True)
        rows.append(row)
    return pd.DataFrame(rows)


def append_trials_table(client, parent_run_id: str, table) -> None:
    """Log the rows of ``table`` not yet in the parent run's table (MLflow's ``log_table`` appends)."""
    if table.empty:
        return
    logged = logged_trials_table(client, parent_run_id)
    if logged is not None:
        table = table[~table["trial"].isin(set(logged["trial"].astype(int)))]
    if not table.empty:
        with warnings.catch_warnings():  # MLflow's own dtype check, about pandas 3's str columns
            warnings.filterwarnings("ignore", message="For backward compatibility, 'str' dtypes")
            client.log_table(parent_run_id, data=table, artifact_file=TRIALS_TABLE)


def logged_trials_table(client, parent_run_id: str):
    """The ``fairops_trials.json`` table of a parent run, or None before it was written.

    (Read from the artifact: ``MlflowClient.load_table`` searches the runs of the process-wide
    tracking URI rather than this client's.)
    """
    import tempfile

    import pandas as pd

    if TRIALS_TABLE not in {item.path for item in client.list_artifacts(parent_run_id)}:
        return None
    with tempfile.TemporaryDirectory() as folder:
        path = client.download_artifacts(parent_run_id, TRIALS_TABLE, folder)
        return pd.read_json(path, orient="split")
