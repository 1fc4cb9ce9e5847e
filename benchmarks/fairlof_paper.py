"""The FairLOF paper's comparison (Deepak P. and Abraham, DSE 2021, section 7) on the data sets
that are available, under each reasonable feature protocol: LOF vs FairLOF at the Jaccard guide
points 0.9 and 0.8, for the paper's correction and for fairops' per-value variant, each ED / Wass
change told against a null (the same correction recomputed from permuted sensitive labels), and
the ED-versus-Jaccard frontier of the two corrections and of the quota re-ranking.

Set-up as in the paper: k = 5, t = min(500, 5% of n), c = 1/|S|, lambda on the 0.1 grid, the
guide point is where the Jaccard with LOF's top-t first reaches the target (``guide_lambda``).
Data: Adult (S = sex, race), credit card default "CC" (S = SEX, EDUCATION, MARRIAGE) and student
maths "St-Mat" (S = sex, address, age group), as in the paper; student Portuguese as an extra.
W4HE and Tweets are not available. The paper's Table 1 (which columns are sensitive, how the
features are encoded) is lost, so every protocol below is reported:

    raw         numeric columns only, unscaled (the paper never says it standardises)
    numeric     numeric columns only, sensitive columns outside the distance
    numeric+S   numeric columns + the sensitive columns one-hot encoded
    onehot      numeric + one-hot categorical columns, sensitive columns outside
    onehot+S    numeric + one-hot categorical columns + the sensitive columns one-hot

Features are standardised except under ``raw`` (``fairops.fairlof.FeatureEncoder``; ``--scaling
minmax`` rescales them to [0, 1] instead). Student raw ``age`` is the
source of the sensitive age group: it is left out with the sensitive columns and kept with them.
Exact duplicate feature rows (LOF near 1e9 at k-distance 0) are dropped, first copy kept, and counted.

Null: the rows' sensitive labels are permuted (all attributes together) ``--permutations`` times
(default 5); P, Q, W, Dir and the pair terms are recomputed from them on the same neighbours
(``fairops.fairlof.permuted_label_paths``), each permutation takes its own guide point, and its ED /
Wass change is measured against the permuted labels. A guide point the Jaccard never falls to is
"not reached" (for the real labels and for each permutation) and left out of every mean.
Quota frontier: ``partial_quota_outliers`` on the joint groups of all sensitive attributes, strength
0 (plain LOF) to 1 (the quota baseline). ``--figures DIR`` draws one chart per data set.

    .venv/bin/python benchmarks/fairlof_paper.py              # all data sets and protocols
    .venv/bin/python benchmarks/fairlof_paper.py --quick      # student maths, 2 permutations (smoke test)
    .venv/bin/python benchmarks/fairlof_paper.py --datasets adult --protocols numeric
    .venv/bin/python benchmarks/fairlof_paper.py --scaling minmax
    .venv/bin/python benchmarks/fairlof_paper.py --flex --protocols numeric    # the FairLOF-Flex sweep too
    .venv/bin/python benchmarks/fairlof_paper.py \
        --replot a/fairlof_frontier_adult.json,b/fairlof_frontier_adult.json --figures docs
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from fairops.datasets import load_dataset
from fairops.fairlof import (
    DEFAULT_LAMBDAS,
    FairLOF,
    partial_quota_outliers,
    permuted_label_paths,
    quota_outliers,
    top_outliers,
)
from fairops.fairlof._features import FeatureEncoder
from fairops.metrics import euclidean_disparity, jaccard, outlier_fraction, preservation, wasserstein_disparity

TARGETS = (0.9, 0.8)
PAPER_DATASETS = ("adult", "credit_default", "student_mat")
EXTRA_DATASETS = ("student_por",)
PROTOCOLS = {
    "raw": {"categorical": "drop", "sensitive_in_distance": False},
    "numeric": {"categorical": "drop", "sensitive_in_distance": False},
    "numeric+S": {"categorical": "drop", "sensitive_in_distance": True},
    "onehot": {"categorical": "onehot", "sensitive_in_distance": False},
    "onehot+S": {"categorical": "onehot", "sensitive_in_distance": True},
}
CORRECTIONS = ("paper", "per_value")
EXPONENTS = (0.5, 1.0, 2.0)
METRICS = ("jaccard", "preservation", "outlier_fraction", "euclidean_disparity", "wasserstein_disparity")
#: The paper's Adult correlations of each metric with lambda over [0, 1].
PAPER_PEARSON = {"jaccard": -0.900, "preservation": -0.973, "euclidean_disparity": -0.997,
                 "wasserstein_disparity": -0.959}


def prepared(name: str, protocol: str, scaling: str = "standard"):
    """(features without duplicate rows, sensitive labels, rows dropped as duplicates, all encoded rows).

    ``scaling="minmax"`` rescales every encoded feature to [0, 1] instead of mean 0 / sd 1.
    """
    data = load_dataset(name)
    table = pd.concat([data.X.drop(columns=list(data.sensitive.columns), errors="ignore"),
                       data.sensitive.astype(str)], axis=1)
    options = PROTOCOLS[protocol]
    derived = ["age"] if name.startswith("student") and not options["sensitive_in_distance"] else []
    encoder = FeatureEncoder(sensitive=list(data.sensitive.columns), exclude=derived, **options).fit(table)
    features = encoder.transform(table)
    if protocol == "raw":
        features = features * encoder.scales_ + encoder.means_
    elif scaling == "minmax":
        features = (features - features.min()) / (features.max() - features.min())
    duplicate = features.duplicated(keep="first").to_numpy()
    return (features.to_numpy()[~duplicate], data.sensitive.astype(str).reset_index(drop=True)[~duplicate]
            .reset_index(drop=True), int(duplicate.sum()), features)


def zero_k_distances(features: pd.DataFrame, k: int = 5) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        det = FairLOF(n_neighbors=k, correction_strength=0.0).fit(features.to_numpy())
    return int(np.sum(det.k_distances_ == 0))


def guide_rows(path: dict) -> dict:
    """Index of the path row at each guide point, None where the Jaccard never falls to it.

    The guide rule is ``guide_lambda``'s: at the first lambda whose Jaccard is at or below the
    target, whichever of it and the previous lambda is nearer to the target.
    """
    rows = {}
    jaccards = np.asarray(path["jaccard"])
    for target in TARGETS:
        below = np.flatnonzero(jaccards <= target)
        if not len(below):
            rows[target] = None
            continue
        first = int(below[0])
        nearer_previous = first > 0 and abs(jaccards[first - 1] - target) <= abs(jaccards[first] - target)
        rows[target] = first - 1 if nearer_previous else first
    return rows


def guide_changes(path: dict) -> dict:
    """{target: (ED change, Wass change) vs lambda 0, or None where the guide point is not reached}."""
    base_ed, base_wass = path["euclidean_disparity"][0], path["wasserstein_disparity"][0]
    return {target: None if i is None else (change(path["euclidean_disparity"][i], base_ed),
                                             change(path["wasserstein_disparity"][i], base_wass))
            for target, i in guide_rows(path).items()}


def change(value: float, base: float) -> float:
    return (value - base) / base if base > 0 else float("nan")


def percent(value: float) -> str:
    return "n/a" if not np.isfinite(value) else f"{100 * value:+.1f}%"


def pearson(x, y) -> float:
    if np.std(y) == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def signed(value: float) -> str:
    return "n/a (constant)" if not np.isfinite(value) else f"{value:+.3f}"


#: Other readings of eqs 7-8 tried to find out why the printed equations do not reproduce the
#: paper's figures: coefficient a_S(v) per attribute and value from P, W and Dir (paper notation).
READINGS = {
    "printed: Dir * W * P(v)": lambda P, W, Dir: Dir * W * P,
    "D = 1 - P: Dir * W * (1 - P(v))": lambda P, W, Dir: Dir * W * (1.0 - P),
    "Dir flipped: -Dir * W * P(v)": lambda P, W, Dir: -Dir * W * P,
}


def readings(X, S, det, case: dict, found: list) -> None:
    """The lambda path of each reading of eqs 7-8, on the same neighbours and kernels as FairLOF."""
    from sklearn.neighbors import NearestNeighbors

    from fairops.fairlof._scoring import Neighbourhood

    distances, neighbors = NearestNeighbors(n_neighbors=det.n_neighbors_).fit(X).kneighbors()
    codes = np.stack([pd.Categorical(S[c], categories=labels).codes
                      for c, labels in zip(S.columns, det.sensitive_labels_)], axis=1)
    differs = codes[neighbors] != codes[:, None, :]  # (n, k, s): [x.S != y.S]
    mixed = differs.any(axis=(1, 2)).mean()
    print(f"\nrows with a neighbour of another group (Div > 0 for some attribute): {100 * mixed:.1f}%")
    print("\nWhy the figures differ: ED / Wass change vs LOF along lambda for other readings of eqs 7-8 "
          "(same neighbours, kernels and guide rule)\n")
    print("| reading | guide | lambda | Jacc | ED change | Wass change | Pearson(lambda, ED) |")
    print("|---|---|---|---|---|---|---|")
    base_top = det.plain_outliers_
    base_ed, base_wass = euclidean_disparity(S, base_top), wasserstein_disparity(S, base_top)
    rows = []
    for label, reading in READINGS.items():
        table = reading(det.data_share_, det.skew_[:, None], det.direction_[:, None])
        terms = np.einsum("nks,ns->nk", differs, table[np.arange(codes.shape[1]), codes])
        hood = Neighbourhood(distances, np.ascontiguousarray(neighbors), distances[:, -1].copy(), terms)
        path = {"lambda": np.array(DEFAULT_LAMBDAS), "jaccard": [], "ed": [], "wass": []}
        for lam in DEFAULT_LAMBDAS:
            top = top_outliers(hood.scores(lam, det.floor).scores, det.top_t_)
            path["jaccard"].append(jaccard(top, base_top))
            path["ed"].append(euclidean_disparity(S, top))
            path["wass"].append(wasserstein_disparity(S, top))
        for target, i in guide_rows(path).items():
            if i is None:
                print(f"| {label} | J~{target} | not reached | | | | {signed(pearson(path['lambda'], path['ed']))} |")
                continue
            print(f"| {label} | J~{target} | {path['lambda'][i]:.1f} | {path['jaccard'][i]:.3f} "
                  f"| {percent(change(path['ed'][i], base_ed))} | {percent(change(path['wass'][i], base_wass))} "
                  f"| {signed(pearson(path['lambda'], path['ed']))} |")
            found.append({**case, "reading": label.split(":")[0], "target": target, "jaccard": path["jaccard"][i],
                          "ed_change": change(path["ed"][i], base_ed),
                          "wass_change": change(path["wass"][i], base_wass)})
        rows.append((label, terms.mean(axis=1)))
    print("\nMean k-distance factor 1 - sum_S a_S(x) Div_S(x) at lambda = 1 over the rows of each value, "
          "and its share among LOF's outliers vs in the data (Q vs P)\n")
    print("| attribute | value | P | Q | " + " | ".join(label.split(":")[0] for label, _ in rows) + " |")
    print("|---|---|---|---|" + "---|" * len(rows))
    for s_index, (column, labels) in enumerate(zip(S.columns, det.sensitive_labels_)):
        for v, value in enumerate(labels):
            members = codes[:, s_index] == v
            cells = " | ".join(f"{1 - row_term[members].mean():.3f}" for _, row_term in rows)
            print(f"| {column} | {value} | {det.data_share_[s_index, v]:.3f} | {det.outlier_share_[s_index, v]:.3f} "
                  f"| {cells} |")


def run_case(name, protocol, X, S, summary, found, *, flex: bool, permutations: int, readings_too: bool = True) -> dict:
    """Everything for one data set and protocol; returns the curves the frontier chart draws."""
    print(f"\n### {name}, protocol {protocol}: n = {len(X)}, d = {X.shape[1]}, S = {list(S.columns)}\n", flush=True)
    paths, nulls, detectors = {}, {}, {}
    for correction in CORRECTIONS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # clamping is reported in the table
            det = FairLOF(n_neighbors=5, correction_strength=0.0, correction=correction).fit(X, sensitive_features=S)
        paths[correction], detectors[correction] = det.path(), det
        nulls[correction] = permuted_label_paths(det, n_permutations=permutations, random_state=0)
    paper_detector = detectors["paper"]
    print_directions(paper_detector, S)
    print_paths(paths)
    guide_table(name, protocol, paths, nulls, summary)
    quota = quota_rows(paper_detector, S, paths["paper"])
    structure_table(paper_detector, S)
    if readings_too:
        readings(X, S, paper_detector, {"dataset": name, "protocol": protocol}, found)
    if name == "adult":
        print("\nPearson correlation with lambda over [0, 1] (paper: Jacc -0.900, Pres -0.973, ED -0.997, "
              "Wass -0.959)\n")
        print("| correction | Jacc | Pres | ED | Wass |")
        print("|---|---|---|---|---|")
        for correction, path in paths.items():
            cells = [pearson(path["lambda"], path[m]) for m in PAPER_PEARSON]
            print(f"| {correction} | " + " | ".join(signed(v) for v in cells) + " |")
    if flex:
        flex_sweep(X, S, paths["paper"])
    return {"paths": paths, "nulls": nulls, "quota": quota}


def print_directions(det, S) -> None:
    majority = [labels[v] for labels, v in zip(det.sensitive_labels_, det.majority_)]
    rows = np.arange(len(majority))
    print(f"t = {det.top_t_}; per attribute (paper): " + ", ".join(
        f"{a}: v* = {v}, P(v*) = {p:.3f}, Q(v*) = {q:.3f}, Dir = {'+1' if d > 0 else '-1'}"
        for a, v, p, q, d in zip(S.columns, majority, det.data_share_[rows, det.majority_],
                                 det.outlier_share_[rows, det.majority_], det.direction_)))


def print_paths(paths: dict) -> None:
    print("\n| correction | metric | " + " | ".join(f"{v:.1f}" for v in DEFAULT_LAMBDAS) + " |")
    print("|---|---|" + "---|" * len(DEFAULT_LAMBDAS))
    for correction, path in paths.items():
        for column in ("jaccard", "euclidean_disparity", "wasserstein_disparity", "clamped_pairs"):
            cells = " | ".join(f"{v:.3f}" if column != "clamped_pairs" else f"{int(v)}" for v in path[column])
            print(f"| {correction} | {column} | {cells} |")


def null_summary(null_paths: list, target: float, which: int) -> tuple:
    """(mean, sd, reached) of the permutations' ED (which=0) or Wass (1) change at their own guide point."""
    values = [c[target][which] for c in map(guide_changes, null_paths) if c[target] is not None]
    values = [v for v in values if np.isfinite(v)]
    if not values:
        return float("nan"), float("nan"), 0
    return float(np.mean(values)), float(np.std(values, ddof=1)) if len(values) > 1 else float("nan"), len(values)


