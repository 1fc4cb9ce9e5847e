"""A fitted FairLOF detector as plain data (JSON-able metadata + NumPy arrays) and back.

The arrays are the training rows, the neighbour arrays, the sensitive codes, the group statistics
and the scores; nothing in them is code. :func:`from_state` checks the rows, neighbours, codes and
parameters (:mod:`fairops.fairlof._state_checks`), derives everything else again as fit does and
refuses a saved copy that differs; the neighbour search is built again from the rows when new rows
are first scored.

>>> import numpy as np
>>> from fairops.fairlof import FairLOF
>>> rng = np.random.default_rng(0)
>>> det = FairLOF(n_neighbors=3, novelty=True).fit(rng.normal(size=(30, 2)), sensitive_features=rng.integers(0, 2, 30))
>>> meta, arrays = get_state(det)
>>> bool((from_state(FairLOF, meta, arrays).outlier_scores_ == det.outlier_scores_).all())
True
>>> from_state(FairLOF, {**meta, "offset": 0.5}, arrays)
Traceback (most recent call last):
...
fairops.errors.InputError: saved offset 0.5 differs from ..., what the saved arrays and parameters give
"""

from __future__ import annotations

import numbers

import numpy as np

from .._state_checks import only_names
from ..errors import InputError
from ._inputs import group_weights
from ._state_checks import DERIVED, STATE_ARRAYS, check_arrays, check_same

#: Version of the saved state; 2 = the paper's equations (with the per-value option).
STATE_VERSION = 2
#: Scalars of the metadata that fit derives; each must equal what deriving it again gives.
DERIVED_SCALARS = ("fitted_lambda", "offset", "clamped_rows", "clamped_pairs")


def get_state(det) -> tuple[dict, dict]:
    """(meta, arrays) of a fitted detector."""
    params = det.get_params()
    if isinstance(params["c"], np.ndarray):
        params["c"] = params["c"].tolist()
    meta = {
        "state_version": STATE_VERSION,
        "params": params,
        "fitted_lambda": det.fitted_lambda_,
        "top_t": det.top_t_,
        "n_neighbors": det.n_neighbors_,
        "offset": det.offset_,
        "clamped_rows": det.clamped_rows_,
        "clamped_pairs": det.clamped_pairs_,
        "sensitive_names": list(det.sensitive_names_),
        "sensitive_labels": [list(values) for values in det.sensitive_labels_],
        "feature_names_in": [str(name) for name in getattr(det, "feature_names_in_", [])] or None,
    }
    arrays = {
        "fit_X": det._fit_X,
        "neighbors": det._hood.neighbors,
        "distances": det._hood.distances,
        "k_distances": det.k_distances_,
        "codes": det._codes,
        "n_values": det.n_values_,
        "data_share": det.data_share_,
        "outlier_share": det.outlier_share_,
        "c": det.c_,
        "skew": det.skew_,
        "direction": det.direction_,
        "coefficients": det.coefficients_,
        "lof_scores": det.lof_scores_,
        "outlier_scores": det.outlier_scores_,
        "fair_lrd": det._fair.lrd,
        "fair_k_distances": det._fair.k_distances,
        "outliers": det.outliers_,
        "plain_outliers": det.plain_outliers_,
    }
    return meta, {name: np.asarray(value) for name, value in arrays.items()}


def _saved_count(value, name: str, n_rows: int) -> int:
    # typeshed's numbers ABCs define no ordering with int
    if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
            or not 1 <= value <= n_rows):  # type: ignore[operator]
        raise InputError(f"saved {name} must be an integer in [1, {n_rows}] (the fitted rows), got {value!r}")
    return int(value)


def _plain_labels(values) -> bool:
    return isinstance(values, list) and all(isinstance(value, (str, int, float)) for value in values) \
        and len(set(values)) == len(values)


