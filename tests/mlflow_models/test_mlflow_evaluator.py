"""The ``fairops`` MLflow evaluator, found through its ``mlflow.model_evaluator`` entry point."""

import json
from importlib.metadata import entry_points

import mlflow
import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from fairops.metrics import auc_s, binarize
from tests.mlflow_stores import empty_store_uri


@pytest.fixture(scope="module")
def tracking(tmp_path_factory):
    folder = tmp_path_factory.mktemp("evaluator")
    mlflow.set_tracking_uri(empty_store_uri(folder / "mlflow.db"))
    experiment = mlflow.create_experiment("evaluator", artifact_location=str(folder / "artifacts"))
    mlflow.set_experiment(experiment_id=experiment)
    yield folder
    mlflow.set_tracking_uri(None)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    n = 600
    sex = rng.choice(["f", "m"], n)
    race = rng.choice(["a", "b", "c"], n)
    x1 = rng.normal(size=n) + 0.8 * (sex == "m")
    x2 = rng.normal(size=n)
    y = ((x1 + 0.5 * x2 + rng.normal(scale=0.7, size=n)) > 0.6).astype(int)
    # object dtype: MLflow 3.17's shap evaluator (part of "default") fails on pandas 3's string dtype.
    frame = pd.DataFrame({"x1": x1, "x2": x2, "y": y})
    frame["sex"], frame["race"] = pd.Series(sex, dtype=object), pd.Series(race, dtype=object)
    return frame


def _log_sklearn(model, example, name="model"):
    # MLflow's own flavor: its pyfunc answers labels, which the default classifier metrics expect
    # (fairops' classifier flavor answers the probability of the positive class).
    with mlflow.start_run():
        info = mlflow.sklearn.log_model(model, name=name, input_example=example, pip_requirements=["scikit-learn"])
    return info.model_uri


@pytest.fixture(scope="module")
def model_uri(tracking, data):
    # The model takes the sensitive columns as input and ignores them, so the default evaluator
    # and the fairops evaluator both see the whole frame.
    model = make_pipeline(make_column_transformer(("passthrough", ["x1", "x2"])), LogisticRegression())
    model.fit(data.drop(columns="y"), data["y"])
    return _log_sklearn(model, data.drop(columns="y").head(3)), model


def test_plugin_is_installed_through_the_entry_point():
    found = [ep for ep in entry_points(group="mlflow.model_evaluator") if ep.name == "fairops"]
    assert found, ('pyproject.toml must declare [project.entry-points."mlflow.model_evaluator"] '
                   'fairops = "fairops_mlflow_plugins.evaluator:FairnessEvaluator" (then reinstall)')
    from mlflow.models.evaluation.evaluator_registry import _model_evaluation_registry

    assert _model_evaluation_registry.is_registered("fairops")
    assert found[0].load().__name__ == "FairnessEvaluator"


def _oracle_ratio(y, y_pred, groups, rate):
    values = []
    for group in np.unique(groups):
        rows = groups == group
        if rate == "tpr":
            values.append(y_pred[rows & (y == 1)].mean())
        elif rate == "fpr":
            values.append(y_pred[rows & (y == 0)].mean())
        else:
            values.append(y_pred[rows].mean())
    return min(values) / max(values)


