"""SCAFF and FairLOF MLflow flavors: save/log/load, pyfunc, signature, requirements, bad input."""

import json
import os
import zipfile

import mlflow
import numpy as np
import pandas as pd
import pytest
import yaml
from mlflow.exceptions import MlflowException

import fairops
from fairops.fairlof import FairLOF
from fairops.fairlof._features import FeatureEncoder
from fairops.mlflow import fairlof as fairlof_flavor, scaff as scaff_flavor
from fairops.mlflow._flavor_base import pinned_requirements
from fairops.mlflow._model_files import ModelFilesError
from fairops.scaff import SCAFFClassifier
from tests.mlflow_stores import empty_store_uri


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    n = 400
    X = pd.DataFrame({"income": rng.normal(size=n), "age": rng.normal(size=n), "debt": rng.normal(size=n)})
    sex = rng.choice(["f", "m"], n)
    y = ((X["income"] + 0.7 * (sex == "m") + rng.normal(scale=0.6, size=n)) > 0.4).astype(int)
    return X, y, sex


@pytest.fixture(scope="module")
def forest(data):
    X, y, sex = data
    return SCAFFClassifier(n_estimators=12, theta=0.3, random_state=0).fit(X, y, sensitive_features=sex)


@pytest.fixture(scope="module")
def detector(data):
    X, _, sex = data
    detector = FairLOF(n_neighbors=7, correction_strength=0.5, novelty=True)
    return detector.fit(X.to_numpy(), sensitive_features={"sex": sex})


@pytest.fixture(scope="module")
def tracking(tmp_path_factory):
    folder = tmp_path_factory.mktemp("flavors")
    mlflow.set_tracking_uri(empty_store_uri(folder / "mlflow.db"))
    mlflow.set_experiment(experiment_id=mlflow.create_experiment("flavors", str(folder / "artifacts")))
    yield folder
    mlflow.set_tracking_uri(None)


@pytest.mark.slow  # builds the fairops wheel once per source state (cached after)
def test_scaff_save_records_flavor_signature_example_and_shipped_wheel(tmp_path, forest, data):
    X = data[0]
    path = tmp_path / "scaff"
    scaff_flavor.save_model(forest, path, input_example=X.head(4))
    mlmodel = yaml.safe_load((path / "MLmodel").read_text())
    assert mlmodel["flavors"]["python_function"]["loader_module"] == "fairops.mlflow.scaff"
    assert mlmodel["flavors"]["fairops_scaff"]["estimator"] == "SCAFFClassifier"
    inputs = json.loads(mlmodel["signature"]["inputs"])
    assert [column["name"] for column in inputs] == ["income", "age", "debt"]
    assert json.loads(mlmodel["signature"]["outputs"])[0]["type"] == "long"  # the default answer: a class label
    assert [p["name"] for p in json.loads(mlmodel["signature"]["params"])] == ["answer"]
    assert mlmodel["metadata"]["fairops_scores_output"] == [[None, "double"]]  # the scores: P(y = 1)
    assert "saved_input_example_info" in mlmodel
    # the environment installs from the model itself: its own fairops wheel, the rest pinned from the index
    requirements = (path / "requirements.txt").read_text().splitlines()
    assert requirements[0] == f"mlflow=={mlflow.__version__}"
    wheel_line = requirements[1]
    assert wheel_line.startswith("wheels/") and wheel_line.endswith(".whl")
    assert requirements[2:] == pinned_requirements()
    assert scaff_flavor.get_default_pip_requirements() == [wheel_line, *pinned_requirements()]
    with zipfile.ZipFile(path / wheel_line) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read(f"fairops-{fairops.__version__}.dist-info/METADATA").decode()
    assert {"fairops/mlflow/scaff.py", "fairops/models/_columns.py"} <= names
    assert any(name.startswith("fairops/scaff/_tree.") and name.endswith(".so") for name in names)
    assert f"Version: {fairops.__version__}" in metadata and "Requires-Dist: scikit-learn" in metadata
    # one manifest over every file, MLmodel and the wheel included
    manifest = json.loads((path / "fairops_manifest.json").read_text())
    every = {os.path.relpath(os.path.join(root, name), path) for root, _, files in os.walk(path) for name in files}
    assert set(manifest["files"]) == every - {"fairops_manifest.json"}
    assert {"MLmodel", "requirements.txt", wheel_line, "data/arrays.npz"} <= set(manifest["files"])
    assert not any(name.endswith((".pkl", ".pickle")) for name in every)


