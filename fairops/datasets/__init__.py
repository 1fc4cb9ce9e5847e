"""Bundled fairness benchmark data, stratified splits and nested budget slices.

>>> from fairops.datasets import load_adult, train_validation_test_split
>>> data = load_adult()
>>> parts = train_validation_test_split(data.y, data.sensitive[["sex"]], seed=0)
>>> len(parts.train) + len(parts.validation) + len(parts.test) == len(data.y)
True
"""

from ._bank_full import load_bank_full
from ._bundled import (
    LOADERS,
    Dataset,
    load_adult,
    load_bank,
    load_compas,
    load_credit_default,
    load_dataset,
    load_german,
    load_student,
)
from ._custom import load_table
from ._splits import BudgetSlicer, Split, budget_slice, strata, train_validation_test_split

__all__ = [
    "LOADERS",
    "BudgetSlicer",
    "Dataset",
    "Split",
    "budget_slice",
    "load_adult",
    "load_bank",
    "load_bank_full",
    "load_compas",
    "load_credit_default",
    "load_dataset",
    "load_german",
    "load_student",
    "load_table",
    "strata",
    "train_validation_test_split",
]
