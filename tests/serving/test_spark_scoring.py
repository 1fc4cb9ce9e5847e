"""Registered fairops models scoring a Spark DataFrame through mlflow.pyfunc.spark_udf in a local Spark
session: the champion of `fairops tune`, a SCAFF forest and a FairLOF detector give on Spark exactly what
the in-process pyfunc gives on the same rows."""

import os
import shutil
import sys

import mlflow
import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from fairops.datasets import load_adult
from fairops.fairlof import FairLOF
from fairops.fairlof._features import FeatureEncoder
from fairops.mlflow import fairlof as fairlof_flavor, scaff as scaff_flavor
from fairops.mlflow.sealing import KEY_ENV
from fairops.scaff import SCAFFClassifier
from tests.conftest import MODEL_KEY, REPO, copy_project

pytestmark = pytest.mark.slow
sys.path.insert(0, str(REPO / "examples"))
import spark_batch_scoring  # noqa: E402

NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]


SCORES = {"answer": "scores"}  # what the example asks a fairops classifier for (its default answer is a label)


def _require_java():
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        if os.environ.get("FAIROPS_REQUIRE_SERVICES"):
            pytest.fail("no Java on PATH: Spark needs it (.ci/java.sh installs Debian's)")
        pytest.skip("no Java on PATH: Spark needs it (bash .ci/java.sh installs Debian's)")


def _raw_rows(X: pd.DataFrame) -> pd.DataFrame:
    """Adult rows as a table holds them: text for categories, whole numbers as numbers."""
    return X.astype({c: str for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)})


@pytest.fixture(scope="module")
def models(adult_tune, tmp_path_factory):
    """The champion of `fairops tune` on Adult (a copy of conftest.adult_tune's project: this module logs
    more models into it; its champion is signed, so the key is set for the module, Spark's workers included)
    and a SCAFF forest and a FairLOF detector logged beside it, with a local Spark session."""
    _require_java()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY_ENV, MODEL_KEY)  # before the Spark session starts: its Python workers inherit it
        yield from _models(copy_project(adult_tune, tmp_path_factory.mktemp("spark") / "project"))


def _models(project):
    uri = f"sqlite:///{project / 'mlflow.db'}"
    mlflow.set_tracking_uri(uri)
    data = load_adult(positive=">50K")
    rows = _raw_rows(data.X)
    train = rows.iloc[:5000]
    forest = SCAFFClassifier(n_estimators=20, max_depth=4, theta=0.5, random_state=0).fit(
        train[NUMERIC], data.y[:5000], sensitive_features=train["sex"])
    encoder = FeatureEncoder(categorical="drop", sensitive=["sex", "race"]).fit(train)
    detector = FairLOF(n_neighbors=10, correction_strength=0.5, novelty=True).fit(
        encoder.transform(train).to_numpy(), sensitive_features=encoder.sensitive_frame(train))
    experiment = MlflowClient(uri).create_experiment("spark", str(project / "artifacts"))
    with mlflow.start_run(experiment_id=experiment):
        scaff_uri = scaff_flavor.log_model(forest, name="scaff", threshold=0.4,
                                           input_example=train[NUMERIC].head(3)).model_uri
        lof_uri = fairlof_flavor.log_model(detector, name="lof", preprocessing=encoder,
                                           input_example=train.head(3)).model_uri
    spark = spark_batch_scoring.spark_session("local[2]")
    spark.sparkContext.setLogLevel("ERROR")
    # rows the models never saw, with an id to put Spark's answers back in order
    unseen = rows.iloc[40000:43000].reset_index(drop=True)
    yield {"spark": spark, "rows": unseen, "project": project, "uri": uri,
           "uris": {"champion": "models:/fairops-adult@champion", "scaff": scaff_uri, "fairlof": lof_uri}}
    spark.stop()
    mlflow.set_tracking_uri(None)


@pytest.mark.parametrize("which, columns", [
    ("champion", ["probability", "positive_class", "decision"]),
    ("scaff", ["probability", "label"]),
    ("fairlof", ["outlier_score", "outlier"]),
])
def test_spark_scores_equal_the_in_process_predict(models, which, columns):
    spark, rows, uri = models["spark"], models["rows"], models["uris"][which]
    table = spark.createDataFrame(rows.assign(row_id=np.arange(len(rows)))).repartition(3)
    scored = spark_batch_scoring.score(spark, table, uri).toPandas().sort_values("row_id")
    expected = mlflow.pyfunc.load_model(uri).predict(rows[spark_batch_scoring.input_columns(uri)],
                                                     params=spark_batch_scoring.scores_params(uri))
    expected = pd.DataFrame(expected) if not isinstance(expected, pd.DataFrame) else expected
    assert len(scored) == len(rows) == len(expected)
    assert list(scored.columns[-len(columns):]) == columns
    for column in columns:
        np.testing.assert_array_equal(scored[column].to_numpy(), expected[column].to_numpy(), err_msg=column)
    # the answers are informative, not constant
    assert scored[columns[0]].nunique() > 100


def test_a_table_without_the_models_columns_is_refused_by_name(models):
    table = models["spark"].createDataFrame(models["rows"].drop(columns=["age"]))
    with pytest.raises(ValueError, match=r"lacks the model's input columns \['age'\]"):
        spark_batch_scoring.score(models["spark"], table, models["uris"]["champion"])


def test_the_example_scores_a_parquet_table_into_parquet(models, tmp_path, capsys):
    source = tmp_path / "rows.parquet"
    models["rows"].iloc[:500].to_parquet(source)
    models["spark"].stop()  # the example starts (and stops) its own session
    try:
        assert spark_batch_scoring.main(["--tracking-uri", models["uri"], "--input", str(source),
                                         "--output", str(tmp_path / "scores.parquet"), "--master", "local[2]"]) == 0
    finally:
        models["spark"] = spark_batch_scoring.spark_session("local[2]")
    assert "scored 500 rows with models:/fairops-adult@champion" in capsys.readouterr().out
    scores = pd.read_parquet(tmp_path / "scores.parquet")
    champion = mlflow.pyfunc.load_model(models["uris"]["champion"])
    expected = champion.predict(models["rows"].iloc[:500], params=SCORES)
    np.testing.assert_array_equal(np.sort(scores["probability"].to_numpy()),
                                  np.sort(expected["probability"].to_numpy()))


def test_the_example_names_a_missing_model(tmp_path):
    with pytest.raises(SystemExit, match="cannot find models:/nothing@champion"):
        spark_batch_scoring.main(["--tracking-uri", f"sqlite:///{tmp_path / 'empty.db'}",
                                  "--model-uri", "models:/nothing@champion"])
