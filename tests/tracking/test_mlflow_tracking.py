"""Per-trial tracking on a real SQLite tracking store: runs, metrics, tags, threads, failures, models."""

import json

import numpy as np
import optuna
import pytest
from mlflow.entities import ViewType
from mlflow.exceptions import MlflowException
from mlflow.tracking import MlflowClient

import fairops
from fairops.fairband import FairbandSampler, budget
from fairops.tracking._callback import PARENT_ATTR, FairnessTrackingCallback, keep_model
from tests.mlflow_stores import empty_store_uri

optuna.logging.set_verbosity(optuna.logging.WARNING)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    # One store per module: creating the SQLite schema costs seconds.
    folder = tmp_path_factory.mktemp("tracking")
    return empty_store_uri(folder / "mlflow.db"), folder


@pytest.fixture()
def uri(store):
    return store[0]


@pytest.fixture()
def make(store):
    def build(experiment, **kwargs):
        kwargs.setdefault("settle_seconds", 0.1)
        return FairnessTrackingCallback(store[0], experiment, artifact_location=str(store[1] / experiment), **kwargs)
    return build


def _runs(client, experiment_id, role):
    return client.search_runs([experiment_id], f"tags.`fairops.role` = '{role}'", max_results=1000)


def test_fairband_study_gets_one_parent_and_one_child_per_fit(uri, make):
    callback = make("fb", family="toy")
    study = optuna.create_study(directions=["maximize"] * 2, sampler=FairbandSampler(eta=3, s_max=1, alpha=0.5, seed=0),
                                study_name="fb-study")

    def objective(trial):
        x = trial.suggest_float("x", 0, 1)
        depth = trial.suggest_int("depth", 1, 4)
        trial.set_user_attr("auc_y", 0.6 + 0.3 * x)
        trial.set_user_attr("auc_s", 0.5 + 0.2 * x)
        return x * budget(trial), 1 - x / depth

    study.optimize(objective, n_trials=6, callbacks=[callback])
    client = MlflowClient(uri)
    experiment_id = callback.experiment_id(study)
    parents, children = _runs(client, experiment_id, "study"), _runs(client, experiment_id, "trial")
    assert len(parents) == 1 and len(children) == 6
    parent = parents[0].info.run_id
    assert study.user_attrs[PARENT_ATTR]["run_id"] == parent
    by_number = {int(r.data.tags["fairops.trial_number"]): r for r in children}
    assert sorted(by_number) == list(range(6))
    for trial in study.trials:
        run = by_number[trial.number]
        metrics, tags = run.data.metrics, run.data.tags
        assert tags["mlflow.parentRunId"] == parent
        assert metrics["accuracy"] == pytest.approx(trial.values[0])
        assert metrics["fairness"] == pytest.approx(trial.values[1])
        assert metrics["auc_y"] == pytest.approx(trial.user_attrs["auc_y"])
        assert metrics["budget"] == pytest.approx(trial.user_attrs["budget"])
        assert metrics["alpha"] == pytest.approx(0.5)
        assert metrics["weighted_score"] == pytest.approx(0.5 * trial.values[0] + 0.5 * trial.values[1])
        for name in ("bracket", "rung", "configuration_id"):
            assert tags[name] == str(trial.user_attrs[name])
        percent = f"{100 * trial.user_attrs['budget']:.0f}%"
        assert tags["family"] == "toy" and tags["budget"] == percent
        assert run.info.run_name == f"t{trial.number} toy {percent}"
        assert tags["trial_state"] == "COMPLETE" and tags["study_name"] == "fb-study"
        assert tags["fairops_version"] == fairops.__version__
        assert run.data.params == {"x": str(trial.params["x"]), "depth": str(trial.params["depth"])}
        assert run.info.status == "FINISHED"


