"""SCAFF's theta trade-off curve on the bundled Adult data: how much label AUC buys how much group parity.

    python examples/scaff_theta_curve.py                  # 11 thetas, 50 trees, all rows
    python examples/scaff_theta_curve.py --rows 4000 --trees 10 --thetas 0 0.5 1   # quick look

theta = 0 is an ordinary AUC-driven forest; as theta grows, splits that separate the sexes are
penalised, so AUC_S (how well the score tells the groups apart; 0.5 = not at all) falls towards 0.5.
"""

import argparse

import numpy as np

from fairops.datasets import load_adult, train_validation_test_split
from fairops.scaff import scaff_path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, help="use a seeded random subset of the data")
    parser.add_argument("--trees", type=int, default=50)
    parser.add_argument("--thetas", type=float, nargs="+", default=[round(t, 1) for t in np.linspace(0, 1, 11)])
    args = parser.parse_args(argv)

    data = load_adult(positive=">50K")  # the income task of the SCAFF paper
    rows = np.arange(len(data.y))
    if args.rows:
        rows = np.sort(np.random.default_rng(0).choice(rows, args.rows, replace=False))
    X, y, sex = data.X.iloc[rows], data.y[rows], data.sensitive[["sex"]].iloc[rows]
    parts = train_validation_test_split(y, sex, validation=0.3, test=0.0, seed=0)
    path = scaff_path(
        X.iloc[parts.train], y[parts.train], sex.iloc[parts.train], thetas=args.thetas,
        X_val=X.iloc[parts.validation], y_val=y[parts.validation], sensitive_val=sex.iloc[parts.validation],
        n_estimators=args.trees, max_depth=4, random_state=0,
    )
    print("theta  AUC_Y  AUC_S (sex)")
    for point in path.points:
        print(f"{point.theta:5.2f}  {point.auc_y:.3f}  {point.auc_s:.3f}")
    return path


if __name__ == "__main__":
    main()
