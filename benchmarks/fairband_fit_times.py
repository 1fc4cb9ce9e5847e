"""Fit times of `fairops tune`'s fits on Adult, per model family and Fairband budget: the table that
feeds benchmarks/fairband_simulation.py.

One fit is what a worker is busy with for one trial: the model built from random parameters of its
family, fitted on the budget's nested slice of the training rows and scored on the validation rows
(FairnessObjective's refit + evaluate, one thread). Every sampled configuration is timed at each of
the five budgets of the paper's schedule (1/81 ... 1), as a configuration promoted up the rungs is.

    python benchmarks/fairband_fit_times.py                        # full Adult, 6 per family x budget
    python benchmarks/fairband_fit_times.py --max-train-rows 3000  # the row cap of the measured runs
    python benchmarks/fairband_fit_times.py --quick                # smoke test: prints, writes nothing
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one fit = one core, as one worker process per core runs them

TABLE = Path(__file__).resolve().parent / "data" / "fairband_fit_times.csv"
BUDGETS = (1 / 81, 1 / 27, 1 / 9, 1 / 3, 1.0)
FIELDS = ("family", "budget", "sample", "seconds", "max_train_rows", "profile")


def measure(families=None, samples=6, max_train_rows=None, profile="fast", seed=0, log=sys.stderr):
    """Rows of (family, budget, sample, seconds, max_train_rows, profile)."""
    import warnings

    import optuna
    from sklearn.exceptions import ConvergenceWarning

    from fairops.datasets import load_dataset
    from fairops.tuning import FairnessObjective
    from fairops.tuning._search_space import families_for, make_model

    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    warnings.filterwarnings("ignore", message=".*batch_size.*clipped.*")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    data = load_dataset("adult")
    chosen = list(families or families_for())
    rows = []
    for family in chosen:
        objective = FairnessObjective(data, profile=profile, families=[family], seed=seed,
                                      max_train_rows=max_train_rows)
        study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
        for sample in range(samples):
            trial = study.ask()
            make_model(trial, profile=profile, families=[family], seed=seed, X_example=data.X,
                       sensitive_columns=data.task.sensitive)  # draws params
            configuration = SimpleNamespace(params=dict(trial.params), number=trial.number)
            study.tell(trial, 0.0)
            for fraction in BUDGETS:
                started = time.perf_counter()
                model = objective.refit(configuration, fraction)
                objective.evaluate(model, "validation")
                seconds = time.perf_counter() - started
                rows.append({"family": family, "budget": round(fraction, 6), "sample": sample,
                             "seconds": round(seconds, 5), "max_train_rows": max_train_rows or objective.n_train,
                             "profile": profile})
            print(f"{family} sample {sample}: " + " ".join(f"{r['seconds']:.3f}" for r in rows[-len(BUDGETS):]),
                  file=log, flush=True)
    return rows


def summary(rows) -> str:
    """Median seconds per family (rows) and budget (columns), as a markdown table."""
    import numpy as np

    budgets = sorted({r["budget"] for r in rows})
    lines = ["| family | " + " | ".join(f"1/{round(1 / b)}" if b < 1 else "1" for b in budgets) + " |",
             "|---|" + "---:|" * len(budgets)]
    for family in dict.fromkeys(r["family"] for r in rows):
        cells = [np.median([r["seconds"] for r in rows if r["family"] == family and r["budget"] == b])
                 for b in budgets]
        lines.append(f"| {family} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
    return "\n".join(lines)


def write(rows, path: Path, append: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    keep = []
    if append and path.exists():
        with open(path, newline="") as handle:
            keep = [r for r in csv.DictReader(handle)
                    if int(r["max_train_rows"]) != int(rows[0]["max_train_rows"])]
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(keep + rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=6, help="configurations per family")
    parser.add_argument("--families", help="comma-separated (default: the five paper families + scaff_forest)")
    parser.add_argument("--max-train-rows", type=int)
    parser.add_argument("--out", type=Path, default=TABLE,
                        help="CSV to update (rows of another --max-train-rows are kept)")
    parser.add_argument("--quick", action="store_true", help="two families, one sample, 2000 rows; writes nothing")
    args = parser.parse_args(argv)
    if args.quick:
        rows = measure(["logistic_regression", "decision_tree"], samples=1, max_train_rows=2000)
    else:
        rows = measure(args.families.split(",") if args.families else None, samples=args.samples,
                       max_train_rows=args.max_train_rows)
        write(rows, args.out, append=True)
        print(f"wrote {len(rows)} rows to {args.out}")
    print(summary(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
