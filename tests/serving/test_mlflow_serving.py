"""`mlflow models serve` of registered fairops models (models:/<name>@champion) on loopback."""

import os

import mlflow
import numpy as np
import optuna
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from fairops.fairlof import FairLOF
from fairops.fairlof._features import FeatureEncoder
from fairops.mlflow import fairlof as fairlof_flavor
from fairops.registry import Refit
from fairops.registry._registration import register_best
from fairops.scaff import SCAFFClassifier
from fairops.tracking import TrackingSession
from tests.mlflow_stores import empty_store_uri
from tests.services import BIN, free_port, post_frame as post, start, stop, wait_ready

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("serving")
    uri = empty_store_uri(folder / "mlflow.db")
    mlflow.set_tracking_uri(uri)
    client = MlflowClient(uri)
    client.create_experiment("serving", str(folder / "artifacts"))
    rng = np.random.default_rng(5)
    n = 400
    X = pd.DataFrame({"income": rng.normal(size=n), "tenure": rng.normal(size=n)})
    sex = rng.choice(["f", "m"], n)
    y = ((X["income"] + 0.6 * (sex == "m") + rng.normal(scale=0.5, size=n)) > 0.3).astype(int)

    study = optuna.create_study(directions=["maximize"] * 2, study_name="serving")
    for theta, values in [(0.1, [0.8, 0.6]), (0.5, [0.75, 0.85]), (0.9, [0.6, 0.95])]:
        study.add_trial(optuna.trial.create_trial(
            params={"theta": theta}, values=values,
            distributions={"theta": optuna.distributions.FloatDistribution(0, 1)}))
    refit = lambda params, trial: SCAFFClassifier(n_estimators=10, theta=params["theta"]).fit(  # noqa: E731
        X, y, sensitive_features=sex)
    best = register_best(study, "scaff-serving", rule="fairness>=0.8",
                         refit=Refit(refit, input_example=X.head(3), pip_requirements=["fairops"]),
                         session=TrackingSession(uri))
    # FairLOF is fitted on encoded features (one-hot + standardised); the served model takes raw rows.
    rows = X.assign(income=(X["income"] * 1000 + 30000).round(2), contract=rng.choice(["fixed", "temporary"], n),
                    sex=sex)
    encoder = FeatureEncoder(categorical="onehot", sensitive=["sex"]).fit(rows)
    detector = FairLOF(n_neighbors=6, correction_strength=0.4, novelty=True).fit(
        encoder.transform(rows).to_numpy(), sensitive_features=encoder.sensitive_frame(rows))
    with mlflow.start_run(experiment_id=client.get_experiment_by_name("serving").experiment_id):
        info = fairlof_flavor.log_model(detector, name="lof", input_example=rows.head(3), preprocessing=encoder,
                                        pip_requirements=["fairops"], registered_model_name="lof-serving")
    client.set_registered_model_alias("lof-serving", "champion", str(info.registered_model_version))

    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "MLFLOW_TRACKING_URI": uri}
    processes, urls = [], {}
    try:
        for name in ("scaff-serving", "lof-serving"):
            port = free_port()
            log_path = folder / f"{name}.log"
            command = [str(BIN / "mlflow"), "models", "serve", "-m", f"models:/{name}@champion",
                       "--env-manager", "local", "-p", str(port), "-h", "127.0.0.1"]
            process = start(command, env, open(log_path, "w"))
            processes.append((process, log_path))
            urls[name] = f"http://127.0.0.1:{port}"
        for (process, log_path), url in zip(processes, urls.values()):
            wait_ready(f"{url}/ping", process, log_path)
        yield {"urls": urls, "X": X, "sex": sex, "rows": rows, "best": best, "detector": detector, "uri": uri}
    finally:
        for process, _ in processes:
            stop(process)
        mlflow.set_tracking_uri(None)


def test_served_scaff_matches_in_process(served):
    X = served["X"].iloc[:25]
    status, answer = post(f"{served['urls']['scaff-serving']}/invocations", X)
    assert status == 200
    in_process = mlflow.pyfunc.load_model(served["best"].alias_uri).predict(X)  # labels, as MLflow's flavors answer
    np.testing.assert_array_equal(np.asarray(answer["predictions"]), in_process)
    status, answer = post(f"{served['urls']['scaff-serving']}/invocations", X, params={"answer": "scores"})
    scores = mlflow.pyfunc.load_model(served["best"].alias_uri).predict(X, params={"answer": "scores"})
    np.testing.assert_allclose(np.asarray(answer["predictions"], dtype=float), scores, rtol=1e-12, atol=1e-12)
    assert served["best"].pick.trial.params["theta"] == 0.5  # best accuracy with fairness >= 0.8


def test_served_fairlof_takes_raw_rows(served):
    rows = served["rows"].iloc[:30].copy()
    rows["income"] += 250.0
    rows.loc[rows.index[:3], "income"] = [1e6, 2.5e5, 3.0]  # far-out rows
    status, answer = post(f"{served['urls']['lof-serving']}/invocations", rows)
    assert status == 200
    got = pd.DataFrame(answer["predictions"])
    # oracle: the raw rows encoded by hand with the fitted rows' categories, means and scales
    fitted = served["rows"]
    def encode(frame):
        return pd.concat([frame[["income", "tenure"]], pd.get_dummies(frame["contract"], prefix="contract",
                                                                        prefix_sep="=", dtype=float)], axis=1)
    base = encode(fitted)
    by_hand = ((encode(rows).reindex(columns=base.columns, fill_value=0.0) - base.mean()) / base.std(ddof=0))
    detector = served["detector"]
    scores = detector.score_samples(by_hand.to_numpy(), sensitive_features={"sex": rows["sex"]})
    np.testing.assert_allclose(got["outlier_score"], -scores, rtol=1e-12)
    np.testing.assert_array_equal(got["outlier"], (detector.predict(
        by_hand.to_numpy(), sensitive_features={"sex": rows["sex"]}) == -1).astype(int))
    assert got["outlier"].iloc[:3].tolist() == [1, 1, 1]
    expected = mlflow.pyfunc.load_model("models:/lof-serving@champion").predict(rows)
    np.testing.assert_allclose(got["outlier_score"], expected["outlier_score"], rtol=1e-12)


def test_served_fairlof_refuses_rows_without_the_sensitive_column(served):
    status, answer = post(f"{served['urls']['lof-serving']}/invocations", served["rows"].iloc[:3].drop(columns="sex"))
    assert status == 400 and "sex" in answer["message"]


def test_served_fairlof_names_an_unseen_category(served):
    rows = served["rows"].iloc[:2].assign(contract="permanent")
    status, answer = post(f"{served['urls']['lof-serving']}/invocations", rows)
    assert status == 400 and "'contract' holds value(s) ['permanent'] unseen at fit time" in answer["message"]
