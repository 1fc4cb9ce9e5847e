"""Fairband in your own objective: your Pipeline and objective, Optuna's study, MLflow's registry.

An ML engineer's own code, with fairops' public API only (docs/own_objective.md walks through it):
COMPAS's rows, a scikit-learn Pipeline (ColumnTransformer of OneHotEncoder and StandardScaler, then
HistGradientBoostingClassifier), an objective that fits it on the budget Fairband gives the trial and
records the validation outcome with ``record_outcome``, ``FairbandSampler`` + ``FairbandPruner`` in an
ordinary ``study.optimize``, ``FairnessTrackingCallback`` logging every fit to MLflow, the robust pick
refit on all training rows and registered with ``register_best``, with the record of the rows it was trained and
validated on (``log_rows``: the gate leaves those out, and refuses a version without a record). It writes the
held-out test rows
(every tune uses the same split, so no registered model saw them) beside the stores and ends with the commands
that serve the champion and gate a challenger on those rows.

    python examples/own_pipeline.py --workdir own-project              # registers @champion
    python examples/own_pipeline.py --workdir own-project --seed 1     # registers @challenger

(``--s-max 4``, the default, is the paper's 206-fit iteration; ``--s-max 2`` runs 22 fits.)
"""

import argparse
import sys
from pathlib import Path

import optuna
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from fairops.datasets import BudgetSlicer, load_compas, train_validation_test_split
from fairops.fairband import FairbandPruner, FairbandSampler, budget, select_best
from fairops.registry import RecordColumns, Refit, VersionDetails, log_rows, register_best, validation_tags
from fairops.tracking import FairnessTrackingCallback
from fairops.tuning import quiet_trials, record_outcome

MODEL_NAME = "own-compas"


def make_pipeline(X, learning_rate=0.1, max_leaf_nodes=15, l2_regularization=0.0, seed=0) -> Pipeline:
    """One-hot categories and scaled numbers, then gradient-boosted trees."""
    categories = X.select_dtypes("category").columns.tolist()
    numbers = [column for column in X.columns if column not in categories]
    encode = ColumnTransformer([("categories", OneHotEncoder(handle_unknown="ignore"), categories),
                                ("numbers", StandardScaler(), numbers)])
    model = HistGradientBoostingClassifier(learning_rate=learning_rate, max_leaf_nodes=max_leaf_nodes,
                                           l2_regularization=l2_regularization, max_iter=50, random_state=seed)
    return Pipeline([("encode", encode), ("model", model)])


def suggest(trial) -> dict:
    return {"learning_rate": trial.suggest_float("learning_rate", 0.02, 0.3, log=True),
            "max_leaf_nodes": trial.suggest_int("max_leaf_nodes", 4, 31),
            "l2_regularization": trial.suggest_float("l2_regularization", 1e-3, 10.0, log=True)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("own-project"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--s-max", type=int, default=4)
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    tracking_uri = f"sqlite:///{args.workdir.resolve() / 'mlflow.db'}"

    data = load_compas()  # X, y (1 = reoffended), sensitive (race, sex), task: precision at 10% FPR, FPR ratio
    # One split for every tune: the test rows stay unseen by every model registered, so they can gate them.
    split = train_validation_test_split(data.y, data.sensitive, seed=0)
    X_train, y_train = data.X.iloc[split.train], data.y[split.train]
    slicer = BudgetSlicer(y_train, data.sensitive.iloc[split.train], seed=args.seed)  # nested, stratified shares
    X_val, y_val, s_val = data.X.iloc[split.validation], data.y[split.validation], data.sensitive.iloc[split.validation]

    def objective(trial):
        rows = slicer.indices(budget(trial))  # Fairband's budget: a share of the training rows
        model = make_pipeline(X_train, **suggest(trial), seed=args.seed).fit(X_train.iloc[rows], y_train[rows])
        return record_outcome(trial, data.task, y_val, model.predict_proba(X_val)[:, 1], s_val, seed=args.seed)

    study = optuna.create_study(
        study_name=f"own-compas-seed{args.seed}", directions=["maximize", "maximize"],
        storage=f"sqlite:///{args.workdir.resolve() / 'optuna.db'}", load_if_exists=True,
        sampler=FairbandSampler(alpha="auto", seed=args.seed, s_max=args.s_max, iterations=1),
        pruner=FairbandPruner())
    tracker = FairnessTrackingCallback(tracking_uri)  # one MLflow run per fit, under one run for the study
    with quiet_trials(study):
        study.optimize(objective, callbacks=[tracker])  # one Fairband iteration; run again, it resumes

    pick = select_best(study, rule="robust")  # lower confidence bounds, not the luck of one validation split
    print(f"robust pick: trial {pick.trial.number} {pick.trial.params}, validation accuracy {pick.accuracy:.3f}, "
          f"fairness {pick.fairness:.3f}, alpha {pick.alpha:.2f}")

    # the chosen configuration refit on all training rows; its validation operating point and fairness are
    # recorded on the registered version, so that fairops promote and fairops monitor decide as it was chosen
    final = make_pipeline(X_train, **pick.trial.params, seed=args.seed).fit(X_train, y_train)
    recorded = validation_tags(data.task, y_val, final.predict_proba(X_val)[:, 1], s_val, seed=args.seed)
    registered = register_best(study, MODEL_NAME, rule="robust",
                               refit=Refit(lambda params, trial: final, input_example=X_val.head(3)),
                               details=VersionDetails(tags=recorded), session=tracker)
    tracker.finish(study)  # the study's parent run ends FINISHED, not left RUNNING in MLflow's UI
    alias = registered.alias
    print(f"registered: models:/{MODEL_NAME}@{alias} (version {registered.version})")
    # the rows it saw, each known by the model's input columns, the sensitive columns and its label
    columns = RecordColumns(inputs=tuple(X_train.columns), sensitive=tuple(data.task.sensitive), target="reoffended")
    seen = split.train.tolist() + split.validation.tolist()
    log_rows(tracker.session.client, MODEL_NAME, registered.version, tracking_uri=tracking_uri, columns=columns,
             seen=columns.hashes(data.X.iloc[seen], data.y[seen], data.sensitive.iloc[seen]), held_out=[])

    fresh = args.workdir / "fresh_rows.csv"  # the test rows: no fit of any tune saw them
    test_rows = data.X.iloc[split.test].assign(reoffended=data.y[split.test])
    test_rows.join(data.sensitive.iloc[split.test].add_prefix("group_")).to_csv(fresh, index=False)
    fairops = Path(sys.executable).with_name("fairops")
    # no --port: fairops serve listens on 5001, or on a free port when that one is taken, and says which
    print(f"serve it: {fairops} serve {MODEL_NAME} --tracking-uri {tracking_uri}")
    # the file's race column is the model's input (every category); the task's groups are in group_race, group_sex
    print(f"gate a challenger: {fairops} promote {MODEL_NAME} --tracking-uri {tracking_uri} --data {fresh.resolve()} "
          f"--target reoffended --sensitive group_race,group_sex --task {data.task}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
