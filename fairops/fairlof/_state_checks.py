"""Checks of a fitted FairLOF detector's saved state, run whenever one is rebuilt from it.

Scoring indexes the fitted rows' k-distances, lrd and sensitive codes with neighbour ids, and the
correction coefficients with sensitive codes. :func:`check_arrays` proves, in O(size) NumPy work,
that every such index stays inside its array and every input of the scores is finite: dtypes,
shapes consistent with each other (n fitted rows, k neighbours, attributes and their values) and
with the saved metadata, index ranges, features small enough for their distances not to overflow,
and neighbour distances as a search returns them (sorted, the k-th one the k-distance). Everything
else the state holds (group statistics, coefficients, lrd, k-distances and scores, both outlier
lists) is derived from these in O(n k); the detector derives it again as fit does and
:func:`check_same` refuses a saved copy that differs.

>>> import numpy as np
>>> from fairops.fairlof import FairLOF
>>> rng = np.random.default_rng(0)
>>> det = FairLOF(n_neighbors=3, novelty=True).fit(rng.normal(size=(30, 2)), sensitive_features=rng.integers(0, 2, 30))
>>> meta, arrays = det._get_state()
>>> arrays["neighbors"][4, 1] = 30
>>> check_arrays(arrays, n_neighbors=3, n_values=[2])
Traceback (most recent call last):
...
fairops.errors.InputError: neighbors[4, 1] = 30 is outside [0, 30)
"""

from __future__ import annotations

import numpy as np

from .._state_checks import first_false, floats, integers, only_names
from ..errors import InputError

STATE_ARRAYS = (
    "fit_X",
    "neighbors",
    "distances",
    "k_distances",
    "codes",
    "n_values",
    "data_share",
    "outlier_share",
    "c",
    "skew",
    "direction",
    "coefficients",
    "lof_scores",
    "outlier_scores",
    "fair_lrd",
    "fair_k_distances",
    "outliers",
    "plain_outliers",
)
# Arrays the detector derives from the others; each is compared with what deriving it again gives.
DERIVED = STATE_ARRAYS[6:]
# Squared differences of larger features overflow float64 (1.8e308), so distances would be infinite.
MAX_ABS_FEATURE = 1e150
# Derived arrays are recomputed by the same code; the tolerance only absorbs another CPU's rounding.
DERIVED_RTOL = 1e-9


def check_same(name: str, saved, derived) -> None:
    """Refuse ``saved`` unless it equals ``derived`` (same shape, values within :data:`DERIVED_RTOL`)."""
    saved, derived = np.asarray(saved), np.asarray(derived)
    if saved.shape != derived.shape:
        raise InputError(f"{name} has shape {saved.shape}; the other saved arrays give {derived.shape}")
    if saved.dtype.kind not in "biuf":
        raise TypeError(f"{name} has dtype {saved.dtype}; expected numbers")
    bad = first_false(np.isclose(saved, derived, rtol=DERIVED_RTOL, atol=1e-12) | (saved == derived))
    if bad is not None:
        index = ", ".join(str(int(i)) for i in np.unravel_index(bad, saved.shape))
        raise InputError(f"{name}[{index}] = {saved.ravel()[bad]} differs from {derived.ravel()[bad]}, the value "
                         "the other saved arrays and parameters give")


def check_arrays(arrays: dict, *, n_neighbors: int, n_values) -> dict:
    """The primary arrays (rows, neighbours, distances, codes) of a detector, checked, in kernel dtypes.

    ``n_values`` is the number of values of each sensitive attribute, from the saved labels.
    """
    only_names(arrays, STATE_ARRAYS, "FairLOF")
    fit_X = floats("fit_X", arrays["fit_X"], shape=(None, None), low=-MAX_ABS_FEATURE, high=MAX_ABS_FEATURE)
    n_rows = fit_X.shape[0]
    if fit_X.shape[1] < 1 or not n_neighbors < n_rows:
        raise InputError(f"fit_X has shape {fit_X.shape}; n_neighbors={n_neighbors} needs more rows and a column")
    pairs = (n_rows, n_neighbors)
    neighbors = integers("neighbors", arrays["neighbors"], shape=pairs, low=0, high=n_rows, dtype=np.intp,
                         what="(fitted rows x n_neighbors)")
    bad = first_false(neighbors != np.arange(n_rows)[:, None])
    if bad is not None:
        raise InputError(f"neighbors[{bad // n_neighbors}, {bad % n_neighbors}] is the row itself; a fitted row's "
                         "neighbours are other rows")
    distances = floats("distances", arrays["distances"], shape=pairs, low=0.0, what="(fitted rows x n_neighbors)")
    bad = first_false(np.diff(distances, axis=1) >= 0)
    if bad is not None:
        row, j = divmod(bad, n_neighbors - 1)
        raise InputError(f"distances[{row}, {j + 1}] = {distances[row, j + 1]} is below distances[{row}, {j}]; "
                         "a row's neighbours come nearest first")
    k_distances = floats("k_distances", arrays["k_distances"], shape=(n_rows,), what="(one per fitted row)")
    check_same("k_distances", k_distances, distances[:, -1])

    counts = np.asarray(n_values, dtype=np.intp)
    saved_counts = integers("n_values", arrays["n_values"], shape=counts.shape, low=2, dtype=np.intp,
                            what="(one per sensitive attribute)")
    check_same("n_values", saved_counts, counts)
    codes = integers("codes", arrays["codes"], shape=(n_rows, len(counts)), low=0, dtype=np.intp,
                     what="(fitted rows x sensitive attributes)")
    if codes.size:
        bad = first_false(codes < counts[None, :])
        if bad is not None:
            row, column = divmod(bad, len(counts))
            raise InputError(f"codes[{row}, {column}] = {codes[row, column]} is outside the {counts[column]} values "
                             f"of sensitive attribute {column}")
    return {"fit_X": fit_X, "neighbors": neighbors, "distances": distances, "codes": codes}