def test_runs_written_in_the_background_equal_runs_written_at_once(uri, make):
    background, public = make("background", synchronous=False), make("public")
    study = optuna.create_study(directions=["maximize"] * 2, study_name="same")

    def objective(trial):
        x = trial.suggest_float("x", 0, 1)
        trial.set_user_attr("auc_s", 0.5 + x / 4)
        trial.set_user_attr("rung", 2)
        for rung in range(3):  # what an asynchronous Fairband trial reports
            trial.set_user_attr(f"rung{rung}_accuracy", x * (rung + 1) / 3)
            trial.set_user_attr(f"rung{rung}_fairness", 1 - x / (rung + 1))
        return x, 1 - x

    study.optimize(objective, n_trials=3, callbacks=[background, public])
    background.flush()
    client = MlflowClient(uri)
    runs = {}
    for callback in (background, public):
        for run in _runs(client, callback.experiment_id(study), "trial"):
            runs.setdefault(run.data.tags["fairops.trial_number"], []).append(run)
    for a, b in runs.values():
        assert a.data.params == b.data.params and a.data.metrics == b.data.metrics
        skip = {"mlflow.parentRunId", "mlflow.user", "mlflow.source.name", "mlflow.source.type"}
        assert {k: v for k, v in a.data.tags.items() if k not in skip} == \
               {k: v for k, v in b.data.tags.items() if k not in skip}
        assert (a.info.status, a.info.start_time, a.info.end_time, a.info.run_name) == \
               (b.info.status, b.info.start_time, b.info.end_time, b.info.run_name)
        history = client.get_metric_history(a.info.run_id, "fairness")
        assert [m.value for m in history] == [a.data.metrics["fairness"]]
        for run in (a, b):
            rungs = client.get_metric_history(run.info.run_id, "rung_accuracy")
            assert [m.step for m in rungs] == [0, 1, 2]
            assert [m.value for m in rungs] == \
                pytest.approx([a.data.metrics["accuracy"] * (i + 1) / 3 for i in range(3)])
        assert a.data.metrics["rung_fairness"] == pytest.approx(1 - a.data.metrics["accuracy"] / 3)  # latest = step 2
    best = client.search_runs([background.experiment_id(study)],
                              "metrics.fairness >= 0.5 and tags.`fairops.role` = 'trial'")
    assert len(best) == sum(t.values[1] >= 0.5 for t in study.trials)


def test_threads_log_every_trial_exactly_once(uri, make):
    callback = make("threads")
    study = optuna.create_study(directions=["maximize"] * 2, sampler=optuna.samplers.RandomSampler(seed=1))

    def objective(trial):
        x = trial.suggest_float("x", 0, 1)
        return x, 1 - x

    study.optimize(objective, n_trials=24, n_jobs=4, callbacks=[callback])
    client = MlflowClient(uri)
    experiment_id = callback.experiment_id(study)
    children = _runs(client, experiment_id, "trial")
    numbers = sorted(int(r.data.tags["fairops.trial_number"]) for r in children)
    assert numbers == list(range(24))
    all_runs = client.search_runs([experiment_id], run_view_type=ViewType.ALL, max_results=1000)
    assert len(all_runs) == 25  # one parent, no deleted candidates: the threads share one process lock
    assert len({r.data.tags["mlflow.parentRunId"] for r in children}) == 1