def test_default_and_fairops_in_one_call(tracking, data, model_uri):
    uri, model = model_uri
    config = {"fairops": {"sensitive_features": ["sex", "race"], "target": {"fpr": 0.1}}}
    with mlflow.start_run() as run:
        result = mlflow.models.evaluate(uri, data, targets="y", model_type="classifier",
                                        evaluators=["default", "fairops"], evaluator_config=config)
    metrics = result.metrics
    assert "accuracy_score" in metrics and "roc_auc" in metrics  # the default evaluator ran too
    score = model.predict_proba(data.drop(columns="y"))[:, 1]
    y = data["y"].to_numpy()
    y_pred = binarize(score, y, fpr=0.1)
    assert y_pred[y == 0].sum() == int(0.1 * (y == 0).sum())
    for column in ("sex", "race"):
        groups = data[column].to_numpy()
        for rate in ("tpr", "fpr", "ppr"):
            assert metrics[f"fairops_{rate}_ratio_{column}"] == pytest.approx(_oracle_ratio(y, y_pred, groups, rate))
    assert metrics["fairops_tpr_ratio"] == min(metrics["fairops_tpr_ratio_sex"], metrics["fairops_tpr_ratio_race"])
    # intervals from the group counts, the 95% level split over the two columns
    from fairops.metrics import group_rates
    from fairops.metrics._intervals import rate_counts, ratio_interval

    for column in ("sex", "race"):
        lower, upper = ratio_interval(rate_counts(group_rates(y, y_pred, data[column]), "fpr"), level=0.975,
                                      method="exact")
        assert (metrics[f"fairops_fpr_ratio_lower_{column}"], metrics[f"fairops_fpr_ratio_upper_{column}"]) == (
            pytest.approx(lower), pytest.approx(upper))
        assert lower <= metrics[f"fairops_fpr_ratio_{column}"] <= upper
    assert metrics["fairops_auc_s_sex"] == pytest.approx(auc_s(score, data["sex"]))
    from sklearn.metrics import roc_auc_score

    assert metrics["fairops_auc_y"] == pytest.approx(roc_auc_score(y, score))
    logged = MlflowClient().get_run(run.info.run_id)
    assert logged.data.metrics["fairops_fpr_ratio_race"] == pytest.approx(metrics["fairops_fpr_ratio_race"])
    files = {a.path for a in MlflowClient().list_artifacts(run.info.run_id)}
    assert {"fairops_group_rates.csv", "fairops_group_roc.png"} <= files
    table = pd.read_csv(mlflow.artifacts.download_artifacts(run_id=run.info.run_id,
                                                           artifact_path="fairops_group_rates.csv"))
    assert len(table) == 5 and set(table["attribute"]) == {"sex", "race"}
    female = table[(table["attribute"] == "sex") & (table["group"] == "f")].iloc[0]
    rows = data["sex"].to_numpy() == "f"
    assert female["count"] == rows.sum() and female["tpr"] == pytest.approx(y_pred[rows & (y == 1)].mean())


def test_sensitive_values_given_outside_the_features(tracking, data):
    uri = _log_sklearn(LogisticRegression().fit(data[["x1", "x2"]], data["y"]), data[["x1", "x2"]].head(2), "plain")
    config = {"fairops": {"sensitive_features": {"sex": data["sex"].to_numpy()}}}
    with mlflow.start_run():
        result = mlflow.models.evaluate(uri, data, targets="y", model_type="classifier", feature_names=["x1", "x2"],
                                        evaluators=["default", "fairops"], evaluator_config=config)
    assert "roc_auc" in result.metrics and 0 <= result.metrics["fairops_tpr_ratio_sex"] <= 1


def test_intersectional_groups_are_a_named_option(tracking, data, model_uri):
    uri, model = model_uri
    config = {"fairops": {"sensitive_features": ["sex", "race"], "target": {"fpr": 0.1}, "groups": "intersectional"}}
    with mlflow.start_run():
        metrics = mlflow.models.evaluate(uri, data, targets="y", model_type="classifier", evaluators=["fairops"],
                                         evaluator_config=config).metrics
    score = model.predict_proba(data.drop(columns="y"))[:, 1]
    y = data["y"].to_numpy()
    y_pred = binarize(score, y, fpr=0.1)
    cells = (data["sex"] + " x " + data["race"]).to_numpy()
    oracle = _oracle_ratio(y, y_pred, cells, "fpr")
    assert metrics["fairops_fpr_ratio_sex_x_race"] == pytest.approx(oracle)
    assert metrics["fairops_fpr_ratio"] == pytest.approx(oracle)
    # an intersection's ratio is never above a single column's: its groups split those of each column
    assert oracle <= min(metrics["fairops_fpr_ratio_sex"], metrics["fairops_fpr_ratio_race"]) + 1e-12


def test_per_group_decision_meets_the_target_in_every_group(tracking, data, model_uri):
    from fairops.metrics import group_decisions

    uri, model = model_uri
    config = {"fairops": {"sensitive_features": ["sex"], "target": {"tpr": 0.5}, "decision": "per-group"}}
    with mlflow.start_run():
        metrics = mlflow.models.evaluate(uri, data, targets="y", model_type="classifier", evaluators=["fairops"],
                                         evaluator_config=config).metrics
    score = model.predict_proba(data.drop(columns="y"))[:, 1]
    y = data["y"].to_numpy()
    y_pred = group_decisions(score, y, {"sex": data["sex"].to_numpy()}, tpr=0.5)
    assert metrics["fairops_tpr_ratio"] == pytest.approx(_oracle_ratio(y, y_pred, data["sex"].to_numpy(), "tpr"))
    assert metrics["fairops_tpr_ratio"] > 0.95  # each group at TPR 0.5, up to one positive's rounding


