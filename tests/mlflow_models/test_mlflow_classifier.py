"""The classifier flavor: every family fits the fixed trust list; signature, schema and refusals as served."""

import json

import mlflow
import numpy as np
import optuna
import pandas as pd
import pytest
import skops.io
import yaml
from mlflow.pyfunc.scoring_server import invocations
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.tree import DecisionTreeClassifier

from fairops.datasets import load_adult
from fairops.mlflow import classifier, loader
from fairops.mlflow.sealing import ModelFilesError
from fairops.models import InputSchema, RestoreCategories
from fairops.models._families import BUILT_IN, FAMILIES as FAMILY_TABLE, SHARED_TRUSTED_TYPES
from fairops.tuning._search_space import fit_model, make_model
from tests.mlflow_stores import empty_store_uri

optuna.logging.set_verbosity(optuna.logging.WARNING)
FAMILIES = [family.name for family in BUILT_IN]


@pytest.fixture(scope="module")
def adult():
    data = load_adult()
    return data.X.iloc[:1200].reset_index(drop=True), data.y[:1200]


def _served(family, adult, seed=0):
    X, y = adult
    trial = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed)).ask()
    model = make_model(trial, profile="fast", families=[family], X_example=X, sensitive_columns=["sex"],
                       task=load_adult().task)
    model = fit_model(model, X, y, X[["sex"]])
    return Pipeline([("restore_categories", RestoreCategories().fit(X)), ("model", model)])


def _as_text(frame):
    return frame.astype({c: object for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)})


@pytest.fixture(scope="module")
def saved(adult, tmp_path_factory):
    """A LightGBM champion as fairops tune builds it, saved with the schema of its training rows."""
    X, _ = adult
    served = _served("lightgbm", adult)
    path = tmp_path_factory.mktemp("classifier") / "model"
    classifier.save_model(served, path, input_schema=InputSchema.for_model(served, X),
                          input_example=_as_text(X.head(3)), pip_requirements=["fairops"])
    return served, path


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_fits_the_fixed_trust_list(adult, family):
    for seed in range(3):  # different hyperparameters can hold different types (e.g. the MLP's optimiser)
        blob = skops.io.dumps(_served(family, adult, seed))
        assert classifier.untrusted_types(blob) == []
        own = {*SHARED_TRUSTED_TYPES, *FAMILY_TABLE[family].trusted_types}
        assert set(skops.io.get_untrusted_types(data=blob)) <= own, "the family's table entry lacks a type"


def test_the_trust_list_names_no_code_runner():
    assert not [name for name in classifier.TRUSTED_TYPES
                if name.split(".")[0] in {"builtins", "os", "posix", "subprocess", "sys", "importlib", "runpy"}]


def test_served_answer_signature_and_schema(saved, adult):
    served, path = saved
    X, _ = adult
    model = mlflow.pyfunc.load_model(str(path))
    rows = _as_text(X.iloc[100:130])
    assert rows["age"].dtype == np.int64  # whole numbers as pandas holds them pass MLflow's check in process
    answer = model.predict(rows, params={"answer": "scores"})
    assert list(answer.columns) == ["probability"]
    np.testing.assert_array_equal(model.predict(rows), served.predict(X.iloc[100:130]))  # by default: labels
    np.testing.assert_allclose(answer["probability"], served.predict_proba(X.iloc[100:130])[:, 1], rtol=0, atol=0)
    signature = model.metadata.signature
    assert signature.outputs.to_dict() == [{"type": "long", "required": True}]  # the class label
    assert [spec.name for spec in signature.params.params] == ["answer"]
    inputs = {c["name"]: c for c in signature.inputs.to_dict()}
    # optional to MLflow: the model's schema requires them and names a missing one in one line
    assert list(inputs) == list(X.columns) and not any(c["required"] for c in inputs.values())
    assert inputs["sex"]["type"] == "any" and inputs["age"]["type"] == "any"
    # the training frame itself, with its pandas categories, scores in process as well as text rows do
    np.testing.assert_allclose(model.predict(X.iloc[100:130], params={"answer": "scores"})["probability"],
                               answer["probability"], rtol=0, atol=0)
    # a loader's model_config chooses the answer for every call, as MLflow passes a declared key
    configured = mlflow.pyfunc.load_model(str(path), model_config={"answer": "scores"})
    np.testing.assert_array_equal(configured.predict(rows)["probability"], answer["probability"])
    mlmodel = yaml.safe_load((path / "MLmodel").read_text())
    assert mlmodel["flavors"]["python_function"]["config"] == {"answer": "label"}
    assert mlmodel["metadata"]["fairops_input_schema"] == InputSchema.for_model(served, X).to_dict()
    assert mlmodel["flavors"]["python_function"]["loader_module"] == "fairops.mlflow.classifier"
    assert "skops_trusted_types" not in mlmodel["flavors"]["fairops_classifier"]
    native = classifier.load_model(str(path))
    assert isinstance(native, Pipeline) and isinstance(loader.load_native(str(path)), Pipeline)


def _row(X, **changes):
    row = _as_text(X.iloc[[0]])
    for name, value in changes.items():
        row[name] = pd.Series([value], dtype=object)
    return row


@pytest.mark.parametrize("changes, reason", [
    ({"age": 40.5}, "column 'age' must hold whole numbers; row 0 has 40.5"),
    ({"sex": "Alien"}, "column 'sex' has the category 'Alien' in row 0, unseen in training (known: 'Female', 'Male')"),
])
def test_rows_that_break_the_schema_are_refused_in_process_with_one_line(saved, adult, changes, reason):
    model = mlflow.pyfunc.load_model(str(saved[1]))
    with pytest.raises(ValueError) as error:
        model.predict(_row(adult[0], **changes))
    assert error.value.message == reason and error.value.get_http_status_code() == 400


