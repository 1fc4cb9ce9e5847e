"""MLflow's default evaluator beside fairops' on every kind of model fairops registers, in one call of
``mlflow.models.evaluate(model_uri, ...)``, and a served answer a person can read (issues 47 and 44).

The oracle for the default evaluator is MLflow's own: the same evaluator on the same labels given as data, and on
a plain scikit-learn model logged with ``mlflow.sklearn``."""

import mlflow
import numpy as np
import optuna
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.tree import DecisionTreeClassifier

from fairops.metrics import OperatingPoint, Task, decision_figures, group_thresholds, operating_point
from fairops.metrics._decisions import served_decision
from fairops.mlflow.answer import BY_LOT_OUTPUT, CHANCE_OUTPUT, LOT_OUTPUT, THRESHOLD_OUTPUT
from fairops.mlflow.loader import load_model
from fairops.models import ServedDecision
from fairops.reductions import ExponentiatedGradient
from fairops.registry import Refit, register_best
from fairops.scaff import SCAFFTreeClassifier
from fairops.tracking import TrackingSession
from tests.mlflow_stores import empty_store_uri

pytestmark = pytest.mark.slow
optuna.logging.set_verbosity(optuna.logging.WARNING)
FEATURES = ["x1", "x2"]
FAIROPS_CONFIG = {"sensitive_features": ["sex"]}
# the label metrics MLflow's classifier evaluator computes from a model's labels
LABEL_METRICS = ("accuracy_score", "f1_score", "precision_score", "recall_score", "true_positives", "false_positives",
                 "true_negatives", "false_negatives", "example_count")


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(3)
    n = 1500
    sex, race = rng.choice(["f", "m"], n), rng.choice(["a", "b", "c"], n)
    x1 = rng.normal(size=n) + 0.7 * (sex == "m")
    x2 = rng.normal(size=n)
    y = ((x1 + 0.6 * x2 + rng.normal(scale=0.8, size=n)) > 0.5).astype(int)
    frame = pd.DataFrame({"x1": x1, "x2": x2, "sex": pd.Series(sex, dtype=object),
                          "race": pd.Series(race, dtype=object), "y": y})
    return frame.iloc[:800], frame.iloc[800:1100], frame.iloc[1100:].reset_index(drop=True)