def test_scaff_pyfunc_returns_probability_and_labels_at_threshold(tmp_path, forest, data):
    X = data[0]
    expected = forest.predict_proba(X)[:, 1]
    scaff_flavor.save_model(forest, tmp_path / "p", input_example=X.head(2), pip_requirements=[])
    scores = {"answer": "scores"}
    plain = mlflow.pyfunc.load_model(str(tmp_path / "p"))
    np.testing.assert_allclose(plain.predict(X, params=scores), expected, rtol=0, atol=0)
    np.testing.assert_array_equal(plain.predict(X), forest.predict(X))  # the default answer: class labels
    scaff_flavor.save_model(forest, tmp_path / "t", input_example=X.head(2), pip_requirements=[], threshold=0.35)
    at_threshold = mlflow.pyfunc.load_model(str(tmp_path / "t"))
    out = at_threshold.predict(X[["debt", "income", "age"]], params=scores)  # reordered
    np.testing.assert_array_equal(at_threshold.predict(X), (expected >= 0.35).astype(int))
    assert list(out.columns) == ["probability", "label"]
    np.testing.assert_allclose(out["probability"], expected, rtol=0, atol=0)
    np.testing.assert_array_equal(out["label"], (expected >= 0.35).astype(int))
    with pytest.raises(ValueError, match="threshold"):
        scaff_flavor.save_model(forest, tmp_path / "bad", threshold=1.5, pip_requirements=[])


def test_scaff_log_and_load_native(tracking, forest, data):
    X = data[0]
    with mlflow.start_run():
        info = scaff_flavor.log_model(forest, name="scaff", input_example=X.head(3), pip_requirements=["fairops"])
    native = scaff_flavor.load_model(info.model_uri)
    assert isinstance(native, SCAFFClassifier) and native.get_params() == forest.get_params()
    np.testing.assert_array_equal(native.predict_proba(X), forest.predict_proba(X))
    local = mlflow.artifacts.download_artifacts(info.model_uri)
    npz = os.path.join(local, "data", "arrays.npz")
    with open(npz, "r+b") as handle:
        handle.truncate(os.path.getsize(npz) - 10)
    with pytest.raises(ModelFilesError, match="arrays.npz"):
        mlflow.pyfunc.load_model(local)


def test_scaff_saves_weights_leaf_sizes_and_rules_as_data(tmp_path, data):
    X, y, sex = data
    labels = np.where(y == 1, "yes", "no")
    forest = SCAFFClassifier(n_estimators=6, theta=0.4, class_weight={"no": 1.0, "yes": 2.5}, min_samples_leaf=4,
                             min_samples_split=0.05, sensitive_aggregation="mean",
                             random_state=1).fit(X, labels, sensitive_features=sex,
                                                 sample_weight=np.linspace(0.5, 2, len(y)))
    scaff_flavor.save_model(forest, tmp_path / "m", pip_requirements=[])
    native = scaff_flavor.load_model(str(tmp_path / "m"))
    assert native.get_params() == forest.get_params()
    np.testing.assert_array_equal(native.predict_proba(X), forest.predict_proba(X))
    np.testing.assert_array_equal(native.apply(X), forest.apply(X))
    assert [t.class_weight for t in native.estimators_] == [{"no": 1.0, "yes": 2.5}] * 6
    assert not any(name.endswith((".pkl", ".pickle")) for _, _, files in os.walk(tmp_path / "m") for name in files)


