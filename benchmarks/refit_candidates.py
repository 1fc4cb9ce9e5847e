"""The robust rule's refits, recorded one row each, so that choices among them can be compared offline.

Each run is FB-auto as ``fairops compare`` runs it (fast profile, every default family, the robust rule's
ranking). Instead of the rule's three candidates (and three at the largest budget) it refits the best
``--candidates`` of each list and the most accurate fit on all training rows, and records for every refit its
place in both lists, its own validation figures, its cross-validated figures (five folds over the training and
validation rows) and its test figures at the validation threshold. ``report`` then replays choices on the same
refits: today's rule is the one that looks only at the first three of each list.

    nice python benchmarks/refit_candidates.py run --dataset compas --seeds 0-19 --candidates 8
    python benchmarks/refit_candidates.py report --dataset compas
    python benchmarks/refit_candidates.py --quick     # smoke: German, 300 training rows, two families, s_max 2
"""

from __future__ import annotations

import argparse
import csv
import statistics
import tempfile
import warnings
from pathlib import Path

import optuna

from fairops.datasets import load_dataset
from fairops.fairband import _ranking as ranking, select_best
from fairops.fairband._selection import feasible_fits, lower_bounds, successful_fits
from fairops.tuning import FairnessObjective
from fairops.tuning._baselines import make_study, pick_alpha, run_tuner, start_configurations
from fairops.tuning._cross_validation import cross_validated
from fairops.tuning._objective import SMALL_DATA_FLOOR, ConstantScoresError
from fairops.tuning._refit_choice import dominates, refit_all
from fairops.tuning._search_space import families_for
from report_cells import mean_sd_percent

DATA = Path(__file__).parent / "data" / "refit_candidates"
FIGURES = ("accuracy", "accuracy_low", "fairness", "fairness_low")
FIELDS = ["seed", "trial", "model", "budget", "alpha", "rank", "rank_full", "most_accurate",
          *(f"{part}_{f}" for part in ("val", "cv", "test") for f in FIGURES)]


def run_seed(name: str, seed: int, candidates: int, families=None, max_train_rows=None, s_max=4) -> list[dict]:
    """One FB-auto run's refits: the best ``candidates`` of each ranking and the most accurate fit."""
    families = list(families or families_for())
    objective = FairnessObjective(load_dataset(name), seed=seed, families=families, max_train_rows=max_train_rows,
                                  **SMALL_DATA_FLOOR)
    study = make_study("FB-auto", seed=seed, s_max=s_max,
                       start_configurations=start_configurations("robust", families, "fast"))
    study = run_tuner("FB-auto", objective, seed=seed, study=study, catch=(Exception,)).study
    selection = select_best(study, alpha=pick_alpha("FB-auto"), rule="robust", candidates=candidates)
    accurate = select_best(study, alpha=1.0).trial
    fits = feasible_fits(successful_fits(study))
    by_number = {t.number: t for t in fits}
    order = [by_number[n] for n in ranking.rank([(t.number, *lower_bounds(t)) for t in fits], selection.alpha)]
    largest = max(float(t.user_attrs.get("budget", 1.0)) for t in fits)
    full = [t for t in order if float(t.user_attrs.get("budget", 1.0)) == largest]
    ranked = [t for t in order if t.number in {c.number for c in selection.candidates}]
    rows = []
    for trial in {t.number: t for t in [*ranked, accurate]}.values():
        refit = refit_all(objective, trial)
        try:
            assessed = cross_validated(objective, trial, 5)
        except ConstantScoresError:
            assessed = {**refit.validation, "accuracy_low": 0.0, "fairness_low": 0.0}
        row = {"seed": seed, "trial": trial.number, "model": trial.params.get("model", families[0]),
               "budget": trial.user_attrs.get("budget", 1.0), "alpha": selection.alpha,
               "rank": order.index(trial) if trial in order else -1,
               "rank_full": full.index(trial) if trial in full else -1,
               "most_accurate": trial.number == accurate.number}
        for part, figures in (("val", refit.validation), ("cv", assessed), ("test", refit.test)):
            row.update({f"{part}_{f}": figures[f] for f in FIGURES})
        rows.append(row)
    return rows


def _same_model(row: dict) -> tuple:
    # A configuration Hyperband promoted through its rungs is one trial per rung and one refit: equal figures.
    return tuple(round(float(row[k]), 9) for k in ("val_accuracy", "val_fairness", "cv_accuracy", "cv_fairness"))


