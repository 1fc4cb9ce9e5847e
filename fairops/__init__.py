"""fairops: fairness for the Optuna + MLflow stack.

Subpackages: ``fairops.metrics`` (NumPy fairness and accuracy metrics),
``fairops.datasets`` (bundled benchmark data, splits and budget slices).
"""

__version__ = "0.1.0"
