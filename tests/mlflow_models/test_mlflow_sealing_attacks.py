"""Attacks on a sealed model directory beyond editing a file: a moved data folder, pipes, malformed manifests.

Each test builds the attack on a real saved SCAFF model and checks that every load path (fairops'
loader, the flavor's ``load_model``, ``mlflow.pyfunc.load_model``) refuses it with a
``ModelFilesError`` naming the problem, in the time a normal load takes (a FIFO must not be opened).
"""

import json
import os
import shutil

import mlflow
import numpy as np
import pandas as pd
import pytest

from fairops.mlflow import _model_files, loader, scaff as scaff_flavor, sealing
from fairops.mlflow.sealing import KEY_ENV, ModelFilesError
from fairops.scaff import SCAFFTreeClassifier

KEY = "k" * 32
LOADS = {"fairops loader": loader.load_native, "flavor": scaff_flavor.load_model,
         "mlflow pyfunc": mlflow.pyfunc.load_model}


@pytest.fixture(scope="module")
def trees():
    rng = np.random.default_rng(5)
    X = pd.DataFrame(rng.normal(size=(150, 2)), columns=["a", "b"])
    s = rng.choice(["f", "m"], 150)
    y = ((X["a"] + (s == "m")) > 0.5).astype(int)
    honest = SCAFFTreeClassifier(theta=0.3, max_depth=3).fit(X, y, sensitive_features=s)
    planted = SCAFFTreeClassifier(theta=0.3, max_depth=3).fit(X, 1 - y, sensitive_features=s)
    return honest, planted, X


def _save(model, X, path, monkeypatch, key=KEY):
    if key:
        monkeypatch.setenv(KEY_ENV, key)
    else:
        monkeypatch.delenv(KEY_ENV, raising=False)
    scaff_flavor.save_model(model, path, input_example=X.head(2), pip_requirements=[])
    return path


def _point_data_at(path, folder: str):
    text = (path / "MLmodel").read_text()
    assert text.count("data: data\n") == 2  # the pyfunc section and the flavor's
    (path / "MLmodel").write_text(text.replace("data: data\n", f"data: {folder}\n"))


@pytest.mark.parametrize("where", ["data/planted", "planted/data", "planted/deeper/data"])
def test_data_pointed_at_unsigned_files_inside_the_signed_folder_is_refused(trees, tmp_path, monkeypatch, where):
    honest, planted, X = trees
    path = _save(honest, X, tmp_path / "m", monkeypatch)
    # the attacker's own model files (with their own inner manifest), copied inside the signed folder
    monkeypatch.delenv(KEY_ENV, raising=False)
    other = _save(planted, X, tmp_path / "other", monkeypatch, key=None)
    monkeypatch.setenv(KEY_ENV, KEY)
    shutil.copytree(other / "data", path / where)
    _point_data_at(path, where)
    for load in LOADS.values():
        with pytest.raises(ModelFilesError, match=f"model directory {path}|'MLmodel'"):
            load(str(path))


def test_a_data_folder_without_its_model_directory_is_refused_when_a_key_is_set(trees, tmp_path, monkeypatch):
    honest, _, X = trees
    path = _save(honest, X, tmp_path / "m", monkeypatch, key=None)
    bare = tmp_path / "bare"
    shutil.copytree(path / "data", bare)
    assert scaff_flavor._read_estimator(str(bare)).theta == 0.3  # without a key: the data folder's own checks
    monkeypatch.setenv(KEY_ENV, KEY)
    with pytest.raises(ModelFilesError, match="outside a model directory.*FAIROPS_MODEL_KEY"):
        scaff_flavor._load_pyfunc(str(bare))


def test_a_flavor_whose_data_is_not_its_own_folder_is_refused_even_when_resealed(trees, tmp_path, monkeypatch):
    honest, _, X = trees
    path = _save(honest, X, tmp_path / "m", monkeypatch, key=None)
    monkeypatch.delenv(KEY_ENV, raising=False)
    shutil.copytree(path / "data", path / "second")
    _point_data_at(path, "second")
    sealing.seal(path)  # without a key the seal can be rewritten; the layout is still fixed
    for load in LOADS.values():
        with pytest.raises(ModelFilesError, match="'data'"):
            load(str(path))


def test_a_named_pipe_is_refused_before_anything_is_hashed(trees, tmp_path, monkeypatch):
    honest, _, X = trees
    path = _save(honest, X, tmp_path / "m", monkeypatch)
    os.mkfifo(path / "pipe")
    with pytest.raises(ModelFilesError, match="'pipe', which is not a regular file"):
        sealing.seal(path)
    with pytest.raises(ModelFilesError, match="'pipe', which is not a regular file"):
        sealing.verify(path)
    os.unlink(path / "pipe")
    (path / "data" / "arrays.npz").unlink()
    os.mkfifo(path / "data" / "arrays.npz")  # in place of a listed file, in both manifests
    with pytest.raises(ModelFilesError, match="not a regular file"):
        sealing.verify(path)
    with pytest.raises(ModelFilesError, match="not a regular file"):
        _model_files.verify(path / "data")