def test_fairlof_pyfunc_scores_new_rows_with_sensitive_columns(tmp_path, detector, data):
    X, _, sex = data
    rows = pd.concat([X, pd.DataFrame({"sex": sex})], axis=1).head(50).copy()
    rows[["income", "age", "debt"]] += 0.05
    fairlof_flavor.save_model(detector, tmp_path / "lof", input_example=rows.head(3), pip_requirements=[])
    mlmodel = yaml.safe_load((tmp_path / "lof" / "MLmodel").read_text())
    assert [c["name"] for c in json.loads(mlmodel["signature"]["inputs"])] == ["income", "age", "debt", "sex"]
    model = mlflow.pyfunc.load_model(str(tmp_path / "lof"))
    out = model.predict(rows)
    scores = detector.score_samples(rows[["income", "age", "debt"]].to_numpy(), sensitive_features={"sex": rows["sex"]})
    np.testing.assert_allclose(out["outlier_score"], -scores, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(out["outlier"], (detector.predict(
        rows[["income", "age", "debt"]].to_numpy(), sensitive_features={"sex": rows["sex"]}) == -1).astype(int))
    native = fairlof_flavor.load_model(str(tmp_path / "lof"))
    np.testing.assert_array_equal(native.outliers_, detector.outliers_)
    with pytest.raises(MlflowException, match="sex"):
        model.predict(rows.drop(columns="sex"))


def test_fairlof_missing_sensitive_column_without_signature(tmp_path, detector, data):
    X = data[0]
    fairlof_flavor.save_model(detector, tmp_path / "nosig", feature_names=["income", "age", "debt"],
                              signature=False, pip_requirements=[])
    model = mlflow.pyfunc.load_model(str(tmp_path / "nosig"))
    with pytest.raises(ValueError, match=r"lacks the sensitive column\(s\) \['sex'\]"):
        model.predict(X.head(5))


def test_fairlof_save_refusals(tmp_path, data):
    X, _, sex = data
    plain = FairLOF(n_neighbors=5, correction_strength=0.2).fit(X.to_numpy(), sensitive_features={"sex": sex})
    with pytest.raises(ValueError, match="novelty=True"):
        fairlof_flavor.save_model(plain, tmp_path / "a", feature_names=["income", "age", "debt"], pip_requirements=[])
    novelty = FairLOF(n_neighbors=5, correction_strength=0.2, novelty=True)
    novelty.fit(X.to_numpy(), sensitive_features={"sex": sex})
    with pytest.raises(ValueError, match="feature_names has 2 names"):
        fairlof_flavor.save_model(novelty, tmp_path / "b", feature_names=["income", "age"], pip_requirements=[])
    with pytest.raises(ValueError, match="feature_names is required"):
        fairlof_flavor.save_model(novelty, tmp_path / "c", pip_requirements=[])


@pytest.fixture(scope="module")
def raw_rows():
    rng = np.random.default_rng(11)
    n = 300
    return pd.DataFrame({
        "income": rng.lognormal(10, 0.5, n).round(2),
        "children": rng.integers(0, 4, n),
        "job": rng.choice(["clerk", "nurse", "farmer"], n),
        "sex": rng.choice(["f", "m"], n),
        "region": rng.choice(["north", "south", "east"], n),
    })


def _fit_on_raw(raw, **encoder_options):
    encoder = FeatureEncoder(sensitive=["sex", "region"], **encoder_options).fit(raw)
    detector = FairLOF(n_neighbors=6, correction_strength=0.4, novelty=True)
    detector.fit(encoder.transform(raw).to_numpy(), sensitive_features=encoder.sensitive_frame(raw))
    return encoder, detector


@pytest.mark.parametrize("options", [{"categorical": "onehot"}, {"categorical": "drop"},
                                     {"categorical": "onehot", "sensitive_in_distance": True}])
def test_fairlof_model_with_preprocessing_takes_raw_rows(tmp_path, raw_rows, options):
    encoder, detector = _fit_on_raw(raw_rows, **options)
    fairlof_flavor.save_model(detector, tmp_path / "raw", preprocessing=encoder, input_example=raw_rows.head(3),
                              pip_requirements=[])
    document = json.loads((tmp_path / "raw" / "data" / "state.json").read_text())["extra"]["preprocessing"]
    assert document["params"]["sensitive"] == ["sex", "region"] and document["means"] == encoder.means_.tolist()
    mlmodel = yaml.safe_load((tmp_path / "raw" / "MLmodel").read_text())
    assert [c["name"] for c in json.loads(mlmodel["signature"]["inputs"])] == encoder.input_columns_
    new = raw_rows.sample(40, random_state=1).reset_index(drop=True)
    new["income"] = new["income"] * 1.5
    out = mlflow.pyfunc.load_model(str(tmp_path / "raw")).predict(new)
    # oracle: the encoding written out by hand from the fitted rows, then the detector itself
    columns = ["income", "children"] + ([f"job={v}" for v in ("clerk", "farmer", "nurse")]
                                        if options["categorical"] == "onehot" else [])
    if options.get("sensitive_in_distance"):
        columns += [f"sex={v}" for v in ("f", "m")] + [f"region={v}" for v in ("east", "north", "south")]
    base = pd.get_dummies(raw_rows, prefix_sep="=", dtype=float).reindex(columns=columns)
    mine = pd.get_dummies(new, prefix_sep="=", dtype=float).reindex(columns=columns, fill_value=0.0)
    by_hand = ((mine - base.mean()) / base.std(ddof=0)).to_numpy()
    scores = detector.score_samples(by_hand, sensitive_features=new[["sex", "region"]])
    np.testing.assert_allclose(out["outlier_score"], -scores, rtol=1e-12)
    np.testing.assert_array_equal(out["outlier"], (scores < detector.offset_).astype(int))
    reordered = new[list(reversed(new.columns))].assign(unused="x")  # column order and extra columns do not matter
    np.testing.assert_allclose(fairlof_flavor.load_model(str(tmp_path / "raw")).score_samples(
        by_hand, sensitive_features=new[["sex", "region"]]), scores)
    with pytest.raises(MlflowException, match="job|income"):
        mlflow.pyfunc.load_model(str(tmp_path / "raw")).predict(reordered.drop(columns="income"))


def test_fairlof_raw_rows_refusals(tmp_path, raw_rows):
    encoder, detector = _fit_on_raw(raw_rows, categorical="onehot")
    fairlof_flavor.save_model(detector, tmp_path / "nosig", preprocessing=encoder, signature=False, pip_requirements=[])
    model = mlflow.pyfunc.load_model(str(tmp_path / "nosig"))
    with pytest.raises(ValueError, match="'job' holds value\\(s\\) \\['pilot'\\] unseen at fit time"):
        model.predict(raw_rows.head(3).assign(job="pilot"))
    with pytest.raises(ValueError, match="lacks the sensitive column\\(s\\) \\['region'\\]"):
        model.predict(raw_rows.head(3).drop(columns="region"))
    with pytest.raises(ValueError, match="feature column 'income' must be numeric"):
        model.predict(raw_rows.head(3).assign(income="rich"))
    with pytest.raises(ValueError, match="feature column\\(s\\) with missing values \\{'income': 1\\}"):
        model.predict(raw_rows.head(3).assign(income=[1.0, np.nan, 2.0]))
    other, _ = _fit_on_raw(raw_rows, categorical="drop")
    with pytest.raises(ValueError, match="preprocessing makes 2 features, the detector was fitted with 5"):
        fairlof_flavor.save_model(detector, tmp_path / "a", preprocessing=other, pip_requirements=[])
    with pytest.raises(ValueError, match="give preprocessing or feature_names, not both"):
        fairlof_flavor.save_model(detector, tmp_path / "b", preprocessing=encoder, feature_names=["x"],
                                  pip_requirements=[])
    with pytest.raises(TypeError, match="preprocessing must be a fitted"):
        fairlof_flavor.save_model(detector, tmp_path / "c", preprocessing={"means": []}, pip_requirements=[])
