"""Asynchronous, fairness-aware Hyperband (ASHA-style) with a warm-started budget.

One trial = one configuration; the budget is the number of boosting rounds, added to the same model
rung after rung (warm start). After each rung the trial reports (accuracy, fairness) and FairbandPruner
decides whether it goes on. No worker ever waits, so this suits many parallel workers; decisions depend
on arrival order. TPE, the base sampler, draws each configuration from the configurations so far.

    python examples/fairband_async.py [--n-trials 60]
"""

import argparse

import numpy as np
import optuna
from sklearn.ensemble import GradientBoostingClassifier

from fairops.datasets import load_german, train_validation_test_split
from fairops.fairband import FairbandPruner, FairbandSampler, RungProgress, select_best

MAX_ROUNDS = 81


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-trials", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    data = load_german()
    task = data.task
    groups = data.sensitive[list(task.sensitive)]
    split = train_validation_test_split(data.y, groups, seed=args.seed)
    X = data.X.apply(lambda c: c.cat.codes if str(c.dtype) == "category" else c).to_numpy(float)
    y = np.asarray(data.y)

    def objective(trial):
        model = GradientBoostingClassifier(
            learning_rate=trial.suggest_float("learning_rate", 0.01, 0.5, log=True),
            max_depth=trial.suggest_int("max_depth", 1, 5),
            subsample=trial.suggest_float("subsample", 0.5, 1.0),
            warm_start=True, n_estimators=1, random_state=args.seed)
        progress = RungProgress(trial)
        for fraction in progress:  # 1/81 ... 1 of MAX_ROUNDS boosting rounds, warm-started
            model.set_params(n_estimators=max(1, round(fraction * MAX_ROUNDS)))
            model.fit(X[split.train], y[split.train])
            scores = model.predict_proba(X[split.validation])[:, 1]
            result = task.evaluate(y[split.validation], scores, groups.iloc[split.validation])
            progress.report(result["accuracy"], result["fairness"])
        return progress.values

    study = optuna.create_study(
        directions=["maximize", "maximize"], pruner=FairbandPruner(),
        sampler=FairbandSampler(mode="async", alpha="auto", seed=args.seed,
                                base_sampler=optuna.samplers.TPESampler(seed=args.seed, n_startup_trials=5)))
    study.optimize(objective, n_trials=args.n_trials)
    rungs = [t.user_attrs["rung"] for t in study.trials]
    print(f"{len(rungs)} configurations, {sum(r + 1 for r in rungs)} rung fits, "
          f"highest rung per trial: {np.bincount(rungs).tolist()}")
    pick = select_best(study)
    print(f"pick: trial {pick.trial.number} rounds={round(pick.trial.user_attrs['budget'] * MAX_ROUNDS)} "
          f"alpha={pick.alpha:.3f} accuracy={pick.accuracy:.3f} fairness={pick.fairness:.3f}")


if __name__ == "__main__":
    main()
