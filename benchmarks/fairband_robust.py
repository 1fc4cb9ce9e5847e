"""Does the pick hold on new data? The robust selection against the paper's, per data set and seed.

For each data set and seed, FB-auto runs once per selection rule (``fairops compare``'s protocol: a new
train / validation / test split per seed, one Fairband iteration, the fast profile, the paper's five
families; ``fairops compare`` adds the SCAFF forest): ``paper`` (the paper's budget fractions and argmax
of ``o`` over the fits' point values; the pick refit at its budget for the test figures, as in the paper) and
``robust`` (the small-data floor, ranking by lower confidence bounds, the choice among refits on all training rows).
Per rule: test accuracy and fairness, the validation-to-test fairness loss, and how often the most
accurate fit's refit dominates the pick's refit on validation (for ``paper`` the pick and the most
accurate fit are refit on all training rows for this check only).

Each split's noise ceiling is the mean fairness ratio a perfectly fair model would measure on it: every
group's rate equal to the task's target (50% TPR, 10% or 2% FPR), the group counts of that split's
validation and test rows; on validation the target's total of events is shared out among the groups at
random (the threshold meets it exactly there), on test each group draws its own binomial count.

    python benchmarks/fairband_robust.py run --datasets compas compas-fpr2 german bank adult credit_default --seeds 0-4
    python benchmarks/fairband_robust.py report
    python benchmarks/fairband_robust.py ceilings --datasets compas compas-fpr2 --seeds 0-4
    python benchmarks/fairband_robust.py logs      # the published COMPAS logs' test group sizes
    python benchmarks/fairband_robust.py --quick   # smoke test: german, logistic regression, 300 training rows

``logs`` infers the test group sizes behind the published COMPAS picks (benchmarks/reference/fair-automl):
a pick's test FPR ratio is ``(k_a / n_a) / (k_b / n_b)`` for whole false-positive counts, and its test
precision ``TP / (TP + FP)`` needs a whole ``TP`` for the same ``FP = k_a + k_b`` (between 4% and 20% of
the negatives); every split of 672 or 673 test negatives (20% of COMPAS's 3,363) is tried.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import warnings
from pathlib import Path

import numpy as np
import optuna
import pandas as pd

from fairops.datasets import load_compas, load_dataset, train_validation_test_split
from fairops.tuning import compare_tuners
from report_cells import mean_sd_percent

RULES = ("paper", "robust")
DATASETS = ("compas", "compas-fpr2", "german", "bank", "adult", "credit_default")
DRAWS = 20000


def load(name: str):
    return load_compas(fpr=0.02) if name == "compas-fpr2" else load_dataset(name)


def _seeds(text: str) -> list[int]:
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


# ------------------------------------------------------------------------------------- noise ceiling
def _group_bases(data, rows) -> list[np.ndarray]:
    """Per sensitive attribute of the task: the rows behind each group's rate (negatives for FPR, ...)."""
    task, y = data.task, np.asarray(data.y)[rows]
    base = {"tpr": y == 1, "fpr": y == 0, "ppr": np.ones(len(rows), bool)}[task.fairness]
    return [data.sensitive[name].iloc[rows][base].value_counts().to_numpy() for name in task.sensitive]


def _ratio(events: np.ndarray, bases: np.ndarray) -> np.ndarray:
    rates = events / bases
    highest = rates.max(axis=1)
    return np.where(highest > 0, rates.min(axis=1) / np.where(highest > 0, highest, 1), 1.0)


def ceiling(data, rows, part: str, rng) -> float:
    """Mean fairness a perfectly fair model measures on these rows (lowest over the task's attributes)."""
    target = data.task.target_value if data.task.target in ("tpr", "fpr") else None
    if target is None:
        return float("nan")
    per_attribute = []
    for bases in _group_bases(data, rows):
        bases = bases[bases > 0]
        if part == "validation":  # the threshold meets the target exactly: a fixed total shared out at random
            rounded = np.floor if data.task.target == "fpr" else np.ceil
            total = int(rounded(target * bases.sum()))
            events = rng.multivariate_hypergeometric(bases, total, size=DRAWS)
        else:
            events = rng.binomial(bases, target, size=(DRAWS, len(bases)))
        per_attribute.append(_ratio(events, bases))
    return float(np.min(per_attribute, axis=0).mean())


def ceilings(name: str, seed: int) -> dict:
    data = load(name)
    split = train_validation_test_split(data.y, data.sensitive[list(data.task.sensitive)], seed=seed)
    rng = np.random.default_rng(seed)
    return {"validation": ceiling(data, split.validation, "validation", rng),
            "test": ceiling(data, split.test, "test", rng),
            "test_bases": [b.tolist() for b in _group_bases(data, split.test)]}


# ------------------------------------------------------------------------------- the published logs
LOGS = Path(__file__).resolve().parent / "reference" / "fair-automl" / "COMPAS_non-aggregated-results.csv"


