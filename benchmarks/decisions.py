"""One threshold, one threshold per group, or group-blind models: fairops against what users pick instead.

Every method sees the rows of ``fairops compare`` (seed s: the split of seed s, 60/20/20 stratified by
label x group) and is scored with fairops' own :class:`~fairops.metrics.Task` on the test rows, at the
rule set on the validation rows:

- fairops FB-auto (one Fairband iteration, every default family: the paper's, SCAFF and the bias
  reductions, the robust rule and the default fairness rule, line 0.8 at 95%, as ``fairops compare`` runs
  them) with ``--decision single`` or ``per-group``, with and without ``--blind`` (no SCAFF when blind: it
  reads the sensitive columns);
- LightGBM with its default settings, scored the same four ways (a two-second baseline);
- fairlearn's ExponentiatedGradient (LightGBM inside, TPR or FPR parity as the task's ratio), trained
  group-blind (the sensitive columns only as ``sensitive_features``), its probability thresholded at the
  task's target on validation like every other score;
- fairlearn's ThresholdOptimizer on the default LightGBM (fitted on train, its group thresholds fitted
  on validation, parity of the task's rate): it picks its own operating point, reported beside it;
Aequitas Flow is not among the peers: it is not installable beside fairops' pinned dependencies here, and
a runner that cannot be exercised would only pretend to measure it.

Peers come from the dev extras (``pip install -e .[dev]`` brings fairlearn); a peer that cannot be
imported is skipped with a message naming the package. Each (data set, seed, method) is written to
``--work-dir`` as one JSON file and skipped when present, so an interrupted run resumes.

    nice python benchmarks/decisions.py run --datasets adult compas german --seeds 0-2
    python benchmarks/decisions.py report            # the Markdown tables of docs/fairband/decisions.md
    python benchmarks/decisions.py proxies           # how well the blind features still tell the groups apart
    python benchmarks/decisions.py --quick           # smoke: German, 300 training rows, the cheap methods
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from fairops.datasets import load_dataset
from fairops.metrics import fairness_ratio, precision, recall
from fairops.tuning import FairnessObjective
from report_cells import mean_sd_percent

FAIROPS = {"FB-auto": ("single", False), "FB-auto per-group": ("per-group", False),
           "FB-auto blind": ("single", True), "FB-auto blind per-group": ("per-group", True)}
LIGHTGBM = {"LightGBM": ("single", False), "LightGBM per-group": ("per-group", False),
            "LightGBM blind": ("single", True), "LightGBM blind per-group": ("per-group", True)}
PEERS = ("ExponentiatedGradient blind", "ThresholdOptimizer")
METHODS = (*FAIROPS, *LIGHTGBM, *PEERS)
QUICK_METHODS = ("LightGBM", "LightGBM per-group", "LightGBM blind per-group", "ExponentiatedGradient blind",
                 "ThresholdOptimizer")


class Skipped(Exception):
    """A peer that cannot run here (not installed)."""


def _objective(data, seed, decision="single", blind=False, max_train_rows=None):
    return FairnessObjective(data, seed=seed, decision=decision, blind=blind, max_train_rows=max_train_rows)


def _scored(objective, score):
    """Validation and test figures of a scoring function at the objective's decision rule."""
    task = objective.task
    _, y_val, s_val = objective.rows("validation")
    _, y_test, s_test = objective.rows("test")
    val_scores, test_scores = score("validation"), score("test")
    rule = task.decision_rule(y_val, val_scores, s_val, seed=objective.seed, decision=objective.decision)
    validation = task.evaluate(y_val, val_scores, s_val, seed=objective.seed, at=rule)
    test = task.evaluate(y_test, test_scores, s_test, seed=objective.seed, at=rule)
    return {"val_acc": validation["accuracy"], "val_fair": validation["fairness"],
            "test_acc": test["accuracy"], "test_fair": test["fairness"]}


def _fairops(data, seed, method, max_train_rows, families):
    from fairops.metrics import FairnessRule
    from fairops.tuning._comparison import compare_tuners
    from fairops.tuning._search_space import families_for

    decision, blind = FAIROPS[method]
    chosen = families or families_for(blind=blind)
    # the robust rule and the fairness line, as fairops tune and fairops compare run by default (compare_tuners'
    # own defaults are the paper's rule and no line)
    (row,) = compare_tuners(data, [seed], tuners=("FB-auto",), families=chosen, max_train_rows=max_train_rows,
                            decision=decision, blind=blind, selection="robust", rule=FairnessRule())
    return {k: row[k] for k in ("val_acc", "val_fair", "test_acc", "test_fair", "model")}