def against_null(value: float, null: tuple) -> str:
    mean, sd, reached = null
    if not reached:
        return "null: not reached"
    z = (value - mean) / sd if np.isfinite(sd) and sd > 0 else float("nan")
    spread = f" +/- {100 * sd:.1f}" if np.isfinite(sd) else ""
    return f"{percent(mean)}{spread} ({reached}) | {'n/a' if not np.isfinite(z) else f'{z:+.1f}'}"


def guide_table(name, protocol, paths, nulls, summary) -> None:
    print("\nChanges vs LOF on the same rows; null = mean +/- sd (permutations reaching the guide point) of the "
          "same correction from permuted labels; z = (change - null mean) / null sd\n")
    print("| correction | guide | lambda | Jacc | Pres | OF | ED change | null ED | z(ED) | Wass change | null Wass "
          "| z(Wass) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for correction, path in paths.items():
        changes = guide_changes(path)
        for target, i in guide_rows(path).items():
            null_ed, null_wass = null_summary(nulls[correction], target, 0), null_summary(nulls[correction], target, 1)
            record = {"dataset": name, "protocol": protocol, "correction": correction, "target": target,
                      "reached": i is not None, "null_ed": null_ed[0], "null_ed_sd": null_ed[1],
                      "null_wass": null_wass[0]}
            if i is None:
                print(f"| {correction} | J~{target} | not reached (min Jacc {min(path['jaccard']):.3f}) | | | | | "
                      f"{against_null(0.0, null_ed).split(' | ')[0]} | | | "
                      f"{against_null(0.0, null_wass).split(' | ')[0]} | |")
                summary.append(record)
                continue
            ed, wass = changes[target]
            print(f"| {correction} | J~{target} | {path['lambda'][i]:.1f} | {path['jaccard'][i]:.3f} "
                  f"| {path['preservation'][i]:.4f} | {path['outlier_fraction'][i]:.3f} | {percent(ed)} "
                  f"| {against_null(ed, null_ed)} | {percent(wass)} | {against_null(wass, null_wass)} |")
            summary.append({**record, "lambda": path["lambda"][i], "jaccard": path["jaccard"][i],
                            "preservation": path["preservation"][i], "outlier_fraction": path["outlier_fraction"][i],
                            "ed_change": ed, "wass_change": wass})


def joint_groups(S: pd.DataFrame) -> pd.Series:
    return S.astype(str).agg("|".join, axis=1)


def quota_rows(det, S, plain: dict) -> list:
    """The quota baseline per attribute and on the joint groups; returns the joint partial-quota frontier."""
    lof, t, plain_top = det.lof_scores_, det.top_t_, det.plain_outliers_
    base_ed, base_wass = plain["euclidean_disparity"][0], plain["wasserstein_disparity"][0]
    print("\n| quota on | Jacc | Pres | OF | ED change | Wass change |")
    print("|---|---|---|---|---|---|")
    joint = joint_groups(S)
    for label, groups in {**{column: S[column] for column in S.columns}, "all attributes jointly": joint}.items():
        quota = quota_outliers(lof, groups, t)
        print(f"| {label} | {jaccard(quota, plain_top):.3f} | {preservation(lof, quota, plain_top):.4f} "
              f"| {outlier_fraction(lof, quota):.3f} | {percent(change(euclidean_disparity(S, quota), base_ed))} "
              f"| {percent(change(wasserstein_disparity(S, quota), base_wass))} |")
    frontier = []
    for strength in np.linspace(0.0, 1.0, 11):
        top = partial_quota_outliers(lof, joint, t, float(strength))
        frontier.append((jaccard(top, plain_top), change(euclidean_disparity(S, top), base_ed)))
    return frontier


def structure_table(det, S) -> None:
    """Per value: mean D x Div over its rows and its share of all cross-group neighbour links (equal)."""
    neighbors = det._hood.neighbors
    print("\nWhy the printed correction barely moves group shares: per value, the mean of D x Div over its rows "
          "equals the share of all n k neighbour links that run from its rows to another value\n")
    print("| attribute | value | P | Q | mean D x Div | cross-link share | mean a_S x Div at lambda 1 |")
    print("|---|---|---|---|---|---|---|")
    for s_index, (column, labels) in enumerate(zip(S.columns, det.sensitive_labels_)):
        codes = det._codes[:, s_index]
        div = (codes[neighbors] != codes[:, None]).mean(axis=1)
        share = det.data_share_[s_index, codes]
        for v, value in enumerate(labels):
            members = codes == v
            cross = (codes[neighbors[members]] != v).sum() / neighbors.size
            print(f"| {column} | {value} | {det.data_share_[s_index, v]:.3f} | {det.outlier_share_[s_index, v]:.3f} "
                  f"| {(share * div)[members].mean():.4f} | {cross:.4f} "
                  f"| {det.coefficients_[s_index, v] * div[members].mean():+.4f} |")


def flex_sweep(X, S, plain: dict) -> None:
    print("\nFairLOF-Flex (paper correction): ED, Wass change vs LOF at the guide points (lambda)\n")
    print("| weight_exponent | share_exponent | J~0.9 | J~0.8 |")
    print("|---|---|---|---|")
    base_ed, base_wass = plain["euclidean_disparity"][0], plain["wasserstein_disparity"][0]
    for weight_exponent, share_exponent in itertools.product(EXPONENTS, EXPONENTS):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            det = FairLOF(n_neighbors=5, correction_strength=0.0, weight_exponent=weight_exponent,
                          share_exponent=share_exponent).fit(X, sensitive_features=S)
        path = det.path()
        cells = []
        for _, i in guide_rows(path).items():
            if i is None:
                cells.append(f"not reached (min J {min(path['jaccard']):.2f})")
                continue
            cells.append(f"{percent(change(path['euclidean_disparity'][i], base_ed))}, "
                         f"{percent(change(path['wasserstein_disparity'][i], base_wass))} ({path['lambda'][i]:.1f}, "
                         f"J {path['jaccard'][i]:.2f})")
        print(f"| {weight_exponent} | {share_exponent} | " + " | ".join(cells) + " |", flush=True)


def print_means(records: list, datasets, title: str, note: str = "") -> None:
    """Means over the paper's data sets of the guide-point rows that were reached, beside the null's means."""
    table = pd.DataFrame(records)
    paper_sets = [name for name in datasets if name in PAPER_DATASETS]
    if table.empty or not paper_sets:
        return
    print(f"\n### {title} ({', '.join(paper_sets)})\n")
    if note:
        print(note + "\n")
    print("| protocol | correction | guide | reached | mean ED change | mean null ED | mean Wass change "
          "| mean null Wass | min Pres | mean Jacc |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    picked = table[table["dataset"].isin(paper_sets)]
    for (protocol, label, target), rows in picked.groupby(["protocol", "correction", "target"], sort=False):
        hit = rows[rows["reached"]]
        if hit.empty:
            print(f"| {protocol} | {label} | J~{target} | 0/{len(rows)} | | | | | | |")
            continue
        print(f"| {protocol} | {label} | J~{target} | {len(hit)}/{len(rows)} | {percent(hit['ed_change'].mean())} "
              f"| {percent(hit['null_ed'].mean())} | {percent(hit['wass_change'].mean())} "
              f"| {percent(hit['null_wass'].mean())} | {hit['preservation'].min():.4f} | {hit['jaccard'].mean():.3f} |")


def print_reading_means(records: list, datasets) -> None:
    table = pd.DataFrame(records)
    paper_sets = [name for name in datasets if name in PAPER_DATASETS]
    if table.empty or not paper_sets:
        return
    print(f"\n### Readings of eqs 7-8: mean over the reached guide points ({', '.join(paper_sets)})\n")
    print("| protocol | reading | guide | mean ED change | mean Wass change | mean Jacc |")
    print("|---|---|---|---|---|---|")
    picked = table[table["dataset"].isin(paper_sets)]
    for (protocol, label, target), rows in picked.groupby(["protocol", "reading", "target"], sort=False):
        print(f"| {protocol} | {label} | J~{target} | {percent(rows['ed_change'].mean())} "
              f"| {percent(rows['wass_change'].mean())} | {rows['jaccard'].mean():.3f} |")


def ed_changes(path: dict) -> np.ndarray:
    return 100 * np.array([change(v, path["euclidean_disparity"][0]) for v in path["euclidean_disparity"]])


def frontier_chart(name: str, curves: dict, out) -> None:
    """ED change vs Jaccard per protocol: both corrections, the quota frontier and the permuted-label null."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = 3
    rows = (len(curves) + columns) // columns  # one spare panel holds the legend
    fig, axes = plt.subplots(rows, columns, figsize=(11, 3.4 * rows), squeeze=False)
    styles = {"paper": ("tab:blue", "o"), "per_value": ("tab:orange", "s")}
    for ax, (protocol, curve) in zip(axes.flat, curves.items()):
        for correction, (color, marker) in styles.items():
            for k, null in enumerate(curve["nulls"][correction]):
                ax.plot(null["jaccard"], ed_changes(null), color=color, alpha=0.3, lw=0.8, ls="--",
                        label=f"{correction}, permuted labels (null)" if k == 0 else None)
            path = curve["paths"][correction]
            ax.plot(path["jaccard"], ed_changes(path), color=color, marker=marker, ms=3.5, lw=1.8,
                    label=f"{correction} (lambda 0-1)")
        jac, ed = (np.array(v) for v in zip(*curve["quota"]))
        ax.plot(jac, 100 * ed, color="tab:green", marker="^", ms=3.5, lw=1.8,
                label="quota, joint groups (strength 0-1)")
        ax.axhline(0, color="grey", lw=0.6)
        for target in TARGETS:
            ax.axvline(target, color="grey", lw=0.6, ls=":")
        ax.set_title(protocol, fontsize=9)
        ax.set_xlim(1.01, 0.5)
        ax.set_ylim(-100, 100)
        ax.set_xlabel("Jaccard with LOF's top-t")
        ax.set_ylabel("ED change vs LOF (%)")
    spare = axes.flat[len(curves)]
    spare.axis("off")
    spare.legend(*axes.flat[0].get_legend_handles_labels(), loc="center", fontsize=8)
    for ax in list(axes.flat)[len(curves) + 1:]:
        ax.axis("off")
    fig.suptitle(f"FairLOF on {name}: ED change vs Jaccard (lower is fairer, further left keeps more of LOF's list; "
                 "axes clipped to Jaccard >= 0.5, +/-100%)", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def save_curves(curves: dict, out) -> None:
    """The chart's data as JSON, so a chart can be redrawn without the run (``--replot``)."""
    def plain(value):
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return value.tolist() if isinstance(value, np.ndarray) else value
    Path(out).write_text(json.dumps(plain(curves)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="only the small student maths data set, 2 permutations per null")
    parser.add_argument("--datasets", default=None, help="comma-separated subset of the data sets")
    parser.add_argument("--protocols", default=None, help=f"comma-separated subset of {list(PROTOCOLS)}")
    parser.add_argument("--no-readings", action="store_true", help="skip the other readings of eqs 7-8")
    parser.add_argument("--flex", action="store_true", help="also run the FairLOF-Flex sweep (numeric protocol)")
    parser.add_argument("--permutations", type=int, default=5, help="permuted-label null paths per case (>= 2)")
    parser.add_argument("--figures", default=None, help="directory for one frontier chart per data set")
    parser.add_argument("--replot", default=None,
                        help="only redraw a chart from the JSON file(s) runs wrote beside it (comma-separated: merged)")
    parser.add_argument("--scaling", choices=("standard", "minmax"), default="standard",
                        help="features to mean 0 / sd 1 (default) or to [0, 1]; the raw protocol is never scaled")
    args = parser.parse_args()
    if args.replot:
        files = [Path(name) for name in args.replot.split(",")]
        curves = {}
        for file in files:  # several runs of one data set, each with some of its protocols
            curves.update(json.loads(file.read_text()))
        target = Path(args.figures) / f"{files[0].stem}.png" if args.figures else files[0].with_suffix(".png")
        if args.figures and len(files) > 1:
            save_curves(curves, target.with_suffix(".json"))
        frontier_chart(files[0].stem.removeprefix("fairlof_frontier_"), curves, target)
        print(f"chart: {target}")
        return
    if args.permutations < 2:
        parser.error("--permutations must be at least 2 (the null needs a spread)")
    datasets = ["student_mat"] if args.quick else [*PAPER_DATASETS, *EXTRA_DATASETS]
    if args.quick:
        args.permutations = 2
    if args.datasets:
        datasets = args.datasets.split(",")
    protocols = args.protocols.split(",") if args.protocols else list(PROTOCOLS)
    unknown = sorted(set(protocols) - set(PROTOCOLS))
    if unknown:
        parser.error(f"unknown protocol(s) {unknown}; choose from {list(PROTOCOLS)}")
    summary, found = [], []
    for name in datasets:
        curves = {}
        for protocol in protocols:
            start = time.perf_counter()
            X, S, dropped, features = prepared(name, protocol, args.scaling)
            zeros = zero_k_distances(features) if dropped else 0
            print(f"\n{name} / {protocol}: {dropped} exact duplicate feature rows dropped "
                  f"({zeros} rows had k-distance 0 before)")
            curves[protocol] = run_case(name, protocol, X, S, summary, found, permutations=args.permutations,
                                        flex=args.flex and protocol == "numeric", readings_too=not args.no_readings)
            print(f"\n({time.perf_counter() - start:.0f} s)", flush=True)
        if args.figures:
            target = Path(args.figures) / f"fairlof_frontier_{name}.png"
            save_curves(curves, target.with_suffix(".json"))
            frontier_chart(name, curves, target)
            print(f"\nchart: {target}")
    print_means(summary, datasets, "Mean over the paper's data sets available here",
                "paper: ED -30% at both guide points, Wass -12% (J~0.9) and -22% (J~0.8), Pres within 1%, OF = 1")
    print_reading_means(found, datasets)


if __name__ == "__main__":
    main()
