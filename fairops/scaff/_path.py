"""The theta trade-off curve: one SCAFF forest per theta, scored on validation data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from fairops.metrics import auc_s, auc_y
from fairops.metrics._inputs import encode_sensitive

from ..errors import InputError
from ._forest import SCAFFClassifier

if TYPE_CHECKING:
    from collections.abc import Sized

    from .._typing import ArrayLike, Features, Sensitive

DEFAULT_THETAS = tuple(np.round(np.linspace(0.0, 1.0, 11), 10))


@dataclass(frozen=True)
class ScaffPathPoint:
    """One theta's validation scores.

    Parameters
    ----------
    theta : float
        The forest's theta.
    auc_y, auc_s : float
        Its AUC of the label and AUC of the sensitive groups.

    Examples
    --------
    >>> ScaffPathPoint(theta=0.5, auc_y=0.8, auc_s=0.6).auc_s
    0.6
    """

    theta: float
    auc_y: float
    auc_s: float


@dataclass(frozen=True)
class ScaffPath:
    """AUC_Y and AUC_S along theta (the SCAFF paper's trade-off curve).

    Parameters
    ----------
    points : tuple of ScaffPathPoint
        One point per theta, in the order fitted.

    Examples
    --------
    >>> path = ScaffPath((ScaffPathPoint(0.0, 0.9, 0.7), ScaffPathPoint(1.0, 0.5, 0.5)))
    >>> path.thetas.tolist(), path.auc_s.tolist()
    ([0.0, 1.0], [0.7, 0.5])
    """

    points: tuple[ScaffPathPoint, ...]

    @property
    def thetas(self) -> np.ndarray:
        """The points' thetas."""
        return np.array([p.theta for p in self.points])

    @property
    def auc_y(self) -> np.ndarray:
        """The points' AUC_Y."""
        return np.array([p.auc_y for p in self.points])

    @property
    def auc_s(self) -> np.ndarray:
        """The points' AUC_S."""
        return np.array([p.auc_s for p in self.points])

    def to_records(self) -> list[dict]:
        """One dict per point.

        Returns
        -------
        list of dict
            ``theta``, ``auc_y`` and ``auc_s`` of each point.
        """
        return [{"theta": p.theta, "auc_y": p.auc_y, "auc_s": p.auc_s} for p in self.points]


def _scoring_groups(sensitive_features, n_rows: int, intersectional: bool):
    if not intersectional:
        return sensitive_features
    return encode_sensitive(sensitive_features, n_rows).intersection().codes[0]


def path_auc_s(score, groups, n_rows: int, aggregate: str) -> float:
    """AUC_S as the trees aggregate it: max over all groups, or the mean per attribute, then across.

    >>> path_auc_s([0.1, 0.2, 0.3, 0.4], {"a": [0, 1, 0, 1], "b": [0, 0, 1, 1]}, 4, "mean")
    0.875
    """
    if aggregate == "max":
        return auc_s(score, groups)
    encoded = encode_sensitive(groups, n_rows)
    return float(np.mean([auc_s(score, codes, aggregate="mean") for codes in encoded.codes]))


def scaff_path(
    X: Features,
    y: ArrayLike,
    sensitive_features: Sensitive,
    *,
    thetas: ArrayLike = DEFAULT_THETAS,
    X_val: Features | None = None,
    y_val: ArrayLike | None = None,
    sensitive_val: Sensitive | None = None,
    **forest_params: Any,
) -> ScaffPath:
    """Fit :class:`SCAFFClassifier` at every theta and score it with ``auc_y`` / ``auc_s``.

    AUC_S aggregates the groups as the forest's ``sensitive_aggregation`` does (max, or mean per
    attribute then across) and, if ``intersectional=True``, over the combined groups.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_features)
        Training features.
    y : array-like of shape (n_samples,)
        Training labels, two classes.
    sensitive_features : DataFrame, Series, dict or array-like
        The training rows' sensitive columns.
    thetas : sequence of float, default=(0.0, 0.1, ..., 1.0)
        The thetas to fit, at least one.
    X_val, y_val, sensitive_val : optional
        The validation data (all three or none; none scores on the training data, which overstates
        AUC_Y).
    **forest_params
        Go to :class:`SCAFFClassifier` (``theta`` is set per point).

    Returns
    -------
    ScaffPath
        One point per theta.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 3)); s = rng.integers(0, 2, 400)
    >>> X[:, 1] += 2 * s
    >>> y = (X[:, 0] + X[:, 1] > 1).astype(int)
    >>> path = scaff_path(X, y, s, thetas=[0.0, 0.9], n_estimators=10)
    >>> bool(path.auc_s[1] < path.auc_s[0])
    True
    """
    given = [v is not None for v in (X_val, y_val, sensitive_val)]
    if any(given) and not all(given):
        raise InputError("X_val, y_val and sensitive_val must be given together (or none of them)")
    if "theta" in forest_params:
        raise TypeError("theta is set by thetas=, not as a forest parameter")
    thetas = np.asarray(thetas, dtype=np.float64).ravel()
    if thetas.size == 0:
        raise InputError("thetas must hold at least one value")
    if not all(given):
        X_val, y_val, sensitive_val = X, y, sensitive_features
    template = SCAFFClassifier(**forest_params)
    groups_val = _scoring_groups(sensitive_val, len(cast("Sized", y_val)), template.intersectional)
    y_val = np.asarray(y_val)
    points = []
    for theta in thetas:
        model = SCAFFClassifier(**{**forest_params, "theta": float(theta)})
        model.fit(X, y, sensitive_features=sensitive_features)
        score = model.predict_proba(X_val)[:, 1]
        positive = (y_val == model.classes_[1]).astype(np.int8)
        points.append(
            ScaffPathPoint(
                float(theta),
                auc_y(positive, score),
                path_auc_s(score, groups_val, len(y_val), model.sensitive_aggregation),
            )
        )
    return ScaffPath(tuple(points))