def test_a_fixed_threshold_target_decides_at_or_above_it(tracking, data, model_uri):
    uri, model = model_uri
    config = {"fairops": {"sensitive_features": ["sex"], "target": {"threshold": 0.5}}}
    with mlflow.start_run():
        metrics = mlflow.models.evaluate(uri, data, targets="y", model_type="classifier", evaluators=["fairops"],
                                         evaluator_config=config).metrics
    y_pred = (model.predict_proba(data.drop(columns="y"))[:, 1] >= 0.5).astype(int)
    y = data["y"].to_numpy()
    assert metrics["fairops_precision"] == pytest.approx(y[y_pred == 1].mean())
    assert metrics["fairops_fpr_ratio"] == pytest.approx(_oracle_ratio(y, y_pred, data["sex"].to_numpy(), "fpr"))


def test_opts_in_only_when_configured(tracking, data, model_uri):
    with mlflow.start_run():
        result = mlflow.models.evaluate(model_uri[0], data, targets="y", model_type="classifier")
    assert "accuracy_score" in result.metrics
    assert not any(name.startswith("fairops_") for name in result.metrics)


@pytest.mark.parametrize(
    "config, message",
    [
        ({"sensitive_features": ["gender"]}, r"unknown column\(s\) \['gender'\]"),
        ({"sensitive_features": []}, "names no column"),
        ({"sensitive_features": "sex", "thresh": 1}, r"unknown fairops evaluator_config key\(s\) \['thresh'\]"),
        ({"sensitive_features": "sex", "decision": "each"}, r"decision must be one of \('single', 'per-group'\)"),
        ({"sensitive_features": "sex", "target": {"cutoff": 0.5}},
         r"evaluator_config\['target'\]: target key 'cutoff' is not one of \('tpr', 'fpr', 'top_k', 'threshold'\)"),
        ({"sensitive_features": "sex", "target": {"threshold": "0.5"}},
         r"evaluator_config\['target'\]: threshold must be a finite number, got '0.5'"),
        ({"sensitive_features": "sex", "target": {"tpr": "half"}}, r"tpr must be a number in \(0, 1\], got 'half'"),
        ({"sensitive_features": "sex", "target": {"top_k": 10.5}}, "top_k must be a non-negative integer, got 10.5"),
        ({"sensitive_features": "sex", "target": {"threshold": 0.5}, "decision": "per-group"},
         "per-group decisions need a target each group meets"),
        ({"sensitive_features": "sex", "groups": "pairs"}, r"groups'\] must be one of \('lowest', 'intersectional'\)"),
    ],
)
def test_config_errors(tracking, data, model_uri, config, message):
    with mlflow.start_run(), pytest.raises(ValueError, match=message):
        mlflow.models.evaluate(model_uri[0], data, targets="y", model_type="classifier",
                               evaluators="fairops", evaluator_config=config)


def test_non_binary_target(tracking, data, model_uri):
    frame = data.assign(y=np.arange(len(data)) % 3)
    with mlflow.start_run(), pytest.raises(ValueError, match="binary target"):
        mlflow.models.evaluate(model_uri[0], frame, targets="y", model_type="classifier",
                               evaluators="fairops", evaluator_config={"sensitive_features": "sex"})


def test_model_without_predict_proba(tracking, data):
    uri = _log_sklearn(LinearSVC().fit(data[["x1", "x2"]], data["y"]), data[["x1", "x2"]].head(2), "svc")
    with mlflow.start_run():
        with pytest.raises(ValueError, match="has no predict_proba"):
            mlflow.models.evaluate(uri, data, targets="y", model_type="classifier",
                                   evaluators="fairops", evaluator_config={"sensitive_features": "sex"})


@pytest.fixture(scope="module")
def compas(tracking):
    """COMPAS rows with the data set's category columns, a one-hot pipeline fitted on all of them, and that model
    logged twice: with MLflow's sklearn flavor (its pyfunc answers labels) and with fairops' classifier flavor
    (its pyfunc answers the probability of the positive class)."""
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from fairops.datasets import load_compas
    from fairops.mlflow.flavors import log_estimator

    data = load_compas()
    frame = data.X.assign(y=data.y)
    categories = data.X.select_dtypes("category").columns.tolist()
    encode = make_column_transformer((OneHotEncoder(handle_unknown="ignore"), categories),
                                     (StandardScaler(), [c for c in data.X.columns if c not in categories]))
    model = make_pipeline(encode, LogisticRegression(max_iter=1000)).fit(data.X, data.y)
    with mlflow.start_run() as run:
        fairops_uri = log_estimator(model, run_id=run.info.run_id, name="fairops_model", input_example=data.X.head(3),
                                    pip_requirements=[]).model_uri
    return frame, model, fairops_uri


