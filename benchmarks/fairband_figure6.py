"""The Fairband paper's Figure 6: FB-auto runs on Adult whose search space holds the exponentiated gradient
reduction over a decision tree beside the five bias-blind families, and what each run picks, by model type.

Protocol (the paper's section 5.4, with its Table 3 protocol as ``fairband_paper.py`` runs it): one split
for all runs (seed 0), runs differing in the tuner's seed, one Fairband iteration (206 fits) each, the
paper's pick (argmax of ``o`` with FB-auto's alpha over every fit at any budget), scored on validation and
on test at the validation threshold. The reduction is the paper's: fairlearn-style exponentiated gradient
over ``DecisionTreeClassifier`` holding the task's fairness ratio, in the ranges the paper's published AOF
logs show (eps 0.025-1, 10-49 rounds, ratio bound 0.80-0.99, slack 0.01 or 0.02), the tree in the paper's
ranges, even error costs, scored by its randomized classifier's chance of a positive decision (fairlearn's
``_pmf_predict``; fairops' row tie-break). It is registered here as a family of its own
(``paper_exponentiated_gradient``, :func:`fairops.tuning.register_family`), so fairops' default search
(several bases, the false-positive cost) does not enter the paper's figure. The five other families use
``--profile`` (``fast`` by default: the paper profile's LightGBM reaches 14,495 trees and a run hours).

    python benchmarks/fairband_figure6.py run --seeds 0-14
    python benchmarks/fairband_figure6.py report --figure docs/fairband_figure6_adult.png
    python benchmarks/fairband_figure6.py --quick     # smoke test: COMPAS, 300 training rows, one seed,
                                                      # the s_max 2 schedule (22 fits)
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import optuna
import pandas as pd

import fairband_paper as paper
from fairops.models._families import PAPER_FAMILIES
from fairops.tuning import register_family

REDUCTION = "paper_exponentiated_gradient"
LABELS = {"logistic_regression": "logistic regression", "decision_tree": "decision tree",
          "random_forest": "random forest", "lightgbm": "LightGBM", "mlp": "network",
          REDUCTION: "exponentiated gradient (tree)"}


def register_paper_reduction(task) -> None:
    """The paper's exponentiated gradient over a decision tree, as a family of the tuning table."""
    from fairops.models._families import FAMILIES
    from fairops.reductions import ExponentiatedGradient

    def suggest(trial, profile, seed):
        tree = FAMILIES["decision_tree"].suggest(trial, "paper", seed)
        return ExponentiatedGradient(
            tree, constraint=task.fairness, groups=task.groups,
            ratio_bound=trial.suggest_float("peg_ratio_bound", 0.8, 0.99),
            ratio_bound_slack=trial.suggest_categorical("peg_ratio_bound_slack", [0.01, 0.02]),
            eps=trial.suggest_float("peg_eps", 0.025, 1.0, log=True),
            max_iter=trial.suggest_int("peg_max_iter", 10, 49, log=True), random_state=seed)

    register_family(REDUCTION, suggest)


def run(dataset: str, seeds, profile: str, work_dir: Path, families=None, **options) -> None:
    register_paper_reduction(paper.DATASETS[dataset]().task)
    paper.run_all([dataset], profile, seeds, work_dir, tuners=("FB-auto",),
                  families=list(families or (*PAPER_FAMILIES, REDUCTION)), **options)


def picks_and_bests(work_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each run's pick, and each run's best fit (argmax of ``o``) within every family."""
    picks, bests = [], []
    for record in paper.load_runs(work_dir):
        trials = paper.as_trials(record["fits"])
        pick = paper.pick_figures(trials, "FB-auto")
        picks.append({"seed": record["seed"], **pick})
        for family in sorted({t.user_attrs["model"] for t in trials if t.values is not None}):
            within = [t for t in trials if t.user_attrs["model"] == family]
            bests.append({"seed": record["seed"], "family": family, **paper.pick_figures(within, "FB-auto")})
    return pd.DataFrame(picks), pd.DataFrame(bests)


def table(picks: pd.DataFrame, bests: pd.DataFrame) -> str:
    lines = ["| family | picked (of runs) | pick: val precision / fairness | pick: test precision / fairness "
             "| best of the family per run: test precision / fairness |", "|---|---|---|---|---|"]
    for family in [f for f in LABELS if f in set(bests["family"])]:
        chosen = picks[picks["model"] == family]
        best = bests[bests["family"] == family]
        pick_cells = (f"{100 * chosen.val_acc.mean():.1f} / {100 * chosen.val_fair.mean():.1f} | "
                      f"{100 * chosen.test_acc.mean():.1f} / {100 * chosen.test_fair.mean():.1f}"
                      ) if len(chosen) else "- | -"
        lines.append(f"| {LABELS[family]} | {len(chosen)} of {len(picks)} | {pick_cells} | "
                     f"{100 * best.test_acc.mean():.1f} / {100 * best.test_fair.mean():.1f} |")
    return "\n".join(lines)


def draw(picks: pd.DataFrame, bests: pd.DataFrame, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6.5, 4.8))
    for index, family in enumerate(f for f in LABELS if f in set(bests["family"])):
        best = bests[bests["family"] == family]
        chosen = picks[picks["model"] == family]
        axes.scatter(100 * best.test_acc, 100 * best.test_fair, color=f"C{index}", alpha=0.3, s=16)
        axes.scatter(100 * chosen.test_acc, 100 * chosen.test_fair, color=f"C{index}", edgecolor="black", s=60,
                     label=f"{LABELS[family]}: picked {len(chosen)}x")
    axes.set_xlabel("test precision (%)")
    axes.set_ylabel("test fairness (%)")
    axes.set_title(title, fontsize=10)
    axes.legend(fontsize=7, loc="lower left")
    figure.text(0.01, 0.01, "large, outlined: each run's pick; small: each run's best fit of every family",
                fontsize=7)
    figure.tight_layout(rect=(0, 0.03, 1, 1))
    figure.savefig(path, dpi=120)
    plt.close(figure)


def report(work_dir: Path, figure: Path | None, title: str) -> None:
    picks, bests = picks_and_bests(work_dir)
    print(f"{len(picks)} FB-auto runs (seeds {sorted(picks.seed)})")
    print(table(picks, bests))
    if figure is not None:
        draw(picks, bests, figure, title)
        print(f"written: {figure}")


def _seeds(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", choices=["run", "report"], default="run")
    parser.add_argument("--seeds", default="0-14")
    parser.add_argument("--profile", default="fast", choices=["fast", "paper"])
    parser.add_argument("--work-dir", type=Path, default=Path("benchmarks/data/fairband_figure6"))
    parser.add_argument("--figure", type=Path)
    parser.add_argument("--quick", action="store_true",
                        help="COMPAS, 300 training rows, one seed, the s_max 2 schedule (22 fits)")
    args = parser.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    if args.quick:
        with tempfile.TemporaryDirectory() as scratch:
            run("compas", [0], "fast", Path(scratch), families=["logistic_regression", REDUCTION], max_train_rows=300,
                s_max=2)
            report(Path(scratch), Path(scratch) / "figure6.png", "COMPAS (smoke)")
        return
    if args.command == "run":
        run("adult", _seeds(args.seeds), args.profile, args.work_dir)
    report(args.work_dir, args.figure, f"Adult: {len(_seeds(args.seeds))} FB-auto runs with the exponentiated "
                                       f"gradient reduction\n(the paper's reduction; {args.profile} profile for the "
                                       "other families)")


if __name__ == "__main__":
    main()
