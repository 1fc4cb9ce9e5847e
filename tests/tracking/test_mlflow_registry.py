"""register_best: selection rules, registry versions and aliases, model card, Pareto picture, flavors."""

import json

import lightgbm
import mlflow
import numpy as np
import optuna
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from sklearn.linear_model import LogisticRegression

from fairops.fairband import FairbandSampler, budget, select_best
from fairops.metrics import binarize, fairness_ratio, precision
from fairops.mlflow import scaff as scaff_flavor
from fairops.registry import Placement, Refit, VersionDetails
from fairops.registry._registration import default_description, describe, register_best, select
from fairops.scaff import SCAFFTreeClassifier
from fairops.tracking import TrackingSession
from fairops.tracking._callback import FairnessTrackingCallback, keep_model
from tests.mlflow_stores import empty_store_uri

optuna.logging.set_verbosity(optuna.logging.WARNING)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("registry")
    uri = empty_store_uri(folder / "mlflow.db")
    mlflow.set_tracking_uri(uri)
    yield uri, folder
    mlflow.set_tracking_uri(None)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    n = 500
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    s = rng.choice(["f", "m"], n)
    y = ((X["a"] + 0.8 * (s == "m") + rng.normal(scale=0.6, size=n)) > 0.5).astype(int)
    return X, y, s


def _fit(params, X, y, s):
    return SCAFFTreeClassifier(theta=params["theta"], max_depth=params["depth"]).fit(X, y, sensitive_features=s)


@pytest.fixture(scope="module")
def study(store, data):
    """A small Fairband study whose trials fit SCAFF trees; tracked, models logged."""
    X, y, s = data
    uri, folder = store
    callback = FairnessTrackingCallback(uri, "registry", artifact_location=str(folder / "art"), settle_seconds=0.1,
                                        log_models=True, model_pip_requirements=["fairops"])
    study = optuna.create_study(directions=["maximize"] * 2, study_name="registry",
                                sampler=FairbandSampler(eta=3, s_max=1, alpha=0.5, seed=2))

    def objective(trial):
        params = {"theta": trial.suggest_float("theta", 0, 1), "depth": trial.suggest_int("depth", 1, 4)}
        rows = np.arange(int(len(X) * budget(trial)))
        model = _fit(params, X.iloc[rows], y.iloc[rows], s[rows])
        keep_model(trial, model)
        score = model.predict_proba(X)[:, 1]
        decided = binarize(score, y, tpr=0.5)
        return precision(y, decided), fairness_ratio(y, decided, s)

    study.optimize(objective, n_trials=6, callbacks=[callback])
    return study


