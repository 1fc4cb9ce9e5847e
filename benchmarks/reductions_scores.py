"""Which score of a reduction keeps its constraint at the task's target rate on test rows, served as well as
evaluated, and what the error's costs change.

A reduction holds its constraint for its randomized classifier at the predictors' own decisions; a task
thresholds a score at a target rate (precision at 50% TPR on Adult, at 10% FPR on COMPAS) set on the
validation rows and applied unchanged to the test rows. The scores (``mix`` of :mod:`fairops.reductions`):

- ``decisions``: the randomized classifier's chance of deciding positive (fairlearn's ``_pmf_predict``),
  ties broken by a hash of the row (fairops' default);
- ``probabilities``: the weighted mean of the predictors' probabilities;
- ``decisions, untied``: the chance alone. The task's evaluation breaks its ties at random; a served row
  cannot be (it is decided alone), so this row shows what the served model decides: above the
  threshold positive, at it as most of the tied validation rows were.

Every row is the exponentiated gradient over one base learner (a depth-8 tree, a logistic regression,
LightGBM with its defaults), the task's ratio bound 0.9 (+0.01), eps 0.1, 20 rounds, fitted on the
training rows of the split ``fairops compare`` uses (seed = split), with the sensitive columns as inputs
as ``fairops compare`` has them by default; ``fp cost`` is the error's cost of a false positive as a share
of both (0.5: the paper's even costs). The ceiling is a perfectly fair model's mean ratio on that test
split (``fairband_robust.ceilings``).

    nice python benchmarks/reductions_scores.py run --datasets adult compas --seeds 0-4
    python benchmarks/reductions_scores.py report
    python benchmarks/reductions_scores.py null --datasets compas --seeds 0-19
    python benchmarks/reductions_scores.py --quick     # smoke: German, one seed, the tree, 400 training rows
                                                       # (the null too)

``null`` is the same fit with the groups permuted among the training rows (the constraint then holds over
groups that mean nothing): what is left of the fairness then is the chance score's own randomness, the
rest is the constraint's. Two settings: fairlearn's defaults over LightGBM's (the tightest ratio bound,
eps 0.025) and the tree at a false-positive cost of 0.7, each with the default score.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from fairband_robust import ceilings
from fairops.datasets import load_dataset
from fairops.metrics import fairness_ratio, precision, recall
from fairops.metrics._decisions import served_decision
from fairops.tuning import FairnessObjective, fit_model
from fairops.tuning._search_space import LIBRARY_DEFAULTS
from report_cells import mean_sd_percent

REDUCTION = {"eg_ratio_bound": 0.9, "eg_ratio_bound_slack": 0.01, "eg_eps": 0.1, "eg_max_iter": 20}
BASES = {
    "tree": {"eg_base": "decision_tree", "dt_criterion": "gini", "dt_max_depth": 8, "dt_min_samples_leaf": 20,
             "dt_min_samples_split": 40},
    "logistic": {"eg_base": "logistic_regression", **LIBRARY_DEFAULTS["logistic_regression"]("fast")},
    "lightgbm": {"eg_base": "lightgbm", **LIBRARY_DEFAULTS["lightgbm"]("fast")},
}
FP_COSTS = {"adult": (0.5, 0.7, 0.9), "compas": (0.5, 0.6, 0.7), "german": (0.5, 0.7)}
SCORES = ("decisions", "probabilities", "decisions, untied")


def _measured(objective, scores: dict, seed: int, untied: bool) -> dict:
    """Validation and test (accuracy, fairness) at the validation threshold; ``untied``: test decided as served."""
    task = objective.task
    (_, y_val, s_val), (_, y_test, s_test) = objective.rows("validation"), objective.rows("test")
    s_val, s_test = s_val[list(task.sensitive)], s_test[list(task.sensitive)]
    validation, _ = task.measure(y_val, scores["validation"], s_val, seed=seed)
    point = task.decision_rule(y_val, scores["validation"], s_val, seed=seed)
    if untied:
        decided = served_decision(point, scores["test"])
        accuracy = (precision if task.metric == "precision" else recall)(y_test, decided)
        test = {"accuracy": accuracy, "fairness": fairness_ratio(y_test, decided, s_test, rate=task.fairness)}
    else:
        test = task.evaluate(y_test, scores["test"], s_test, seed=seed, at=point)
    return {"val_acc": validation["accuracy"], "val_fair": validation["fairness"],
            "test_acc": float(test["accuracy"]), "test_fair": float(test["fairness"])}


def chance(model, X) -> np.ndarray:
    """The randomized classifier's chance of deciding positive, untied: the weighted mean of the decisions."""
    reduction, inputs = model[-1], (model[:-1].transform(X) if len(model) > 1 else X)
    return sum(w * np.asarray(p.predict(inputs), dtype=float)
               for p, w in zip(reduction.predictors_, reduction.weights_))


def run_one(name: str, seed: int, base: str, fp_cost: float, *, max_train_rows=None) -> dict:
    data = load_dataset(name)
    objective = FairnessObjective(data, seed=seed, families=["exponentiated_gradient"], max_train_rows=max_train_rows)
    model = objective.unfitted(SimpleNamespace(params={**REDUCTION, **BASES[base], "eg_fp_cost": fp_cost}, number=0))
    X, y, sensitive = objective.rows("train")
    start = time.perf_counter()
    fit_model(model, X, y, objective.task.select_sensitive(sensitive))
    row = {"dataset": name, "seed": seed, "base": base, "fp_cost": fp_cost, "fit_seconds": time.perf_counter() - start,
           "n_predictors": model[-1].n_predictors_, "ceiling": ceilings(name, seed)["test"]}
    for score in SCORES:
        model[-1].set_params(mix="probabilities" if score == "probabilities" else "decisions")
        scores = {part: (chance(model, objective.rows(part)[0]) if score == "decisions, untied"
                         else model.predict_proba(objective.rows(part)[0])[:, 1]) for part in ("validation", "test")}
        for key, value in _measured(objective, scores, seed, untied=score == "decisions, untied").items():
            row[f"{score}:{key}"] = value
    return row


