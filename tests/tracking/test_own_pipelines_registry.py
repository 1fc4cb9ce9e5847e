"""scikit-learn pipelines one fits oneself register, load, serve and pass the gate like tuned models.

Three Pipelines of one-hot categories and scaled numbers on the bundled COMPAS rows, ending in
HistGradientBoosting, in fairops' SCAFF forest (fitted with scikit-learn's metadata routing, the way
docs/scaff.md hands it the sensitive column) and in LightGBM. The quick tests are the two failures
these once met at save (HistGradientBoosting's trees were not trusted: a TypeError; SCAFF's routing
requests refer back to their estimator: a RecursionError in skops). The slow ones register each pipeline
to a real SQLite store and registry with register_best, load it back, serve it with ``fairops serve`` and
gate it with ``fairops promote``.
"""

import contextlib
import io
import os
import sys

import mlflow
import numpy as np
import optuna
import pandas as pd
import pytest
import sklearn
from lightgbm import LGBMClassifier
from mlflow.tracking import MlflowClient
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from threadpoolctl import threadpool_limits

from fairops.cli import main
from fairops.datasets import load_compas, train_validation_test_split
from fairops.mlflow import classifier
from fairops.models import InputSchema
from fairops.registry import Placement, RecordColumns, Refit, VersionDetails, log_rows
from fairops.registry._registration import register_best
from fairops.registry._version_record import validation_tags
from fairops.scaff import SCAFFClassifier
from fairops.tracking import TrackingSession
from tests.mlflow_stores import empty_store_uri
from tests.services import free_port, post_frame, start, stop, wait_ready

FINAL_STEPS = ("hist_gradient_boosting", "scaff", "lightgbm")


@pytest.fixture(scope="module")
def compas():
    """COMPAS split as ``fairops tune --seed 0`` splits it, so ``fairops promote --dataset compas`` gates on
    rows no model here was fitted or thresholded on."""
    data = load_compas()
    parts = train_validation_test_split(data.y, data.sensitive[list(data.task.sensitive)], seed=0)
    return {name: (data.X.iloc[rows], data.y[rows], data.sensitive.iloc[rows])
            for name, rows in (("train", parts.train), ("validation", parts.validation), ("test", parts.test))
            } | {"task": data.task}


def _encode(X):
    categories = X.select_dtypes("category").columns.tolist()
    return ColumnTransformer([("categories", OneHotEncoder(handle_unknown="ignore"), categories),
                              ("numbers", StandardScaler(), [c for c in X.columns if c not in categories])])


def fit_pipeline(final_step: str, compas):
    """The Pipeline ending in ``final_step``, fitted on the training rows."""
    with threadpool_limits(1):  # OpenMP threads of the boosting fits fight over a busy machine's cores
        return _fit(final_step, compas)


def _fit(final_step: str, compas):
    X, y, sensitive = compas["train"]
    if final_step == "scaff":
        with sklearn.config_context(enable_metadata_routing=True):
            scaff = SCAFFClassifier(n_estimators=20, max_depth=4, random_state=0).set_fit_request(
                sensitive_features=True)
            return Pipeline([("encode", _encode(X)), ("model", scaff)]).fit(X, y, sensitive_features=sensitive["race"])
    model = HistGradientBoostingClassifier(max_iter=50, random_state=0) if final_step == "hist_gradient_boosting" \
        else LGBMClassifier(n_estimators=50, num_leaves=15, n_jobs=1, random_state=0, verbose=-1)
    return Pipeline([("encode", _encode(X)), ("model", model)]).fit(X, y)


def test_a_hist_gradient_boosting_pipeline_saves_and_loads(compas, tmp_path):
    """It raised: TypeError cannot save a Pipeline: it holds type(s) fairops does not load [...TreePredictor]."""
    model = fit_pipeline("hist_gradient_boosting", compas)
    X = compas["test"][0]
    classifier.save_model(model, tmp_path / "m", input_example=X.head(3), pip_requirements=[])
    np.testing.assert_array_equal(classifier.load_model(str(tmp_path / "m")).predict_proba(X), model.predict_proba(X))


def test_a_scaff_pipeline_fitted_with_routing_saves_and_keeps_its_requests(compas, tmp_path):
    """It raised RecursionError: the requests set_fit_request records name their estimator as their owner."""
    model = fit_pipeline("scaff", compas)
    X = compas["test"][0]
    classifier.save_model(model, tmp_path / "m", input_example=X.head(3), pip_requirements=[])
    loaded = classifier.load_model(str(tmp_path / "m"))
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    assert "_metadata_request" in vars(model[-1]) and "_metadata_request" not in vars(loaded[-1])


def test_any_other_reference_cycle_is_refused_with_its_path(compas, tmp_path):
    X, y, _ = compas["train"]
    model = Pipeline([("encode", _encode(X)), ("model", LogisticRegression(max_iter=500))]).fit(X, y)
    model[-1].pipeline_ = model
    with pytest.raises(TypeError, match=r"cannot save a Pipeline: Pipeline\.steps\[1\]\[1\]\.pipeline_ leads back"):
        classifier.save_model(model, tmp_path / "m", input_example=X.head(3), pip_requirements=[])