def test_rules_match_fairband_selection(study):
    pick = select(study)  # alpha from the study's FairbandSampler settings
    reference = select_best(study.get_trials(), alpha=0.5)
    assert pick.trial.number == reference.trial.number and pick.alpha == 0.5
    fits = [t for t in study.trials if t.state.name == "COMPLETE"]
    bound = sorted(t.values[1] for t in fits)[len(fits) // 2]
    constrained = select(study, f"fairness>={bound}")
    feasible = [t for t in fits if t.values[1] >= bound]
    assert constrained.trial.values[0] == max(t.values[0] for t in feasible)
    assert select(study, "accuracy >= 0").trial.values[1] == max(t.values[1] for t in fits)
    assert select(study, {"trial": 3}).trial.number == 3


def test_rule_by_run_id(store, study):
    client = MlflowClient(store[0])
    experiment_id = client.get_experiment_by_name("registry").experiment_id
    run = client.search_runs([experiment_id], "tags.`fairops.trial_number` = '4' and tags.`fairops.role` = 'trial'")[0]
    assert select(study, {"run_id": run.info.run_id}, tracking_uri=store[0]).trial.number == 4
    parent = client.search_runs([experiment_id], "tags.`fairops.role` = 'study'")[0]
    with pytest.raises(ValueError, match="is not a trial run of study 'registry'"):
        select(study, {"run_id": parent.info.run_id}, tracking_uri=store[0])


@pytest.mark.parametrize("rule, error, message", [
    ("fairness > 0.8", ValueError, "is not one of 'fairband', 'paper', 'robust'"),
    ("fairness>=1.5", ValueError, r"min_fairness must be a float in \[0, 1\]"),
    ({"trial": 99}, ValueError, "trial 99 is not a completed fit"),
    ({"number": 1}, ValueError, "must be"),
    (3, TypeError, "rule must be"),
])
def test_bad_rules(study, rule, error, message):
    with pytest.raises(error, match=message):
        select(study, rule)


def test_register_best_with_refit_card_and_picture(store, study, data):
    X, y, s = data
    uri, folder = store
    client = MlflowClient(uri)
    calls = []

    def refit(params, trial):
        calls.append((params, trial.number))
        return _fit(params, X, y, s)

    first = register_best(study, "fair-credit", rule="fairband",
                          refit=Refit(refit, input_example=X.head(3), pip_requirements=["fairops"]),
                          details=VersionDetails(card_notes={"owner": "risk team"}))
    pick = select(study)
    assert calls == [(pick.trial.params, pick.trial.number)]
    assert str(client.get_model_version_by_alias("fair-credit", "champion").version) == first.version == "1"
    champion = mlflow.pyfunc.load_model(first.alias_uri)
    np.testing.assert_allclose(champion.predict(X, params={"answer": "scores"}),
                               _fit(pick.trial.params, X, y, s).predict_proba(X)[:, 1])
    assert isinstance(scaff_flavor.load_model(first.alias_uri), SCAFFTreeClassifier)

    version = client.get_model_version("fair-credit", "1")
    # the rule that made the pick, truthfully: Fairband's alpha setting and value, not "chosen by hand"
    rule_text = describe(pick, study)
    assert rule_text.startswith("Fairband: argmax alpha*accuracy + (1-alpha)*fairness over 6 fits, alpha fixed at 0.5")
    assert version.tags["selection_rule"] == rule_text and version.tags["trial_number"] == str(pick.trial.number)
    assert version.tags["selection_kind"] == "fairband" and version.tags["alpha_rule"] == "0.5"
    assert float(version.tags["selection_alpha"]) == 0.5
    accurate = select_best(study.get_trials(), alpha=1.0).trial
    assert version.description == default_description(study, pick)
    assert rule_text in version.description and f"most accurate fit, trial {accurate.number}" in version.description
    run = client.get_run(first.run_id)
    assert run.data.metrics["accuracy"] == pytest.approx(pick.trial.values[0])
    assert run.data.metrics["fairness"] == pytest.approx(pick.trial.values[1])
    assert run.data.tags["mlflow.parentRunId"] == client.search_runs(
        [run.info.experiment_id], "tags.`fairops.role` = 'study'")[0].info.run_id
    files = {a.path for a in client.list_artifacts(first.run_id, "selection")}
    assert files == {"selection/model_card.json", "selection/pareto_front.png", "selection/selection_rule.json"}
    local = mlflow.artifacts.download_artifacts(run_id=first.run_id, artifact_path="selection")
    card = json.loads(open(f"{local}/model_card.json").read())
    assert card["trial"]["number"] == pick.trial.number and card["selection"]["refit"] is True
    assert card["selection"]["kind"] == "fairband" and card["selection"]["alpha_rule"] == 0.5
    assert card["selection"]["alpha"] == 0.5 and card["selection"]["description"] == rule_text
    assert card["most_accurate_fit"] == {"trial": accurate.number, "accuracy": accurate.values[0],
                                         "fairness": accurate.values[1]}
    assert json.loads(open(f"{local}/selection_rule.json").read()) == {
        "kind": "fairband", "description": rule_text, "alpha_rule": 0.5, "alpha": 0.5, "trial": pick.trial.number,
        "n_fits": 6}
    assert card["model"] == {"name": "fair-credit", "version": "1", "alias": "champion",
                             "flavor": "SCAFFTreeClassifier"}
    assert card["notes"] == {"owner": "risk team"}
    front = card["pareto_front"]
    assert all(not (o["accuracy"] >= p["accuracy"] and o["fairness"] > p["fairness"]) for p in front for o in front)
    assert open(f"{local}/pareto_front.png", "rb").read(8) == b"\x89PNG\r\n\x1a\n"

    second = register_best(study, "fair-credit", rule="fairness>=0",
                           refit=Refit(refit, pip_requirements=["fairops"], input_example=X.head(3)),
                           details=VersionDetails(description="by the risk team's constraint"))
    assert (second.version, second.alias, second.kept_version) == ("2", "challenger", "1")  # the champion stays
    assert str(client.get_model_version_by_alias("fair-credit", "champion").version) == "1"
    assert str(client.get_model_version_by_alias("fair-credit", "challenger").version) == "2"
    version = client.get_model_version("fair-credit", "2")
    assert version.tags["selection_rule"] == "constraint: max accuracy s.t. fairness >= 0.0"
    assert version.tags["selection_kind"] == "constraint" and "selection_alpha" not in version.tags
    assert version.description == "by the risk team's constraint"


def test_a_selection_already_made_is_registered_as_it_was_made(store, study, data):
    X, y, s = data
    made = select_best(study, alpha="auto")
    chosen = register_best(study, "fair-auto", rule=made,
                           refit=Refit(lambda params, trial: _fit(params, X, y, s), input_example=X.head(3),
                                       pip_requirements=["fairops"]))
    assert chosen.pick is made
    tags = MlflowClient(store[0]).get_model_version("fair-auto", chosen.version).tags
    assert tags["alpha_rule"] == "auto" and float(tags["selection_alpha"]) == pytest.approx(made.alpha)
    assert "alpha rule auto (0.5*(mean fairness - mean accuracy) + 0.5 over all fits)" in tags["selection_rule"]
    by_hand = register_best(study, "fair-hand", rule={"trial": 1},
                            refit=Refit(lambda params, trial: _fit(params, X, y, s), input_example=X.head(3),
                                        pip_requirements=["fairops"]))
    tags = MlflowClient(store[0]).get_model_version("fair-hand", by_hand.version).tags
    assert tags["selection_rule"] == "trial 1 chosen by hand" and tags["selection_kind"] == "by hand"


def test_register_the_model_logged_with_the_trial(store, study, data):
    X = data[0]
    chosen = register_best(study, "from-trial", rule={"trial": 2})
    native = scaff_flavor.load_model(chosen.alias_uri)
    run = MlflowClient(store[0]).search_runs(
        [MlflowClient(store[0]).get_experiment_by_name("registry").experiment_id],
        "tags.`fairops.trial_number` = '2' and tags.`fairops.role` = 'trial'")[0]
    logged = MlflowClient(store[0]).search_logged_models([run.info.experiment_id],
                                                          filter_string=f"source_run_id = '{run.info.run_id}'")
    np.testing.assert_array_equal(native.predict_proba(X),
                                  scaff_flavor.load_model(logged[0].model_uri).predict_proba(X))


@pytest.mark.parametrize("make, name", [
    (lambda: LogisticRegression(), "sklearn"),
    (lambda: lightgbm.LGBMClassifier(n_estimators=5, verbose=-1), "lightgbm"),
])
def test_other_classifiers_go_through_the_fairops_classifier_flavor(store, study, data, make, name):
    X, y, _ = data
    model = make().fit(X, y)
    chosen = register_best(study, f"model-{name}",
                           refit=Refit(lambda params, trial: model, input_example=X.head(2),
                                       pip_requirements=["fairops"]),
                           placement=Placement(alias="candidate"))
    loaded = mlflow.pyfunc.load_model(chosen.alias_uri)
    assert loaded.metadata.flavors["python_function"]["loader_module"] == "fairops.mlflow.classifier"
    assert loaded.metadata.get_output_schema().to_dict() == [{"type": "long", "required": True}]  # a class label
    answer = loaded.predict(X.head(7), params={"answer": "scores"})
    np.testing.assert_allclose(answer["probability"], model.predict_proba(X.head(7))[:, 1])


def test_register_best_refusals(store, data):
    single = optuna.create_study()
    single.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=2)
    with pytest.raises(ValueError, match="two objectives"):
        register_best(single, "x")
    plain = optuna.create_study(directions=["maximize"] * 2, study_name="plain")
    plain.optimize(lambda t: (t.suggest_float("x", 0, 1), 0.5), n_trials=2)
    with pytest.raises(ValueError, match="alpha is required"):
        register_best(plain, "x")
    with pytest.raises(ValueError, match="alias"):
        register_best(plain, "x", placement=Placement(alias="v3"))
    with pytest.raises(ValueError, match="has no logged model"):
        register_best(plain, "x", alpha=0.5, session=TrackingSession(store[0], "plain"))
