"""The README's API tour runs as written (in a scratch folder, so its mlflow.db lands there), quietly, and
what it prints and leaves behind is what its comments say."""

import contextlib
import io
import logging
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from tests.log_records import LogRecords

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture(scope="module")
def tour(tmp_path_factory):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has no python block"
    folder = tmp_path_factory.mktemp("tour")
    records, out = LogRecords(), io.StringIO()
    logging.getLogger("optuna").addHandler(records)  # what Optuna's handler would print
    try:
        with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out), \
                warnings.catch_warnings(record=True) as shown:
            patch.chdir(folder)
            namespace = {}
            exec(compile(blocks[0], "README.md", "exec"), namespace)
    finally:
        logging.getLogger("optuna").removeHandler(records)
    namespace.update(folder=folder, printed=out.getvalue(), logged=records.messages, warned=shown)
    return namespace


@pytest.mark.slow
def test_tour_is_quiet_prints_what_it_computed_and_keeps_its_stores_where_it_says(tour):
    lines = tour["printed"].splitlines()
    assert re.fullmatch(r"206 fits: \d+ finished(, \d+ failed \(.*\); failed fits rank last and are never "
                        r"picked)?", lines[0])
    assert [line.split(":")[0] for line in lines[1:]] == [
        "pick", "most accurate with fairness >= 0.9", "registered", "SCAFF forest", "FairLOF"]
    assert f"trial {tour['pick'].trial.number} " in lines[1]
    assert lines[3].startswith("registered: models:/adult-model@champion (version 1)")
    assert not [m for m in tour["logged"] if "finished with values" in m or "nan" in m]  # no line per trial
    assert len(tour["logged"]) + len(tour["warned"]) <= 3, (tour["logged"], [str(w.message) for w in tour["warned"]])
    # the store, its models beside it, and the lock fairops takes while creating a SQLite store; no ./mlruns
    assert sorted(p.name for p in tour["folder"].iterdir()) == ["mlartifacts", "mlflow.db", "mlflow.db.lock"]


@pytest.mark.slow
def test_tour_runs_one_fairband_iteration_and_picks_from_it(tour):
    from fairops.fairband import pareto_front

    study, pick = tour["study"], tour["pick"]
    assert len(study.trials) == 206
    finished = [t for t in study.trials if t.values is not None]
    assert pick.trial.number in {t.number for t in finished}
    assert pick.trial.number in {t.number for t in pareto_front(study)}
    assert 0 <= pick.alpha <= 1


@pytest.mark.slow
def test_tour_registers_a_champion_that_loads_and_scores(tour):
    import mlflow

    uri = f"sqlite:///{tour['folder'] / 'mlflow.db'}"
    client = mlflow.MlflowClient(tracking_uri=uri, registry_uri=uri)
    version = client.get_model_version_by_alias("adult-model", "champion")
    assert version.description  # says what was picked and how
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLFLOW_TRACKING_URI", uri)
        model = mlflow.pyfunc.load_model("models:/adult-model@champion")
    rows = tour["data"].X.head(5)
    out = model.predict(rows)
    assert len(out) == 5


@pytest.mark.slow
def test_tour_metrics_equal_their_definitions(tour):
    data, scores = tour["data"], tour["scores"]
    sensitive = data.sensitive
    # auc_s: one-vs-rest AUC of every value of every sensitive column, folded to >= 0.5, the max of them
    folded = []
    for column in sensitive.columns:
        for value in sensitive[column].unique():
            auc = roc_auc_score(sensitive[column] == value, scores)
            folded.append(max(auc, 1 - auc))
    assert np.isclose(tour["auc_s"](scores, sensitive), max(folded))
    # binarize at 50% TPR, then the TPR ratio over sex is min / max of the per-group TPRs
    y_pred = tour["y_pred"]
    y = np.asarray(data.y)
    assert np.isclose(y_pred[y == 1].mean(), 0.5, atol=1e-3)
    sex = sensitive["sex"].to_numpy()
    tprs = pd.Series(y_pred[y == 1]).groupby(sex[y == 1]).mean()
    ratio = tour["fairness_ratio"](data.y, y_pred, sensitive[["sex"]], rate="tpr")
    assert np.isclose(ratio, tprs.min() / tprs.max())


@pytest.mark.slow
def test_tour_detector_flags_its_outliers(tour):
    detector = tour["detector"]
    assert len(detector.outliers_) > 0
    assert set(detector.outliers_) <= set(range(len(tour["data"].X)))
