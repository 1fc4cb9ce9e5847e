"""Checks of the fitted state of scikit-learn's categorical encoders and discretiser (OneHotEncoder,
OrdinalEncoder, TargetEncoder, KBinsDiscretizer): categories as their binary search finds them, drops,
infrequent-category maps and per-category encodings in range, bin edges rising."""

from __future__ import annotations

import numbers

import numpy as np

from .._state_checks import integers
from ..errors import InputError
from ._step_state import MAX_OUTPUT_COLUMNS, is_index, read_floats, read_indices, read_n_features


def _sorted_categories(owner: str, name: str, values) -> np.ndarray:
    """One feature's categories as scikit-learn's encoders find them by binary search: unique and sorted
    (a missing value, NaN or None, last)."""
    array = values if isinstance(values, np.ndarray) else None
    if array is None or array.ndim != 1 or array.dtype.kind not in "biufUSO" or len(array) == 0:
        raise InputError(f"{owner}: {name} must be a non-empty 1-D array of numbers or text")
    present = array
    if array.dtype.kind == "f":
        present = array[:-1] if np.isnan(array[-1]) else array
        if np.isnan(present).any() or np.isinf(present).any():
            raise InputError(f"{owner}: {name} holds a NaN or infinite category before its last")
    elif array.dtype.kind == "O":
        present = array[:-1] if array[-1] is None or (isinstance(array[-1], float) and np.isnan(array[-1])) \
            else array
        if not all(isinstance(v, str) for v in present) and not all(
                isinstance(v, numbers.Real) and np.isfinite(float(v)) for v in present):
            raise InputError(f"{owner}: {name} must hold text or finite numbers (or true/false), one kind")
    try:
        ordered = all(a < b for a, b in zip(present[:-1], present[1:]))
    except TypeError:
        ordered = False
    if not ordered:
        raise InputError(f"{owner}: {name} must be unique and sorted, as fit writes them")
    return array


def _categories(model, owner: str, n: int) -> list:
    categories = vars(model).get("categories_")
    if not isinstance(categories, list) or len(categories) != n:
        raise InputError(f"{owner}: categories_ must list the categories of its {n} features")
    return [_sorted_categories(owner, f"categories_[{i}]", values) for i, values in enumerate(categories)]


def _optional_indices(owner: str, name: str, value, sizes) -> None:
    """None, or per feature None or an index into that feature's ``sizes``."""
    if value is None:
        return
    array = np.asarray(value, dtype=object)
    if array.shape != (len(sizes),):
        raise InputError(f"{owner}: {name} must have one entry per feature ({len(sizes)})")
    for i, (index, size) in enumerate(zip(array, sizes)):
        if index is not None and not (is_index(index) and 0 <= int(index) < size):
            raise InputError(f"{owner}: {name}[{i}] = {index!r} is not an index into its {size} categories")


def _check_infrequent(model, owner: str, categories: list) -> None:
    """The mappings an encoder with infrequent categories reads (when it has them)."""
    fitted = vars(model)
    if not isinstance(fitted.get("_infrequent_enabled", False), bool):
        raise InputError(f"{owner}: _infrequent_enabled must be true or false")
    if not fitted.get("_infrequent_enabled"):
        return
    for name in ("_default_to_infrequent_mappings", "_infrequent_indices"):
        entries = fitted.get(name)
        if not isinstance(entries, list) or len(entries) != len(categories):
            raise InputError(f"{owner}: {name} must have one entry per feature")
        for i, (entry, known) in enumerate(zip(entries, categories)):
            if entry is None:
                continue
            values = read_indices(owner, f"{name}[{i}]", entry, len(known))
            if name == "_default_to_infrequent_mappings" and len(values) != len(known):
                raise InputError(f"{owner}: {name}[{i}] must map each of its {len(known)} categories")


def check_one_hot(model, owner: str) -> None:
    n = read_n_features(model, owner)
    categories = _categories(model, owner, n)
    _check_infrequent(model, owner, categories)
    sizes = [len(known) for known in categories]
    for name in ("drop_idx_", "_drop_idx_after_grouping"):
        _optional_indices(owner, name, vars(model).get(name), sizes)
    outs = vars(model).get("_n_features_outs")
    if not isinstance(outs, list) or outs != list(model._compute_n_features_outs()):
        raise InputError(f"{owner}: _n_features_outs {outs!r} differs from what its categories and drops give")


def check_ordinal(model, owner: str) -> None:
    n = read_n_features(model, owner)
    categories = _categories(model, owner, n)
    _check_infrequent(model, owner, categories)
    missing = vars(model).get("_missing_indices")
    if not isinstance(missing, dict) or not all(
            is_index(feature) and 0 <= int(feature) < n and is_index(index)
            and 0 <= int(index) < len(categories[int(feature)]) for feature, index in missing.items()):
        raise InputError(f"{owner}: _missing_indices must map features to the index of their missing category")


def check_target_encoder(model, owner: str) -> None:
    n = read_n_features(model, owner)
    categories = _categories(model, owner, n)
    _check_infrequent(model, owner, categories)
    kind = vars(model).get("target_type_")
    classes = np.asarray(vars(model).get("classes_")) if kind in ("binary", "multiclass") else np.zeros(0)
    if kind not in ("binary", "multiclass", "continuous") or classes.ndim != 1:
        raise InputError(f"{owner}: target_type_ {kind!r} is not one TargetEncoder fits")
    per_feature = len(classes) if kind == "multiclass" else 1
    encodings = vars(model).get("encodings_")
    if not isinstance(encodings, list) or len(encodings) != n * per_feature:
        raise InputError(f"{owner}: encodings_ must hold {n * per_feature} arrays")
    for index, encoding in enumerate(encodings):
        read_floats(owner, f"encodings_[{index}]", encoding, (len(categories[index // per_feature]),))
    read_floats(owner, "target_mean_", vars(model).get("target_mean_"), (per_feature,) if kind == "multiclass" else ())


def check_kbins(model, owner: str) -> None:
    from sklearn.preprocessing import OneHotEncoder

    n = read_n_features(model, owner)
    fitted = vars(model)
    counts = integers(f"{owner}: n_bins_", np.asarray(fitted.get("n_bins_")), shape=(n,), low=1,
                      high=MAX_OUTPUT_COLUMNS)
    edges = fitted.get("bin_edges_")
    if not isinstance(edges, np.ndarray) or edges.shape != (n,):
        raise InputError(f"{owner}: bin_edges_ must hold one array of edges per feature")
    for j, (feature_edges, count) in enumerate(zip(edges, counts)):
        values = read_floats(owner, f"bin_edges_[{j}]", feature_edges, (count + 1,))
        if np.any(np.diff(values) < 0):
            raise InputError(f"{owner}: bin_edges_[{j}] must rise")
    if model.encode != "ordinal":
        encoder = fitted.get("_encoder")
        if type(encoder) is not OneHotEncoder:
            raise InputError(f"{owner}: _encoder must be the OneHotEncoder of its bins")
        check_one_hot(encoder, f"{owner}'s _encoder")
        if [len(c) for c in encoder.categories_] != counts.tolist():
            raise InputError(f"{owner}: its _encoder's categories differ from its bins")
