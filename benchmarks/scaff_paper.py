"""The SCAFF paper's trade-off curves: fairops beside fair-trees 3.1.9, on the same folds.

Protocol (the paper's): one-hot encoded features, 10-fold CV stratified on label x sensitive
groups, bagged forests of 500 trees of depth 4 with sqrt(d) features per node, theta in
{0, 0.1, ..., 1}; per fold the test AUC_Y and AUC_S (per sensitive column and their max).

- Bank: the full Bank Marketing data (45,203 rows), s = age >= 65; the features are all other
  columns, marital status included, one-hot: 49 columns.
- Adult: train and test files without missing values (45,222 rows), s = race (White vs
  non-White) and sex, neither a feature; the other 12 columns one-hot: 97 columns.

Both implementations get the same float matrix, the same integer-coded sensitive columns and
the same folds; fold k seeds both forests with ``random_state=k``. Every finished fit is appended
to ``<records>/<implementation>.jsonl`` (with its CPU seconds), so a long run can be resumed and
the implementations run in separate processes; the report is built from those files.

    .venv/bin/python benchmarks/scaff_paper.py --records scaff_paper_runs --plot docs/scaff_paper.png
    .venv/bin/python benchmarks/scaff_paper.py --records scaff_paper_runs --impl fair-trees   # one side only
    .venv/bin/python benchmarks/scaff_paper.py --records scaff_paper_runs --report-only --plot docs/scaff_paper.png
    .venv/bin/python benchmarks/scaff_paper.py --quick      # 3,000 rows, 2 folds, 10 trees, thetas 0 / 0.5 / 1
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.model_selection import StratifiedKFold  # noqa: E402

from fairops.datasets import load_adult, load_bank_full  # noqa: E402
from fairops.metrics import auc_s, auc_y  # noqa: E402
from fairops.scaff import SCAFFClassifier  # noqa: E402

IMPLEMENTATIONS = ("fairops", "fair-trees")


def encode(features: pd.DataFrame, encoding: str) -> pd.DataFrame:
    """Text columns one-hot (the paper's encoding) or as their category codes (SCAFF's own handling)."""
    if encoding == "one-hot":
        return pd.get_dummies(features, dtype=np.float64)
    return features.apply(lambda c: c.cat.codes if isinstance(c.dtype, pd.CategoricalDtype) else c).astype(np.float64)


def bank_experiment(encoding="one-hot"):
    """(X as floats, y, sensitive DataFrame of 0/1 columns)."""
    data = load_bank_full()
    X = encode(data.X.drop(columns=["age_group"]), encoding)
    sensitive = pd.DataFrame({"age >= 65": (data.sensitive["age_group"] == ">=65").to_numpy().astype(np.int64)})
    return X, np.asarray(data.y, dtype=np.int64), sensitive


def adult_experiment(encoding="one-hot"):
    data = load_adult(positive=">50K", drop_sensitive=True)  # the SCAFF paper predicts income > 50K
    X = encode(data.X, encoding)
    sensitive = pd.DataFrame({
        "race": (data.sensitive["race"] == "White").to_numpy().astype(np.int64),
        "sex": (data.sensitive["sex"] == "Male").to_numpy().astype(np.int64),
    })
    return X, np.asarray(data.y, dtype=np.int64), sensitive


EXPERIMENTS = {"bank": bank_experiment, "adult": adult_experiment}


def fit_fairops(X, y, S, *, theta, trees, seed):
    return SCAFFClassifier(n_estimators=trees, theta=theta, max_depth=4, max_features="sqrt", bootstrap=True,
                           n_jobs=1, random_state=seed).fit(X, y, sensitive_features=S)


def fit_fair_trees(X, y, S, *, theta, trees, seed):
    from fair_trees import FairRandomForestClassifier

    return FairRandomForestClassifier(n_estimators=trees, theta=theta, max_depth=4, max_features="sqrt",
                                      bootstrap=True, n_jobs=1, random_state=seed).fit(X, y, Z=S)


FITS = {"fairops": fit_fairops, "fair-trees": fit_fair_trees}


def strata(y, sensitive: pd.DataFrame) -> np.ndarray:
    labels = pd.Series(y).astype(str).to_numpy().astype(object)
    for name in sensitive.columns:
        labels = labels + "|" + sensitive[name].astype(str).to_numpy()
    return labels


def folds(y, sensitive, n_folds: int):
    splitter = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=0)
    return list(splitter.split(np.zeros(len(y)), strata(y, sensitive)))


def subsample(X, y, sensitive, rows: int, seed: int = 0):
    """A seeded subset of ``rows`` rows that keeps every label x group stratum (for quick runs)."""
    _, keep = next(StratifiedKFold(n_splits=max(2, len(y) // rows), shuffle=True, random_state=seed)
                   .split(np.zeros(len(y)), strata(y, sensitive)))
    keep = np.sort(keep)
    return X.iloc[keep].reset_index(drop=True), y[keep], sensitive.iloc[keep].reset_index(drop=True)


def score_fold(implementation, experiment, X, y, sensitive, train, test, *, theta, trees, fold,
               encoding="one-hot") -> dict:
    X_train, X_test = X[train], X[test]
    S_train = sensitive.to_numpy()[train]
    cpu = time.process_time()
    model = FITS[implementation](X_train, y[train], S_train, theta=theta, trees=trees, seed=fold)
    cpu = time.process_time() - cpu
    score = model.predict_proba(X_test)[:, 1]
    s_test = sensitive.iloc[test]
    record = {"experiment": experiment, "implementation": implementation, "theta": theta, "fold": fold,
              "trees": trees, "encoding": encoding, "auc_y": auc_y(y[test], score), "auc_s": auc_s(score, s_test),
              "cpu_s": cpu}
    for column in sensitive.columns:
        record[f"auc_s[{column}]"] = auc_s(score, s_test[[column]])
    return record


def _key(record) -> tuple:
    return record["experiment"], record["implementation"], round(float(record["theta"]), 6), int(record["fold"]), \
        int(record["trees"]), record.get("encoding", "one-hot")


def read_records(folder: Path | None) -> list[dict]:
    if folder is None or not folder.exists():
        return []
    records = []
    for path in sorted(folder.glob("*.jsonl")):
        records += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return records


def run(args, thetas, records) -> list[dict]:
    done = {_key(r) for r in records}
    for name in args.experiments:
        X, y, sensitive = EXPERIMENTS[name](args.encoding)
        if args.rows:
            X, y, sensitive = subsample(X, y, sensitive, args.rows)
        print(f"{name}: {X.shape[0]} rows x {X.shape[1]} {args.encoding} columns, sensitive {list(sensitive.columns)}",
              flush=True)
        matrix = np.ascontiguousarray(X.to_numpy(dtype=np.float64))
        splits = folds(y, sensitive, args.folds)[: args.first_folds or args.folds]
        for fold, (train, test) in enumerate(splits):
            for theta in thetas:
                for implementation in args.impl:
                    if (name, implementation, round(theta, 6), fold, args.trees, args.encoding) in done:
                        continue
                    record = score_fold(implementation, name, matrix, y, sensitive, train, test,
                                        theta=theta, trees=args.trees, fold=fold, encoding=args.encoding)
                    records.append(record)
                    if args.records:
                        args.records.mkdir(parents=True, exist_ok=True)
                        with open(args.records / f"{implementation}.jsonl", "a") as handle:
                            handle.write(json.dumps(record) + "\n")
                    print(f"  fold {fold} theta {theta:.1f} {implementation}: AUC_Y {record['auc_y']:.3f} "
                          f"AUC_S {record['auc_s']:.3f} ({record['cpu_s']:.1f} s CPU)", flush=True)
    return records


def summarise(records, trees) -> pd.DataFrame:
    frame = pd.DataFrame([r for r in records if r["trees"] == trees])
    frame["theta"] = frame["theta"].round(6)
    metrics = [c for c in frame.columns if c.startswith("auc_")] + ["cpu_s"]
    grouped = frame.groupby(["experiment", "implementation", "theta"])
    table = grouped[metrics].mean()
    table["folds"] = grouped["fold"].nunique()
    table = table.reset_index()
    order = {name: i for i, name in enumerate(EXPERIMENTS)}
    return table.sort_values(["experiment", "implementation", "theta"],
                             key=lambda c: c.map(order) if c.name == "experiment" else c,
                             kind="stable").reset_index(drop=True)


def auc_y_cost_at_drop(part: pd.DataFrame, column: str, drop: float):
    """(theta, AUC_Y cost) where AUC_S has fallen by ``drop`` from theta = 0, linearly interpolated."""
    part = part.sort_values("theta")
    thetas, s, label = part["theta"].to_numpy(), part[column].to_numpy(), part["auc_y"].to_numpy()
    target = s[0] - drop
    for i in range(1, len(s)):
        if s[i] <= target:
            t = (s[i - 1] - target) / (s[i - 1] - s[i])
            return (thetas[i - 1] + t * (thetas[i] - thetas[i - 1]),
                    label[0] - (label[i - 1] + t * (label[i] - label[i - 1])))
    return None


def paired_gaps(records, experiment: str, trees: int):
    """(common folds, {metric: largest |fairops - fair-trees| over thetas}) on the folds both have."""
    frame = pd.DataFrame([r for r in records if r["experiment"] == experiment and r["trees"] == trees])
    if set(frame["implementation"]) < set(IMPLEMENTATIONS):
        return 0, {}
    frame["theta"] = frame["theta"].round(6)
    metrics = [c for c in frame.columns if c.startswith("auc_") and frame[c].notna().all()]
    wide = frame.pivot_table(index=["theta", "fold"], columns="implementation", values=metrics).dropna()
    common = wide.index.get_level_values("fold").nunique()
    per_theta = wide.groupby(level="theta").mean()
    return common, {m: float((per_theta[(m, "fairops")] - per_theta[(m, "fair-trees")]).abs().max()) for m in metrics}


def report(table: pd.DataFrame, sensitive_columns: dict, records=(), trees: int = 500) -> None:
    for experiment, part in table.groupby("experiment", sort=False):
        columns = sensitive_columns[experiment]
        shown = [f"auc_s[{c}]" for c in columns]
        impls = [i for i in IMPLEMENTATIONS if i in set(part["implementation"])]
        print(f"\n## {experiment}  (folds: " + ", ".join(
            f"{i} {int(part[part['implementation'] == i]['folds'].min())}" for i in impls) + ")")
        header = "| theta |" + "".join(f" {i} AUC_Y |" + "".join(f" {i} AUC_S {c} |" for c in columns) for i in impls)
        print(header)
        print("|---|" + "---|" * (len(impls) * (1 + len(columns))))
        wide = part.pivot(index="theta", columns="implementation")
        for theta in wide.index:
            cells = "".join(
                f" {wide.loc[theta, ('auc_y', i)]:.3f} |" + "".join(f" {wide.loc[theta, (c, i)]:.3f} |" for c in shown)
                for i in impls
            )
            print(f"| {theta:.1f} |{cells}")
        for i in impls:
            mine = part[part["implementation"] == i]
            if experiment == "bank":
                found = auc_y_cost_at_drop(mine, "auc_s", 0.2)
                start = mine.sort_values("theta").iloc[0]
                print(f"- {i}: AUC_S {start['auc_s']:.3f} at theta 0; " + (
                    f"down 0.2 at theta {found[0]:.2f} for an AUC_Y cost of {found[1]:.3f}" if found
                    else f"never down 0.2 (lowest {mine['auc_s'].min():.3f})"))
            point = mine[np.isclose(mine["theta"], 0.7)]
            if experiment == "adult" and len(point):
                row = point.iloc[0]
                print(f"- {i} at theta 0.7: AUC_Y {row['auc_y']:.3f}, " + ", ".join(
                    f"AUC_S {c} {row[f'auc_s[{c}]']:.3f}" for c in columns))
        common, gaps = paired_gaps(records, experiment, trees)
        if common:
            print(f"- on the {common} folds both ran, the largest gap over thetas between the fold means: "
                  + ", ".join(f"{m} {gap:.3f}" for m, gap in gaps.items()))
        if set(IMPLEMENTATIONS) <= set(impls):
            cpu = part.groupby("implementation")["cpu_s"].mean()
            print(f"- mean fit CPU time per forest: fairops {cpu['fairops']:.2f} s, fair-trees "
                  f"{cpu['fair-trees']:.2f} s ({cpu['fair-trees'] / cpu['fairops']:.1f}x)")


def plot(table: pd.DataFrame, sensitive_columns: dict, path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    experiments = list(dict.fromkeys(table["experiment"]))
    fig, axes = plt.subplots(1, len(experiments), figsize=(6 * len(experiments), 4.8), squeeze=False)
    styles = {"fairops": ("-", "o"), "fair-trees": ("--", "s")}
    for ax, experiment in zip(axes[0], experiments):
        part = table[table["experiment"] == experiment]
        for colour, column in zip(("tab:blue", "tab:orange", "tab:green"), sensitive_columns[experiment]):
            for implementation, (line, marker) in styles.items():
                curve = part[part["implementation"] == implementation].sort_values("theta")
                if curve.empty:
                    continue
                ax.plot(curve[f"auc_s[{column}]"], curve["auc_y"], line, marker=marker, color=colour,
                        markersize=4, label=f"{implementation}, s = {column}")
                for _, row in curve.iloc[[0, -1]].iterrows():
                    ax.annotate(f"{row['theta']:.1f}", (row[f"auc_s[{column}]"], row["auc_y"]), fontsize=7,
                                textcoords="offset points", xytext=(4, 2))
        ax.set_title(experiment)
        ax.set_xlabel("AUC_S (0.5 = strong demographic parity)")
        ax.set_ylabel("AUC_Y")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="3,000 rows, 2 folds, 10 trees, thetas 0, 0.5, 1")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--first-folds", type=int, help="run only the first N of the folds")
    parser.add_argument("--trees", type=int, default=500)
    parser.add_argument("--rows", type=int, help="a seeded stratified subset of the rows")
    parser.add_argument("--encoding", choices=["one-hot", "codes"], default="one-hot",
                        help="text columns one-hot (the paper's) or as category codes")
    parser.add_argument("--theta-step", type=float, default=0.1)
    parser.add_argument("--impl", nargs="+", choices=IMPLEMENTATIONS, default=list(IMPLEMENTATIONS))
    parser.add_argument("--experiments", nargs="+", choices=list(EXPERIMENTS), default=list(EXPERIMENTS))
    parser.add_argument("--records", type=Path, help="folder of per-fit records (read, resumed, appended to)")
    parser.add_argument("--report-only", action="store_true", help="fit nothing; report the records")
    parser.add_argument("--json", help="write the per-theta means to this file")
    parser.add_argument("--plot", help="write the AUC_S vs AUC_Y curves to this image")
    args = parser.parse_args(argv)
    if args.quick:
        args.rows, args.folds, args.trees, thetas = args.rows or 3000, 2, 10, [0.0, 0.5, 1.0]
    else:
        thetas = [float(t) for t in np.round(np.arange(0.0, 1.0 + 1e-9, args.theta_step), 10)]
    print(f"folds={args.folds} trees={args.trees} thetas={thetas} implementations={args.impl} encoding={args.encoding}")
    warnings.filterwarnings("ignore", message="The least populated class", category=UserWarning)
    records = read_records(args.records)
    if not args.report_only:
        records = run(args, thetas, records)
    records = [r for r in records if r["experiment"] in args.experiments and r["implementation"] in args.impl
               and r.get("encoding", "one-hot") == args.encoding]
    if not records:
        print("no records to report")
        return
    table = summarise(records, args.trees)
    columns = {r["experiment"]: [k[len("auc_s["):-1] for k in r if k.startswith("auc_s[")] for r in records}
    report(table, columns, records, args.trees)
    if args.json:
        Path(args.json).write_text(table.to_json(orient="records", indent=1))
    if args.plot:
        used = table.groupby("implementation")["folds"].min()
        folds_text = ", ".join(f"{impl} {int(used[impl])}" for impl in IMPLEMENTATIONS if impl in used)
        plot(table, columns, args.plot,
             f"SCAFF theta curves: folds of one {args.folds}-fold split ({folds_text}), {args.trees} trees, depth 4; "
             "theta marked at the ends")


if __name__ == "__main__":
    main()
