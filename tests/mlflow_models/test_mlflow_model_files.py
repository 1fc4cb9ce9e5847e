"""Model files: JSON + .npz + sha256 manifest; round trips, tampering, truncation, pickles refused."""

import hashlib
import json
import os

import numpy as np
import pytest

from fairops.fairlof import FairLOF
from fairops.mlflow import _model_files as mf
from fairops.scaff import SCAFFClassifier, SCAFFTreeClassifier
from tests.fair_data import biased_rows
from tests.mlflow_models.npz_bombs import add_deflated_zeros, add_lying_header, declare_size

CLASSES = {"SCAFFClassifier": SCAFFClassifier, "SCAFFTreeClassifier": SCAFFTreeClassifier, "FairLOF": FairLOF}


@pytest.fixture(scope="module")
def data():
    return biased_rows(1)


@pytest.fixture(scope="module")
def forest(data):
    X, y, s = data
    return SCAFFClassifier(n_estimators=8, theta=0.4, random_state=3).fit(X, y, sensitive_features=s)


@pytest.fixture()
def saved(tmp_path, forest):
    path = tmp_path / "m"
    mf.write_state(forest, path, CLASSES, {"threshold": 0.3})
    return path


def test_scaff_round_trip_is_exact(saved, forest, data):
    X = data[0]
    loaded = mf.read_state(saved, CLASSES)
    assert type(loaded.estimator) is SCAFFClassifier
    assert loaded.extra == {"threshold": 0.3}
    np.testing.assert_array_equal(loaded.estimator.predict_proba(X), forest.predict_proba(X))
    assert loaded.estimator.get_params() == forest.get_params()


