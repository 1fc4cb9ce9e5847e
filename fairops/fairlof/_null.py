"""The permuted-label null of a fitted FairLOF: how far its correction moves ED and Wass when the
sensitive labels say nothing about the rows.

The rows' sensitive labels are permuted (all attributes together, so their joint distribution is
kept); P, Q, W, Dir and the pair terms are recomputed from the permuted labels on the detector's
own neighbours and plain LOF scores, and the lambda path is measured against the permuted labels.
An ED change that the null produces as well is no evidence that the correction made the outliers
more representative.

>>> import numpy as np
>>> from fairops.fairlof import FairLOF
>>> rng = np.random.default_rng(0)
>>> det = FairLOF().fit(rng.normal(size=(200, 3)), sensitive_features={"g": rng.integers(0, 2, 200)})
>>> paths = permuted_label_paths(det, n_permutations=2, random_state=0, lambdas=[0.0, 0.5])
>>> len(paths), paths[0]["jaccard"].tolist()[0]
(2, 1.0)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..errors import InputError
from . import _native
from ._corrections import CORRECTIONS, group_statistics
from ._path import DEFAULT_LAMBDAS, PATH_COLUMNS, path_metrics
from ._scoring import Neighbourhood

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .._typing import NDArray
    from ._detector import FairLOF


def permuted_label_paths(detector: FairLOF, n_permutations: int = 5,
                         random_state: int | np.random.Generator | None = 0,
                         lambdas: Sequence[float] = DEFAULT_LAMBDAS) -> list[dict[str, NDArray[Any]]]:
    """One lambda path (as ``FairLOF.path`` returns it) per permutation of the sensitive labels.

    Parameters
    ----------
    detector : FairLOF
        A detector fitted with sensitive features.
    n_permutations : int, default=5
        Number of permutations.
    random_state : int, Generator or None, default=0
        Seeds the permutations.
    lambdas : sequence of float, default=(0.0, 0.1, ..., 1.0)
        The correction strengths of each path.

    Returns
    -------
    list of dict
        Per permutation: ``lambda`` and the five metrics of ``PATH_COLUMNS`` (no clamp counts).
    """
    check_is_fitted(detector)
    if not detector.sensitive_names_:
        raise InputError("the detector was fitted without sensitive_features: there are no labels to permute")
    if isinstance(n_permutations, bool) or not isinstance(n_permutations, (int, np.integer)) or n_permutations < 1:
        raise InputError(f"n_permutations must be a positive integer, got {n_permutations!r}")
    lambdas = [float(value) for value in np.atleast_1d(lambdas)]
    codes, hood = detector._codes, detector._hood
    _, weight_exponent, share_exponent = detector._check_params(len(codes))
    rng = np.random.default_rng(random_state)
    paths = []
    for _ in range(int(n_permutations)):
        permuted = np.ascontiguousarray(codes[rng.permutation(len(codes))])
        stats = group_statistics(permuted, detector.n_values_, detector.plain_outliers_)
        table = CORRECTIONS[detector.correction](stats, detector.c_, weight_exponent, share_exponent).table
        terms = _native.pair_terms(hood.neighbors, permuted, permuted, table)
        null_hood = Neighbourhood(hood.distances, hood.neighbors, hood.k_distances, terms, detector.correction)
        sensitive = {name: permuted[:, j] for j, name in enumerate(detector.sensitive_names_)}
        rows = [path_metrics(detector.lof_scores_, null_hood.scores(lam, float(detector.floor)).scores,
                             detector.plain_outliers_, detector.top_t_, sensitive) for lam in lambdas]
        paths.append({"lambda": np.array(lambdas),
                      **{column: np.array([row[column] for row in rows]) for column in PATH_COLUMNS[1:6]}})
    return paths
