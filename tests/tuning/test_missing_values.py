"""Every tuned family fits and scores rows with missing values: Adult's own (``?`` kept), budget slices included.

A family that one-hot encodes imputes inside the model (median or most frequent value, plus a missing-value
indicator per such column); LightGBM and SCAFF split on missing values; the encoding of data without missing
values is the one it always was.
"""

import numpy as np
import optuna
import pytest

from fairops.datasets import load_adult
from fairops.models._families import FAMILIES
from fairops.tuning._search_space import fit_model, make_model

optuna.logging.set_verbosity(optuna.logging.ERROR)


@pytest.fixture(scope="module")
def adult_with_holes():
    data = load_adult(keep_missing=True)
    rows = np.random.default_rng(0).choice(len(data.y), 1500, replace=False)
    X = data.X.iloc[rows].reset_index(drop=True)
    X["age"] = X["age"].astype(float).where(np.random.default_rng(1).random(1500) > 0.1)
    return data, X, data.y[rows], data.sensitive.iloc[rows].reset_index(drop=True)


@pytest.mark.slow  # eight families fitted on 1,500 rows
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_fits_and_scores_rows_with_missing_values(adult_with_holes, family):
    data, X, y, sensitive = adult_with_holes
    assert X[["age", "workclass", "occupation", "native-country"]].isna().any().all()
    trial = optuna.create_study(sampler=optuna.samplers.RandomSampler(3)).ask()
    model = fit_model(make_model(trial, families=[family], X_example=X, sensitive_columns=["sex"], task=data.task),
                      X, y, sensitive[["sex"]])
    holes = X.isna().any(axis=1).to_numpy()
    proba = model.predict_proba(X[holes])
    assert proba.shape == (holes.sum(), 2) and np.isfinite(proba).all()


def test_the_encoding_imputes_only_the_columns_with_missing_values(adult_with_holes):
    data, X, y, _ = adult_with_holes
    trial = optuna.trial.FixedTrial({"lr_C": 1.0, "lr_penalty": "l2", "lr_tol": 1e-4, "lr_max_iter": 200})
    encode = make_model(trial, families=["logistic_regression"], X_example=X)[0]
    parts = {name: columns for name, _, columns in encode.transformers}
    assert parts["categorical_imputed"] == ["workclass", "occupation", "native-country"]
    assert parts["numeric_imputed"] == ["age"] and "age" not in parts["numeric"]
    assert parts["missing"] == ["age", "workclass", "occupation", "native-country"]
    imputers = {name: step.named_steps["impute"].strategy for name, step, _ in encode.transformers
                if name.endswith("_imputed")}
    assert imputers == {"categorical_imputed": "most_frequent", "numeric_imputed": "median"}
    complete = load_adult().X.iloc[:500]
    plain = make_model(trial, families=["logistic_regression"], X_example=complete)[0]
    assert [name for name, _, _ in plain.transformers] == ["categorical", "numeric"]  # as it always was
    fitted = make_model(trial, families=["logistic_regression"], X_example=X).fit(X, y)
    scaled = fitted[0].transform(X.head(200))
    assert np.isfinite(np.asarray(scaled.todense() if hasattr(scaled, "todense") else scaled)).all()


def test_a_slice_without_any_value_of_a_column_keeps_the_column(adult_with_holes):
    """The smallest budget slices hold a few rows: one may lack every value of a column that others have; its
    imputer keeps the column (scikit-learn's default drops it, and the model would read fewer columns than the
    encoding gives rows of other data)."""
    _, X, y, _ = adult_with_holes
    trial = optuna.trial.FixedTrial({"lr_C": 1.0, "lr_penalty": "l2", "lr_tol": 1e-4, "lr_max_iter": 200})
    rows = X[X["age"].notna()].index[:40].append(X[X["age"].isna()].index[:20])
    slice_ = X.loc[rows].assign(age=np.nan)  # no age at all in this slice
    model = make_model(trial, families=["logistic_regression"], X_example=X).fit(slice_, y[rows])
    assert model[0].named_transformers_["numeric_imputed"].transform(X.head(30)[["age"]]).shape == (30, 1)
    assert np.isfinite(model.predict_proba(X.head(30))).all()