def _serve_in_process(model, rows):
    """MLflow's scoring code (what `mlflow models serve` runs per request), without the HTTP server."""
    body = json.dumps({"dataframe_split": json.loads(rows.to_json(orient="split", index=False))})
    try:
        answer = invocations(body, "application/json", model, model.metadata.get_input_schema())
        return answer.status, json.loads(answer.response)
    except mlflow.exceptions.MlflowException as error:
        return error.get_http_status_code(), json.loads(error.serialize_as_json())


def test_mlflow_scoring_code_answers_400_with_the_reason_alone(saved, adult):
    model = mlflow.pyfunc.load_model(str(saved[1]))
    X = adult[0]
    status, answer = _serve_in_process(model, _as_text(X.iloc[:3]))
    assert status == 200 and len(answer["predictions"]) == 3
    cases = {
        # a long column would be cast to 40 by MLflow's parser before the model sees it; declared any it is not
        "whole numbers": _row(X, age=40.5),
        "unseen in training": _row(X, sex="Alien"),
        "input has no rows": _as_text(X.iloc[:0]),
        "input lacks the required column(s) ['age']": _as_text(X.iloc[:3]).drop(columns="age"),
    }
    for expected, rows in cases.items():
        status, answer = _serve_in_process(model, rows)
        assert status == 400, answer
        assert expected in answer["message"] and "\n" not in answer["message"]
        assert "stack_trace" not in answer and answer["error_code"] == "INVALID_PARAMETER_VALUE"


def test_missing_values_follow_the_model(adult, tmp_path):
    X, _ = adult
    for family, takes in (("lightgbm", True), ("logistic_regression", False)):
        served = _served(family, adult)
        path = tmp_path / family
        classifier.save_model(served, path, input_schema=InputSchema.for_model(served, X), pip_requirements=[])
        model = mlflow.pyfunc.load_model(str(path))
        status, answer = _serve_in_process(model, _row(X, age=None))
        if takes:
            assert status == 200 and answer["predictions"][0] in (0, 1)
        else:
            assert status == 400 and answer["message"] == \
                "column 'age' has a missing value in row 0; this model cannot take missing values"


class Halve(TransformerMixin, BaseEstimator):
    """A step of the user's own: skops can save it, fairops does not load it."""

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return X / 2


def test_a_model_holding_other_types_is_refused_at_save(adult, tmp_path):
    X, y = adult
    numbers = X.select_dtypes("number")
    odd = make_pipeline(Halve(), DecisionTreeClassifier(max_depth=2)).fit(numbers, y)
    named = r"holds type\(s\) fairops does not load \['tests\.mlflow_models\.test_mlflow_classifier\.Halve'\]"
    with pytest.raises(TypeError, match=named + r" \(in step 'halve'\)"):
        classifier.save_model(odd, tmp_path / "odd", input_example=numbers.head(2), pip_requirements=[])
    assert not (tmp_path / "odd").exists()


def test_a_step_that_cannot_be_saved_is_named_at_the_first_trial_keeping_a_model(adult):
    from sklearn.compose import ColumnTransformer

    from fairops.tracking import keep_model

    X, y = adult
    numbers = X.select_dtypes("number")
    study = optuna.create_study(directions=["maximize"] * 2, study_name="unsavable")

    def objective(trial):
        encode = ColumnTransformer([("halved", Halve(), list(numbers.columns))])
        keep_model(trial, make_pipeline(encode, DecisionTreeClassifier(max_depth=trial.suggest_int("depth", 1, 3)))
                   .fit(numbers, y))
        return 0.5, 0.5

    with pytest.warns(RuntimeWarning) as caught:
        study.optimize(objective, n_trials=3)
    messages = [str(w.message) for w in caught if "cannot be logged or registered" in str(w.message)]
    assert len(messages) == 1 and messages[0].startswith("trial 0 keeps a model")  # once, at the first trial
    assert "(in step 'columntransformer' > part 'halved')" in messages[0] and "Halve" in messages[0]


def test_only_models_fairops_wrote_load_through_its_loader(tmp_path, adult):
    X, y = adult
    numbers = X.select_dtypes("number")
    mlflow.sklearn.save_model(LogisticRegression().fit(numbers, y), tmp_path / "plain", serialization_format="skops",
                              pip_requirements=[])
    with pytest.raises(ModelFilesError, match="has no fairops_manifest.json"):
        loader.load_model(str(tmp_path / "plain"))


@pytest.mark.slow  # mlflow.models.evaluate: about 12 s
def test_the_fairops_evaluator_scores_a_classifier_flavor_model(saved, adult, tmp_path):
    served, path = saved
    X, y = adult
    frame = _as_text(X.iloc[:600]).assign(y=y[:600])
    mlflow.set_tracking_uri(empty_store_uri(tmp_path / "mlflow.db"))
    try:
        experiment = mlflow.create_experiment("evaluated", artifact_location=str(tmp_path / "artifacts"))
        with mlflow.start_run(experiment_id=experiment):
            result = mlflow.models.evaluate(str(path), frame, targets="y", model_type="classifier",
                                            evaluators="fairops",
                                            evaluator_config={"sensitive_features": ["sex"], "target": {"tpr": 0.5}})
    finally:
        mlflow.set_tracking_uri(None)
    from fairops.metrics import auc_s

    scores = served.predict_proba(X.iloc[:600])[:, 1]
    assert result.metrics["fairops_auc_s_sex"] == pytest.approx(auc_s(scores, X["sex"].iloc[:600]))
