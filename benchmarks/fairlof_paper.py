"""Reproduce the FairLOF paper's comparison: LOF vs FairLOF at the Jaccard guide points
0.9 and 0.8 (lambda on the 0.1 grid), the quota baseline, and a FairLOF-Flex sweep.

Data: Adult (sex, race), credit card default (SEX, EDUCATION, MARRIAGE) from
``fairops.datasets``; student performance, maths and Portuguese (sex, address, age
binned at 18), bundled with fairops. Features: the numeric columns only,
sensitive columns excluded, each standardised to mean 0 / sd 1 (categorical
columns are dropped). k = 5, t = min(500, 5% of n), c = 1/|S|.

    .venv/bin/python benchmarks/fairlof_paper.py           # all four data sets
    .venv/bin/python benchmarks/fairlof_paper.py --quick   # the two student data sets
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np
import pandas as pd

from fairops.datasets._bundle import data_path
from fairops.fairlof import FairLOF, guide_lambda, quota_outliers
from fairops.metrics import euclidean_disparity, jaccard, outlier_fraction, preservation, wasserstein_disparity

TARGETS = (0.9, 0.8)
EXPONENTS = (0.5, 1.0, 2.0)


def standardised_numeric(frame: pd.DataFrame, drop) -> np.ndarray:
    numeric = frame.drop(columns=list(drop)).select_dtypes("number").to_numpy(dtype=np.float64)
    spread = numeric.std(axis=0)
    keep = spread > 0
    return (numeric[:, keep] - numeric[:, keep].mean(axis=0)) / spread[keep]


def load_adult():
    from fairops.datasets import load_adult as loader

    data = loader(drop_sensitive=True)
    return standardised_numeric(data.X, []), data.sensitive.astype(str)


def load_credit():
    from fairops.datasets import load_credit_default as loader

    data = loader(drop_sensitive=True)
    return standardised_numeric(data.X, []), data.sensitive.astype(str)


def load_student(subject: str):
    frame = pd.read_csv(data_path(f"student_{subject}_new.csv.gz"))
    sensitive = pd.DataFrame(
        {
            "sex": frame["sex"],
            "address": frame["address"],
            "age": np.where(frame["age"] >= 18, "18+", "under 18"),
        }
    )
    return standardised_numeric(frame.drop(columns=["class"]), ["sex", "address", "age"]), sensitive


DATASETS = {
    "adult": load_adult,
    "credit_default": load_credit,
    "student_mat": lambda: load_student("mat"),
    "student_por": lambda: load_student("por"),
}


def guide_rows(path: dict) -> dict:
    """The path row at lambda = 0 and at each guide point."""
    rows = {"LOF": 0}
    for target in TARGETS:
        lam = guide_lambda(path["lambda"], path["jaccard"], target)
        rows[f"FairLOF@J~{target}"] = int(np.flatnonzero(np.isclose(path["lambda"], lam))[0])
    return rows


def relative(value: float, base: float) -> str:
    return f"{100 * (value - base) / base:+.1f}%" if base > 0 else "n/a"


def report_dataset(name: str, X: np.ndarray, S: pd.DataFrame, summary: list) -> None:
    det = FairLOF(n_neighbors=5, lambda_=0.0).fit(X, sensitive_features=S)
    path = det.path()
    print(f"\n### {name}: n = {len(X)}, d = {X.shape[1]}, t = {det.top_t_}, S = {list(S.columns)}\n")
    print("| lambda | " + " | ".join(f"{v:.1f}" for v in path["lambda"]) + " |")
    print("|---" * (len(path["lambda"]) + 1) + "|")
    for column in ("jaccard", "euclidean_disparity", "wasserstein_disparity"):
        print(f"| {column} | " + " | ".join(f"{v:.3f}" for v in path[column]) + " |")
    print("\n| method | lambda | Jacc | Pres | OF | ED | Wass | ED change | Wass change |")
    print("|---|---|---|---|---|---|---|---|---|")
    base_ed, base_wass = path["euclidean_disparity"][0], path["wasserstein_disparity"][0]
    for label, i in guide_rows(path).items():
        ed, wass = path["euclidean_disparity"][i], path["wasserstein_disparity"][i]
        print(
            f"| {label} | {path['lambda'][i]:.1f} | {path['jaccard'][i]:.3f} | {path['preservation'][i]:.4f} "
            f"| {path['outlier_fraction'][i]:.3f} | {ed:.4f} | {wass:.4f} | {relative(ed, base_ed)} "
            f"| {relative(wass, base_wass)} |"
        )
        if label != "LOF":
            summary.append((name, label, (ed - base_ed) / base_ed, (wass - base_wass) / base_wass,
                            path["preservation"][i], path["outlier_fraction"][i]))
    first = S.columns[0]
    quota = quota_outliers(det.lof_scores_, S[first], det.top_t_)
    q_ed, q_wass = euclidean_disparity(S, quota), wasserstein_disparity(S, quota)
    print(
        f"| quota on {first} | - | {jaccard(quota, det.plain_outliers_):.3f} "
        f"| {preservation(det.lof_scores_, quota, det.plain_outliers_):.4f} "
        f"| {outlier_fraction(det.lof_scores_, quota):.3f} | {q_ed:.4f} | {q_wass:.4f} "
        f"| {relative(q_ed, base_ed)} | {relative(q_wass, base_wass)} |"
    )
    print("\nFairLOF-Flex: ED / Wass change at the guide points (lambda in brackets)\n")
    print("| alpha | beta | J~0.9: ED, Wass (lambda) | J~0.8: ED, Wass (lambda) |")
    print("|---|---|---|---|")
    for alpha, beta in itertools.product(EXPONENTS, EXPONENTS):
        flex = FairLOF(n_neighbors=5, lambda_=0.0, alpha=alpha, beta=beta).fit(X, sensitive_features=S)
        flex_path = flex.path()
        cells = []
        for label, i in list(guide_rows(flex_path).items())[1:]:
            cells.append(
                f"{relative(flex_path['euclidean_disparity'][i], base_ed)}, "
                f"{relative(flex_path['wasserstein_disparity'][i], base_wass)} ({flex_path['lambda'][i]:.1f})"
            )
        print(f"| {alpha} | {beta} | " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the two small student data sets")
    args = parser.parse_args()
    names = ["student_mat", "student_por"] if args.quick else list(DATASETS)
    summary = []
    for name in names:
        X, S = DATASETS[name]()
        report_dataset(name, X, S, summary)
    print("\n### Mean change over the data sets (FairLOF, alpha = beta = 1)\n")
    print("| guide point | ED change | Wass change | Pres min | OF min |")
    print("|---|---|---|---|---|")
    for target in TARGETS:
        picked = [row for row in summary if row[1] == f"FairLOF@J~{target}"]
        print(
            f"| J~{target} | {100 * np.mean([r[2] for r in picked]):+.1f}% | {100 * np.mean([r[3] for r in picked]):+.1f}% "
            f"| {min(r[4] for r in picked):.4f} | {min(r[5] for r in picked):.3f} |"
        )


if __name__ == "__main__":
    main()
