"""Every everyday scikit-learn preprocessing step saves with the classifier flavor, loads and serves over HTTP.

Each case of tests/mlflow_models/preprocessing_cases.py is fitted in a Pipeline before a logistic regression,
saved with skops (no pickle), loaded by fairops' loader (the fitted state of each step checked first) and
served by ``fairops serve``'s app over HTTP: the three answer new rows exactly as the fitted Pipeline does,
rows with missing values included where the Pipeline takes them. tests/mlflow_models/test_model_fuzz.py edits
the saved steps.
"""

import mlflow
import numpy as np
import pytest

from fairops.mlflow import classifier, loader
from fairops.mlflow.sealing import ModelFilesError
from tests.mlflow_models.preprocessing_cases import CASES, fitted
from tests.services import post_frame, serving_thread

pytestmark = pytest.mark.slow  # about 40 models saved, loaded and served

SCORES = {"answer": "scores"}  # the probability frame (a fairops classifier answers labels by default)


@pytest.mark.parametrize("case", list(CASES))
def test_a_pipeline_with_the_step_saves_loads_and_serves_the_same_answers(case, tmp_path, monkeypatch):
    monkeypatch.delenv("FAIROPS_MODEL_KEY", raising=False)
    model, X, new = fitted(case)
    expected = model.predict_proba(new)[:, 1]
    path = tmp_path / "model"
    classifier.save_model(model, path, input_example=X.head(3), pip_requirements=[])
    np.testing.assert_array_equal(loader.load_native(str(path)).predict_proba(new)[:, 1], expected)
    served = mlflow.pyfunc.load_model(str(path))
    np.testing.assert_array_equal(served.predict(new, params=SCORES)["probability"].to_numpy(), expected)
    np.testing.assert_array_equal(served.predict(new), model.predict(new))
    with serving_thread(path) as url:
        status, answer = post_frame(f"{url}/invocations", new.astype(object).where(new.notna(), None), SCORES)
    assert status == 200, answer
    np.testing.assert_allclose([row["probability"] for row in answer["predictions"]], expected, rtol=1e-12)
    if new.isna().any().any():  # the rows with missing values are answered, over HTTP too
        assert np.isfinite(expected[new.isna().any(axis=1).to_numpy()]).all()


def test_the_everyday_pipeline_takes_missing_values_where_it_imputes_and_names_the_column_elsewhere(tmp_path):
    model, X, new = fitted("everyday ColumnTransformer")
    path = tmp_path / "model"
    classifier.save_model(model, path, input_example=X, pip_requirements=[])
    served = mlflow.pyfunc.load_model(str(path))
    holes = new.assign(a=np.nan, b=np.nan, colour=None).head(5)
    np.testing.assert_array_equal(served.predict(holes, params=SCORES)["probability"].to_numpy(),
                                  model.predict_proba(holes)[:, 1])
    np.testing.assert_array_equal(served.predict(holes), model.predict(holes))


def test_a_step_saved_with_edited_state_is_refused_naming_the_step(tmp_path, monkeypatch):
    import skops.io

    from fairops.mlflow import sealing

    monkeypatch.delenv("FAIROPS_MODEL_KEY", raising=False)
    model, X, _ = fitted("everyday ColumnTransformer")
    path = tmp_path / "model"
    classifier.save_model(model, path, input_example=X.head(3), pip_requirements=[])
    model_file = path / "data" / classifier.MODEL_FILE
    edited = skops.io.loads(model_file.read_bytes(), trusted=list(classifier.TRUSTED_TYPES))
    scaler = edited.named_steps["encode"].named_transformers_["numbers"].named_steps["scale"]
    scaler.scale_ = scaler.scale_[:-1]
    model_file.write_bytes(skops.io.dumps(edited))
    sealing.seal(path)
    with pytest.raises(ModelFilesError, match=r"model.skops.*StandardScaler: scale_ has shape \(5,\), expected "
                                              r"\(6,\)"):
        loader.load_native(str(path))


def test_an_encoding_with_an_empty_part_loads(tmp_path, monkeypatch):
    """A tuned family's encoding of numbers only has an empty categorical part (and an empty remainder)."""
    import optuna

    from fairops.tuning._search_space import make_model
    from tests.mlflow_models.preprocessing_cases import NUMBERS, rows

    monkeypatch.delenv("FAIROPS_MODEL_KEY", raising=False)
    X, y = rows(200, 0)
    X = X[NUMBERS]
    trial = optuna.trial.FixedTrial({"lr_C": 1.0, "lr_penalty": "l2", "lr_tol": 1e-4, "lr_max_iter": 200})
    model = make_model(trial, families=["logistic_regression"], X_example=X).fit(X, y)
    assert [columns for name, _, columns in model[0].transformers_ if name == "categorical"] == [[]]
    classifier.save_model(model, tmp_path / "model", input_example=X.head(3), pip_requirements=[])
    np.testing.assert_array_equal(loader.load_native(str(tmp_path / "model")).predict_proba(X), model.predict_proba(X))
