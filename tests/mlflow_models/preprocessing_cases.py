"""scikit-learn's everyday preprocessing steps, each fitted in a small Pipeline before a classifier, for the
round-trip tests (tests/mlflow_models/test_preprocessing_steps.py) and the fuzz harness
(tests/mlflow_models/classifier_fuzz_cases.py).

Every transformer of ``sklearn.impute``, ``sklearn.preprocessing`` (not ``FunctionTransformer``, which runs
any function, nor the label encoders ``LabelEncoder``, ``LabelBinarizer`` and ``MultiLabelBinarizer``, which
encode targets, not rows), ``sklearn.compose`` (a ColumnTransformer with a remainder and
``make_column_selector``), ``sklearn.feature_selection``, ``PCA`` and ``TruncatedSVD``; each case says which
rows it is fitted on: numbers (non-negative, for ``chi2``), numbers with missing values, text categories,
both, or a kernel matrix (``KernelCenterer``).
"""

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.decomposition import PCA, TruncatedSVD
from sklearn.experimental import enable_iterative_imputer  # noqa: F401 - makes IterativeImputer importable
from sklearn.feature_selection import (
    RFE,
    RFECV,
    GenericUnivariateSelect,
    SelectFdr,
    SelectFpr,
    SelectFromModel,
    SelectFwe,
    SelectKBest,
    SelectPercentile,
    SequentialFeatureSelector,
    VarianceThreshold,
    chi2,
    mutual_info_classif,
)
from sklearn.impute import IterativeImputer, KNNImputer, MissingIndicator, SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (
    Binarizer,
    KBinsDiscretizer,
    KernelCenterer,
    MaxAbsScaler,
    MinMaxScaler,
    Normalizer,
    OneHotEncoder,
    OrdinalEncoder,
    PolynomialFeatures,
    PowerTransformer,
    QuantileTransformer,
    RobustScaler,
    SplineTransformer,
    StandardScaler,
    TargetEncoder,
)
from sklearn.tree import DecisionTreeClassifier

NUMBERS = ["a", "b", "c", "d"]
CATEGORIES = ["colour", "size"]


