"""``fairops outliers``: FairLOF against plain LOF on one data set, tracked in MLflow.

Without ``--tune``: one FairLOF fit (``--lambda`` a number in [0, 1], or ``auto`` for the Jaccard guide
point ``--target-jaccard``), the LOF vs FairLOF table printed, params + metrics + the lambda path logged in
one MLflow run, and the detector logged with the fairops FairLOF flavor (fitted with ``novelty=True`` so the
served model scores new rows).

With ``--tune``: Fairband searches FairLOF's own hyperparameters (``n_neighbors`` 3..30, ``lambda`` in
[0, 1], the Flex exponents ``weight_exponent`` and ``share_exponent`` in [0.5, 2], log scale) in a
two-objective Optuna study:

- accuracy (quality) = Jaccard of FairLOF's top-t against plain LOF's top-t on the same rows;
- fairness = the share of plain LOF's Wasserstein disparity that FairLOF removes,
  ``clip(1 - Wass(FairLOF) / Wass(LOF), 0, 1)`` (see :func:`normalised_fairness`);
- budget = share of the rows: nested slices stratified by the intersection of the sensitive columns
  (``fairops.datasets.BudgetSlicer`` with a constant label), so a smaller slice is inside every larger one.

Every trial sets the user attributes ``jaccard``, ``preservation``, ``outlier_fraction``,
``euclidean_disparity`` and ``wasserstein_disparity`` and becomes a child run through
``FairnessTrackingCallback``; the Fairband pick is refitted on all rows, printed and logged with its model.

Features (``fairops.fairlof.FeatureEncoder``): the numeric columns (sensitive columns and the
optional target excluded), each standardised to mean 0 and sd 1 on the rows used; constant columns are
dropped. Text/categorical columns are dropped (``--categorical drop``) or one-hot encoded before
standardising (``--categorical onehot``). The encoding is part of the logged model, which therefore takes
raw rows; it is also logged with the run (``preprocessing/features.json``).

>>> data = load_outlier_data("german", max_rows=300, seed=0)
>>> detector = fit_detector(data, n_neighbors=5, correction_strength=0.0)
>>> table = compare(detector, data.sensitive)
>>> table["FairLOF"]["jaccard"], table["change"]["wasserstein_disparity"]
(1.0, 0.0)
"""

from .command import add_parser
from .data import OutlierData, load_outlier_data
from .report import compare, fit_detector, format_table, outlier_metrics, relative_change
from .single import parse_lambda, run_single
from .tuning import make_objective, normalised_fairness, run_tune

__all__ = [
    "OutlierData", "add_parser", "compare", "fit_detector", "format_table", "load_outlier_data", "make_objective",
    "normalised_fairness", "outlier_metrics", "parse_lambda", "relative_change", "run_single", "run_tune",
]
