"""The seal of a model directory: every file under one manifest, the HMAC signature with FAIROPS_MODEL_KEY."""

import json
import os
import warnings

import mlflow
import numpy as np
import pandas as pd
import pytest

from fairops.mlflow import loader, scaff as scaff_flavor, sealing
from fairops.mlflow.sealing import KEY_ENV, ModelFilesError
from fairops.scaff import SCAFFTreeClassifier

KEY = "k" * 32


@pytest.fixture(scope="module")
def tree():
    rng = np.random.default_rng(4)
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    s = rng.choice(["f", "m"], 200)
    y = ((X["a"] + (s == "m")) > 0.5).astype(int)
    return SCAFFTreeClassifier(theta=0.3).fit(X, y, sensitive_features=s), X


def _save(tree, path, monkeypatch, key=None):
    if key is None:
        monkeypatch.delenv(KEY_ENV, raising=False)
    else:
        monkeypatch.setenv(KEY_ENV, key)
    scaff_flavor.save_model(tree[0], path, input_example=tree[1].head(2), pip_requirements=[])
    return path


def _rehash(path, manifest_file=sealing.MANIFEST_FILE):
    """What someone who can write the store but lacks the key can do: a fresh, unsigned manifest."""
    manifest = json.loads((path / manifest_file).read_text())
    manifest.pop(sealing.SIGNATURE_FIELD, None)
    for name in manifest["files"]:
        manifest["files"][name] = {"sha256": sealing.sha256_file(str(path / name)),
                                   "bytes": os.path.getsize(path / name)}
    (path / manifest_file).write_text(json.dumps(manifest))


def test_every_file_is_listed_and_checked(tree, tmp_path, monkeypatch):
    path = _save(tree, tmp_path / "m", monkeypatch)
    listed = set(json.loads((path / sealing.MANIFEST_FILE).read_text())["files"])
    assert {"MLmodel", "requirements.txt", "python_env.yaml", "data/state.json", "data/arrays.npz"} <= listed
    sealing.verify(path)
    (path / "MLmodel").write_text((path / "MLmodel").read_text() + "planted: true\n")
    for load in (loader.load_model, mlflow.pyfunc.load_model):  # MLflow's own loader reaches fairops' too
        with pytest.raises(ModelFilesError, match="'MLmodel'.*(bytes|sha256)"):
            load(str(path))
    # pointed elsewhere, MLflow's loader would import what MLmodel names; fairops' loader never reads that
    (path / "MLmodel").write_text((path / "MLmodel").read_text().replace("fairops.mlflow.scaff", "planted.module"))
    with pytest.raises(ModelFilesError, match="'MLmodel'"):
        loader.load_model(str(path))


def test_added_removed_and_linked_files_are_refused(tree, tmp_path, monkeypatch):
    path = _save(tree, tmp_path / "m", monkeypatch)
    (path / "code").mkdir()
    (path / "code" / "planted.py").write_text("import os\n")
    with pytest.raises(ModelFilesError, match=r"does not list \(added after sealing\): \['code/planted.py'\]"):
        sealing.verify(path)
    (path / "code" / "planted.py").unlink()
    (path / "code").rmdir()
    (path / "requirements.txt").unlink()
    with pytest.raises(ModelFilesError, match=r"\['requirements.txt'\] listed in the manifest are missing"):
        sealing.verify(path)
    path = _save(tree, tmp_path / "n", monkeypatch)
    (path / "data" / "arrays.npz").rename(path / "elsewhere.npz")
    os.symlink(path / "elsewhere.npz", path / "data" / "arrays.npz")
    with pytest.raises(ModelFilesError, match="symbolic link"):
        sealing.verify(path)


def test_mlflow_download_note_is_the_one_file_allowed_beside_the_listed(tree, tmp_path, monkeypatch):
    path = _save(tree, tmp_path / "m", monkeypatch)
    (path / "registered_model_meta").write_text("model_name: x\nmodel_version: '1'\n")
    sealing.verify(path)
    manifest = json.loads((path / sealing.MANIFEST_FILE).read_text())
    manifest["files"]["registered_model_meta"] = {}
    (path / sealing.MANIFEST_FILE).write_text(json.dumps(manifest))
    _rehash(path)  # listed or not, MLflow's note is neither required nor refused
    (path / "registered_model_meta").unlink()
    sealing.verify(path)
    (path / sealing.MANIFEST_FILE).unlink()
    with pytest.raises(ModelFilesError, match="has no fairops_manifest.json"):
        mlflow.pyfunc.load_model(str(path))


def test_signed_models_verify_only_with_their_key(tree, tmp_path, monkeypatch):
    path = _save(tree, tmp_path / "m", monkeypatch, key=KEY)
    assert sealing.SIGNATURE_FIELD in json.loads((path / sealing.MANIFEST_FILE).read_text())
    X = tree[1]
    np.testing.assert_allclose(loader.load_model(str(path)).predict(X), tree[0].predict_proba(X)[:, 1])
    monkeypatch.setenv(KEY_ENV, "another key of 32 bytes, not it!")
    with pytest.raises(ModelFilesError, match="does not verify with FAIROPS_MODEL_KEY"):
        loader.load_model(str(path))
    monkeypatch.delenv(KEY_ENV)
    with pytest.warns(UserWarning, match="is signed but FAIROPS_MODEL_KEY is not set"):
        loader.load_model(str(path))


def test_with_the_key_set_an_edited_and_rehashed_model_is_refused(tree, tmp_path, monkeypatch):
    path = _save(tree, tmp_path / "m", monkeypatch, key=KEY)
    state = json.loads((path / "data" / "state.json").read_text())
    state["meta"]["params"]["theta"] = 0.99  # any edit: a different model than the one signed
    (path / "data" / "state.json").write_text(json.dumps(state))
    _rehash(path / "data", "manifest.json")
    _rehash(path)
    with pytest.raises(ModelFilesError, match="is not signed, and FAIROPS_MODEL_KEY is set"):
        loader.load_model(str(path))
    with pytest.raises(ModelFilesError, match="is not signed"):
        mlflow.pyfunc.load_model(str(path))
    monkeypatch.delenv(KEY_ENV)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # without the key, a re-hashed manifest is all there is to check
        assert scaff_flavor.load_model(str(path)).theta == 0.99


def test_unsigned_models_are_refused_where_a_key_is_set(tree, tmp_path, monkeypatch):
    path = _save(tree, tmp_path / "m", monkeypatch)
    monkeypatch.setenv(KEY_ENV, KEY)
    with pytest.raises(ModelFilesError, match="is not signed"):
        scaff_flavor.load_model(str(path))


def test_a_short_key_is_refused(tree, tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="FAIROPS_MODEL_KEY must hold at least 16 bytes"):
        _save(tree, tmp_path / "m", monkeypatch, key="short")
