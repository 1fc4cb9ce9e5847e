"""What the parse budget costs on the largest legitimate classifier files, against loading them whole.

    python benchmarks/parse_budget.py            # a 500-tree forest, LightGBM with 1,000 trees, a reduction over
                                                 # LightGBM, fitted on Adult's training rows (the documented figures)
    python benchmarks/parse_budget.py --quick    # the same three kinds, small, on 2,000 rows (smoke test)

Each model is the pipeline ``fairops tune`` registers for its family (made from the family table with fixed
hyperparameters) and is saved as a skops file the way the classifier flavor saves it. The table gives the
file's size, what the budget's walk of its ``schema.json`` found (objects and lists, references to shared
parts, the deepest path, the size unfolded along the references), the best of ``--repeats`` wall times of the
walk (:func:`fairops.mlflow._parse_budget.check_skops_schema`) and of the whole read of the file by the classifier
flavor (sizes, budget, skops' audit, LightGBM's text checks, skops' rebuild, the fitted-state checks), and the
walk's share of that read. Every file unfolds to exactly its own size (``unfolded`` equals ``nodes``): skops
writes shared objects in full.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

FOREST = {"rf_n_estimators": 500, "rf_criterion": "gini", "rf_max_depth": 16, "rf_max_features": "sqrt",
          "rf_min_samples_leaf": 1, "rf_min_samples_split": 2}
LIGHTGBM = {"lgbm_boosting_type": "gbdt", "lgbm_n_estimators": 1000, "lgbm_learning_rate": 0.05,
            "lgbm_max_depth": 12, "lgbm_num_leaves": 63, "lgbm_min_child_samples": 20}
REDUCTION = {"eg_base": "lightgbm", "eg_ratio_bound": 0.9, "eg_ratio_bound_slack": 0.01, "eg_fp_cost": 0.6,
             "eg_eps": 0.025, "eg_max_iter": 20, "lgbm_boosting_type": "gbdt", "lgbm_n_estimators": 150,
             "lgbm_learning_rate": 0.1, "lgbm_max_depth": 12, "lgbm_num_leaves": 63, "lgbm_min_child_samples": 20}


def _quick(params: dict) -> dict:
    small = {"rf_n_estimators": 20, "lgbm_n_estimators": 20, "eg_max_iter": 3}
    return {key: small.get(key, value) for key, value in params.items()}


def models(quick: bool):
    """``[(label, family, fixed hyperparameters)]``."""
    cases = [("random forest, 500 trees", "random_forest", FOREST),
             ("LightGBM, 1,000 trees", "lightgbm", LIGHTGBM),
             ("exponentiated gradient over LightGBM (150 trees)", "exponentiated_gradient", REDUCTION)]
    if quick:
        cases = [(label.split(",")[0].split(" (")[0] + " (quick)", family, _quick(params))
                 for label, family, params in cases]
    return cases


def fitted(family: str, params: dict, quick: bool):
    import optuna

    from fairops.datasets import load_dataset
    from fairops.tuning import FairnessObjective
    from fairops.tuning._search_space import fit_model, make_model

    data = load_dataset("adult")
    X, y, sensitive = FairnessObjective(data, seed=0).rows("train")
    if quick:
        X, y, sensitive = X.iloc[:2000], y[:2000], sensitive.iloc[:2000]
    model = make_model(optuna.trial.FixedTrial(params), families=[family], X_example=X, task=data.task,
                       sensitive_columns=list(data.task.sensitive))
    return fit_model(model, X, y, sensitive[list(data.task.sensitive)])


def best_of(repeats: int, work) -> tuple[float, object]:
    best, answer = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        answer = work()
        best = min(best, time.perf_counter() - start)
    return best, answer


def measure(label: str, model, repeats: int) -> dict:
    import io
    import json
    import zipfile

    from fairops.mlflow import _parse_budget, _skops_save, classifier

    data = _skops_save.model_bytes(model)
    schema_bytes = zipfile.ZipFile(io.BytesIO(data)).read("schema.json")
    schema = json.loads(schema_bytes)
    walk_seconds, walk = best_of(repeats, lambda: _parse_budget.check_skops_schema(schema, ValueError))
    read_seconds, _ = best_of(repeats, lambda: classifier._read_skops(data, "(benchmark)"))
    assert walk.unfolded == walk.nodes, walk
    return {"model": label, "file MB": f"{len(data) / 1e6:.1f}", "schema.json MB": f"{len(schema_bytes) / 1e6:.1f}",
            "nodes": f"{walk.nodes:,}", "references": f"{walk.references:,}", "depth": walk.depth,
            "unfolded": f"{walk.unfolded:,}", "budget walk s": f"{walk_seconds:.3f}",
            "whole read s": f"{read_seconds:.2f}", "walk / read": f"{walk_seconds / read_seconds:.3f}"}


def table(rows: list[dict]) -> str:
    header = list(rows[0])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(row[key]) for key in header) + " |" for row in rows]
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small models on 2,000 rows, one repeat")
    parser.add_argument("--repeats", type=int, default=3, help="timings are the best of this many")
    args = parser.parse_args(argv)
    repeats = 1 if args.quick else args.repeats
    rows = []
    for label, family, params in models(args.quick):
        start = time.perf_counter()
        model = fitted(family, params, args.quick)
        print(f"fitted {label} in {time.perf_counter() - start:.0f} s", flush=True)
        rows.append(measure(label, model, repeats))
    pd.set_option("display.width", 200)
    print(table(rows))


if __name__ == "__main__":
    main()