def test_outlier_metrics_failed_and_pruned_trials(uri, make):
    callback = make("outliers", metric_names=["jaccard_target", "wass_target"])
    study = optuna.create_study(directions=["maximize", "minimize"])

    def objective(trial):
        lam = trial.suggest_float("lambda", 0, 1)
        if trial.number == 1:
            raise ValueError("broken fit")
        if trial.number == 2:
            raise optuna.TrialPruned()
        for name, value in {"jaccard": 1 - lam, "preservation": 0.9, "outlier_fraction": 0.8,
                            "euclidean_disparity": lam / 2, "wasserstein_disparity": lam / 3}.items():
            trial.set_user_attr(name, value)
        return 1 - lam, lam / 3

    study.optimize(objective, n_trials=4, callbacks=[callback], catch=(ValueError,))
    client = MlflowClient(uri)
    runs = {int(r.data.tags["fairops.trial_number"]): r
            for r in _runs(client, callback.experiment_id(study), "trial")}
    assert sorted(runs) == [0, 1, 2, 3]
    assert runs[1].info.status == "FAILED" and runs[1].data.tags["trial_state"] == "FAIL"
    assert runs[2].info.status == "KILLED" and runs[2].data.tags["trial_state"] == "PRUNED"
    assert "jaccard_target" not in runs[1].data.metrics
    lam = study.trials[3].params["lambda"]
    assert runs[3].data.metrics["jaccard"] == pytest.approx(1 - lam)
    assert runs[3].data.metrics["wasserstein_disparity"] == pytest.approx(lam / 3)
    assert runs[3].data.metrics["wass_target"] == pytest.approx(lam / 3)
    assert "weighted_score" not in runs[3].data.metrics  # no accuracy/fairness pair


def test_models_are_logged_only_on_request(uri, make):
    from fairops.mlflow import scaff as scaff_flavor
    from fairops.scaff import SCAFFTreeClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    s = rng.integers(0, 2, 120)
    y = (X[:, 0] + s > 0.5).astype(int)
    models = {}

    def objective(trial):
        model = SCAFFTreeClassifier(theta=trial.suggest_float("theta", 0, 1)).fit(X, y, sensitive_features=s)
        models[trial.number] = model
        keep_model(trial, model)
        return 0.5, 0.5

    quiet = make("no-models")
    study = optuna.create_study(directions=["maximize"] * 2, study_name="no-models")
    study.optimize(objective, n_trials=1, callbacks=[quiet])
    client = MlflowClient(uri)
    run = _runs(client, quiet.experiment_id(study), "trial")[0]
    assert client.search_logged_models([quiet.experiment_id(study)]) == []

    loud = make("models", log_models=True, model_pip_requirements=["fairops"])
    study = optuna.create_study(directions=["maximize"] * 2, study_name="models")
    study.optimize(objective, n_trials=1, callbacks=[loud])
    run = _runs(client, loud.experiment_id(study), "trial")[0]
    logged = client.search_logged_models([loud.experiment_id(study)])
    assert len(logged) == 1 and logged[0].source_run_id == run.info.run_id
    import mlflow

    mlflow.set_tracking_uri(uri)
    try:
        again = scaff_flavor.load_model(logged[0].model_uri)
    finally:
        mlflow.set_tracking_uri(None)
    np.testing.assert_array_equal(again.predict_proba(X), models[0].predict_proba(X))


def test_a_model_that_cannot_be_saved_is_recorded_on_its_run_and_the_study_goes_on(uri, make):
    from sklearn.linear_model import LogisticRegression

    from fairops.scaff import SCAFFTreeClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    s = rng.integers(0, 2, 120)
    y = (X[:, 0] + s > 0.5).astype(int)
    kept = {0: "not a model",  # no flavor saves a str
            1: LogisticRegression().fit(X, y),  # a classifier needs an input example, which the callback lacks
            2: SCAFFTreeClassifier().fit(X, y, sensitive_features=s),
            3: LogisticRegression(C=0.5).fit(X, y)}  # trial 1's reason again: tagged, not warned again

    def objective(trial):
        keep_model(trial, kept[trial.number])
        return 0.5, 0.5

    callback = make("unsaved", log_models=True, model_pip_requirements=["fairops"])
    study = optuna.create_study(directions=["maximize"] * 2, study_name="unsaved")
    with pytest.warns(RuntimeWarning, match="trial 0's model was not logged") as caught:
        study.optimize(objective, n_trials=4, callbacks=[callback])
    assert [t.state.name for t in study.trials] == ["COMPLETE"] * 4
    warned = [str(w.message) for w in caught if "model was not logged" in str(w.message)]
    assert len(warned) == 2 and warned[1].startswith("trial 1's") and "warned once per study" in warned[1]
    client = MlflowClient(uri)
    runs = {int(r.data.tags["fairops.trial_number"]): r for r in _runs(client, callback.experiment_id(study), "trial")}
    assert runs[0].data.tags["fairops.model_error"].startswith("TypeError: no fairops flavor for a str")
    assert "input_example" in runs[1].data.tags["fairops.model_error"]
    assert runs[3].data.tags["fairops.model_error"] == runs[1].data.tags["fairops.model_error"]
    assert "fairops.model_error" not in runs[2].data.tags
    assert {r.info.status for r in runs.values()} == {"FINISHED"}
    with open(client.download_artifacts(runs[1].info.run_id, "model_error.txt")) as text:
        assert text.read().startswith("Traceback")
    logged = {m.source_run_id: m.status.name for m in client.search_logged_models([callback.experiment_id(study)])}
    # the classifier's half-made model is marked FAILED, not left PENDING
    assert logged == {runs[1].info.run_id: "FAILED", runs[2].info.run_id: "READY", runs[3].info.run_id: "FAILED"}