def _new_detector(cls, meta: dict, arrays: dict):
    """The unfitted detector of the saved parameters, which fit the saved rows."""
    if not isinstance(meta, dict) or not isinstance(meta.get("params"), dict) or not isinstance(arrays, dict):
        raise InputError("FairLOF state must be a dict of metadata with a 'params' dict, and a dict of arrays")
    if meta.get("state_version") != STATE_VERSION:
        raise InputError(
            f"saved FairLOF state has version {meta.get('state_version')!r}; this fairops reads version "
            f"{STATE_VERSION} (the paper's equations). Refit and save the detector again"
        )
    try:
        det = cls(**meta["params"])
    except TypeError as error:
        raise TypeError(f"saved params do not fit FairLOF: {error}") from None
    only_names(arrays, STATE_ARRAYS, "FairLOF")
    return det


def _set_sensitive_names(det, meta: dict) -> None:
    names, labels = meta.get("sensitive_names"), meta.get("sensitive_labels")
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names) or not isinstance(
            labels, list) or len(labels) != len(names) or not all(_plain_labels(values) for values in labels):
        raise InputError("saved sensitive_names must be a list of strings and sensitive_labels one list of "
                         "distinct labels per name")
    det.sensitive_names_ = tuple(names)
    det.sensitive_labels_ = tuple(tuple(values) for values in labels)


def _set_feature_names(det, feature_names) -> None:
    if not feature_names:
        return
    if not isinstance(feature_names, list) or len(feature_names) != det.n_features_in_ or not all(
            isinstance(name, str) for name in feature_names):
        raise InputError(f"saved feature_names_in must hold {det.n_features_in_} strings, got {feature_names!r}")
    det.feature_names_in_ = np.asarray(feature_names, dtype=object)


def _check_derived(det, meta: dict, arrays: dict) -> None:
    """Refuse saved arrays and scalars that differ from what the detector derived again."""
    derived = {name: getattr(det, name + "_", None) for name in DERIVED}
    derived.update(fair_lrd=det._fair.lrd, fair_k_distances=det._fair.k_distances)
    for name in DERIVED:
        check_same(name, arrays[name], derived[name])
    for key in DERIVED_SCALARS:
        saved, value = meta.get(key), getattr(det, key + "_")
        if isinstance(saved, bool) or not isinstance(saved, numbers.Real) or saved != value:
            raise InputError(f"saved {key} {saved!r} differs from {value!r}, what the saved arrays and "
                             "parameters give")


def from_state(cls, meta: dict, arrays: dict):
    """Rebuild a fitted ``cls`` from :func:`get_state`'s output; a ValueError (TypeError for a wrong dtype)
    names the first bad entry."""
    det = _new_detector(cls, meta, arrays)
    n_rows = np.shape(arrays["fit_X"])[0] if np.ndim(arrays["fit_X"]) else 0
    strength, weight_exponent, share_exponent = det._check_params(n_rows)
    det.top_t_ = _saved_count(meta.get("top_t"), "top_t", n_rows)
    det.n_neighbors_ = _saved_count(meta.get("n_neighbors"), "n_neighbors", n_rows)
    if det.n_neighbors_ != det.n_neighbors:
        raise InputError(f"saved n_neighbors={det.n_neighbors_} differs from the parameter {det.n_neighbors!r}")
    _set_sensitive_names(det, meta)
    checked = check_arrays(arrays, n_neighbors=det.n_neighbors_,
                           n_values=[len(values) for values in det.sensitive_labels_])
    det._fit_X = checked["fit_X"]
    det.n_features_in_ = det._fit_X.shape[1]
    _set_feature_names(det, meta.get("feature_names_in"))
    det._codes = checked["codes"]
    det.c_ = group_weights(det.c, det.sensitive_names_)
    n_values = np.array([len(values) for values in det.sensitive_labels_], dtype=np.intp)
    det._score_neighbours(checked["distances"], checked["neighbors"], n_values, strength, weight_exponent,
                          share_exponent)
    _check_derived(det, meta, arrays)
    # the search itself is built again from the rows when new rows are first scored
    _, det.search_algorithm_ = det._neighbor_search(det._fit_X.shape)
    det._search = None
    return det
