"""What a served model contains: column adapters and the input schema checked on every request.

This package depends on scikit-learn and the fairops estimators only (no MLflow, Optuna, jobs or
CLI), so a served model imports nothing it does not run.

- :class:`SCAFFOnColumns`: a SCAFF forest reading its sensitive features from named columns.
- :class:`RestoreCategories`: the first step of a served pipeline (text back to training categories).
- :class:`ServedDecision`: the positive class and the (per-group) threshold a served model decides at.
- :class:`InputSchema`: required columns, kinds, categories; refuses rows that break them.
- :class:`CategoryCodes`: category columns as codes, for a one-hot encoder to expand.
- :class:`WeightDecayMLP`: scikit-learn's MLP with PyTorch-style weight decay (the paper's network).

>>> from fairops.models import InputSchema, RestoreCategories, SCAFFOnColumns
"""

from ._columns import RestoreCategories, SCAFFOnColumns
from ._decision import ServedDecision
from ._encoding import CategoryCodes
from ._network import WeightDecayMLP
from ._probes import columns_taking_missing_values, takes_unseen_categories
from ._schema import Column, InputSchema

__all__ = ["CategoryCodes", "Column", "InputSchema", "RestoreCategories", "SCAFFOnColumns", "ServedDecision",
           "WeightDecayMLP",
           "columns_taking_missing_values", "takes_unseen_categories"]
