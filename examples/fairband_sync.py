"""Synchronous Fairband (the paper's exact schedule) on the German credit data.

One trial = one (configuration, budget) fit; 206 trials = one Fairband iteration. The schedule, the
promotions and the pick are the same for any n_jobs or number of worker processes.

    python examples/fairband_sync.py [--n-jobs 2] [--storage sqlite:///fairband.db]
"""

import argparse

import optuna

from fairops.datasets import load_german
from fairops.fairband import FairbandPruner, FairbandSampler, iteration_size, pareto_front, select_best
from fairops.tuning import FairnessObjective


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--storage", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--s-max", type=int, default=4, help="4 = the paper's 206-fit iteration")
    args = parser.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    objective = FairnessObjective(load_german(), families=["decision_tree"],
                                  seed=args.seed)
    study = optuna.create_study(directions=["maximize", "maximize"], storage=args.storage,
                                sampler=FairbandSampler(alpha="auto", seed=args.seed, s_max=args.s_max),
                                pruner=FairbandPruner())
    n_trials = iteration_size(s_max=args.s_max)  # one Fairband iteration (206 fits for s_max=4)
    study.optimize(objective, n_trials=n_trials, n_jobs=args.n_jobs, catch=(ValueError,))

    pick = select_best(study)
    print(f"task: {objective.task}")
    print(f"FB-auto pick: trial {pick.trial.number} (bracket {pick.trial.user_attrs['bracket']}, "
          f"budget {pick.trial.user_attrs['budget']:.3f}) alpha={pick.alpha:.3f} "
          f"validation accuracy={pick.accuracy:.3f} fairness={pick.fairness:.3f}")
    test_accuracy, test_fairness = objective.test(pick.trial)
    print(f"test accuracy={test_accuracy:.3f} fairness={test_fairness:.3f}")
    fair = select_best(study, min_fairness=0.9)
    print(f"best accuracy with fairness >= 0.9: trial {fair.trial.number} "
          f"accuracy={fair.accuracy:.3f} fairness={fair.fairness:.3f}")
    print(f"Pareto front: {len(pareto_front(study))} fits")


if __name__ == "__main__":
    main()