def test_parent_created_up_front_is_reused_by_other_callbacks(uri, make):
    study = optuna.create_study(directions=["maximize"] * 2, study_name="up-front")
    first = make("up-front")
    parent = first.parent_run_id(study)  # before any worker starts
    second = make("up-front")  # e.g. another worker: finds the id in the study's system attributes
    study.optimize(lambda t: (t.suggest_float("x", 0, 1), 0.5), n_trials=2, callbacks=[second])
    first.finish(study)
    client = MlflowClient(uri)
    parents = client.search_runs([first.experiment_id(study)], "tags.`fairops.role` = 'study'",
                                 run_view_type=ViewType.ALL)
    assert [r.info.run_id for r in parents] == [parent] and parents[0].info.status == "FINISHED"
    children = _runs(client, first.experiment_id(study), "trial")
    assert {r.data.tags["mlflow.parentRunId"] for r in children} == {parent} and len(children) == 2


def test_bad_arguments():
    with pytest.raises(ValueError, match="alpha"):
        FairnessTrackingCallback("sqlite:///:memory:", alpha=1.5)
    with pytest.raises(ValueError, match="alpha"):
        FairnessTrackingCallback("sqlite:///:memory:", alpha="dynamic")
    with pytest.raises(ValueError, match="settle_seconds"):
        FairnessTrackingCallback("sqlite:///:memory:", settle_seconds=-1)
    with pytest.raises(TypeError, match="metric_names"):
        FairnessTrackingCallback("sqlite:///:memory:", metric_names="accuracy")


def test_metric_names_must_match_the_values(uri, make):
    callback = make("mismatch", metric_names=["a", "b", "c"])
    study = optuna.create_study(directions=["maximize"] * 2)
    with pytest.raises(ValueError, match="metric_names has 3 names, the trial has 2 values"):
        study.optimize(lambda t: (t.suggest_float("x", 0, 1), 0.5), n_trials=1, callbacks=[callback])


def _two_objective(trial):
    x = trial.suggest_float("x", 0, 1)
    trial.set_user_attr("budget", [1 / 9, 1 / 3, 1.0][trial.number % 3])
    return x, 1 - x * x


def test_experiment_is_a_model_training_experiment(uri, make):
    callback = make("kind")
    study = optuna.create_study(directions=["maximize"] * 2, study_name="kind")
    experiment = MlflowClient(uri).get_experiment(callback.experiment_id(study))
    assert experiment.tags["mlflow.experimentKind"] == "custom_model_development"


