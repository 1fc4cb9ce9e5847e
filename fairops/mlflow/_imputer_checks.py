"""Checks of the fitted state of scikit-learn's imputers (SimpleImputer, MissingIndicator, KNNImputer,
IterativeImputer): statistics, recorded dtypes, the rows KNN imputes from, the per-feature regressors of
IterativeImputer and the missing-value indicator each may add."""

from __future__ import annotations

import numpy as np

from .._state_checks import check_shape
from ..errors import InputError
from ._step_state import read_count, read_floats, read_indices, read_mask, read_n_features


def check_simple_imputer(model, owner: str) -> None:
    n = read_n_features(model, owner)
    fitted = vars(model)
    for name in ("_fit_dtype", "_fill_dtype"):
        dtype = fitted.get(name)
        if name in fitted and (not isinstance(dtype, np.dtype) or dtype.kind not in "biufO"):
            raise InputError(f"{owner}: {name} must be a numeric or object dtype, got {dtype!r}")
    statistics = np.asarray(fitted.get("statistics_"))
    check_shape(f"{owner}: statistics_", statistics, (n,))
    if statistics.dtype.kind == "f":
        if np.isinf(statistics).any():
            raise InputError(f"{owner}: statistics_ holds an infinite value")
        if model.keep_empty_features and np.isnan(statistics).any():
            raise InputError(f"{owner}: statistics_ holds NaN, the mark of an empty feature it keeps")
    elif statistics.dtype.kind not in "biuO":
        raise InputError(f"{owner}: statistics_ has dtype {statistics.dtype}; expected numbers or objects")
    _check_indicator(model, owner, n)


def _check_indicator(model, owner: str, n: int) -> None:
    indicator = vars(model).get("indicator_")
    if model.add_indicator != (indicator is not None):
        raise InputError(f"{owner}: add_indicator is {model.add_indicator} but indicator_ is {indicator!r}")
    if indicator is not None and read_n_features(indicator, f"{owner}'s indicator_") != n:
        raise InputError(f"{owner}: its indicator_ reads {indicator.n_features_in_} features, it {n}")


def check_missing_indicator(model, owner: str) -> None:
    n = read_n_features(model, owner)
    fitted = vars(model)
    if read_count(owner, "_n_features", fitted.get("_n_features"), 1) != n:
        raise InputError(f"{owner}: _n_features {fitted.get('_n_features')} differs from n_features_in_ {n}")
    read_indices(owner, "features_", fitted.get("features_"), n)


def check_knn_imputer(model, owner: str) -> None:
    n = read_n_features(model, owner)
    fitted = vars(model)
    data = read_floats(owner, "_fit_X", fitted.get("_fit_X"), (None, n), finite=False)
    if np.isinf(data).any():
        raise InputError(f"{owner}: _fit_X holds an infinite value")
    mask = np.asarray(fitted.get("_mask_fit_X"))
    if mask.dtype != bool or mask.shape != data.shape or not np.array_equal(mask, np.isnan(data)):
        raise InputError(f"{owner}: _mask_fit_X must flag the missing values of _fit_X")
    valid = read_mask(owner, "_valid_mask", fitted.get("_valid_mask"), n)
    if not np.array_equal(valid, ~mask.all(axis=0)):
        raise InputError(f"{owner}: _valid_mask must flag the features _fit_X holds a value of")
    if not callable(model.metric) and model.metric != "nan_euclidean":
        raise InputError(f"{owner}: metric {model.metric!r} is not one KNNImputer takes")
    read_count(owner, "n_neighbors", model.n_neighbors, 1)
    _check_indicator(model, owner, n)


def check_iterative_imputer(model, owner: str) -> None:
    from sklearn.impute import SimpleImputer

    n = read_n_features(model, owner)
    fitted = vars(model)
    initial = fitted.get("initial_imputer_")
    if type(initial) is not SimpleImputer:
        raise InputError(f"{owner}: initial_imputer_ must be a SimpleImputer")
    check_simple_imputer(initial, f"{owner}'s initial_imputer_")
    empty = read_mask(owner, "_is_empty_feature", fitted.get("_is_empty_feature"), n)
    width = n if model.keep_empty_features else int((~empty).sum())
    for name in ("_min_value", "_max_value"):
        read_floats(owner, name, fitted.get(name), (width,), finite=False)
    if np.isnan(fitted["_min_value"]).any() or np.isnan(fitted["_max_value"]).any():
        raise InputError(f"{owner}: _min_value and _max_value must be numbers")
    sequence = fitted.get("imputation_sequence_")
    if not isinstance(sequence, list):
        raise InputError(f"{owner}: imputation_sequence_ must be a list")
    for number, triplet in enumerate(sequence):
        where = f"{owner}: imputation_sequence_[{number}]"
        if type(triplet).__name__ != "_ImputerTriplet" or len(triplet) != 3:
            raise InputError(f"{where} must be an _ImputerTriplet")
        feature, neighbours, estimator = triplet
        read_count(where, "feat_idx", feature, 0, width - 1)
        neighbours = read_indices(where, "neighbor_feat_idx", neighbours, width)
        if not hasattr(estimator, "predict") or not hasattr(estimator, "n_features_in_") \
                or read_count(where, "its estimator's n_features_in_", estimator.n_features_in_) != len(neighbours):
            raise InputError(f"{where}: its estimator must be a fitted regressor of its {len(neighbours)} neighbours")
        if "coef_" in vars(estimator):  # a linear regressor (BayesianRidge, the default)
            read_floats(where, "its estimator's coef_", estimator.coef_, (len(neighbours),))
            read_floats(where, "its estimator's intercept_", estimator.intercept_, ())
        if model.sample_posterior:
            sigma = np.asarray(vars(estimator).get("sigma_"))
            read_floats(where, "its estimator's sigma_", sigma, (len(neighbours), len(neighbours)))
    read_count(owner, "n_iter_", fitted.get("n_iter_"), 0)
    _check_indicator(model, owner, n)
