"""InputSchema: what a served model takes, read off the training frame and the fitted model; each refusal."""

import numpy as np
import optuna
import pandas as pd
import pytest
from sklearn.pipeline import Pipeline

from fairops.datasets import load_adult, load_german
from fairops.models import (
    Column,
    InputSchema,
    RestoreCategories,
    columns_taking_missing_values,
    takes_unseen_categories,
)
from fairops.tuning._search_space import fit_model, make_model

optuna.logging.set_verbosity(optuna.logging.WARNING)


@pytest.fixture(scope="module")
def adult():
    data = load_adult()
    return data.X.iloc[:1500].reset_index(drop=True), data.y[:1500]


@pytest.fixture(scope="module")
def schema(adult):
    return InputSchema.from_frame(adult[0])


def _row(adult, **changes):
    """One real Adult row as a client sends it (text, not pandas categories), with some values changed."""
    X = adult[0]
    row = X.iloc[[0]].astype({c: object for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)})
    for name, value in changes.items():
        row[name] = pd.Series([value], dtype=object)
    return row


def test_schema_of_adult_lists_every_column_with_its_kind_and_categories(adult, schema):
    X = adult[0]
    assert [c.name for c in schema.columns] == list(X.columns)
    kinds = {c.name: c.kind for c in schema.columns}
    assert kinds["age"] == "integer" and kinds["sex"] == "category" and kinds["hours-per-week"] == "integer"
    sex = next(c for c in schema.columns if c.name == "sex")
    assert set(sex.categories) == {"Female", "Male"}
    assert InputSchema.from_dict(schema.to_dict()) == schema


def test_a_good_row_comes_back_in_training_dtypes(adult, schema):
    checked = schema.check(_row(adult))
    assert list(checked.columns) == list(adult[0].columns)
    assert checked["age"].dtype == np.int64 and checked["sex"].iloc[0] == adult[0]["sex"].iloc[0]
    assert checked["sex"].dtype == adult[0]["sex"].dtype  # the training categories, in their order
    text = InputSchema.from_frame(adult[0].astype({"sex": object}))
    assert text.check(_row(adult, sex="any text"))["sex"].tolist() == ["any text"]  # plain text: no categories
    floats = _row(adult, age=40.0)  # JSON numbers arrive as floats; 40.0 is a whole number
    assert schema.check(floats)["age"].tolist() == [40]


@pytest.mark.parametrize("changes, message", [
    ({"age": 40.5}, "column 'age' must hold whole numbers; row 0 has 40.5"),
    ({"age": "forty"}, "column 'age' must hold numbers; row 0 has 'forty'"),
    ({"age": True}, "column 'age' must hold numbers; row 0 has True"),
    ({"age": float("inf")}, "column 'age' must hold finite numbers; row 0 has inf"),
    ({"sex": "Alien"}, "column 'sex' has the category 'Alien' in row 0, unseen in training (known: 'Female', 'Male')"),
    ({"sex": None}, "column 'sex' has a missing value in row 0; this model cannot take missing values"),
    ({"age": np.nan}, "column 'age' has a missing value in row 0; this model cannot take missing values"),
])
def test_a_row_that_breaks_the_schema_is_refused_in_one_line(adult, schema, changes, message):
    with pytest.raises(ValueError) as error:
        schema.check(_row(adult, **changes))
    assert str(error.value) == message and "\n" not in str(error.value)


def test_empty_missing_columns_and_the_row_named(adult, schema):
    with pytest.raises(ValueError, match="^input has no rows; send at least one row$"):
        schema.check(_row(adult).iloc[:0])
    with pytest.raises(ValueError, match=r"^input lacks the required column\(s\) \['age', 'sex'\]$"):
        schema.check(_row(adult).drop(columns=["age", "sex"]))
    rows = pd.concat([_row(adult), _row(adult), _row(adult, age=3.25)], ignore_index=True)
    with pytest.raises(ValueError, match="row 2 has 3.25"):
        schema.check(rows)
    with pytest.raises(TypeError, match="DataFrame"):
        schema.check([[1, 2]])


