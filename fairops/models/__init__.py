"""What a served model contains: column adapters and the input schema checked on every request.

This package depends on scikit-learn and the fairops estimators only (no MLflow, Optuna, jobs or
CLI), so a served model imports nothing it does not run.

- :class:`SCAFFOnColumns`: a SCAFF forest reading its sensitive features from named columns.
- :class:`RestoreCategories`: the first step of a served pipeline (text back to training categories).
- :class:`InputSchema`: required columns, kinds, categories; refuses rows that break them.

>>> from fairops.models import InputSchema, RestoreCategories, SCAFFOnColumns
"""

from .columns import RestoreCategories, SCAFFOnColumns
from .schema import Column, InputSchema, columns_taking_missing_values, takes_unseen_categories

__all__ = ["Column", "InputSchema", "RestoreCategories", "SCAFFOnColumns", "columns_taking_missing_values",
           "takes_unseen_categories"]