@pytest.mark.parametrize("name", [sealing.MANIFEST_FILE, "MLmodel", "data/manifest.json"])
def test_a_named_pipe_in_place_of_a_manifest_or_mlmodel_is_refused_unopened(trees, tmp_path, monkeypatch, name):
    """The manifests and MLmodel are read before the listing is checked; a pipe there used to hang every loader."""
    honest, _, X = trees
    path = _save(honest, X, tmp_path / "m", monkeypatch)
    (path / name).unlink()
    os.mkfifo(path / name)
    for load in (loader.load_native, scaff_flavor.load_model, sealing.verify):
        with pytest.raises(ModelFilesError, match=f"'{name}', which is not a regular file"):
            load(str(path))

MALFORMED = {
    "a list": [], "a number": 3, "null": None, "files a list": {"files": []},
    "an entry a list": {"files": {"MLmodel": []}}, "an entry a number": {"files": {"MLmodel": 5}},
    "bytes as text": {"files": {"MLmodel": {"bytes": "12", "sha256": "0"}}},
    "sha256 a list": {"files": {"MLmodel": {"bytes": None, "sha256": []}}},
    "a name outside": {"files": {"../../etc/passwd": {"bytes": 1, "sha256": "0"}}},
    "an absolute name": {"files": {"/etc/passwd": {"bytes": 1, "sha256": "0"}}},
    "signature a number": {"hmac_sha256": 5}, "signature a dict": {"hmac_sha256": {"a": 1}},
}


def _malformed(base: dict, change) -> object:
    if not isinstance(change, dict):
        return change
    document = json.loads(json.dumps(base))
    for key, value in change.items():
        if key == "files" and isinstance(value, dict):
            document["files"].update(value)
        else:
            document[key] = value
    return document


@pytest.mark.parametrize("label", sorted(MALFORMED))
def test_malformed_manifests_raise_model_files_error(trees, tmp_path, monkeypatch, label):
    honest, _, X = trees
    path = _save(honest, X, tmp_path / "m", monkeypatch, key=None)
    monkeypatch.delenv(KEY_ENV, raising=False)
    pairs = [(path, sealing.MANIFEST_FILE), (path / "data", _model_files.MANIFEST_FILE)]
    for folder, name in pairs[:1] if label.startswith("signature") else pairs:  # the inner one is never signed
        original = (folder / name).read_text()
        base = json.loads(original)
        change = MALFORMED[label]
        if folder != path and isinstance(change, dict) and "files" in change and isinstance(change["files"], dict):
            change = {"files": {"state.json": next(iter(change["files"].values()))}}
        (folder / name).write_text(json.dumps(_malformed(base, change)))
        verify = sealing.verify if folder == path else _model_files.verify
        if label.startswith("signature") and folder == path:
            monkeypatch.setenv(KEY_ENV, KEY)
        with pytest.raises(ModelFilesError):
            verify(folder)
        monkeypatch.delenv(KEY_ENV, raising=False)
        (folder / name).write_text(original)


def test_deeply_nested_json_raises_model_files_error(trees, tmp_path, monkeypatch):
    honest, _, X = trees
    path = _save(honest, X, tmp_path / "m", monkeypatch, key=None)
    monkeypatch.delenv(KEY_ENV, raising=False)
    deep = "[" * 100_000 + "]" * 100_000
    long_number = '{"format_version": ' + "1" * 5000 + "}"  # past Python's 4,300 digits: a plain ValueError
    for file in (path / sealing.MANIFEST_FILE, path / "data" / _model_files.MANIFEST_FILE):
        original = file.read_text()
        for text in (deep, long_number):
            file.write_text(text)
            with pytest.raises(ModelFilesError, match="not valid JSON"):
                (sealing.verify if file.parent == path else _model_files.verify)(file.parent)
        file.write_text(original)
    (path / "data" / "state.json").write_text(deep)
    _model_files.write_manifest(path / "data")
    sealing.seal(path)
    with pytest.raises(ModelFilesError, match="state.json"):
        loader.load_native(str(path))


def test_an_empty_key_is_an_error_naming_the_variable(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "")
    with pytest.raises(ValueError, match="FAIROPS_MODEL_KEY is set but empty"):
        sealing.model_key()
    monkeypatch.delenv(KEY_ENV, raising=False)
    assert sealing.model_key() is None