def test_study_params_are_kept_and_a_changed_value_goes_to_a_tag(uri, make):
    callback = make("params")
    study = optuna.create_study(directions=["maximize"] * 2, study_name="params")
    callback.log_study_params(study, {"dataset": "german", "iterations": 1, "seed": 0})
    callback.log_study_params(study, {"dataset": "german", "iterations": 2, "seed": 0, "method": "FB-auto"})
    run = MlflowClient(uri).get_run(callback.parent_run_id(study))
    assert run.data.params == {"dataset": "german", "iterations": "1", "seed": "0", "method": "FB-auto"}
    assert run.data.tags["iterations"] == "2"


def test_parent_run_draws_the_running_pick_over_the_budget_spent(uri, make):
    from fairops.fairband import select_best

    callback = make("anytime", alpha=0.5)
    study = optuna.create_study(directions=["maximize"] * 2, sampler=optuna.samplers.RandomSampler(seed=3),
                                study_name="anytime")
    study.optimize(_two_objective, n_trials=30, callbacks=[callback])
    callback.finish(study)
    client = MlflowClient(uri)
    parent = client.get_run(callback.parent_run_id(study))
    assert parent.info.status == "FINISHED"
    history = client.get_metric_history(parent.info.run_id, "pick_trial")
    steps = [m.step for m in history]
    assert steps == sorted(steps) and steps[-1] == round(100 * sum(t.user_attrs["budget"] for t in study.trials))
    # at every logged step the value is the pick over the trials finished by then
    for metric in history:
        spent, done = 0.0, []
        for trial in study.trials:
            if round(100 * (spent + trial.user_attrs["budget"])) > metric.step:
                break
            spent += trial.user_attrs["budget"]
            done.append(trial)
        assert metric.value == select_best(done, alpha=0.5).trial.number
    accuracy = client.get_metric_history(parent.info.run_id, "pick_accuracy")
    assert accuracy[-1].value == pytest.approx(select_best(study, alpha=0.5).accuracy)
    assert len({m.value for m in history}) > 1  # the pick changed during the study


@pytest.mark.slow  # 22 real fits
@pytest.mark.parametrize("alpha", ["auto", 1.0])  # 1.0: precision alone, where fits often tie
def test_running_pick_of_a_real_tune_is_the_pick_from_scratch_after_every_trial(uri, make, alpha):
    from fairops.datasets import load_german
    from fairops.fairband import select_best
    from fairops.tuning import FairnessObjective, make_study, run_tuner

    callback = make(f"anytime-real-{alpha}", alpha=alpha)
    client, checked = MlflowClient(uri), []

    def compare(study, trial):  # runs after the tracking callback has logged the pick of the trials so far
        finished = [t for t in study.get_trials(deepcopy=False) if t.state.is_finished()]
        history = client.get_metric_history(callback.parent_run_id(study), "pick_trial")
        try:
            pick = select_best(finished, alpha=alpha)
        except ValueError:  # no fit to pick yet: nothing logged
            assert history == []
            return
        latest = max(history, key=lambda metric: metric.step)
        assert latest.value == pick.trial.number
        if latest.step == round(100 * sum(t.user_attrs["budget"] for t in finished)):  # logged after this trial
            scores = client.get_metric_history(callback.parent_run_id(study), "pick_weighted_score")
            assert max(scores, key=lambda metric: metric.step).value == pick.score
        checked.append(pick.trial.number)

    objective = FairnessObjective(load_german(), families=["decision_tree"], seed=0)
    study = make_study("FB-auto", seed=0, s_max=2, study_name=f"anytime-real-{alpha}")
    run_tuner("FB-auto", objective, study=study, catch=(ValueError,), callbacks=[callback, compare])
    assert len(study.trials) == 22 and len(checked) >= 20 and len(set(checked)) > 1  # the pick changed