def _tie_splitting_point(score, y):
    """An operating point inside the largest tie of ``score`` (a reduction's chances tie): top-k rows with k
    halfway through that tie, so its rows are decided by lot."""
    levels, counts = np.unique(np.round(score, 6), return_counts=True)
    level = levels[np.argmax(counts)]
    k = int(np.sum(np.round(score, 6) > level) + counts.max() // 2)
    return operating_point(score, y, top_k=k)


@pytest.fixture(scope="module")
def registered(tmp_path_factory, rows):
    train, valid, _ = rows
    folder = tmp_path_factory.mktemp("default-evaluator")
    uri = empty_store_uri(folder / "mlflow.db")
    session = TrackingSession(uri, settle_seconds=0)
    study = optuna.create_study(directions=["maximize"] * 2, study_name="default-evaluator")
    study.add_trial(optuna.trial.create_trial(values=[0.8, 0.9], params={}, distributions={}))
    X, y, sex = train[FEATURES], train["y"].to_numpy(), train["sex"].to_numpy()

    reduction = ExponentiatedGradient(DecisionTreeClassifier(max_depth=3, random_state=0), constraint="tpr",
                                      difference_bound=0.02, random_state=0).fit(X, y, sensitive_features=sex)
    reduction_point = _tie_splitting_point(reduction.predict_proba(valid[FEATURES])[:, 1], valid["y"].to_numpy())
    logistic = LogisticRegression().fit(X, y)
    per_group = group_thresholds(logistic.predict_proba(valid[FEATURES])[:, 1], valid["y"].to_numpy(),
                                 valid[["sex"]], tpr=0.5)
    pipeline = make_pipeline(make_column_transformer(("passthrough", FEATURES)), LogisticRegression())
    models = {
        "scaff": (SCAFFTreeClassifier(max_depth=3, theta=0.3).fit(X, y, sensitive_features=sex), X.head(3), {}),
        "reduction": (reduction, X.head(3), {"decision": ServedDecision("y = 1", reduction_point)}),
        # the model reads x1 and x2; the decision also reads sex (as fairops tune's per-group decisions do)
        "per-group": (logistic, X.head(3), {"decision": ServedDecision("y = 1", per_group, tuple(FEATURES))}),
        "own-pipeline": (pipeline.fit(train.drop(columns="y"), y), train.drop(columns="y").head(3), {}),
    }
    uris = {}
    for name, (model, example, options) in models.items():
        refit = Refit(lambda params, trial, model=model: model, input_example=example, pip_requirements=["fairops"],
                      log_options=options)
        best = register_best(study, name, {"trial": 0}, refit=refit, session=session)
        uris[name] = best.model_uri
    mlflow.set_tracking_uri(uri)
    experiment = mlflow.create_experiment("evaluations", artifact_location=str(folder / "evaluations"))
    mlflow.set_experiment(experiment_id=experiment)
    yield {"uris": uris, "models": {name: entry[0] for name, entry in models.items()}, "tracking_uri": uri}
    mlflow.set_tracking_uri(None)


def _both(uri, data):
    with mlflow.start_run():
        return mlflow.models.evaluate(uri, data, targets="y", model_type="classifier",
                                      evaluators=["default", "fairops"],
                                      evaluator_config={"fairops": FAIROPS_CONFIG}).metrics


def _mlflow_on_labels(data, labels):
    """MLflow's own default evaluator on the same labels, given as data (no model)."""
    with mlflow.start_run():
        return mlflow.models.evaluate(data=data.assign(label=labels), targets="y", predictions="label",
                                      model_type="classifier", evaluators=["default"]).metrics


@pytest.mark.parametrize("name", ["scaff", "reduction", "per-group", "own-pipeline"])
def test_default_and_fairops_in_one_call_on_a_registered_model(registered, rows, name):
    test = rows[2]
    uri = registered["uris"][name]
    metrics = _both(uri, test)
    labels = mlflow.pyfunc.load_model(uri).predict(test.drop(columns="y"))
    assert labels.shape == (len(test),) and set(np.unique(labels)) <= {0, 1}
    oracle = _mlflow_on_labels(test, labels)
    for key in LABEL_METRICS:  # MLflow's default evaluator read the model's labels as it reads them as data
        assert metrics[key] == pytest.approx(oracle[key]), key
    assert metrics["accuracy_score"] == pytest.approx(np.mean(labels == test["y"].to_numpy()))
    assert {"fairops_tpr_ratio", "fairops_tpr_ratio_lower", "fairops_auc_s", "fairops_precision"} <= set(metrics)
    # the labels are the served decisions: what fairops' loader answers beside its scores
    answer = load_model(uri).predict(test.drop(columns="y"))
    if "decision" in getattr(answer, "columns", []):
        np.testing.assert_array_equal(labels, answer["decision"].to_numpy())


def test_an_own_pipeline_gets_the_metrics_mlflow_gives_the_same_pipeline_logged_by_mlflow_sklearn(registered, rows):
    train, _, test = rows
    pipeline = registered["models"]["own-pipeline"]
    with mlflow.start_run():
        sklearn_uri = mlflow.sklearn.log_model(pipeline, name="plain", input_example=train.drop(columns="y").head(3),
                                               pip_requirements=["scikit-learn"]).model_uri
    plain, ours = _both(sklearn_uri, test), _both(registered["uris"]["own-pipeline"], test)
    for key in LABEL_METRICS:
        assert ours[key] == pytest.approx(plain[key]), key
    for key in [k for k in plain if k.startswith("fairops_")]:  # fairops' evaluator scores both alike
        assert ours[key] == pytest.approx(plain[key]), key
    # MLflow computes score metrics (roc_auc, log_loss) only for its own flavors' raw models; fairops' AUC is there
    assert ours["fairops_auc_y"] == pytest.approx(plain["roc_auc"])


def test_a_reduction_answers_its_chance_and_which_rows_were_decided_by_lot(registered, rows):
    test = rows[2]
    uri = registered["uris"]["reduction"]
    model = load_model(uri)
    answer = model.predict(test[FEATURES])
    assert list(answer.columns) == [CHANCE_OUTPUT, "positive_class", "decision", THRESHOLD_OUTPUT, LOT_OUTPUT,
                                    BY_LOT_OUTPUT]
    reduction = registered["models"]["reduction"]
    chance, lot = reduction.chance_and_lot(test[FEATURES])
    np.testing.assert_array_equal(answer[CHANCE_OUTPUT], chance)  # the mixture's chance, without the tie-break
    np.testing.assert_array_equal(answer[LOT_OUTPUT], lot)
    card = model.metadata.metadata["fairops_answer"]["threshold"]
    assert set(card) == {"chance", "lot_cut", "share_of_tied_rows_positive"}
    decision, by_lot = answer["decision"].to_numpy(), answer[BY_LOT_OUTPUT].to_numpy() == 1
    threshold = answer[THRESHOLD_OUTPUT].to_numpy()
    assert np.all(threshold == card["chance"])
    assert by_lot.sum() > 0  # the threshold lies inside a tie of chances
    assert np.all(chance[by_lot] == pytest.approx(card["chance"], abs=1e-9))
    # outside the tie the chance orders the rows as the decision does; inside it the lot does
    np.testing.assert_array_equal(decision[~by_lot], (chance[~by_lot] > threshold[~by_lot]).astype(int))
    np.testing.assert_array_equal(decision[by_lot], (lot[by_lot] > card["lot_cut"]).astype(int))
    # the same decisions as the served score (chance and lot combined) at the registered threshold
    served = reduction.predict_proba(test[FEATURES])[:, 1]
    np.testing.assert_array_equal(decision, served_decision(_registered_point(uri), served))


def _registered_point(uri):
    """The operating point the model's ``data/model.json`` holds."""
    import json

    from fairops.mlflow._flavor_base import local_model_dir
    from fairops.mlflow.sealing import read_model

    rule = json.loads(read_model(local_model_dir(uri)).read("model.json").decode())["decision"]["rule"]
    return OperatingPoint(rule["threshold"], rule["tie_share"])


def test_the_documented_call_runs_on_a_pandas_string_column(registered, rows):
    # docs/mlflow/evaluator.md opens with this call: the frame has pandas 3's string dtype, on which
    # MLflow 3.17's SHAP step (part of "default") raises, so the call turns that step off
    test = rows[2].astype({"sex": "str", "race": "str"})
    assert str(test["sex"].dtype) == "str"
    uri = registered["uris"]["own-pipeline"]
    # the evaluator_config of docs/mlflow/evaluator.md, verbatim
    config = {"default": {"log_model_explainability": False},
              "fairops": {"sensitive_features": ["sex", "race"], "target": {"fpr": 0.1}}}
    with mlflow.start_run():
        metrics = mlflow.models.evaluate(uri, test, targets="y", model_type="classifier",
                                         evaluators=["default", "fairops"], evaluator_config=config).metrics
    assert "accuracy_score" in metrics and {"fairops_fpr_ratio_sex", "fairops_fpr_ratio_race"} <= set(metrics)
    with mlflow.start_run(), pytest.raises(TypeError, match="Cannot interpret"):  # why the step is off
        mlflow.models.evaluate(uri, test, targets="y", model_type="classifier", evaluators=["default"])


def test_the_scores_answer_is_a_call_parameter_everywhere(registered, rows):
    test = rows[2]
    uri = registered["uris"]["per-group"]
    in_mlflow = mlflow.pyfunc.load_model(uri)
    scores = in_mlflow.predict(test.drop(columns="y"), params={"answer": "scores"})
    assert list(scores.columns) == ["probability", "positive_class", "decision"]
    logistic = registered["models"]["per-group"]
    np.testing.assert_allclose(scores["probability"], logistic.predict_proba(test[FEATURES])[:, 1])
    labels = load_model(uri).predict(test.drop(columns="y"), params={"answer": "label"})
    np.testing.assert_array_equal(labels, scores["decision"].to_numpy())
    with pytest.raises(ValueError, match="'answer' must be one of 'label', 'scores'"):
        in_mlflow.predict(test.drop(columns="y"), params={"answer": "probability"})


@pytest.mark.parametrize("name", ["reduction", "per-group"])
def test_the_gates_served_mode_scores_the_versions_own_decisions(registered, rows, name):
    # the promotion gate evaluates a version with {"decision": "served"}; a reduction answers chance_positive, not
    # probability, and every fairops classifier answers a label unless asked for its scores
    test = rows[2]
    uri = registered["uris"][name]
    with mlflow.start_run():
        metrics = mlflow.models.evaluate(uri, test, targets="y", model_type="classifier", evaluators="fairops",
                                         evaluator_config={**FAIROPS_CONFIG, "decision": "served"}).metrics
    decided = mlflow.pyfunc.load_model(uri).predict(test.drop(columns="y"))  # the served labels
    task = Task("precision", "tpr", 0.5, "tpr", ("sex",))
    figures = decision_figures(task, test["y"].to_numpy(), np.asarray(decided), {"sex": test["sex"].to_numpy()})
    assert metrics["fairops_positive_share"] == pytest.approx(np.mean(decided))
    assert metrics["fairops_precision"] == pytest.approx(figures.accuracy[0])
    assert (metrics["fairops_tpr_ratio"], metrics["fairops_tpr_ratio_lower"], metrics["fairops_tpr_ratio_upper"]) \
        == pytest.approx((figures.fairness.value, figures.fairness.lower, figures.fairness.upper))
