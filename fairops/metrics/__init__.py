"""Accuracy and fairness metrics in plain NumPy (no Optuna or MLflow imports).

>>> from fairops.metrics import auc_s, binarize, fairness_ratio
>>> auc_s([0.2, 0.9, 0.1, 0.8], ["f", "m", "f", "m"])
1.0
"""

from ._auc import auc_s, auc_y, group_aucs
from ._classification import GroupRates, fairness_ratio, group_rates, precision, ratio_of, recall
from ._decisions import GroupThresholds, group_decisions, group_thresholds
from ._fairness_rule import FairnessRule
from ._figures import Figures, decision_figures
from ._outliers import euclidean_disparity, jaccard, outlier_fraction, preservation, wasserstein_disparity
from ._scorer import make_fairness_scorer
from ._task import Task
from ._thresholds import OperatingPoint, binarize, operating_point

__all__ = [
    "FairnessRule",
    "Figures",
    "GroupRates",
    "GroupThresholds",
    "OperatingPoint",
    "Task",
    "auc_s",
    "auc_y",
    "binarize",
    "decision_figures",
    "euclidean_disparity",
    "fairness_ratio",
    "group_aucs",
    "group_decisions",
    "group_thresholds",
    "group_rates",
    "jaccard",
    "make_fairness_scorer",
    "operating_point",
    "outlier_fraction",
    "precision",
    "preservation",
    "ratio_of",
    "recall",
    "wasserstein_disparity",
]
