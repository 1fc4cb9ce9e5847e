"""Every tuner on the same budget and the same objective: the paper's Table 3 comparison.

RS and RS-bal share one random-search run per seed (they differ only in the final pick). Each run's
pick is refit at its budget and scored on the test rows at the threshold set on the validation rows,
as in the paper. Fits that failed (an error, or constant validation scores) are counted per run.
"""

from __future__ import annotations

import statistics
import time

from .baselines import TUNERS, pick_alpha, run_tuner, trials_per_iteration
from .objective import FairnessObjective, failure_reason
from fairops.fairband.selection import select_best

ROW_FIELDS = ("seed", "tuner", "val_acc", "val_fair", "test_acc", "test_fair", "fits", "failed", "budget",
              "model", "seconds")


def compare_tuners(dataset, seeds, *, tuners=TUNERS, profile="fast", families=None, max_train_rows=None,
                   n_jobs=1, on_row=None, progress=None, split_seed=None) -> list[dict]:
    """One row per (seed, tuner): the pick's validation and test accuracy and fairness.

    Each seed seeds the tuner and the models; the data split follows ``split_seed`` when given (the
    paper's protocol: one split, runs differing only in the tuner's seed), else the seed too.
    ``progress(seed, tuner, n_trials)``, when given, returns an Optuna callback for that run.

    >>> from fairops.datasets import load_german
    >>> rows = compare_tuners(load_german(), [0], tuners=("RS", "RS-bal"), families=["logistic_regression"],
    ...                       max_train_rows=300)
    >>> [row["tuner"] for row in rows], rows[0]["fits"]
    (['RS', 'RS-bal'], 24)
    """
    unknown = [t for t in tuners if t not in TUNERS]
    if unknown or not tuners:
        raise ValueError(f"tuners must be a non-empty list from {TUNERS}, got unknown {unknown}")
    rows = []
    for seed in seeds:
        objective = FairnessObjective(dataset, profile=profile, seed=seed, families=families,
                                      max_train_rows=max_train_rows, split_seed=split_seed)
        runs = {}
        for tuner in tuners:
            shared = "RS" if tuner == "RS-bal" else ("RS-bal" if tuner == "RS" else None)
            if shared in runs:
                runs[tuner] = runs[shared]
                continue
            start = time.perf_counter()
            callbacks = [] if progress is None else [progress(seed, tuner, trials_per_iteration(tuner))]
            result = run_tuner(tuner, objective, seed=seed, n_jobs=n_jobs, catch=(Exception,), callbacks=callbacks)
            runs[tuner] = (result.study, time.perf_counter() - start)
        for tuner in tuners:
            study, seconds = runs[tuner]
            pick = select_best(study, alpha=pick_alpha(tuner))
            test_accuracy, test_fairness = objective.test(pick.trial)
            row = {"seed": seed, "tuner": tuner, "val_acc": pick.accuracy, "val_fair": pick.fairness,
                   "test_acc": test_accuracy, "test_fair": test_fairness, "fits": len(study.trials),
                   "failed": sum(failure_reason(t) is not None for t in study.trials),
                   "budget": float(pick.trial.user_attrs.get("budget", 1.0)),
                   "model": pick.trial.params.get("model", (families or ["?"])[0]), "seconds": seconds}
            rows.append(row)
            if on_row is not None:
                on_row(row)
    return rows


def summary(rows) -> list[dict]:
    """Per tuner: mean and standard deviation (in %) of validation and test accuracy and fairness."""
    result = []
    for tuner in dict.fromkeys(row["tuner"] for row in rows):
        subset = [row for row in rows if row["tuner"] == tuner]
        entry = {"tuner": tuner, "runs": len(subset),
                 "failed": statistics.mean(row.get("failed", 0) for row in subset)}
        for key in ("val_acc", "val_fair", "test_acc", "test_fair"):
            values = [100 * row[key] for row in subset]
            entry[key] = statistics.mean(values)
            entry[key + "_sd"] = statistics.stdev(values) if len(values) > 1 else 0.0
        result.append(entry)
    return result


def markdown_table(rows, task=None) -> str:
    """The Table-3-style comparison as Markdown (mean ± sd over seeds, in %), with the mean number of
    failed fits per run; ``task`` names the columns by its metric and ratio.

    >>> print(markdown_table([{"tuner": "HB", "val_acc": .9, "val_fair": .5, "test_acc": .8, "test_fair": .6}]))
    | tuner | val accuracy | val fairness | test accuracy | test fairness | runs | failed fits |
    |---|---|---|---|---|---|---|
    | HB | 90.0 ± 0.0 | 50.0 ± 0.0 | 80.0 ± 0.0 | 60.0 ± 0.0 | 1 | 0.0 |
    """
    accuracy, fairness = ("accuracy", "fairness") if task is None else (task.metric, task.fairness_label)
    lines = [f"| tuner | val {accuracy} | val {fairness} | test {accuracy} | test {fairness} | runs | failed fits |",
             "|---|---|---|---|---|---|---|"]
    for entry in summary(rows):
        cells = " | ".join(f"{entry[k]:.1f} ± {entry[k + '_sd']:.1f}"
                           for k in ("val_acc", "val_fair", "test_acc", "test_fair"))
        lines.append(f"| {entry['tuner']} | {cells} | {entry['runs']} | {entry['failed']:.1f} |")
    return "\n".join(lines)