def _lightgbm(data, seed, method, max_train_rows):
    from lightgbm import LGBMClassifier

    decision, blind = LIGHTGBM[method]
    objective = _objective(data, seed, decision, blind, max_train_rows)
    X, y, _ = objective.rows("train")
    model = LGBMClassifier(random_state=seed, verbose=-1, n_jobs=1).fit(X, y)
    return _scored(objective, lambda part: model.predict_proba(objective.rows(part)[0])[:, 1])


def _one_hot(objective):
    """Train / validation / test features one-hot encoded with the training columns (fairlearn takes numbers)."""
    parts = {part: objective.rows(part)[0] for part in ("train", "validation", "test")}
    encoded = pd.get_dummies(pd.concat(parts, names=["part"]), dtype=float)
    return {part: encoded.xs(part).to_numpy() for part in parts}


def _fairlearn(name):
    try:
        import fairlearn.postprocessing
        import fairlearn.reductions
    except ImportError:
        raise Skipped("fairlearn is not installed (pip install fairlearn, or the dev extras)") from None
    return fairlearn.reductions if name == "reductions" else fairlearn.postprocessing


def _exponentiated_gradient(data, seed, max_train_rows):
    from lightgbm import LGBMClassifier

    reductions = _fairlearn("reductions")
    objective = _objective(data, seed, blind=True, max_train_rows=max_train_rows)
    X = _one_hot(objective)
    _, y, sensitive = objective.rows("train")
    parity = {"tpr": reductions.TruePositiveRateParity, "fpr": reductions.FalsePositiveRateParity,
              "ppr": reductions.DemographicParity}[data.task.fairness]()
    model = reductions.ExponentiatedGradient(LGBMClassifier(random_state=seed, verbose=-1, n_jobs=1), parity)
    model.fit(X["train"], y, sensitive_features=sensitive[list(data.task.sensitive)].astype(str).agg("&".join, axis=1))
    return _scored(objective, lambda part: model._pmf_predict(X[part])[:, 1])


def _threshold_optimizer(data, seed, max_train_rows):
    from lightgbm import LGBMClassifier

    postprocessing = _fairlearn("postprocessing")
    objective = _objective(data, seed, max_train_rows=max_train_rows)
    X = _one_hot(objective)
    _, y, _ = objective.rows("train")
    _, y_val, s_val = objective.rows("validation")
    _, y_test, s_test = objective.rows("test")
    groups = lambda s: s[list(data.task.sensitive)].astype(str).agg("&".join, axis=1)  # noqa: E731
    constraint = {"tpr": "true_positive_rate_parity", "fpr": "false_positive_rate_parity",
                  "ppr": "demographic_parity"}[data.task.fairness]
    model = postprocessing.ThresholdOptimizer(
        estimator=LGBMClassifier(random_state=seed, verbose=-1, n_jobs=1).fit(X["train"], y), constraints=constraint,
        prefit=True, predict_method="predict_proba")
    model.fit(X["validation"], y_val, sensitive_features=groups(s_val))
    accuracy = {"precision": precision, "recall": recall}[data.task.metric]
    result = {}
    for part, labels, sensitive in (("val", y_val, s_val), ("test", y_test, s_test)):
        decided = model.predict(X["validation" if part == "val" else "test"], sensitive_features=groups(sensitive),
                                random_state=seed).astype(int)
        result[f"{part}_acc"] = accuracy(labels, decided)
        result[f"{part}_fair"] = fairness_ratio(labels, decided, sensitive[list(data.task.sensitive)],
                                                rate=data.task.fairness)
        rate = data.task.target if data.task.target != "top_k" else "ppr"
        chosen = labels == (0 if rate == "fpr" else 1) if rate != "ppr" else np.ones(len(labels), bool)
        result[f"{part}_{rate}"] = float(decided[chosen].mean())
    return result


def run_one(data, seed, method, *, max_train_rows=None, families=None) -> dict:
    """One (data set, seed, method) measurement: validation and test figures and the seconds it took."""
    start = time.perf_counter()
    if method in FAIROPS:
        result = _fairops(data, seed, method, max_train_rows, families)
    elif method in LIGHTGBM:
        result = _lightgbm(data, seed, method, max_train_rows)
    elif method == "ExponentiatedGradient blind":
        result = _exponentiated_gradient(data, seed, max_train_rows)
    else:
        result = _threshold_optimizer(data, seed, max_train_rows)
    return {"dataset": data.name, "seed": seed, "method": method, **result,
            "seconds": time.perf_counter() - start}


def _seeds(text: str) -> list[int]:
    if "-" in text:
        low, high = text.split("-")
        return list(range(int(low), int(high) + 1))
    return [int(s) for s in text.split(",")]


