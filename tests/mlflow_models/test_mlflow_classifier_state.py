"""A classifier's skops file is checked before compiled code reads it: tree nodes, LightGBM text, sizes.

The edits are the attacks that took a process down before these checks (a self-looping tree node
hung ``predict``; a child index out of range read outside the tree) and a deflate bomb that inflated
to 64 times the size limit. tests/mlflow_models/test_model_fuzz.py runs many more edits of every family in child
processes; these run in process, so a regression here would take the test run down with it.
"""

import io
import zipfile

import mlflow
import numpy as np
import pandas as pd
import pytest
import skops.io
from sklearn.tree import DecisionTreeClassifier

from fairops.mlflow import _model_files, classifier, loader, sealing
from fairops.mlflow._lightgbm_text import check_model_text
from fairops.mlflow.sealing import ModelFilesError
from tests.mlflow_models.npz_bombs import add_deflated_zeros


@pytest.fixture(scope="module")
def saved_tree(tmp_path_factory):
    rng = np.random.default_rng(2)
    X = pd.DataFrame(rng.normal(size=(120, 2)), columns=["a", "b"])
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, (X["a"] > 0).astype(int))
    path = tmp_path_factory.mktemp("tree") / "m"
    classifier.save_model(model, path, input_example=X.head(2), pip_requirements=[])
    return path, X


def _edited(saved_tree, tmp_path, edit):
    base, X = saved_tree
    path = tmp_path / "edited"
    import shutil

    shutil.copytree(base, path)
    model_file = path / "data" / classifier.MODEL_FILE
    model = skops.io.loads(model_file.read_bytes(), trusted=list(classifier.TRUSTED_TYPES))
    state = model.tree_.__getstate__()
    state = {**state, "nodes": state["nodes"].copy()}
    edit(state["nodes"])
    model.tree_.__setstate__(state)
    model_file.write_bytes(skops.io.dumps(model))
    sealing.seal(path)
    return path


@pytest.mark.parametrize("field, value, message", [
    ("right_child", 1, "reached twice"), ("left_child", 0, "left child 0 is outside"),
    ("right_child", 10**6, "outside"), ("feature", 7, "splits feature 7")])
def test_an_edited_and_resealed_tree_is_refused_before_predict(saved_tree, tmp_path, monkeypatch, field, value,
                                                               message):
    monkeypatch.delenv(sealing.KEY_ENV, raising=False)
    path = _edited(saved_tree, tmp_path, lambda nodes: nodes[field].__setitem__(0, value))
    for load in (loader.load_native, mlflow.pyfunc.load_model):
        with pytest.raises(ModelFilesError, match=f"model.skops.*{message}"):
            load(str(path))


def test_a_deflate_bomb_in_the_skops_file_is_refused_before_it_inflates(saved_tree, tmp_path, monkeypatch):
    monkeypatch.delenv(sealing.KEY_ENV, raising=False)
    path = _edited(saved_tree, tmp_path, lambda nodes: None)
    model_file = path / "data" / classifier.MODEL_FILE
    add_deflated_zeros(model_file, "bomb", 64 << 20)
    assert model_file.stat().st_size < 1 << 20
    sealing.seal(path)
    monkeypatch.setenv(_model_files.MAX_ARRAY_BYTES_ENV, str(1 << 20))
    with pytest.raises(ModelFilesError, match="'bomb.npy' declares 67108992 bytes.*FAIROPS_MAX_ARRAY_BYTES"):
        loader.load_native(str(path))


def test_the_size_limit_counts_every_entry_of_the_skops_file(saved_tree, monkeypatch):
    data = (saved_tree[0] / "data" / classifier.MODEL_FILE).read_bytes()
    sizes = [info.file_size for info in zipfile.ZipFile(io.BytesIO(data)).infolist()]
    monkeypatch.setenv(_model_files.MAX_ARRAY_BYTES_ENV, str(sum(sizes) // 2))
    with pytest.raises(ModelFilesError, match="left of the model's limit"):
        classifier._read_skops(data, str(saved_tree[0] / "data"))
    monkeypatch.setenv(_model_files.MAX_ARRAY_BYTES_ENV, str(sum(sizes)))
    assert classifier._read_skops(data, str(saved_tree[0] / "data")).tree_.node_count > 1


def test_lightgbm_text_is_checked_against_its_own_counts():
    from lightgbm import LGBMClassifier

    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(200, 2)), columns=["a", "b"])
    text = LGBMClassifier(n_estimators=3, num_leaves=4, verbose=-1).fit(X, X["a"] > 0).booster_.model_to_string()
    assert check_model_text(text) == 3
    with pytest.raises(ValueError, match="tree_sizes do not match"):
        check_model_text(text.replace("tree_sizes=", "tree_sizes=9"))
    with pytest.raises(ValueError, match="max_feature_idx = -1"):
        check_model_text(text.replace("max_feature_idx=1", "max_feature_idx=-1"))
    with pytest.raises(ValueError, match="linear tree"):
        check_model_text(text.replace("is_linear=0", "is_linear=1", 1))