def choose(rows: list[dict], candidates: int = 3, distinct: bool = False, bounds: bool = True) -> tuple[dict, int]:
    """The robust rule's last step replayed on one run's recorded refits: the chosen refit and how many
    distinct configurations it was chosen among.

    ``candidates``: the first of each ranking refit (today 3); ``distinct``: counting a configuration once
    however many rungs it reached; ``bounds``: compare cross-validated lower bounds (today) or point values.
    """
    accurate = next(r for r in rows if r["most_accurate"] in (True, "True"))

    def first(key: str) -> list[dict]:
        listed = sorted((r for r in rows if int(r[key]) >= 0), key=lambda r: int(r[key]))
        out: list[dict] = []
        for r in listed:
            if len(out) == candidates:
                break
            if not (distinct and any(_same_model(o) == _same_model(r) for o in out)):
                out.append(r)
        return out

    pool = list({id(r): r for r in [*first("rank"), *first("rank_full"), accurate]}.values())

    def figures(r, part):
        return {"accuracy": float(r[f"{part}_accuracy"]), "fairness": float(r[f"{part}_fairness"])}

    kept = [r for r in pool if r is accurate or not dominates(figures(accurate, "val"), figures(r, "val"))]
    alpha, suffix = float(rows[0]["alpha"]), "_low" if bounds else ""
    chosen = max(kept, key=lambda r: ranking.weighted_score(float(r[f"cv_accuracy{suffix}"]),
                                                             float(r[f"cv_fairness{suffix}"]), alpha))
    return chosen, len({_same_model(r) for r in pool})


RULES = {"the first 3 of each ranking (today)": {}, "the first 3 distinct configurations": {"distinct": True},
         "the first 5": {"candidates": 5}, "the first 5 distinct": {"candidates": 5, "distinct": True},
         "the first 8": {"candidates": 8}, "the first 8, point values": {"candidates": 8, "bounds": False}}


def report(path: Path, seeds: list[int] | None = None) -> None:
    with path.open() as handle:
        rows = list(csv.DictReader(handle))
    by_seed: dict[int, list[dict]] = {}
    for r in rows:
        by_seed.setdefault(int(r["seed"]), []).append(r)
    chosen_seeds = sorted(s for s in by_seed if seeds is None or s in seeds)
    print(f"{path.stem}, {len(chosen_seeds)} runs (seeds {chosen_seeds[0]}-{chosen_seeds[-1]})\n")
    print("| refits compared | configurations | test accuracy | test fairness | runs |\n|---|---|---|---|---|")
    for label, options in RULES.items():
        picks = [choose(by_seed[s], **options) for s in chosen_seeds]
        configurations = statistics.mean(n for _, n in picks)
        print(f"| {label} | {configurations:.1f} | {mean_sd_percent(float(p['test_accuracy']) for p, _ in picks)} | "
              f"{mean_sd_percent(float(p['test_fairness']) for p, _ in picks)} | {len(picks)} |")
    # Not a rule: the same score on the test rows themselves, the most any choice among these refits could show.
    hindsight = [max(by_seed[s], key=lambda r: ranking.weighted_score(
        float(r["test_accuracy"]), float(r["test_fairness"]), float(r["alpha"]))) for s in chosen_seeds]
    print(f"| all of them, chosen on the test rows (hindsight) | "
          f"{statistics.mean(len({_same_model(r) for r in by_seed[s]}) for s in chosen_seeds):.1f} | "
          f"{mean_sd_percent(float(p['test_accuracy']) for p in hindsight)} | "
          f"{mean_sd_percent(float(p['test_fairness']) for p in hindsight)} | {len(hindsight)} |")


def _seeds(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", nargs="?", choices=("run", "report"), default="run")
    parser.add_argument("--dataset", default="compas")
    parser.add_argument("--seeds", default=None)
    parser.add_argument("--candidates", type=int, default=8)
    parser.add_argument("--quick", action="store_true",
                        help="German, 300 training rows, two families, one seed, a 22-fit Hyperband")
    args = parser.parse_args(argv)
    if args.action == "report":
        report(DATA / f"{args.dataset}.csv", _seeds(args.seeds) if args.seeds else None)
        return
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    options = {}
    if args.quick:
        args.dataset, args.seeds, args.candidates = "german", "0", 3
        options = {"families": ["logistic_regression", "exponentiated_gradient"], "max_train_rows": 300, "s_max": 2}
    path = Path(tempfile.mkdtemp()) / "quick.csv" if args.quick else DATA / f"{args.dataset}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if path.exists() and not args.quick:
        with path.open() as handle:
            done = {int(r["seed"]) for r in csv.DictReader(handle)}
    else:
        with path.open("w", newline="") as handle:
            csv.DictWriter(handle, FIELDS).writeheader()
    for seed in _seeds(args.seeds or "0-4"):
        if seed in done:
            continue
        rows = run_seed(args.dataset, seed, args.candidates, **options)
        with path.open("a", newline="") as handle:
            csv.DictWriter(handle, FIELDS).writerows(rows)
        chosen, _ = choose(rows)
        print(f"seed {seed}: {len(rows)} refits; today's choice {chosen['model']} "
              f"{float(chosen['test_accuracy']):.3f} / {float(chosen['test_fairness']):.3f} on test", flush=True)
    if args.quick:
        report(path)


if __name__ == "__main__":
    main()