def test_long_category_lists_are_cut_in_the_message(adult, schema):
    with pytest.raises(ValueError, match=r"known: .*, \.\.\. \(\d+ in all\)\)$"):
        schema.check(_row(adult, **{"native-country": "Atlantis"}))


def test_what_a_model_takes_decides_what_is_refused(adult):
    X = adult[0]
    partly = InputSchema.from_frame(X, missing_values=["sex"])
    assert pd.isna(partly.check(_row(adult, sex=None))["sex"].iloc[0])
    with pytest.raises(ValueError, match="column 'age' has a missing value"):
        partly.check(_row(adult, age=None))
    lenient = InputSchema.from_frame(X, missing_values=True, unseen_categories=True)
    checked = lenient.check(_row(adult, sex="Alien", age=None))
    assert pd.isna(checked["sex"].iloc[0]) and np.isnan(checked["age"].iloc[0])  # unseen: an unknown category
    assert checked["age"].dtype == np.float64  # a missing whole number can only be a float


def _fitted(family, adult, seed=0, task=None):
    X, y = adult
    trial = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed)).ask()
    model = make_model(trial, profile="fast", families=[family], X_example=X, sensitive_columns=["sex"],
                       task=task or load_adult().task)
    model = fit_model(model, X, y, X[["sex"]])
    return Pipeline([("restore_categories", RestoreCategories().fit(X)), ("model", model)])


CATEGORICAL = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex",
               "native-country"]


@pytest.mark.parametrize("family, missing, unseen", [
    # one-hot encoding that ignores unknown categories takes a missing category, not a missing number
    ("logistic_regression", CATEGORICAL, True),
    ("mlp", CATEGORICAL, True),
    ("lightgbm", "all", False),   # LightGBM takes missing values; an unseen category it would only see as missing
    ("scaff_forest", [], False),
])
def test_what_each_family_takes_is_read_off_the_fitted_model(adult, family, missing, unseen):
    served = _fitted(family, adult)
    X = adult[0]
    expected = list(X.columns) if missing == "all" else missing
    assert columns_taking_missing_values(served, X) == expected
    assert takes_unseen_categories(served) is unseen
    schema = InputSchema.for_model(served, X)
    assert [c.name for c in schema.columns if c.missing] == expected and schema.unseen_categories is unseen
    assert served.predict_proba(schema.check(_row(adult))).shape == (1, 2)
    for column in X.columns:  # what the schema lets through, the model answers; what it refuses, the model cannot
        row = _row(adult, **{column: None})
        if column in expected:
            assert np.isfinite(served.predict_proba(schema.check(row))).all()
        else:
            with pytest.raises(ValueError, match=f"column '{column}' has a missing value"):
                schema.check(row)
    if unseen:
        assert np.isfinite(served.predict_proba(schema.check(_row(adult, sex="Alien")))).all()


@pytest.mark.parametrize("family", ["decision_tree", "random_forest"])
def test_trees_are_probed_not_trusted_on_their_tags(adult, family):
    # scikit-learn tags these trees allow_nan, yet a forest fitted without missing values refuses them
    served = _fitted(family, adult)
    X = adult[0]
    taking = columns_taking_missing_values(served, X)
    for column in X.columns:
        row = _row(adult, **{column: None}).astype({c: float for c in X.columns if X[c].dtype.kind in "if"})
        try:
            answered = np.isfinite(served.predict_proba(row)).all()
        except ValueError:
            answered = False
        assert answered == (column in taking)


class _CountedCalls:
    """A fitted model whose ``predict_proba`` calls are counted."""

    def __init__(self, model):
        self.model, self.calls = model, 0

    def predict_proba(self, X):
        self.calls += 1
        return self.model.predict_proba(X)


def _one_column_at_a_time(model, X):
    """The oracle: each column probed on its own one-row frame, as a client would send it."""
    row = X.iloc[[0]].astype({c: object for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)})
    taking = []
    for column in X.columns:
        probe = row.copy()
        probe[column] = pd.Series([None], index=probe.index, dtype=object if row[column].dtype == object else float)
        try:
            answered = np.isfinite(np.asarray(model.predict_proba(probe), dtype=float)).all()
        except Exception:  # noqa: BLE001 - whatever the model raises, it refuses the value
            answered = False
        if answered:
            taking.append(column)
    return taking