def rows(n: int, seed: int, missing: bool = False):
    """(X, y): four non-negative numbers and two text categories; with ``missing``, a tenth of ``a``, a
    twentieth of ``c`` and of ``colour`` missing."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.gamma(2.0, size=n), "b": rng.uniform(0, 5, n), "c": rng.exponential(2.0, n),
                      "d": rng.uniform(0, 1, n) * (rng.random(n) < 0.9),
                      "colour": rng.choice(["blue", "green", "red"], n),
                      "size": rng.choice(["L", "M", "S", "XL"], n, p=[0.3, 0.4, 0.25, 0.05])})
    logit = X["a"] - 0.6 * X["b"] + 0.4 * X["c"] + 1.2 * (X["colour"] == "red") - 0.8 * (X["size"] == "S")
    y = (logit + rng.logistic(size=n) > 0.8).astype(int).to_numpy()
    if missing:
        X.loc[rng.random(n) < 0.1, "a"] = np.nan
        X.loc[rng.random(n) < 0.05, "c"] = np.nan
        X.loc[rng.random(n) < 0.05, "colour"] = None
    return X, y


def kernel_rows(n: int, seed: int, centres: np.ndarray | None = None):
    """(K, y, centres): RBF kernel values of ``n`` points against 40 fixed centres (the training points)."""
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(n, 2))
    centres = points[:40] if centres is None else centres
    kernel = np.exp(-((points[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2))
    y = (points[:, 0] + 0.5 * points[:, 1] + rng.logistic(size=n) * 0.3 > 0).astype(int)
    return pd.DataFrame(kernel, columns=[f"k{i}" for i in range(40)]), y, centres


def _model():
    return LogisticRegression(max_iter=500)


def _on(step, name="step"):
    return Pipeline([(name, step), ("model", _model())])


def _everyday():
    """The Pipeline of the issue: imputed and scaled numbers, one-hot categories, in a ColumnTransformer."""
    numbers = Pipeline([("impute", SimpleImputer(add_indicator=True)), ("scale", StandardScaler())])
    categories = Pipeline([("impute", SimpleImputer(strategy="most_frequent", add_indicator=True)),
                           ("one_hot", OneHotEncoder(handle_unknown="ignore"))])
    encode = ColumnTransformer([("numbers", numbers, NUMBERS), ("categories", categories, CATEGORIES)])
    return Pipeline([("encode", encode), ("model", _model())])


#: case id -> (unfitted Pipeline, rows it is fitted on: "numbers", "missing", "categories", "mixed",
#: "mixed missing" or "kernel")
CASES = {
    "everyday ColumnTransformer": (_everyday, "mixed missing"),
    "SimpleImputer mean": (lambda: _on(SimpleImputer()), "missing"),
    "SimpleImputer most_frequent + indicator": (
        lambda: _on(SimpleImputer(strategy="most_frequent", add_indicator=True)), "missing"),
    "SimpleImputer constant, empty feature kept": (
        lambda: _on(SimpleImputer(strategy="constant", fill_value=-1.0, keep_empty_features=True)), "missing"),
    "KNNImputer + indicator": (lambda: _on(KNNImputer(n_neighbors=3, add_indicator=True)), "missing"),
    "IterativeImputer": (lambda: _on(IterativeImputer(max_iter=3, random_state=0)), "missing"),
    "MissingIndicator beside SimpleImputer": (lambda: _on(ColumnTransformer(
        [("flags", MissingIndicator(), NUMBERS), ("values", SimpleImputer(strategy="median"), NUMBERS)])),
        "missing"),
    "Binarizer": (lambda: _on(Binarizer(threshold=1.0)), "numbers"),
    "KBinsDiscretizer one-hot": (lambda: _on(KBinsDiscretizer(n_bins=4, quantile_method="averaged_inverted_cdf")),
                                 "numbers"),
    "KBinsDiscretizer ordinal": (lambda: _on(KBinsDiscretizer(n_bins=3, encode="ordinal", strategy="uniform")),
                                 "numbers"),
    "KernelCenterer": (lambda: _on(KernelCenterer()), "kernel"),
    "MaxAbsScaler": (lambda: _on(MaxAbsScaler()), "numbers"),
    "MinMaxScaler clip": (lambda: _on(MinMaxScaler(clip=True)), "numbers"),
    "Normalizer": (lambda: _on(Normalizer()), "numbers"),
    "OneHotEncoder drop first": (lambda: _on(OneHotEncoder(drop="first", handle_unknown="ignore")), "categories"),
    "OneHotEncoder infrequent": (lambda: _on(OneHotEncoder(min_frequency=0.1, handle_unknown="infrequent_if_exist")),
                                 "categories"),
    "OrdinalEncoder": (lambda: _on(OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)),
                       "categories"),
    "PolynomialFeatures": (lambda: _on(PolynomialFeatures(degree=2)), "numbers"),
    "PowerTransformer": (lambda: _on(PowerTransformer()), "numbers"),
    "QuantileTransformer": (lambda: _on(QuantileTransformer(n_quantiles=50)), "numbers"),
    "RobustScaler": (lambda: _on(RobustScaler()), "numbers"),
    "SplineTransformer": (lambda: _on(SplineTransformer(n_knots=4)), "numbers"),
    "StandardScaler": (lambda: _on(StandardScaler()), "numbers"),
    "TargetEncoder": (lambda: _on(TargetEncoder(random_state=0)), "categories"),
    "ColumnTransformer column selectors, remainder a step": (lambda: _on(ColumnTransformer(
        [("numbers", StandardScaler(), make_column_selector(dtype_include="number")),
         ("categories", OneHotEncoder(handle_unknown="ignore"), make_column_selector(pattern="colour"))],
        remainder=OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1))), "mixed"),
    "ColumnTransformer remainder passthrough": (lambda: _on(ColumnTransformer(
        [("categories", OneHotEncoder(handle_unknown="ignore"), CATEGORIES)], remainder="passthrough")), "mixed"),
    "GenericUnivariateSelect": (lambda: _on(GenericUnivariateSelect(mode="k_best", param=2)), "numbers"),
    "RFE": (lambda: _on(RFE(_model(), n_features_to_select=2)), "numbers"),
    "RFECV": (lambda: _on(RFECV(_model(), cv=3)), "numbers"),
    "SelectFdr": (lambda: _on(SelectFdr(alpha=0.5)), "numbers"),
    "SelectFpr": (lambda: _on(SelectFpr(alpha=0.5)), "numbers"),
    "SelectFromModel": (lambda: _on(SelectFromModel(DecisionTreeClassifier(max_depth=3, random_state=0))),
                        "numbers"),
    "SelectFwe": (lambda: _on(SelectFwe(alpha=0.5)), "numbers"),
    "SelectKBest chi2": (lambda: _on(SelectKBest(chi2, k=2)), "numbers"),
    "SelectKBest mutual information": (lambda: _on(SelectKBest(mutual_info_classif, k=3)), "numbers"),
    "SelectPercentile": (lambda: _on(SelectPercentile(percentile=50)), "numbers"),
    "SequentialFeatureSelector": (lambda: _on(SequentialFeatureSelector(_model(), n_features_to_select=2, cv=3)),
                                  "numbers"),
    "VarianceThreshold": (lambda: _on(VarianceThreshold(threshold=0.1)), "numbers"),
    "PCA whitened": (lambda: _on(PCA(n_components=3, whiten=True)), "numbers"),
    "TruncatedSVD": (lambda: _on(TruncatedSVD(n_components=2, random_state=0)), "numbers"),
}


def fitted(case: str, n: int = 300):
    """``(fitted Pipeline, training X, new rows X)`` of a case; new rows come from another seed."""
    factory, kind = CASES[case]
    if kind == "kernel":
        X, y, centres = kernel_rows(40, 0)
        new, _, _ = kernel_rows(30, 1, centres)
        return factory().fit(X, y), X, new
    missing = "missing" in kind
    X, y = rows(n, 0, missing)
    new, _ = rows(60, 1, missing)
    columns = {"numbers": NUMBERS, "missing": NUMBERS, "categories": CATEGORIES}.get(kind, NUMBERS + CATEGORIES)
    return factory().fit(X[columns], y), X[columns], new[columns]