NULL_SETTINGS = {
    "fairlearn's defaults over LightGBM": {**BASES["lightgbm"], "eg_ratio_bound": 0.99, "eg_eps": 0.025,
                                           "eg_fp_cost": 0.5},
    "tree, fp cost 0.7": {**BASES["tree"], "eg_fp_cost": 0.7},
}


def null_rows(name: str, seed: int, max_train_rows=None) -> list[dict]:
    """Each null setting fitted with the true groups and with the groups permuted (test figures)."""
    objective = FairnessObjective(load_dataset(name), seed=seed, families=["exponentiated_gradient"],
                                  max_train_rows=max_train_rows)
    X, y, sensitive = objective.rows("train")
    groups = objective.task.select_sensitive(sensitive)
    shuffled = groups.sample(frac=1.0, random_state=seed).set_axis(groups.index)
    rows = []
    for setting, params in NULL_SETTINGS.items():
        for label, fitted_groups in (("true groups", groups), ("permuted groups", shuffled)):
            model = objective.unfitted(SimpleNamespace(params={**REDUCTION, **params}, number=0))
            fit_model(model, X, y, fitted_groups)
            test = objective.evaluate(model, "test")
            rows.append({"setting": setting, "groups": label, "test_acc": test["accuracy"],
                         "test_fair": test["fairness"]})
    return rows


def null_table(name: str, seeds, max_train_rows=None) -> str:
    rows = [row for seed in seeds for row in null_rows(name, seed, max_train_rows)]
    lines = ["| setting | fitted with | test accuracy | test fairness | seeds |", "|---|---|---|---|---|"]
    for setting in NULL_SETTINGS:
        for label in ("true groups", "permuted groups"):
            chosen = [r for r in rows if (r["setting"], r["groups"]) == (setting, label)]
            lines.append(f"| {setting} | {label} | {mean_sd_percent([r['test_acc'] for r in chosen])} | "
                         f"{mean_sd_percent([r['test_fair'] for r in chosen])} | {len(chosen)} |")
    return "\n".join(lines)


def run(datasets, seeds, bases, work_dir: Path, **options) -> None:
    work_dir.mkdir(parents=True, exist_ok=True)
    for name in datasets:
        for seed in seeds:
            for base in bases:
                for fp_cost in FP_COSTS[name]:
                    path = work_dir / f"{name}-{seed}-{base}-{fp_cost}.json"
                    if path.exists():
                        continue
                    row = run_one(name, seed, base, fp_cost, **options)
                    path.write_text(json.dumps(row))
                    print(f"{name} seed {seed} {base:<8} fp cost {fp_cost}  " + "  ".join(
                        f"{score}: {row[f'{score}:test_acc']:.3f} / {row[f'{score}:test_fair']:.3f}"
                        for score in SCORES) + f"  ceiling {row['ceiling']:.3f}  {row['fit_seconds']:.1f} s",
                          flush=True)


def report(work_dir: Path) -> str:
    rows = [json.loads(p.read_text()) for p in sorted(work_dir.glob("*.json"))]
    lines = ["| data | base | fp cost | score | val accuracy | val fairness | test accuracy | test fairness "
             "| ceiling (test) | predictors | seeds |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for key in sorted({(r["dataset"], r["base"], r["fp_cost"]) for r in rows}):
        group = [r for r in rows if (r["dataset"], r["base"], r["fp_cost"]) == key]
        for score in SCORES:
            cells = [mean_sd_percent([r[f"{score}:{column}"] for r in group])
                     for column in ("val_acc", "val_fair", "test_acc", "test_fair")]
            lines.append(f"| {key[0]} | {key[1]} | {key[2]} | {score} | {' | '.join(cells)} | "
                         f"{100 * statistics.mean(r['ceiling'] for r in group):.1f} | "
                         f"{statistics.mean(r['n_predictors'] for r in group):.1f} | {len(group)} |")
    return "\n".join(lines)


def _seeds(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", choices=["run", "report", "null"], default="run")
    parser.add_argument("--datasets", nargs="+", default=["adult", "compas"], choices=sorted(FP_COSTS))
    parser.add_argument("--seeds", default="0-4")
    parser.add_argument("--bases", nargs="+", default=sorted(BASES), choices=sorted(BASES))
    parser.add_argument("--work-dir", type=Path, default=Path("benchmarks/data/reductions_scores"))
    parser.add_argument("--quick", action="store_true",
                        help="German, seed 0, the tree, 400 training rows (the null too)")
    args = parser.parse_args(argv)
    if args.quick:
        with tempfile.TemporaryDirectory() as scratch:
            run(["german"], [0], ["tree"], Path(scratch), max_train_rows=400)
            print(report(Path(scratch)))
        print(f"\n{null_table('german', [0], max_train_rows=400)}")
        return
    if args.command == "null":
        for name in args.datasets:
            print(f"**{name}**\n\n{null_table(name, _seeds(args.seeds))}\n")
        return
    if args.command == "run":
        run(args.datasets, _seeds(args.seeds), args.bases, args.work_dir)
    print(report(args.work_dir))


if __name__ == "__main__":
    main()