def _explains(ratio: float, precision: float, n_a: int, n_b: int) -> bool:
    """Whether whole counts on groups of n_a and n_b negatives give this (FPR ratio, precision) pair."""
    for n_low, n_high in ((n_a, n_b), (n_b, n_a)):
        k_high = np.arange(1, n_high + 1)
        k_low = np.round(ratio * k_high * n_low / n_high)
        ok = (k_low <= n_low) & (np.round((k_low / n_low) / (k_high / n_high), 5) == ratio)
        fp = (k_low + k_high)[ok]
        fp = fp[(fp >= 0.04 * (n_a + n_b)) & (fp <= 0.2 * (n_a + n_b))]
        tp = np.round(precision * fp / (1 - precision))
        if np.any((tp > 0) & (np.round(tp / np.maximum(tp + fp, 1), 5) == precision)):
            return True
    return False


def infer_log_groups(totals=(672, 673)) -> list[tuple[int, int, int]]:
    """(picks explained, Caucasian negatives, other negatives) for every split of ``totals``, best first."""
    picks = pd.read_csv(LOGS)[["fairness_test", "performance_test"]].to_numpy()
    found = [(sum(_explains(r, p, n_a, total - n_a) for r, p in picks), n_a, total - n_a)
             for total in totals for n_a in range(int(0.25 * total), int(0.5 * total))]
    return sorted(found, reverse=True)


# ------------------------------------------------------------------------------------------- running
def run(names, seeds, work_dir: Path, *, families=None, max_train_rows=None, log=print) -> None:
    work_dir.mkdir(parents=True, exist_ok=True)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    for name in names:
        data = load(name)
        for seed in seeds:
            for rule in RULES:
                path = work_dir / f"{name}-seed{seed}-{rule}.json"
                if path.exists():
                    continue
                (row,) = compare_tuners(data, [seed], tuners=("FB-auto",), families=families,
                                        max_train_rows=max_train_rows, selection=rule, refit_check=True)
                row["dataset"], row["ceiling"] = name, ceilings(name, seed)
                path.write_text(json.dumps(row, default=float))
                log(f"{name} seed {seed} {rule}: validation {row['val_fair']:.3f} test {row['test_acc']:.3f} / "
                    f"{row['test_fair']:.3f} dominated {row['dominated']} ({row['seconds']:.0f} s)")


def report(work_dir: Path) -> str:
    rows = [json.loads(p.read_text()) for p in sorted(work_dir.glob("*.json"))]
    lines = ["| data | rule | runs | test accuracy | test fairness | val fairness | loss (pp) | dominated "
             "| ceiling val / test | failed fits |", "|---|---|---|---|---|---|---|---|---|---|"]
    for name in DATASETS:
        for rule in RULES:
            subset = [r for r in rows if r["dataset"] == name and r["selection"] == rule]
            if not subset:
                continue
            loss = 100 * statistics.mean(r["val_fair"] - r["test_fair"] for r in subset)
            dominated = sum(bool(r["dominated"]) for r in subset)
            val_ceiling = 100 * statistics.mean(r["ceiling"]["validation"] for r in subset)
            test_ceiling = 100 * statistics.mean(r["ceiling"]["test"] for r in subset)
            cells = {key: mean_sd_percent([r[key] for r in subset]) for key in ("test_acc", "test_fair", "val_fair")}
            lines.append(
                f"| {name} | {rule} | {len(subset)} | {cells['test_acc']} | {cells['test_fair']} | "
                f"{cells['val_fair']} | {loss:.1f} | "
                f"{dominated}/{len(subset)} | {val_ceiling:.1f} / {test_ceiling:.1f} | "
                f"{statistics.mean(r['failed'] for r in subset):.1f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", choices=["run", "report", "ceilings", "logs"], default="report")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--seeds", default="0-4")
    parser.add_argument("--work-dir", default=str(Path(__file__).resolve().parent / "data" / "fairband_robust"))
    parser.add_argument("--quick", action="store_true", help="smoke test on german, small and in a temporary folder")
    args = parser.parse_args(argv)
    if args.quick:
        with tempfile.TemporaryDirectory() as folder:
            run(["german"], [0], Path(folder), families=["logistic_regression"], max_train_rows=300)
            print(report(Path(folder)))
        return 0
    if args.command == "logs":
        found = infer_log_groups()
        picks = len(pd.read_csv(LOGS))
        for explained, n_a, n_b in found[:3]:
            print(f"{n_a} Caucasian / {n_b} other test negatives explain {explained} of {picks} logged picks")
        return 0
    if args.command == "ceilings":
        for name in args.datasets:
            for seed in _seeds(args.seeds):
                found = ceilings(name, seed)
                print(f"{name} seed {seed}: validation {found['validation']:.3f} test {found['test']:.3f} "
                      f"(test groups {found['test_bases']})")
        return 0
    if args.command == "run":
        run(args.datasets, _seeds(args.seeds), Path(args.work_dir))
    print(report(Path(args.work_dir)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
