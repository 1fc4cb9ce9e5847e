"""Exponentiated gradient fit time: fairops.reductions against fairlearn, the anchor, in one run.

    python benchmarks/reductions_speed.py            # Adult and COMPAS training rows (the documented figures)
    python benchmarks/reductions_speed.py --quick    # COMPAS, a shallow tree, one repeat (smoke test)

Both libraries play the same game on the same rows: the training part of ``fairops compare``'s split
(seed 0), one-hot encoded, the task's fairness ratio as the constraint (TPR parity over sex on Adult,
FPR parity over race on COMPAS, a 0.01 difference bound, fairlearn's default), ``eps`` 0.01 and up to
50 rounds (both libraries' defaults), over the same base learners. The table gives the best of
``--repeats`` wall times per fit, the base-learner fits (oracle calls) each made, the share of fairops'
time spent inside them, and fairops' time as a ratio of fairlearn's (< 1: fairops is faster). Before the
table is trusted, the two results must solve the game equally well: their randomized classifiers' training
errors agree within 0.01 (the oracle tests' tolerance), printed as the ``agree:`` line.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

TASKS = {"adult": ("tpr", "TruePositiveRateParity"), "compas": ("fpr", "FalsePositiveRateParity")}


def learners(quick: bool) -> dict:
    from lightgbm import LGBMClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.tree import DecisionTreeClassifier

    if quick:
        return {"tree depth 4": DecisionTreeClassifier(max_depth=4, random_state=0)}
    return {"tree depth 8": DecisionTreeClassifier(max_depth=8, min_samples_leaf=20, random_state=0),
            "logistic regression": LogisticRegression(max_iter=300),
            "LightGBM 50 rounds": LGBMClassifier(n_estimators=50, verbose=-1, n_jobs=1, random_state=0)}


def training_rows(name: str):
    from fairops.datasets import load_dataset
    from fairops.tuning import FairnessObjective

    data = load_dataset(name)
    X, y, sensitive = FairnessObjective(data, seed=0, blind=True).rows("train")
    features = pd.get_dummies(X, dtype=float).to_numpy()
    return features, np.asarray(y), sensitive[list(data.task.sensitive)].astype(str).reset_index(drop=True)


def best_of(repeats: int, fit):
    """The shortest of ``repeats`` fits: ``(seconds, its model)``."""
    best = None
    for _ in range(repeats):
        start = time.perf_counter()
        model = fit()
        seconds = time.perf_counter() - start
        if best is None or seconds < best[0]:
            best = (seconds, model)
    return best


def measure(name: str, learner_name: str, learner, repeats: int) -> dict:
    import fairlearn.reductions as theirs

    from fairops.reductions import ExponentiatedGradient

    X, y, groups = training_rows(name)
    kind, moment = TASKS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an unscaled logistic regression's ConvergenceWarning, in both
        anchor_seconds, anchor = best_of(repeats, lambda: theirs.ExponentiatedGradient(
            learner, getattr(theirs, moment)()).fit(X, y, sensitive_features=groups))
        own_seconds, own = best_of(repeats, lambda: ExponentiatedGradient(
            learner, constraint=kind, groups="intersectional").fit(X, y, sensitive_features=groups))
    their_error = sum(w * np.mean(np.asarray(p.predict(X)) != y) for p, w in zip(anchor.predictors_, anchor.weights_))
    return {"data": name, "rows": len(y), "learner": learner_name, "fairlearn_s": anchor_seconds,
            "error_difference": abs(own.train_error_ - float(their_error)),
            "fairlearn_fits": anchor.n_oracle_calls_, "fairops_s": own_seconds, "fairops_fits": own.n_oracle_calls_,
            "in_fits": own.oracle_seconds_ / own_seconds, "ratio": own_seconds / anchor_seconds}


ERROR_TOLERANCE = 0.01  # the oracle tests' tolerance on the training error (tests/reductions/test_reductions_oracle.py)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=["adult", "compas"], choices=sorted(TASKS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="COMPAS, one shallow tree, one repeat")
    args = parser.parse_args(argv)
    datasets, repeats = (["compas"], 1) if args.quick else (args.datasets, args.repeats)
    rows = []
    print("| data | rows | base learner | fairlearn (s) | its base fits | fairops (s) | its base fits "
          "| fairops' time in base fits | fairops / fairlearn |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in datasets:
        for learner_name, learner in learners(args.quick).items():
            row = measure(name, learner_name, learner, repeats)
            rows.append(row)
            print(f"| {row['data']} | {row['rows']:,} | {row['learner']} | {row['fairlearn_s']:.2f} | "
                  f"{row['fairlearn_fits']} | {row['fairops_s']:.2f} | {row['fairops_fits']} | "
                  f"{100 * row['in_fits']:.0f}% | {row['ratio']:.2f}x |", flush=True)
    largest = max(row["error_difference"] for row in rows)
    print(f"agree: the two results' training error (randomized classifier), largest "
          f"|difference| = {largest:.2e} <= {ERROR_TOLERANCE}")


if __name__ == "__main__":
    main()
