"""fairops: fairness for the Optuna + MLflow stack.

Packages, by floor (each imports only from floors below it; ``tests/project/test_architecture.py`` checks it):

1. ``fairops.metrics``: accuracy at a target threshold, fairness ratios and their intervals, AUCs.
2. ``fairops.datasets`` (bundled data, splits, budget slices), ``fairops.fairband`` (the Optuna sampler
   and pruner), ``fairops.scaff`` (fair trees) and ``fairops.fairlof`` (fair outlier factor).
3. ``fairops.models``: what a served model contains, and the table of model families.
4. ``fairops.tuning`` (the objective ``fairops tune`` optimises) and ``fairops.mlflow`` (model flavors).
5. ``fairops.tracking``: Optuna studies in MLflow runs, the registry, promotion and monitoring.
6. ``fairops.jobs`` and ``fairops.cli``: the ``fairops`` command.

See docs/architecture.md.
"""

__version__ = "0.1.0"
