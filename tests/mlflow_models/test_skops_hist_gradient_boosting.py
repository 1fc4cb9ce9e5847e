"""A HistGradientBoosting model's fitted trees load only after fairops checked them, and the checks read what
the installed scikit-learn really holds: the node record, TreePredictor's arrays and the attributes its
predict hands them. A scikit-learn that changes any of these fails here first (fairops.mlflow._skops_checks
was written from scikit-learn 1.9's source). tests/mlflow_models/test_model_fuzz.py runs many more edits in child
processes.
"""

import shutil

import mlflow
import numpy as np
import pandas as pd
import pytest
import skops.io
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.ensemble._hist_gradient_boosting.common import PREDICTOR_RECORD_DTYPE
from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor

from fairops.mlflow import _skops_checks, classifier, loader, sealing
from fairops.mlflow.sealing import ModelFilesError
from tests.fair_data import biased_rows


@pytest.fixture(scope="module")
def native():
    """A model with native category splits: every part the checks read is there."""
    X, y, s = biased_rows(5, n_rows=300, n_features=3)
    X = X.assign(sex=pd.Categorical(s))
    return HistGradientBoostingClassifier(max_iter=5, max_leaf_nodes=6, random_state=0).fit(X, y), X


def test_the_node_record_is_the_one_scikit_learn_predicts_with():
    assert _skops_checks.HGB_NODE_RECORD == PREDICTOR_RECORD_DTYPE
    assert f"{TreePredictor.__module__}.{TreePredictor.__qualname__}" == _skops_checks.TREE_PREDICTOR
    assert _skops_checks.TREE_PREDICTOR in classifier.TRUSTED_TYPES


def test_the_fitted_attributes_the_checks_read_are_those_predict_reads(native):
    model, X = native
    fitted = vars(model)
    assert {"_predictors", "_bin_mapper", "_preprocessor", "_baseline_prediction", "n_trees_per_iteration_"} <= set(
        fitted)
    tree = model._predictors[0][0]
    assert set(vars(tree)) == {"nodes", "binned_left_cat_bitsets", "raw_left_cat_bitsets"}
    assert {"is_categorical_", "bin_thresholds_"} <= set(vars(model._bin_mapper))
    assert (tree.nodes["is_categorical"] != 0).any()  # the category split checks are exercised
    _skops_checks.check_fitted(model)  # scikit-learn's own category encoder is the one the checks accept
    bitsets, f_idx_map = model._bin_mapper.make_known_categories_bitsets()
    assert bitsets.shape[1] == 8 and f_idx_map.shape == (X.shape[1],)


@pytest.fixture(scope="module")
def saved(native, tmp_path_factory):
    model, X = native
    path = tmp_path_factory.mktemp("hgb") / "m"
    classifier.save_model(model, path, input_example=X.head(2), pip_requirements=[])
    return path, X


def _edited(saved, tmp_path, edit):
    base, _ = saved
    path = tmp_path / "edited"
    shutil.copytree(base, path)
    model_file = path / "data" / classifier.MODEL_FILE
    model = skops.io.loads(model_file.read_bytes(), trusted=list(classifier.TRUSTED_TYPES))
    edit(model._predictors[0][0].nodes)
    model_file.write_bytes(skops.io.dumps(model))
    sealing.seal(path)
    return path


def test_saved_and_loaded_it_answers_as_fitted(native, saved):
    model, X = native
    np.testing.assert_array_equal(loader.load_native(str(saved[0])).predict_proba(X), model.predict_proba(X))


@pytest.mark.parametrize("field, value, message", [
    ("right", 0, "right child 0 is outside"), ("left", 10**6, "outside"), ("feature_idx", 9, "splits feature 9"),
    ("num_threshold", np.nan, "splits at nan")])
def test_an_edited_and_resealed_tree_predictor_is_refused_before_predict(saved, tmp_path, monkeypatch, field, value,
                                                                         message):
    monkeypatch.delenv(sealing.KEY_ENV, raising=False)

    def edit(nodes):
        nodes[field][np.flatnonzero((nodes["is_leaf"] == 0) & (nodes["is_categorical"] == 0))[0]] = value

    path = _edited(saved, tmp_path, edit)
    for load in (loader.load_native, mlflow.pyfunc.load_model):
        with pytest.raises(ModelFilesError, match=f"model.skops.*TreePredictor: .*{message}"):
            load(str(path))


def test_a_cycle_apart_from_the_root_is_refused():
    """Every node but the root has one parent, yet nodes 3 and 4 point at each other away from the root."""
    nodes = np.zeros(7, dtype=_skops_checks.HGB_NODE_RECORD)
    nodes["is_leaf"] = [0, 1, 1, 0, 0, 1, 1]
    nodes["left"], nodes["right"] = [1, 0, 0, 4, 3, 0, 0], [2, 0, 0, 5, 6, 0, 0]
    tree = TreePredictor(nodes, np.zeros((0, 8), np.uint32), np.zeros((0, 8), np.uint32))
    with pytest.raises(ValueError, match="tree node 3 is never reached from the root"):
        _skops_checks.check_tree_predictor(tree, 2, np.zeros(2, dtype=bool), "tree")