@pytest.fixture(scope="module")
def registered(compas, tmp_path_factory):
    """Each pipeline registered by register_best with the tags fairops tune sets, as @challenger (no champion
    yet): ``{final step: (registered name, fitted pipeline)}`` and the store's URI."""
    uri = empty_store_uri(tmp_path_factory.mktemp("own-pipelines") / "mlflow.db")
    X_val, y_val, s_val = compas["validation"]
    models = {}
    for final_step in FINAL_STEPS:
        model, name = fit_pipeline(final_step, compas), f"own-{final_step.replace('_', '-')}"
        tags = validation_tags(compas["task"], y_val, model.predict_proba(X_val)[:, 1], s_val)
        study = optuna.create_study(directions=["maximize", "maximize"], study_name=name)
        study.add_trial(optuna.trial.create_trial(values=[0.8, 0.9], params={}, distributions={}))
        version = register_best(study, name, rule={"trial": 0},
                                refit=Refit(lambda params, trial, fitted=model: fitted, pip_requirements=["fairops"],
                                            log_options={"input_schema": InputSchema.for_model(model,
                                                                                               compas["train"][0])}),
                                placement=Placement(alias="challenger", if_taken=None),
                                details=VersionDetails(tags=tags), session=TrackingSession(uri, name)).version
        # the rows it was trained and validated on, which the gate leaves out
        columns = RecordColumns(inputs=tuple(compas["train"][0].columns), sensitive=tuple(compas["task"].sensitive),
                                target="two_year_recid")
        seen = [pd.concat([compas[part][index] for part in ("train", "validation")]) for index in (0, 2)]
        labels = np.concatenate([compas[part][1] for part in ("train", "validation")])
        log_rows(MlflowClient(uri), name, version, columns=columns, tracking_uri=uri, held_out=[],
                 seen=columns.hashes(seen[0], labels, seen[1]))
        models[final_step] = (name, model)
    return {"uri": uri, "models": models}


def _as_text(frame):
    return frame.astype({c: object for c in frame.columns if str(frame[c].dtype) == "category"})


@pytest.mark.slow  # about 10 s: three pipelines logged and registered first
@pytest.mark.parametrize("final_step", FINAL_STEPS)
def test_registered_it_loads_back_with_the_same_probabilities(registered, compas, final_step):
    name, model = registered["models"][final_step]
    X = compas["test"][0]
    mlflow.set_tracking_uri(registered["uri"])
    try:
        served = mlflow.pyfunc.load_model(f"models:/{name}@challenger")
        native = classifier.load_model(f"models:/{name}/1")
    finally:
        mlflow.set_tracking_uri(None)
    expected = model.predict_proba(X)
    np.testing.assert_array_equal(native.predict_proba(X), expected)
    np.testing.assert_allclose(served.predict(X, params={"answer": "scores"})["probability"].to_numpy(), expected[:, 1],
                               rtol=0, atol=1e-12)


@pytest.mark.slow  # about 15 s: three model servers started side by side
def test_fairops_serve_answers_each_with_the_same_scores(registered, compas, tmp_path):
    rows = compas["test"][0].head(25)
    servers = {}
    try:
        for final_step, (name, _) in registered["models"].items():
            port, log = free_port(), tmp_path / f"{final_step}.log"
            process = start([sys.executable, "-m", "fairops.cli", "serve", f"{name}/1", "--tracking-uri",
                             registered["uri"], "--port", str(port)], dict(os.environ), open(log, "w"))
            servers[final_step] = (process, port, log)
        for final_step, (process, port, log) in servers.items():
            wait_ready(f"http://127.0.0.1:{port}/ping", process, log)
            status, answer = post_frame(f"http://127.0.0.1:{port}/invocations", _as_text(rows))
            assert status == 200, answer
            expected = registered["models"][final_step][1].predict_proba(rows)[:, 1]
            served = [prediction["probability"] for prediction in answer["predictions"]]
            np.testing.assert_allclose(served, expected, rtol=0, atol=1e-12, err_msg=final_step)
    finally:
        for process, _, _ in servers.values():
            stop(process)


@pytest.mark.slow  # the registered pipelines first; then about 1 s a pipeline
@pytest.mark.parametrize("final_step", FINAL_STEPS)
def test_fairops_promote_gates_it_to_champion(registered, final_step):
    name = registered["models"][final_step][0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["promote", name, "--dataset", "compas", "--tracking-uri", registered["uri"],
                     "--min-fairness", "0", "--max-accuracy-drop", "1"])
    assert code == 0, out.getvalue()
    assert f"passed: {name}@champion moved to version 1 (was no champion)" in out.getvalue()
    assert str(MlflowClient(registered["uri"]).get_model_version_by_alias(name, "champion").version) == "1"
