"""fairops' plugins for MLflow, found by MLflow through entry points.

Installed as the top-level package ``fairops_mlflow_plugins`` (the folder's own name), beside ``fairops``;
MLflow's ``mlflow.model_evaluator`` entry point names ``fairops_mlflow_plugins.evaluator:FairnessEvaluator``.
"""
