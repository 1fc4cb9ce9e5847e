"""The registry lifecycle in one script: a champion, a challenger, the fairness gate, then monitoring.

1. Two versions of a credit model are registered the way ``fairops tune`` registers them (the task, the
   threshold set on validation rows and the validation fairness as version tags, and the record of the rows
   each was trained and validated on): the first becomes ``@champion``, the second ``@challenger``.
2. ``fairops.registry.promote`` gates the challenger twice on the same fresh rows: with an impossible
   fairness floor (refused: ``@champion`` stays) and with an open gate (passed: ``@champion`` moves).
3. ``fairops.registry._monitoring.monitor`` watches the champion over ten windows of labelled rows; from
   window 6 on, women's repaid loans look like defaults to the model, its TPR ratio collapses, and
   every window from 6 on alerts.

    python examples/promote_and_monitor.py [--tracking-uri sqlite:///mlflow.db]
"""

import argparse
import tempfile

import numpy as np
import optuna
import pandas as pd
from mlflow.tracking import MlflowClient
from sklearn.linear_model import LogisticRegression

import fairops.mlflow
from fairops.metrics import Task
from fairops.models import InputSchema
from fairops.registry import RecordColumns, Refit, VersionDetails, log_rows, monitor, register_best, validation_tags
from fairops.tracking import TrackingSession

TASK = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex"])
FEATURES = ["a", "b", "c"]


def make_rows(seed: int, n: int, *, collapse: bool = False) -> pd.DataFrame:
    """Labelled rows (features a, b, c; sex; label y). ``collapse=True``: for women the label no longer
    follows ``a`` the way the model learned (positives get low ``a``), so their TPR falls to about 0."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["f", "m"], n)
    frame = pd.DataFrame(rng.normal(size=(n, 3)), columns=FEATURES)
    y = (frame["a"] + 0.3 * frame["b"] + rng.normal(scale=0.5, size=n) > 0).astype(int)
    if collapse:
        women = sex == "f"
        frame.loc[women, "a"] = -np.abs(frame.loc[women, "a"]) * np.where(y[women] == 1, 1.0, -1.0)
    return frame.assign(sex=sex, y=y)


def register_version(uri: str, name: str, *, C: float = 1.0, seed: int = 0, extra_tags=None):
    """Fit, set the threshold on validation rows, register (``@champion`` when free, else ``@challenger``), and
    record the rows the version saw, so the gate leaves them out."""
    train, validation = make_rows(seed, 2000), make_rows(seed + 100, 2000)
    model = LogisticRegression(C=C).fit(train[FEATURES], train["y"])
    scores = model.predict_proba(validation[FEATURES])[:, 1]
    tags = validation_tags(TASK, validation["y"].to_numpy(), scores, validation[["sex"]])
    study = optuna.create_study(directions=["maximize", "maximize"], study_name=f"{name}-{seed}")
    study.add_trial(optuna.trial.create_trial(values=[0.8, 0.9], params={}, distributions={}))
    registered = register_best(study, name, rule={"trial": 0},
                               refit=Refit(lambda params, trial: model, pip_requirements=["fairops"],
                                           log_options={"input_schema": InputSchema.for_model(model, train[FEATURES])}),
                               details=VersionDetails(tags={**tags, **(extra_tags or {})}),
                               session=TrackingSession(uri, f"{name}-{seed}"))
    seen = pd.concat([train, validation])
    columns = RecordColumns(inputs=tuple(FEATURES), sensitive=("sex",), target="y")
    log_rows(MlflowClient(uri), name, registered.version, columns=columns, tracking_uri=uri,
             seen=columns.hashes(seen, seen["y"], seen[["sex"]]), held_out=[])
    return registered


def windows(n_windows: int = 10, size: int = 1000, collapse_from: int | None = 6):
    """``(X, y, sensitive)`` per window; rows drift from window ``collapse_from`` on."""
    for number in range(1, n_windows + 1):
        rows = make_rows(50 + number, size, collapse=collapse_from is not None and number >= collapse_from)
        yield rows[FEATURES], rows["y"].to_numpy(), rows[["sex"]]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tracking-uri", default=f"sqlite:///{tempfile.mkdtemp()}/mlflow.db")
    args = parser.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    name = "credit"
    for seed, C in ((0, 1.0), (1, 0.5)):
        version = register_version(args.tracking_uri, name, C=C, seed=seed)
        print(f"registered {name} version {version.version} as @{version.alias}")
    fresh = make_rows(7, 3000)
    gate = dict(tracking_uri=args.tracking_uri)
    refused = fairops.registry.promote(name, fresh[FEATURES], fresh["y"], fresh[["sex"]], min_fairness=1.0, **gate)
    print(refused.text())
    passed = fairops.registry.promote(name, fresh[FEATURES], fresh["y"], fresh[["sex"]], min_fairness=0.0,
                                    max_accuracy_drop=1.0, **gate)
    print(passed.text())
    watched = monitor(name, windows(), tracking_uri=args.tracking_uri,
                      params={"source": "examples/promote_and_monitor"})
    print(f"{len(watched.windows)} windows, alerts at {watched.alerts}, monitoring run {watched.run_id}")
    return refused, passed, watched


if __name__ == "__main__":
    main()
