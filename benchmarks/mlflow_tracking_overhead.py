"""Per-trial MLflow logging overhead: FairnessTrackingCallback against optuna-integration's MLflowCallback.

    python benchmarks/mlflow_tracking_overhead.py            # 100 trials per contender, 3 rounds
    python benchmarks/mlflow_tracking_overhead.py --quick    # 20 trials, 1 round (smoke test)

A two-objective study with a no-op objective (10 parameters, Fairband-like user attributes:
budget, bracket, rung, configuration_id, alpha, auc_y, auc_s) runs three times in one process:
without a callback (the base), with ``MLflowCallback`` and with ``FairnessTrackingCallback``, each
writing to its own fresh SQLite tracking store (schema created before timing). Overhead per trial =
(wall time - base wall time) / trials, measured against the base of the same round; the contenders
alternate within each round and the median of the per-round ratios is reported. The
callback is measured twice: with its one-transaction SQL writes (default) and with ``fast_sql=False``
(the public ``MlflowClient`` calls, the path used against a tracking server).
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings


def objective(trial):
    values = [trial.suggest_float(f"p{i}", 0, 1) for i in range(10)]
    for name, value in {"budget": 1 / 3, "bracket": 1, "rung": 0, "configuration_id": trial.number,
                        "alpha": 0.5, "auc_y": 0.7, "auc_s": 0.55}.items():
        trial.set_user_attr(name, value)
    return sum(values) / 10, 1 - values[0]


def run(n_trials, callback=None):
    import optuna

    study = optuna.create_study(directions=["maximize"] * 2, sampler=optuna.samplers.RandomSampler(seed=0))
    start = time.perf_counter()
    study.optimize(objective, n_trials=n_trials, callbacks=[callback] if callback else None)
    return time.perf_counter() - start


def fresh_store(folder, name):
    from mlflow.tracking import MlflowClient

    uri = f"sqlite:///{folder}/{name}.db"
    MlflowClient(uri).search_experiments()  # creates the schema outside the timed part
    return uri


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="20 trials, one round")
    args = parser.parse_args(argv)
    n_trials, rounds = (20, 1) if args.quick else (args.trials, args.rounds)

    import optuna
    from optuna_integration.mlflow import MLflowCallback

    from fairops.mlflow.tracking import FairnessTrackingCallback

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore")
    import logging

    logging.getLogger("mlflow").setLevel(logging.WARNING)

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for round_ in range(rounds):
            base = run(n_trials) / n_trials
            uri = fresh_store(folder, f"theirs{round_}")
            theirs = run(n_trials, MLflowCallback(tracking_uri=uri, metric_name=["accuracy", "fairness"]))
            uri = fresh_store(folder, f"ours{round_}")
            ours = run(n_trials, FairnessTrackingCallback(uri, "bench", artifact_location=f"{folder}/a{round_}",
                                                          settle_seconds=0))
            uri = fresh_store(folder, f"public{round_}")
            public = run(n_trials, FairnessTrackingCallback(uri, "bench", artifact_location=f"{folder}/p{round_}",
                                                            settle_seconds=0, fast_sql=False))
            rows.append([1000 * (t / n_trials - base) for t in (theirs, ours, public)])

    print(f"trials per contender and round: {n_trials}, rounds: {rounds}; overhead in ms per trial")
    print("| round | MLflowCallback | FairnessTrackingCallback | same, fast_sql=False | ratio | ratio fast_sql=False |")
    print("|---|---|---|---|---|---|")
    for i, (theirs, ours, public) in enumerate(rows):
        print(f"| {i} | {theirs:.1f} | {ours:.1f} | {public:.1f} | {ours / theirs:.2f} | {public / theirs:.2f} |")
    ratios = sorted(ours / theirs for theirs, ours, _ in rows)
    public_ratios = sorted(public / theirs for theirs, _, public in rows)
    print(f"median ratio FairnessTrackingCallback / MLflowCallback: {ratios[len(ratios) // 2]:.2f} (goal <= 0.5)")
    print(f"median ratio with fast_sql=False: {public_ratios[len(public_ratios) // 2]:.2f}")


if __name__ == "__main__":
    main()