@pytest.fixture(scope="module")
def saved_booster(tmp_path_factory):
    from lightgbm import LGBMClassifier

    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(200, 2)), columns=["a", "b"])
    model = LGBMClassifier(n_estimators=3, num_leaves=4, verbose=-1).fit(X, X["a"] > 0)
    path = tmp_path_factory.mktemp("booster") / "m"
    classifier.save_model(model, path, input_example=X.head(2), pip_requirements=[])
    assert np.allclose(loader.load_native(str(path)).predict_proba(X)[:, 1], model.predict_proba(X)[:, 1])
    return path


def _booster_text_edited(base, path, old: str, new: str):
    """A copy of ``base`` whose Booster's model text has ``old`` replaced by ``new``, re-sealed without a key."""
    import json
    import shutil

    shutil.copytree(base, path)
    model_file = path / "data" / classifier.MODEL_FILE
    with zipfile.ZipFile(model_file) as archive:
        entries = {info.filename: archive.read(info.filename) for info in archive.infolist()}
    schema = json.loads(entries["schema.json"])
    handle = schema["content"]["content"]["_Booster"]["content"]["content"]["_handle"]
    text = json.loads(handle["content"])
    assert text.count(old) == 1
    handle["content"] = json.dumps(text.replace(old, new))
    entries["schema.json"] = json.dumps(schema).encode()
    with zipfile.ZipFile(model_file, "w") as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
    sealing.seal(path)
    return path


@pytest.mark.parametrize("old, new, message", [
    ("objective=binary sigmoid:1", "objective=multiclass num_class:3", "objective 'multiclass num_class:3'"),
    ("objective=binary sigmoid:1", "objective=multiclassova num_class:50 sigmoid:1", "objective 'multiclassova"),
    ("objective=binary sigmoid:1", "objective=binary sigmoid:nan", "objective 'binary sigmoid:nan'"),
    ("objective=binary sigmoid:1", "objective=lambdarank", "objective 'lambdarank'"),
    ("objective=binary sigmoid:1\n", "", "objective 'None'"),
    ("num_tree_per_iteration=1", "num_tree_per_iteration=3", "num_tree_per_iteration = 3 is outside"),
    ("num_class=1", "num_class=3", "num_class = 3 is outside"),
])
def test_a_lightgbm_header_that_is_not_a_binary_classifiers_is_refused_before_lightgbm_parses_it(
        saved_booster, tmp_path, monkeypatch, old, new, message):
    """These headers made predict abort on a corrupted heap or crash, or answer NaN or raw scores as probabilities."""
    monkeypatch.delenv(sealing.KEY_ENV, raising=False)
    path = _booster_text_edited(saved_booster, tmp_path / "m", old, new)
    for load in (loader.load_native, mlflow.pyfunc.load_model):
        with pytest.raises(ModelFilesError, match=f"model.skops.*LightGBM model header: {message}"):
            load(str(path))


def test_weights_that_overflow_answer_a_refusal_not_nan(tmp_path, monkeypatch):
    """Finite weights near the float limit pass the state checks but make predict_proba NaN."""
    from sklearn.neural_network import MLPClassifier

    monkeypatch.delenv(sealing.KEY_ENV, raising=False)
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(200, 4)), columns=list("abcd"))
    model = MLPClassifier(hidden_layer_sizes=(5,), max_iter=50, random_state=0).fit(X, X["a"] + X["b"] > 0)
    model.coefs_ = [weights * 1e308 for weights in model.coefs_]
    assert np.isnan(model.predict_proba(X)[:, 1]).any()
    path = tmp_path / "m"
    classifier.save_model(model, path, input_example=X.head(2), pip_requirements=[])
    served = mlflow.pyfunc.load_model(str(path))
    with pytest.raises(ValueError, match=r"probability for row \d+ is nan, not a number in \[0, 1\]"):
        served.predict(X)