@pytest.fixture(scope="module")
def german():
    data = load_german()
    return data.X.iloc[:300].reset_index(drop=True), data.y[:300]


@pytest.mark.parametrize("family, calls", [
    ("lightgbm", 1),               # takes every column: one batch
    ("logistic_regression", 10),   # the batch raises, the categories take it: 1 + 2 batches + 7 numbers alone
    ("scaff_forest", 24),          # refuses every column: 1 + 2 batches + 21 alone
])
def test_batched_probes_give_the_answer_of_one_column_at_a_time(german, family, calls):
    served = _fitted(family, german, task=load_german().task)
    counted = _CountedCalls(served)
    assert columns_taking_missing_values(counted, german[0]) == _one_column_at_a_time(served, german[0])
    assert counted.calls == calls


def test_a_column_whose_probe_raises_is_told_apart_from_its_batch():
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"imputed": rng.normal(size=80), "raw": rng.normal(size=80), "count": rng.integers(0, 9, 80),
                      "colour": pd.Series(rng.choice(["red", "blue"], 80), dtype=object)})
    y = (X["raw"] + rng.normal(size=80) > 0).astype(int)
    model = Pipeline([("columns", ColumnTransformer([
        ("imputed", SimpleImputer(), ["imputed", "count"]), ("raw", "passthrough", ["raw"]),
        ("colour", OneHotEncoder(handle_unknown="ignore"), ["colour"])])), ("model", LogisticRegression())]).fit(X, y)
    # a missing "raw" value reaches LogisticRegression, which raises for the whole batch; the others are taken
    assert columns_taking_missing_values(model, X) == _one_column_at_a_time(model, X) == ["imputed", "count", "colour"]
    schema = InputSchema.for_model(model, X.assign(raw=X["raw"].where(X.index > 0)), missing_seen_only=True)
    assert [c.name for c in schema.columns if c.missing] == []  # raw had missing values, but the model refuses them
    schema = InputSchema.for_model(model, X.assign(count=X["count"].where(X.index > 0)), missing_seen_only=True)
    assert [c.name for c in schema.columns if c.missing] == ["count"]


@pytest.mark.parametrize("document, message", [
    ({"columns": "age"}, "'columns' list"),
    ({"columns": [{"name": "age", "kind": "date"}]}, "kind must be one of"),
    ({"columns": [{"name": "age", "kind": "integer", "categories": ["a"]}]}, "only a category column"),
    ({"columns": [{"name": "a", "kind": "integer"}, {"name": "a", "kind": "number"}]}, "each column once"),
    ({"columns": [{"name": "a", "kind": "integer", "code": "os.system"}]}, "name, kind, categories and missing only"),
    ({"columns": [{"name": "a", "kind": "integer"}], "unseen_categories": "yes"}, "true or false"),
    ({"columns": [{"name": "a", "kind": "integer", "missing": 1}]}, "missing must be true or false"),
    ({"columns": [], "loader": "x"}, "'unseen_categories' only"),
])
def test_malformed_schema_documents_are_refused(document, message):
    with pytest.raises(ValueError, match=message):
        InputSchema.from_dict(document)


def test_columns_of_kinds_a_served_model_cannot_take_are_refused_at_save():
    with pytest.raises(TypeError, match="column 'when' has dtype datetime64"):
        InputSchema.from_frame(pd.DataFrame({"when": pd.to_datetime(["2024-01-01"])}))
    with pytest.raises(TypeError, match="column names must be text"):
        InputSchema.from_frame(pd.DataFrame({0: [1.0]}))
    assert Column("flag", "boolean").kind == "boolean"
    flags = InputSchema.from_frame(pd.DataFrame({"flag": [True, False]}))
    with pytest.raises(ValueError, match="column 'flag' must hold true or false; row 0 has 1"):
        flags.check(pd.DataFrame({"flag": [1]}))
