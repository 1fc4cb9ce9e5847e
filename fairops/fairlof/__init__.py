"""FairLOF and FairLOF-Flex: local outlier factor with the paper's fairness corrections over
several multi-valued sensitive attributes, plus the per-group quota baseline.

>>> import numpy as np
>>> from fairops.fairlof import FairLOF, quota_outliers
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(300, 4)); S = {"sex": rng.choice(["f", "m"], 300)}
>>> det = FairLOF(n_neighbors=5, correction_strength="auto", target_jaccard=0.9).fit(X, sensitive_features=S)
>>> 0.0 <= det.fitted_lambda_ <= 1.0
True
"""

from ._corrections import GroupStatistics, group_statistics, paper_coefficients, per_value_coefficients
from ._detector import DEFAULT_FLOOR, FairLOF
from ._features import FeatureEncoder
from ._null import permuted_label_paths
from ._path import DEFAULT_LAMBDAS, PATH_COLUMNS, guide_lambda, top_outliers
from ._quota import group_quotas, partial_quota_outliers, quota_outliers

__all__ = [
    "DEFAULT_FLOOR",
    "DEFAULT_LAMBDAS",
    "FairLOF",
    "FeatureEncoder",
    "GroupStatistics",
    "PATH_COLUMNS",
    "group_quotas",
    "group_statistics",
    "guide_lambda",
    "paper_coefficients",
    "partial_quota_outliers",
    "per_value_coefficients",
    "permuted_label_paths",
    "quota_outliers",
    "top_outliers",
]