def run(datasets, seeds, methods, work_dir: Path, **options) -> None:
    work_dir.mkdir(parents=True, exist_ok=True)
    skipped = set()
    for name in datasets:
        data = load_dataset(name)
        for seed in seeds:
            for method in methods:
                path = work_dir / f"{name}-{seed}-{method.replace(' ', '_')}.json"
                if path.exists() or method in skipped:
                    continue
                try:
                    row = run_one(data, seed, method, **options)
                except Skipped as reason:
                    print(f"skipped {method}: {reason}", flush=True)
                    skipped.add(method)
                    continue
                path.write_text(json.dumps(row))
                print(f"{name} seed {seed} {method:<28} test {row['test_acc']:.3f} / {row['test_fair']:.3f}  "
                      f"({row['seconds']:.0f} s)", flush=True)


def report(work_dir: Path) -> str:
    """One Markdown table per data set: mean ± sd over seeds, in %."""
    rows = [json.loads(p.read_text()) for p in sorted(work_dir.glob("*.json"))]
    out = []
    for name in dict.fromkeys(r["dataset"] for r in rows):
        task = load_dataset(name).task
        out += [f"**{name}** ({task.accuracy_name}; {task.fairness_name}; test rows, rule set on validation)", "",
                f"| method | test {task.metric} | test {task.fairness_label} | val {task.fairness_label} | seeds "
                "| seconds | note |", "|---|---|---|---|---|---|---|"]
        for method in METHODS:
            chosen = [r for r in rows if r["dataset"] == name and r["method"] == method]
            if not chosen:
                continue
            rate = next((k[5:] for k in chosen[0] if k.startswith("test_") and k[5:] in ("tpr", "fpr", "ppr")), None)
            cells = {key: mean_sd_percent([r[key] for r in chosen]) for key in ("test_acc", "test_fair", "val_fair")}
            note = (f"its own operating point: test {rate.upper()} "
                    f"{mean_sd_percent(r['test_' + rate] for r in chosen)}") if rate else ""
            out.append(f"| {method} | {cells['test_acc']} | {cells['test_fair']} | {cells['val_fair']} | "
                       f"{len(chosen)} | {statistics.mean(r['seconds'] for r in chosen):.0f} | {note} |")
        out.append("")
    return "\n".join(out)


def proxies(datasets, seed: int = 0) -> str:
    """How well the blind features still tell each sensitive attribute apart: the AUC of a default
    LightGBM predicting it from them (train rows -> test rows), and for Adult the share of each sex among
    husbands and wives."""
    from lightgbm import LGBMClassifier

    from fairops.metrics import auc_y

    lines = ["| data set | attribute | AUC from the blind features (0.5 = no trace) |", "|---|---|---|"]
    for name in datasets:
        data = load_dataset(name)
        objective = _objective(data, seed, blind=True)
        (X, _, s_train), (X_test, _, s_test) = objective.rows("train"), objective.rows("test")
        for column in data.sensitive.columns:
            values = s_train[column].astype(str)
            top = values.value_counts().index[0]
            model = LGBMClassifier(random_state=seed, verbose=-1, n_jobs=1).fit(X, (values == top).astype(int))
            auc = auc_y((s_test[column].astype(str) == top).astype(int), model.predict_proba(X_test)[:, 1])
            lines.append(f"| {name} | {column} ({top} vs rest) | {auc:.3f} |")
    if "adult" in datasets:
        adult = load_dataset("adult")
        shares = pd.crosstab(adult.X["relationship"], adult.sensitive["sex"], normalize="index")
        lines += ["", "| Adult `relationship` | " + " | ".join(map(str, shares.columns)) + " |",
                  "|---|" + "---|" * len(shares.columns)]
        lines += [f"| {index} | " + " | ".join(f"{v:.3f}" for v in row) + " |" for index, row in shares.iterrows()]
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", choices=["run", "report", "proxies"], default="report")
    parser.add_argument("--datasets", nargs="+", default=["adult", "compas", "german"])
    parser.add_argument("--seeds", default="0-2", help="e.g. 0-2 or 0,3")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS, metavar="METHOD")
    parser.add_argument("--work-dir", default="benchmarks/data/decisions")
    parser.add_argument("--quick", action="store_true", help="German, seed 0, 300 training rows, cheap methods")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if args.quick:
        with tempfile.TemporaryDirectory() as folder:
            run(["german"], [0], QUICK_METHODS, Path(folder), max_train_rows=300)
            print(report(Path(folder)))
        return
    if args.command == "proxies":
        print(proxies(args.datasets))
        return
    if args.command == "run":
        run(args.datasets, _seeds(args.seeds), args.methods, Path(args.work_dir))
    print(report(Path(args.work_dir)))


if __name__ == "__main__":
    main()
