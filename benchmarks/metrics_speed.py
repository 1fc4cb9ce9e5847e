"""Group-metric speed against the per-group and fairlearn anchors, in one run.

    python benchmarks/metrics_speed.py            # 1,000,000 rows (the documented figure)
    python benchmarks/metrics_speed.py --quick    # 100,000 rows, smoke test

Data: a random score, a 0/1 label and two sensitive columns with 2 and 5 values.
Anchors: ``roc_auc_score`` called once per group (7 calls) for AUC_S, and fairlearn's
``MetricFrame`` over the same intersectional groups for the rates and their ratio.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd


def best_of(repeats, function):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="100,000 rows, one repeat")
    args = parser.parse_args(argv)
    rows, repeats = (100_000, 1) if args.quick else (args.rows, args.repeats)

    from fairlearn.metrics import MetricFrame, false_positive_rate, selection_rate, true_positive_rate
    from sklearn.metrics import roc_auc_score

    from fairops.metrics import auc_s, binarize, group_rates, ratio_of

    rng = np.random.default_rng(0)
    sensitive = pd.DataFrame({
        "sex": pd.Categorical(rng.choice(["F", "M"], rows)),
        "group": pd.Categorical(rng.choice(list("abcde"), rows)),
    })
    y = rng.integers(0, 2, rows)
    score = rng.random(rows) + 0.1 * y + 0.05 * (sensitive["sex"] == "M").to_numpy()
    y_pred = binarize(score, y, tpr=0.5)

    def anchor_auc():
        values = []
        for column in sensitive.columns:
            for value in sensitive[column].cat.categories:
                auc = roc_auc_score(sensitive[column] == value, score)
                values.append(max(auc, 1 - auc))
        return max(values)

    def anchor_rates():
        frame = MetricFrame(
            metrics={"tpr": true_positive_rate, "fpr": false_positive_rate, "ppr": selection_rate},
            y_true=y, y_pred=y_pred, sensitive_features=sensitive,
        )
        by_group = frame.by_group
        return by_group, float(by_group["tpr"].min() / by_group["tpr"].max())

    def ours_rates():
        rates = group_rates(y, y_pred, sensitive)
        return rates, ratio_of(rates, "tpr")

    t_anchor_auc, expected_auc = best_of(repeats, anchor_auc)
    t_auc, got_auc = best_of(repeats, lambda: auc_s(score, sensitive))
    assert abs(expected_auc - got_auc) < 1e-9, (expected_auc, got_auc)
    t_anchor_rates, (_, expected_ratio) = best_of(repeats, anchor_rates)
    t_rates, (_, got_ratio) = best_of(repeats, ours_rates)
    assert abs(expected_ratio - got_ratio) < 1e-12, (expected_ratio, got_ratio)

    print(f"agree: auc_s vs roc_auc_score: |difference| = {abs(expected_auc - got_auc):.1e} <= 1e-9")
    print(f"agree: TPR ratio vs MetricFrame: |difference| = {abs(expected_ratio - got_ratio):.1e} <= 1e-12")
    print(f"rows: {rows:,}, groups: 2 + 5 (10 intersectional), best of {repeats}")
    print("| what | anchor | anchor s | fairops s | speed-up |")
    print("|---|---|---|---|---|")
    print(f"| auc_s over 7 groups | roc_auc_score x 7 | {t_anchor_auc:.3f} | {t_auc:.3f} | "
          f"{t_anchor_auc / t_auc:.1f}x |")
    print(f"| group_rates + fairness_ratio | fairlearn MetricFrame | {t_anchor_rates:.3f} | {t_rates:.3f} | "
          f"{t_anchor_rates / t_rates:.1f}x |")


if __name__ == "__main__":
    main()
