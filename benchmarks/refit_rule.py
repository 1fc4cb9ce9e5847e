"""The robust rule's last step, two ways, on the same refits: cross-validated bounds alone (today's rule), or the
lower of each refit's cross-validated and own validation bounds.

The rule ranks its candidates' refits by ``o`` of lower confidence bounds. Cross-validated bounds describe a
configuration (five fits on other rows); the registered model is one refit, whose own validation bounds
describe it alone, with fewer rows behind them. For a learner that refits much the same model the two agree;
for a randomized reduction they may not (an exponentiated gradient on Adult cross-validated at 99.9% fairness,
its refit measured 76.3% on validation and 78.7% on test). Each run is FB-auto as ``fairops compare`` runs it
(fast profile, every default family, the robust rule's candidates); both choices are made from the same refits
and scored on the test rows at the validation threshold.

    nice python benchmarks/refit_rule.py --dataset compas --seeds 0-19
    nice python benchmarks/refit_rule.py --dataset adult --seeds 0-2
    python benchmarks/refit_rule.py --quick     # smoke: German, 300 training rows, two families, one seed, s_max 2
"""

from __future__ import annotations

import argparse
import statistics
import warnings

import optuna

from fairops.datasets import load_dataset
from fairops.fairband import _ranking as ranking, select_best
from fairops.tuning import FairnessObjective
from fairops.tuning._baselines import make_study, pick_alpha, run_tuner, start_configurations
from fairops.tuning._objective import SMALL_DATA_FLOOR
from fairops.tuning._refit_choice import refit_choice
from fairops.tuning._search_space import families_for


def both_choices(name: str, seed: int, families=None, max_train_rows=None, s_max=4) -> dict:
    """Test (accuracy, fairness) of the refit chosen by each rule in one FB-auto run."""
    families = list(families or families_for())
    objective = FairnessObjective(load_dataset(name), seed=seed, families=families, max_train_rows=max_train_rows,
                                  **SMALL_DATA_FLOOR)
    study = make_study("FB-auto", seed=seed, s_max=s_max,
                       start_configurations=start_configurations("robust", families, "fast"))
    study = run_tuner("FB-auto", objective, seed=seed, study=study, catch=(Exception,)).study
    selection = select_best(study, alpha=pick_alpha("FB-auto"), rule="robust")
    choice = refit_choice(objective, selection, select_best(study, alpha=1.0).trial)
    kept = [r for n, r in choice.refits.items() if n not in choice.dominated]

    def cautious(refit) -> float:
        own = refit.validation
        assessed = refit.assessed or own
        return ranking.weighted_score(min(assessed["accuracy_low"], own["accuracy_low"]),
                                      min(assessed["fairness_low"], own["fairness_low"]), selection.alpha)

    other = max(kept, key=cautious)
    return {"seed": seed, "cv": (choice.chosen.test["accuracy"], choice.chosen.test["fairness"]),
            "cv_model": choice.chosen.trial.params.get("model", families[0]),
            "both": (other.test["accuracy"], other.test["fairness"]),
            "both_model": other.trial.params.get("model", families[0])}


def _cell(rows, key: str) -> str:
    accuracy = [100 * r[key][0] for r in rows]
    fairness = [100 * r[key][1] for r in rows]
    spread = lambda v: statistics.stdev(v) if len(v) > 1 else 0.0  # noqa: E731
    return (f"{statistics.mean(accuracy):.1f} ± {spread(accuracy):.1f} | "
            f"{statistics.mean(fairness):.1f} ± {spread(fairness):.1f}")


def _seeds(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="compas")
    parser.add_argument("--seeds", default="0-4")
    parser.add_argument("--quick", action="store_true",
                        help="German, 300 training rows, two families, one seed, a 22-fit Hyperband")
    args = parser.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    options = {}
    if args.quick:
        args.dataset, args.seeds = "german", "0"
        options = {"families": ["logistic_regression", "exponentiated_gradient"], "max_train_rows": 300, "s_max": 2}
    rows = []
    for seed in _seeds(args.seeds):
        row = both_choices(args.dataset, seed, **options)
        rows.append(row)
        print(f"seed {seed}: cross-validated {row['cv_model']} {row['cv'][0]:.3f} / {row['cv'][1]:.3f}; "
              f"also its own validation {row['both_model']} {row['both'][0]:.3f} / {row['both'][1]:.3f}", flush=True)
    changed = sum(r["cv"] != r["both"] for r in rows)
    print(f"\n{args.dataset}, seeds {args.seeds}: the two rules chose differently in {changed} of {len(rows)} runs")
    print("| rule | test accuracy | test fairness | runs |\n|---|---|---|---|")
    print(f"| cross-validated bounds (today) | {_cell(rows, 'cv')} | {len(rows)} |")
    print(f"| the lower of cross-validated and own validation bounds | {_cell(rows, 'both')} | {len(rows)} |")


if __name__ == "__main__":
    main()
