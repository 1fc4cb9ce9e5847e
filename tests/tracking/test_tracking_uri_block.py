"""fairops' tracking-URI block leaves MLflow's default as it found it: set stays set, unset stays unset."""

import mlflow
import pytest

from fairops.registry._tracking_uri import tracking_uri


@pytest.fixture(autouse=True)
def unset():
    mlflow.set_tracking_uri(None)
    yield
    mlflow.set_tracking_uri(None)


def test_an_unset_uri_stays_unset_so_a_later_environment_variable_counts(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'first.db'}")
    with tracking_uri(f"sqlite:///{tmp_path / 'block.db'}"):
        assert mlflow.get_tracking_uri() == f"sqlite:///{tmp_path / 'block.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'later.db'}")
    assert mlflow.get_tracking_uri() == f"sqlite:///{tmp_path / 'later.db'}"


def test_a_uri_set_in_code_is_set_again(tmp_path, monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'variable.db'}")
    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'set.db'}")
    with tracking_uri(f"sqlite:///{tmp_path / 'block.db'}"):
        pass
    assert mlflow.get_tracking_uri() == f"sqlite:///{tmp_path / 'set.db'}"
    with tracking_uri(None):  # None: unchanged inside, and after
        assert mlflow.get_tracking_uri() == f"sqlite:///{tmp_path / 'set.db'}"
    assert mlflow.get_tracking_uri() == f"sqlite:///{tmp_path / 'set.db'}"