def test_trials_table_holds_every_fit_once_across_finishes(uri, make):
    callback = make("table", alpha="auto")
    study = optuna.create_study(directions=["maximize"] * 2, study_name="table")
    study.optimize(_two_objective, n_trials=4, callbacks=[callback])
    callback.finish(study, status="KILLED")
    client = MlflowClient(uri)
    parent = callback.parent_run_id(study)
    assert client.get_run(parent).info.status == "KILLED"
    callback.reopen(study)
    assert client.get_run(parent).info.status == "RUNNING"
    study.optimize(_two_objective, n_trials=3, callbacks=[callback])
    callback.finish(study)
    table = callback.logged_trials_table(parent)
    assert sorted(table["trial"]) == list(range(7))
    row = table[table["trial"] == 5].iloc[0]
    trial = study.trials[5]
    assert row["accuracy"] == pytest.approx(trial.values[0]) and row["fairness"] == pytest.approx(trial.values[1])
    assert row["run_name"] == f"t5 {round(100 * trial.user_attrs['budget'])}%"
    assert json.loads(row["params"]) == trial.params
    assert client.get_run(parent).info.status == "FINISHED"
    assert set(callback.trial_run_ids(study)) == set(range(7))


def test_mlflow_async_logging_is_waited_for(uri, make, monkeypatch):
    monkeypatch.setenv("MLFLOW_ENABLE_ASYNC_LOGGING", "true")
    callback = make("async")
    study = optuna.create_study(directions=["maximize"] * 2, study_name="async")
    study.optimize(_two_objective, n_trials=5, callbacks=[callback])
    assert callback._pending  # the batches went through MLflow's queue
    callback.flush()
    runs = _runs(MlflowClient(uri), callback.experiment_id(study), "trial")
    assert len(runs) == 5 and all(r.data.metrics["fairness"] == pytest.approx(
        study.trials[int(r.data.tags["fairops.trial_number"])].values[1]) for r in runs)


def test_a_failed_background_write_is_raised_by_flush_and_the_next_trial(uri, make):
    callback = make("failing", synchronous=False)
    study = optuna.create_study(directions=["maximize"] * 2, study_name="failing")
    study.optimize(_two_objective, n_trials=1, callbacks=[callback])
    callback.flush()
    client = MlflowClient(uri)
    client.delete_experiment(callback.experiment_id(study))  # no run can be created in it any more
    study.optimize(_two_objective, n_trials=1, callbacks=[callback])
    with pytest.raises(MlflowException, match="(?i)deleted|active"):
        callback.flush()
    callback.flush()  # raised once: nothing else is waiting
    with pytest.raises(MlflowException):
        # trial 4 waits for a free slot, so trial 2's write is done (failed) when trial 5's callback looks
        study.optimize(_two_objective, n_trials=4, callbacks=[callback])
    assert len(study.trials) <= 6
    assert [run.data.tags["fairops.trial_number"] for run in client.search_runs(
        [callback.experiment_id(study)], "tags.`fairops.role` = 'trial'", run_view_type=ViewType.ALL)] == ["0"]


@pytest.mark.slow  # a fresh Python process importing MLflow and Optuna
def test_background_runs_are_written_when_the_process_ends_without_a_flush(uri, store, tmp_path):
    import subprocess
    import sys

    script = f"""
import optuna
from fairops.tracking._callback import FairnessTrackingCallback
optuna.logging.set_verbosity(optuna.logging.WARNING)
callback = FairnessTrackingCallback({uri!r}, "exiting", artifact_location={str(store[1] / "exiting")!r},
                                    synchronous=False, settle_seconds=0)
study = optuna.create_study(directions=["maximize"] * 2, study_name="exiting")
study.optimize(lambda t: (t.suggest_float("x", 0, 1), 0.5), n_trials=6, callbacks=[callback])
print(callback._writes.pending())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("exiting")
    runs = _runs(client, experiment.experiment_id, "trial")
    assert sorted(int(r.data.tags["fairops.trial_number"]) for r in runs) == list(range(6))
    assert {r.info.status for r in runs} == {"FINISHED"} and all(r.data.metrics["accuracy"] >= 0 for r in runs)