def _as_objects(frame):
    return frame.astype({c: object for c in frame.select_dtypes("category").columns})


@pytest.mark.parametrize("dtype", ["category", "object"])
def test_beside_default_with_a_fairops_classifier_model(tracking, compas, dtype):
    # rows scored first are evaluated as data, in one call of both evaluators (a model's own call is in
    # test_default_evaluator.py)
    frame, model, fairops_uri = compas
    rows = frame.iloc[:600] if dtype == "category" else _as_objects(frame.iloc[:600])
    scored = rows.join(mlflow.pyfunc.load_model(fairops_uri).predict(rows.drop(columns="y"),
                                                                     params={"answer": "scores"}))
    scored["label"] = (scored["probability"] >= 0.5).astype(int)
    config = {"fairops": {"sensitive_features": ["sex", "race"], "target": {"fpr": 0.1}, "scores": "probability"}}
    if dtype == "category":  # MLflow 3.17's SHAP step (part of "default") fails on category columns
        config["default"] = {"log_model_explainability": False}
    with mlflow.start_run():
        metrics = mlflow.models.evaluate(data=scored, targets="y", predictions="label", model_type="classifier",
                                         evaluators=["default", "fairops"], evaluator_config=config).metrics
    y = rows["y"].to_numpy()
    assert metrics["accuracy_score"] == pytest.approx((scored["label"].to_numpy() == y).mean())  # the default ran
    y_pred = binarize(model.predict_proba(rows.drop(columns="y"))[:, 1], y, fpr=0.1)
    for column in ("sex", "race"):
        groups = rows[column].astype(str).to_numpy()
        assert metrics[f"fairops_fpr_ratio_{column}"] == pytest.approx(_oracle_ratio(y, y_pred, groups, "fpr"))


def test_scored_data_without_a_scores_column_is_refused_by_name(tracking, compas):
    frame = compas[0].iloc[:200].assign(label=1)
    for config, message in (({"sensitive_features": "race"}, r"needs a model .* or evaluator_config\['scores'\]"),
                            ({"sensitive_features": "race", "scores": "p"}, r"names 'p', which is not a column")):
        with mlflow.start_run(), pytest.raises(ValueError, match=message):
            mlflow.models.evaluate(data=frame, targets="y", predictions="label", model_type="classifier",
                                   evaluators=["fairops"], evaluator_config={"fairops": config})


def test_a_group_without_positive_rows_is_left_out_of_the_tpr_ratio_with_a_note(tracking, compas, caplog):
    frame, model, _ = compas
    rows = _as_objects(frame.iloc[600:1200])  # MLflow's SHAP step reads object columns, not category ones
    race, y = rows["race"].to_numpy(), rows["y"].to_numpy()
    without = sorted(set(race) - set(race[y == 1]))  # groups with no positive row here
    assert "Native American" in without and len(without) < len(set(race)) - 1
    uri = _log_sklearn(model, rows.drop(columns="y").head(3), "compas_sklearn")
    with mlflow.start_run() as run, caplog.at_level("WARNING", logger="fairops_mlflow_plugins.evaluator"):
        metrics = mlflow.models.evaluate(uri, rows, targets="y", model_type="classifier",
                                         evaluators=["default", "fairops"],
                                         evaluator_config={"fairops": {"sensitive_features": ["race"]}}).metrics
    assert "roc_auc" in metrics
    y_pred = binarize(model.predict_proba(rows.drop(columns="y"))[:, 1], y, tpr=0.5)
    kept = ~np.isin(race, without)
    assert metrics["fairops_tpr_ratio_race"] == pytest.approx(_oracle_ratio(y[kept], y_pred[kept], race[kept], "tpr"))
    assert metrics["fairops_ppr_ratio_race"] == pytest.approx(_oracle_ratio(y, y_pred, race, "ppr"))  # all groups
    assert f"tpr is undefined for group(s) {without} of 'race' (no positive rows" in caplog.text
    tag = MlflowClient().get_run(run.info.run_id).data.tags["fairops.left_out_groups"]
    assert json.loads(tag) == {"tpr": {"race": without}}


def test_served_decisions_need_a_model_answering_them(tracking, compas):
    frame, _, fairops_uri = compas  # logged without a decision rule: it answers the probability alone
    with mlflow.start_run(), pytest.raises(ValueError, match="needs a model answering 'probability' and 'decision'"):
        mlflow.models.evaluate(fairops_uri, _as_objects(frame.iloc[:200]), targets="y", model_type="classifier",
                               evaluators="fairops",
                               evaluator_config={"sensitive_features": ["race"], "decision": "served"})
