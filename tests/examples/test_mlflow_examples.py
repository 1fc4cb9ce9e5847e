"""The MLflow examples run end to end (small data) and report what they promise."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def reset_tracking():
    import mlflow

    yield
    mlflow.set_tracking_uri(None)


@pytest.mark.slow  # over 5 s in the quick tier
def test_registry_serving_example(tmp_path, reset_tracking, capsys):
    example = load("registry_serving")
    best, in_process = example.main(["--tracking-uri", f"sqlite:///{tmp_path}/mlflow.db"])
    assert best.alias == "champion" and best.version == "1"
    X, y, sex = example.make_data()
    from fairops.scaff import SCAFFTreeClassifier

    expected = SCAFFTreeClassifier(**best.pick.trial.params).fit(X.iloc[:800], y[:800], sensitive_features=sex[:800])
    np.testing.assert_allclose(in_process, expected.predict_proba(X.iloc[800:805])[:, 1])
    assert "registered fair-scaff version 1 as @champion" in capsys.readouterr().out


@pytest.mark.slow  # over 5 s in the quick tier
def test_evaluator_plugin_example(tmp_path, reset_tracking):
    result = load("evaluator_plugin").main(["--tracking-uri", f"sqlite:///{tmp_path}/mlflow.db"])
    assert 0 <= result.metrics["fairops_tpr_ratio_sex"] <= 1
    assert {"fairops_group_rates", "fairops_group_roc"} <= set(result.artifacts)
