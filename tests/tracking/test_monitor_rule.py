"""The monitor's alert rule on bundled data: a champion of the UCI credit-default rows (TPR ratio over sex about
0.8-0.95 on windows of 2,000 rows), a drift from window 6 on (the men who default take the features of men who do
not, so the ratio falls to about 0.4) and the same rows without it. The fairness line alerts at window 6 and after
and never on the calm stream; the rule before it (a window's 97.5% upper bound under the lower bound of the
validation ratio, recorded here at 95%, so at least as quick as the 97.5% bound it used) sees window 6 only. The
stream is built by benchmarks/monitor_false_alarms.py's own function, the one its ``drift`` command applies to the
ACS rows."""

import importlib.util
import io
from pathlib import Path

import numpy as np
import optuna
import pytest
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from fairops.datasets import load_dataset
from fairops.metrics import Task
from fairops.models import InputSchema
from fairops.registry import Refit, VersionDetails, monitor, register_best, validation_tags
from fairops.tracking import TrackingSession
from tests.mlflow_stores import empty_store_uri

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "monitor_false_alarms.py"
_SPEC = importlib.util.spec_from_file_location("monitor_false_alarms", _PATH)
benchmark = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(benchmark)

TASK = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["SEX"])
WINDOW, NAME = 2000, "credit-default"


@pytest.fixture(scope="module")
def champion(tmp_path_factory):
    """A logistic regression fitted on 10,000 rows, its threshold and baseline set on 4,000 more, registered as
    fairops tune registers; the other 16,000 rows are the stream (8 windows)."""
    data = load_dataset("credit_default")
    order = np.random.default_rng(0).permutation(len(data.y))
    train, validation, stream = order[:10_000], order[10_000:14_000], order[14_000:]
    X, y, sensitive = data.X, np.asarray(data.y), data.sensitive[["SEX"]].astype(str)
    categories = X.select_dtypes("category").columns.tolist()
    encode = make_column_transformer((OneHotEncoder(handle_unknown="ignore"), categories),
                                     (StandardScaler(), [c for c in X.columns if c not in categories]))
    model = make_pipeline(encode, LogisticRegression(max_iter=2000)).fit(X.iloc[train], y[train])
    tags = validation_tags(TASK, y[validation], model.predict_proba(X.iloc[validation])[:, 1],
                           sensitive.iloc[validation])
    uri = empty_store_uri(tmp_path_factory.mktemp("monitor-rule") / "mlflow.db")
    study = optuna.create_study(directions=["maximize", "maximize"], study_name=NAME)
    study.add_trial(optuna.trial.create_trial(values=[0.5, 0.8], params={}, distributions={}))
    register_best(study, NAME, rule={"trial": 0}, session=TrackingSession(uri, NAME),
                  refit=Refit(lambda params, trial: model, pip_requirements=["fairops"],
                              log_options={"input_schema": InputSchema.for_model(model, X.iloc[train])}),
                  details=VersionDetails(tags=tags))
    return {"uri": uri, "X": X.iloc[stream], "y": y[stream], "sensitive": sensitive.iloc[stream]}


def _watch(champion, rows, **rule):
    X, y, sensitive = rows
    windows = ((X.iloc[s:s + WINDOW], y[s:s + WINDOW], sensitive.iloc[s:s + WINDOW]) for s in range(0, len(X), WINDOW))
    return monitor(NAME, windows, tracking_uri=champion["uri"], out=io.StringIO(), **rule)


@pytest.mark.slow
def test_the_line_alerts_on_the_drift_from_its_first_window_and_never_on_the_calm_stream(champion):
    X, y, sensitive = champion["X"], champion["y"], champion["sensitive"]
    drifted = benchmark.drifted(X, y, sensitive, attribute="SEX", group="male", window=WINDOW, drift_from=6)
    drift, calm = _watch(champion, drifted), _watch(champion, (X.reset_index(drop=True), y, sensitive))
    ratios = [window.attributes["SEX"].value for window in drift.windows]
    assert len(ratios) == 8 and min(ratios[:5]) > 0.75 and max(ratios[5:]) < 0.55, ratios  # the drift happened
    assert drift.alerts == [6, 7, 8] and drift.exit_code == 3
    assert calm.alerts == [] and calm.exit_code == 0
    assert [w.attributes["SEX"].value for w in calm.windows[:5]] == ratios[:5]  # the same rows before the drift
    stacked = _watch(champion, drifted, fairness_line=0, against_baseline=True, level=0.975)
    assert stacked.alerts == [6]  # two intervals stacked: windows 7 and 8 (ratios about 0.46) go unseen