def test_tree_and_fairlof_round_trip(tmp_path, data):
    X, y, s = data
    tree = SCAFFTreeClassifier(theta=0.2).fit(X, y, sensitive_features=s)
    mf.write_state(tree, tmp_path / "t", CLASSES)
    np.testing.assert_array_equal(mf.read_state(tmp_path / "t", CLASSES).estimator.predict_proba(X),
                                  tree.predict_proba(X))
    det = FairLOF(n_neighbors=6, correction_strength=0.4, novelty=True).fit(X.to_numpy(), sensitive_features={"sex": s})
    mf.write_state(det, tmp_path / "l", CLASSES)
    again = mf.read_state(tmp_path / "l", CLASSES).estimator
    new = X.to_numpy()[:20] + 0.1
    np.testing.assert_allclose(again.score_samples(new, sensitive_features={"sex": s[:20]}),
                               det.score_samples(new, sensitive_features={"sex": s[:20]}), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(again.outliers_, det.outliers_)


def test_files_are_data_with_manifest(saved):
    assert sorted(os.listdir(saved)) == ["arrays.npz", "manifest.json", "state.json"]
    manifest = json.loads((saved / "manifest.json").read_text())
    assert manifest["format_version"] == mf.FORMAT_VERSION
    for name, entry in manifest["files"].items():
        assert hashlib.sha256((saved / name).read_bytes()).hexdigest() == entry["sha256"]
    state = json.loads((saved / "state.json").read_text())
    assert state["estimator"] == "SCAFFClassifier" and state["format"] == "fairops-model"


def test_flipped_byte_names_the_file(saved):
    blob = bytearray((saved / "arrays.npz").read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    (saved / "arrays.npz").write_bytes(bytes(blob))
    with pytest.raises(mf.ModelFilesError, match=r"'arrays.npz'.*sha256"):
        mf.read_state(saved, CLASSES)


def test_truncated_file_names_the_file(saved):
    blob = (saved / "state.json").read_bytes()
    (saved / "state.json").write_bytes(blob[: len(blob) // 2])
    with pytest.raises(mf.ModelFilesError, match=r"'state.json'.*bytes.*truncated"):
        mf.read_state(saved, CLASSES)


def test_missing_files(saved):
    os.remove(saved / "arrays.npz")
    with pytest.raises(mf.ModelFilesError, match="'arrays.npz' is missing"):
        mf.read_state(saved, CLASSES)
    os.remove(saved / "manifest.json")
    with pytest.raises(mf.ModelFilesError, match="'manifest.json' is missing"):
        mf.read_state(saved, CLASSES)
    with pytest.raises(mf.ModelFilesError, match="does not exist"):
        mf.read_state(saved / "nowhere", CLASSES)


def _rewrite_manifest(path):
    manifest = json.loads((path / "manifest.json").read_text())
    for name in manifest["files"]:
        blob = (path / name).read_bytes()
        manifest["files"][name] = {"sha256": hashlib.sha256(blob).hexdigest(), "bytes": len(blob)}
    (path / "manifest.json").write_text(json.dumps(manifest))


def test_pickled_array_is_refused_even_with_a_valid_manifest(saved):
    np.savez(saved / "arrays.npz", classes_=np.array([object(), 1], dtype=object))
    _rewrite_manifest(saved)
    with pytest.raises(mf.ModelFilesError, match="'arrays.npz'.*without pickle"):
        mf.read_state(saved, CLASSES)


def test_unknown_class_and_format_version(saved):
    state = json.loads((saved / "state.json").read_text())
    state["estimator"] = "os.system"
    (saved / "state.json").write_text(json.dumps(state))
    _rewrite_manifest(saved)
    with pytest.raises(mf.ModelFilesError, match="'os.system'"):
        mf.read_state(saved, CLASSES)
    manifest = json.loads((saved / "manifest.json").read_text())
    manifest["format_version"] = 99
    (saved / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(mf.ModelFilesError, match="version 99"):
        mf.read_state(saved, CLASSES)


def test_estimators_outside_the_protocol_are_refused(tmp_path, forest):
    with pytest.raises(TypeError, match="_get_state"):
        mf.write_state(object(), tmp_path / "x", {"object": object})
    with pytest.raises(TypeError, match="cannot save a SCAFFClassifier"):
        mf.write_state(forest, tmp_path / "y", {"FairLOF": FairLOF})


def _arrays_only(saved, **arrays):
    """Replace arrays.npz by ``arrays`` plus the saved ones, and re-seal the folder."""
    kept = dict(np.load(saved / "arrays.npz"))
    np.savez(saved / "arrays.npz", **{**kept, **arrays})
    mf.write_manifest(saved)


def test_size_limit_defaults_to_2_gib_and_reads_the_environment(monkeypatch):
    monkeypatch.delenv(mf.MAX_ARRAY_BYTES_ENV, raising=False)
    assert mf.max_array_bytes() == 2 * 1024**3
    monkeypatch.setenv(mf.MAX_ARRAY_BYTES_ENV, "1048576")
    assert mf.max_array_bytes() == 1 << 20
    for bad in ("lots", "0", "-5"):
        monkeypatch.setenv(mf.MAX_ARRAY_BYTES_ENV, bad)
        with pytest.raises(ValueError, match=mf.MAX_ARRAY_BYTES_ENV):
            mf.max_array_bytes()


def test_a_deflated_bomb_is_refused_before_it_is_inflated(saved, monkeypatch):
    add_deflated_zeros(saved / "arrays.npz", "bomb", 64 << 20)
    mf.write_manifest(saved)
    assert os.path.getsize(saved / "arrays.npz") < 1 << 20
    monkeypatch.setenv(mf.MAX_ARRAY_BYTES_ENV, str(16 << 20))
    with pytest.raises(mf.ModelFilesError, match=r"'bomb.npy' declares 67108992 bytes, above the \d+ bytes left "
                                                 r"of the model's limit \(FAIROPS_MAX_ARRAY_BYTES\)"):
        mf.read_state(saved, CLASSES)


def test_sizes_come_from_the_header_and_the_zip_entry_before_any_data(saved):
    add_lying_header(saved / "arrays.npz", "lie", (2**40,))
    mf.write_manifest(saved)
    with pytest.raises(mf.ModelFilesError, match=r"array 'lie' is 8796093022208 bytes, above"):
        mf.read_state(saved, CLASSES)


def test_a_declared_size_that_disagrees_with_the_header_is_refused(saved):
    declare_size(saved / "arrays.npz", "node_value_", 3 << 30)
    mf.write_manifest(saved)
    with pytest.raises(mf.ModelFilesError, match="'node_value_.npy' declares 3221225472 bytes, above"):
        mf.read_state(saved, CLASSES)
    _arrays_only(saved)
    add_lying_header(saved / "arrays.npz", "short", (3,))
    mf.write_manifest(saved)
    with pytest.raises(mf.ModelFilesError, match=r"array 'short' has 8 data bytes, its header \(shape \(3,\), "
                                                 r"dtype float64\) says 24"):
        mf.read_state(saved, CLASSES)


def test_arrays_the_estimator_does_not_know_are_refused(saved):
    _arrays_only(saved, predict=np.zeros(3))
    with pytest.raises(ValueError, match=r"SCAFF state holds unknown array\(s\) \['predict'\]"):
        mf.read_state(saved, CLASSES)
