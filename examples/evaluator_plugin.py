"""Fairness next to MLflow's default metrics in one ``mlflow.models.evaluate`` call.

The ``fairops`` evaluator (installed through the ``mlflow.model_evaluator`` entry point) adds the
TPR/FPR/positive-rate ratios at a target operating point, AUC_S per sensitive column, a per-group
rate table and a per-group ROC picture:

    python examples/evaluator_plugin.py [--tracking-uri sqlite:///mlflow.db]
"""

import argparse
import os
import tempfile

import mlflow
import numpy as np
import pandas as pd
from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline


def make_data(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"income": rng.normal(size=n), "tenure": rng.normal(size=n)})
    # object dtype: MLflow 3.17's shap evaluator (part of "default") does not accept pandas' string dtype
    frame["sex"] = pd.Series(rng.choice(["female", "male"], n), dtype=object)
    frame["income"] += 0.7 * (frame["sex"] == "male")
    frame["y"] = ((frame["income"] + rng.normal(scale=0.8, size=n)) > 0.6).astype(int)
    return frame


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tracking-uri", default=None, help="default: a new SQLite store in a temporary folder")
    args = parser.parse_args(argv)
    folder = tempfile.mkdtemp()
    mlflow.set_tracking_uri(args.tracking_uri or f"sqlite:///{folder}/mlflow.db")
    if mlflow.get_experiment_by_name("evaluator-example") is None:
        mlflow.create_experiment("evaluator-example", artifact_location=os.path.join(folder, "artifacts"))
    mlflow.set_experiment("evaluator-example")

    data = make_data()
    # The model receives the sensitive column but does not use it.
    model = make_pipeline(make_column_transformer(("passthrough", ["income", "tenure"])), LogisticRegression())
    model.fit(data.drop(columns="y"), data["y"])
    with mlflow.start_run():
        # MLflow's own flavor: its pyfunc answers labels, which the default classifier metrics expect
        # (fairops' classifier flavor answers the probability of the positive class instead).
        info = mlflow.sklearn.log_model(model, name="model", input_example=data.drop(columns="y").head(3),
                                        pip_requirements=["scikit-learn"])
        result = mlflow.models.evaluate(
            info.model_uri, data, targets="y", model_type="classifier", evaluators=["default", "fairops"],
            evaluator_config={"fairops": {"sensitive_features": ["sex"], "target": {"tpr": 0.5}}})
    for name in ("accuracy_score", "roc_auc", "fairops_tpr_ratio_sex", "fairops_fpr_ratio_sex", "fairops_auc_s_sex"):
        print(f"{name:24s} {result.metrics[name]:.4f}")
    print("artifacts:", sorted(result.artifacts))
    return result


if __name__ == "__main__":
    main()
