"""Reproduce the SCAFF paper's trade-off curves: AUC_Y and AUC_S along theta.

Protocol (paper): stratified (y x s) 10-fold CV, bagging, 500 trees, depth 4, sqrt(d)
features per node, theta in {0, 0.1, ..., 1}. Data: Bank (s = age >= 65, the full
processed file), Adult (race, sex, both, intersectional) and COMPAS (race, sex). The
sensitive columns are left out of the features. Per theta: mean test AUC_Y, AUC_S and the
threshold-dependent view, demographic parity (lowest / highest group positive rate)
averaged over thresholds at the 9 deciles of the test scores, with its Pearson
correlation with AUC_S along theta.

    .venv/bin/python benchmarks/scaff_paper.py                 # the paper's protocol
    .venv/bin/python benchmarks/scaff_paper.py --quick         # 2 folds, 20 trees, 3 thetas
    .venv/bin/python benchmarks/scaff_paper.py --folds 5 --trees 100 --plot docs/scaff_paper.png
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold

from fairops.datasets import load_adult, load_compas
from fairops.datasets._bundle import data_path
from fairops.metrics import auc_s, auc_y, fairness_ratio
from fairops.scaff import SCAFFClassifier

BANK_FILE = data_path("fair_trees_bank_marketing.csv.gz")


def load_bank_full(path: Path = BANK_FILE):
    """The processed full Bank Marketing file: features, y, s = age >= 65."""
    frame = pd.read_csv(path)
    y = (frame["__y__subscription"] == "yes").astype(np.int8).to_numpy()
    sensitive = pd.DataFrame({"age_65_plus": np.where(frame["__Z__age"] == ">=65", "yes", "no")})
    features = frame[[c for c in frame.columns if not c.startswith("__")]]
    for name in features.columns:
        if features[name].dtype == object or str(features[name].dtype).startswith("str"):
            features[name] = features[name].astype("category")
    return features, y, sensitive


def experiments():
    """(name, X, y, sensitive DataFrame, intersectional) of every curve in the paper."""
    bank_X, bank_y, bank_s = load_bank_full()
    adult, compas = load_adult(drop_sensitive=True), load_compas(drop_sensitive=True)
    # As in the authors' processed Adult file, race is White vs Black (other rows left out).
    keep = adult.sensitive["race"].isin(["White", "Black"]).to_numpy()
    adult_X = adult.X.loc[keep].reset_index(drop=True)
    adult_s = adult.sensitive.loc[keep].reset_index(drop=True)
    adult_s["race"] = adult_s["race"].astype(str)
    adult_y, compas_y = np.asarray(adult.y)[keep], np.asarray(compas.y)
    return [
        ("bank (age >= 65)", bank_X, bank_y, bank_s, False),
        ("adult (race)", adult_X, adult_y, adult_s[["race"]], False),
        ("adult (sex)", adult_X, adult_y, adult_s[["sex"]], False),
        ("adult (race and sex)", adult_X, adult_y, adult_s[["race", "sex"]], False),
        ("adult (race x sex)", adult_X, adult_y, adult_s[["race", "sex"]], True),
        ("compas (race)", compas.X, compas_y, compas.sensitive[["race"]], False),
        ("compas (sex)", compas.X, compas_y, compas.sensitive[["sex"]], False),
    ]


def _strata(y, sensitive):
    labels = pd.Series(y).astype(str).to_numpy().astype(object)
    for name in sensitive.columns:
        labels = labels + "|" + sensitive[name].astype(str).to_numpy()
    return labels


def _scoring_groups(sensitive: pd.DataFrame, intersectional: bool):
    if not intersectional or sensitive.shape[1] == 1:
        return sensitive
    return sensitive.astype(str).agg("&".join, axis=1)


def demographic_parity_at_deciles(score, sensitive, intersectional: bool, seed: int = 0) -> float:
    """Mean over the 9 test-score deciles of min/max group positive rate.

    At decile q the top ``round((1 - q) n)`` rows are flagged; ties at the cut are broken at
    random with a fixed seed (the project's threshold rule), so every cut flags exactly that many.
    """
    n = len(score)
    order = np.lexsort((np.random.default_rng(seed).random(n), -score))
    ratios = []
    for q in np.arange(1, 10) / 10:
        predicted = np.zeros(n, dtype=np.int8)
        predicted[order[: int(round((1 - q) * n))]] = 1
        ratios.append(fairness_ratio(predicted, predicted, sensitive, rate="ppr", intersectional=intersectional))
    return float(np.mean(ratios))


def run_experiment(name, X, y, sensitive, intersectional, *, thetas, folds, trees, n_jobs, seed=0):
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    scores = {theta: [] for theta in thetas}
    for train, test in splitter.split(np.zeros(len(y)), _strata(y, sensitive)):
        s_train, s_test = sensitive.iloc[train], sensitive.iloc[test]
        groups_test = _scoring_groups(s_test, intersectional)
        for theta in thetas:
            model = SCAFFClassifier(n_estimators=trees, theta=theta, max_depth=4, max_features="sqrt",
                                    intersectional=intersectional, n_jobs=n_jobs, random_state=seed)
            model.fit(X.iloc[train], y[train], sensitive_features=s_train)
            score = model.predict_proba(X.iloc[test])[:, 1]
            per_column = [auc_s(score, s_test[[column]]) for column in sensitive.columns] if sensitive.shape[1] > 1 else []
            scores[theta].append([
                auc_y(y[test], score),
                auc_s(score, groups_test),
                demographic_parity_at_deciles(score, s_test, intersectional),
                *per_column,
            ])
    rows = []
    for theta in thetas:
        mean = np.mean(scores[theta], axis=0)
        row = {"experiment": name, "theta": float(theta), "auc_y": mean[0], "auc_s": mean[1], "dp": mean[2]}
        if sensitive.shape[1] > 1:
            row.update({f"auc_s[{c}]": value for c, value in zip(sensitive.columns, mean[3:])})
        rows.append(row)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2 folds, 20 trees, thetas 0, 0.5, 1")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--trees", type=int, default=500)
    parser.add_argument("--theta-step", type=float, default=0.1)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--only", help="run only experiments whose name contains this text")
    parser.add_argument("--json", help="write the per-theta rows to this file")
    parser.add_argument("--plot", help="write the AUC_S vs AUC_Y curves to this image")
    args = parser.parse_args()
    if args.quick:
        args.folds, args.trees, thetas = 2, 20, [0.0, 0.5, 1.0]
    else:
        thetas = [float(t) for t in np.round(np.arange(0.0, 1.0 + 1e-9, args.theta_step), 10)]
    print(f"folds={args.folds} trees={args.trees} thetas={thetas}")
    warnings.filterwarnings("ignore", message="The least populated class", category=UserWarning)
    all_rows = []
    for name, X, y, sensitive, intersectional in experiments():
        if args.only and args.only not in name:
            continue
        start = time.perf_counter()
        rows = run_experiment(name, X, y, sensitive, intersectional, thetas=thetas, folds=args.folds,
                              trees=args.trees, n_jobs=args.n_jobs)
        all_rows += rows
        table = pd.DataFrame(rows)
        # Thetas whose forests score every row alike carry no ranking: left out of the correlation.
        varied = table[table["auc_y"] > 0.5 + 1e-9]
        corr = np.corrcoef(varied["dp"], varied["auc_s"])[0, 1] if len(varied) > 2 else float("nan")
        extra = [c for c in table.columns if c.startswith("auc_s[")]
        print(f"\n## {name}  ({time.perf_counter() - start:.0f} s, Pearson(DP, AUC_S) = {corr:.2f})")
        print("| theta | AUC_Y | AUC_S | DP at deciles |" + "".join(f" {c} |" for c in extra))
        print("|---|---|---|---|" + "---|" * len(extra))
        for row in rows:
            cells = "".join(f" {row[c]:.3f} |" for c in extra)
            print(f"| {row['theta']:.1f} | {row['auc_y']:.3f} | {row['auc_s']:.3f} | {row['dp']:.3f} |{cells}")
    if args.json:
        Path(args.json).write_text(json.dumps(all_rows, indent=1))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        frame = pd.DataFrame(all_rows)
        fig, ax = plt.subplots(figsize=(7, 5))
        for name, part in frame.groupby("experiment", sort=False):
            ax.plot(part["auc_s"], part["auc_y"], marker="o", label=name)
        ax.set_xlabel("AUC_S (0.5 = parity)")
        ax.set_ylabel("AUC_Y")
        ax.set_title(f"SCAFF theta curves ({args.folds}-fold CV, {args.trees} trees, depth 4)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)


if __name__ == "__main__":
    main()
