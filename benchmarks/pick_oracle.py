"""What could the pick have been? Every configuration a run tried, refit, and scored on validation and test.

The robust rule (``fairops compare``'s default) chooses among a few refits. This script asks what the
whole search offered: per seed it runs FB-auto exactly as ``fairops compare`` does (the fast profile, the
paper's families plus the SCAFF forest, the small-data floor, one Fairband iteration, a split per seed),
records the robust pick, then refits EVERY distinct configuration of the run on all training rows and
scores it on the validation rows (threshold set there) and the test rows (that threshold, unchanged).

From those refits ``report`` prints, per seed and on average:

- the test oracle: how many refits reach the goal on test (e.g. precision >= 68% at an FPR ratio >=
  78%) and the fairest test ratio among refits at the goal's precision. It peeks at the test rows, so it
  is an upper bound no honest rule can reach, not a target: the best of ~140 noisy test ratios is
  inflated by the same noise that inflates the best validation ratio;
- the robust pick's test figures and the rank of its test ratio among the refits at the goal's precision;
- how much validation tells about test: the rank correlation (Spearman) of validation and test fairness
  across the refits, and the same rule (highest ``o`` of lower bounds, FB-auto's alpha, among refits not
  dominated by the most accurate refit) applied to every refit on validation, with the true groups and
  with the validation rows' group labels permuted (20 draws): the permuted-label null is what a rule
  knowing nothing about fairness would pick;
- the test split's noise ceiling (a perfectly fair model, from ``fairband_robust.ceilings``);
- with ``--cross-validate`` (every configuration also scored by 5-fold cross-validation over the training
  and validation rows): the cross-validated figures of the refits the test oracle finds at the goal, and
  the rule's choice for larger refit pools, on cross-validated or validation bounds.

``per-group-ceiling`` simulates what any model scored with one threshold per group shows on test: the
thresholds meet the target exactly on validation, so their true rates, and the test ratio, are noise of
the group counts alone.

    nice -n 5 python benchmarks/pick_oracle.py run --dataset compas --seeds 0-4 --cross-validate
    python benchmarks/pick_oracle.py report --dataset compas --goal 0.68 0.78
    python benchmarks/pick_oracle.py run --dataset adult --seeds 0-2 --decision per-group
    python benchmarks/pick_oracle.py report --dataset adult --decision per-group --goal 0.987 0.975
    python benchmarks/pick_oracle.py per-group-ceiling --dataset compas --seeds 0-4 --goal 0.714 0.80
    python benchmarks/pick_oracle.py --quick   # smoke: German, logistic regression, 300 training rows, s_max 2

Each seed's refits are written to ``--work-dir`` (one JSON file per dataset, decision and seed, with the
validation and test scores of every refit in a ``.npz`` beside it) and skipped when present.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import warnings
from pathlib import Path

import numpy as np

DRAWS = 20


def _seeds(text: str) -> list[int]:
    first, _, last = text.partition("-")
    return list(range(int(first), int(last or first) + 1))


def _objective(data, seed, decision, families, max_train_rows, score_test=False):
    from fairops.tuning import FairnessObjective
    from fairops.tuning._objective import SMALL_DATA_FLOOR

    return FairnessObjective(data, seed=seed, families=families, decision=decision,
                             max_train_rows=max_train_rows, score_test=score_test, **SMALL_DATA_FLOOR)


def _figures(metrics: dict) -> dict:
    keys = ("accuracy", "fairness", "accuracy_low", "fairness_low")
    return {k: float(metrics[k]) for k in keys if k in metrics}


def _refit_every_configuration(objective, study, cross_validate=False):
    """One record per distinct configuration among the run's successful fits, and the refits' scores;
    ``cross_validate`` adds each configuration's 5-fold figures over the training and validation rows."""
    from fairops.fairband._selection import successful_fits
    from fairops.tuning._cross_validation import cross_validated

    seen, records, scores = {}, [], {}
    for trial in successful_fits(study):
        key = json.dumps(trial.params, sort_keys=True, default=str)
        budget = float(trial.user_attrs.get("budget", 1.0))
        if key in seen:
            record = records[seen[key]]
            record["trials"].append(trial.number)
            record["largest_budget"] = max(record["largest_budget"], budget)
            continue
        try:
            model = objective.refit(trial, 1.0)
            validation, test = objective.evaluate(model, "validation"), objective.evaluate(model, "test")
        except ValueError:  # constant scores once refit: nothing to rank
            continue
        seen[key] = len(records)
        records.append({"trials": [trial.number], "model": trial.params.get("model", "?"), "key": key,
                        "largest_budget": budget, "validation": _figures(validation), "test": _figures(test)})
        if cross_validate:
            try:
                records[-1]["cv"] = _figures(cross_validated(objective, trial))
            except ValueError:
                records[-1]["cv"] = {**records[-1]["validation"], "accuracy_low": 0.0, "fairness_low": 0.0}
        scores[f"val_{trial.number}"] = model.predict_proba(objective.rows("validation")[0])[:, 1]
        scores[f"test_{trial.number}"] = model.predict_proba(objective.rows("test")[0])[:, 1]
    return records, scores


def run_seed(data, seed, decision, *, families=None, max_train_rows=None, cross_validate=False,
             s_max=4) -> tuple[dict, dict]:
    """One FB-auto run as ``fairops compare`` makes it, its robust pick, and every configuration refit."""
    from fairops.fairband import select_best
    from fairops.tuning._baselines import make_study, run_tuner, start_configurations
    from fairops.tuning._refit_choice import refit_choice
    from fairops.tuning._search_space import families_for

    families = families or families_for()
    objective = _objective(data, seed, decision, families, max_train_rows, score_test=True)
    study = make_study("FB-auto", seed=seed, s_max=s_max, start_configurations=start_configurations("robust", families))
    study = run_tuner("FB-auto", objective, seed=seed, study=study, catch=(Exception,)).study
    robust = select_best(study, alpha="auto", rule="robust")
    choice = refit_choice(objective, robust, select_best(study, alpha=1.0).trial)
    records, scores = _refit_every_configuration(objective, study, cross_validate)
    pick = {"trial": choice.chosen.trial.number, "validation": _figures(choice.chosen.validation),
            "test": _figures(choice.chosen.test), "candidates": [t.number for t in robust.candidates],
            "most_accurate": choice.most_accurate.trial.number, "alpha": robust.alpha}
    return {"dataset": data.name, "seed": seed, "decision": decision, "pick": pick, "refits": records,
            "fits": len(study.trials), "as_fitted": _as_fitted(study)}, scores


def _as_fitted(study) -> list[dict]:
    """Every successful fit as it was fitted (at its budget): validation figures, and the test figures at
    its validation threshold (``score_test``)."""
    from fairops.fairband._selection import lower_bounds, successful_fits

    return [{"trial": t.number, "model": t.params.get("model", "?"), "budget": float(t.user_attrs.get("budget", 1.0)),
             "key": json.dumps(t.params, sort_keys=True, default=str),
             "validation": dict(zip(("accuracy", "fairness", "accuracy_low", "fairness_low"),
                                    (*map(float, t.values), *lower_bounds(t)))),
             "test": {"accuracy": t.user_attrs["test_accuracy"], "fairness": t.user_attrs["test_fairness"]}}
            for t in successful_fits(study)]


# ------------------------------------------------------------------------------------------ analysis
def _spearman(a, b) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic) if len(a) > 2 else float("nan")


def _rule_pick(validation: list[dict], alpha: float, accurate: int) -> int:
    """The robust rule's last step on validation figures: drop refits the most accurate one dominates,
    keep the highest ``o`` of lower bounds."""
    from fairops.fairband._ranking import weighted_score
    from fairops.tuning._refit_choice import dominates

    kept = [i for i, v in enumerate(validation) if i == accurate or not dominates(validation[accurate], v)]
    return max(kept, key=lambda i: weighted_score(validation[i]["accuracy_low"], validation[i]["fairness_low"],
                                                  alpha))


def _permuted_validation(data, objective, record_scores, seed) -> list[list[dict]]:
    """Every refit's validation figures with the validation rows' group labels permuted, DRAWS times."""
    _, y, sensitive = objective.rows("validation")
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(DRAWS):
        shuffled = sensitive.iloc[rng.permutation(len(sensitive))].set_axis(sensitive.index)
        draws.append([_figures(data.task.evaluate(y, s, shuffled, seed=objective.seed, decision=objective.decision))
                      for s in record_scores])
    return draws


def analyse(result: dict, scores, data, goal, max_train_rows=None) -> dict:
    refits, pick = result["refits"], result["pick"]
    val = [r["validation"] for r in refits]
    test = [r["test"] for r in refits]
    at_precision = [t["fairness"] for t in test if t["accuracy"] >= goal[0]]
    accurate = max(range(len(val)), key=lambda i: (val[i]["accuracy"], val[i]["fairness"]))
    chosen = _rule_pick(val, pick["alpha"], accurate)
    objective = _objective(data, result["seed"], result["decision"], ["logistic_regression"], max_train_rows)
    record_scores = [scores[f"val_{r['trials'][0]}"] for r in refits]
    null = [test[_rule_pick(v, pick["alpha"], accurate)] for v in
            _permuted_validation(data, objective, record_scores, result["seed"])]
    return {
        "seed": result["seed"], "configurations": len(refits),
        "at_goal": sum(t["accuracy"] >= goal[0] and t["fairness"] >= goal[1] for t in test),
        # the same configurations' 5-fold figures over train + validation: an estimate the test rows did not pick
        "at_goal_cv": [[r["cv"]["accuracy"], r["cv"]["fairness"]] for r in refits if "cv" in r
                       and r["test"]["accuracy"] >= goal[0] and r["test"]["fairness"] >= goal[1]],
        # and the other way round: the refits at the goal by cross-validation, and how many stay there on test
        "cv_at_goal": [r["test"]["accuracy"] >= goal[0] and r["test"]["fairness"] >= goal[1] for r in refits
                       if "cv" in r and r["cv"]["accuracy"] >= goal[0] and r["cv"]["fairness"] >= goal[1]],
        "at_precision": len(at_precision), "best_fair_at_precision": max(at_precision, default=float("nan")),
        "best_precision": max(t["accuracy"] for t in test),
        "best_precision_at_fairness": max((t["accuracy"] for t in test if t["fairness"] >= goal[1]),
                                          default=float("nan")),
        "pick": pick["test"], "pick_rank": 1 + sum(f > pick["test"]["fairness"] for f in at_precision),
        "rho_fairness": _spearman([v["fairness"] for v in val], [t["fairness"] for t in test]),
        "rho_accuracy": _spearman([v["accuracy"] for v in val], [t["accuracy"] for t in test]),
        "rule_on_all": test[chosen],
        "null": {k: statistics.mean(n[k] for n in null) for k in ("accuracy", "fairness")},
    }


def pool_pick(result: dict, size: int | None, by: str = "cv") -> dict:
    """Test figures of the robust rule's choice when its refit pool holds the best ``size`` fits by
    lower-bound ``o`` and the best ``size`` at the largest budget (None: every configuration), plus the
    most accurate fit; the choice compares ``by`` ("cv" or "validation") lower bounds. ``size=3`` with
    "cv" is the rule as ``fairops compare`` runs it."""
    from fairops.fairband import _ranking as ranking
    from fairops.tuning._refit_choice import dominates

    alpha, fits = result["pick"]["alpha"], result["as_fitted"]
    records = {r["key"]: r for r in result["refits"]}
    fits = [f for f in fits if f["key"] in records]
    by_number = {f["trial"]: f for f in fits}
    order = [by_number[n] for n in ranking.rank([(f["trial"], f["validation"]["accuracy_low"],
                                                   f["validation"]["fairness_low"]) for f in fits], alpha, ties="key")]
    largest = max(f["budget"] for f in fits)
    full = [f for f in order if f["budget"] == largest]
    accurate = records[max(fits, key=lambda f: (f["validation"]["accuracy"], f["validation"]["fairness"],
                                                 -f["trial"]))["key"]]
    pool = order if size is None else [*order[:size], *full[:size]]
    refits = list({f["key"]: records[f["key"]] for f in pool}.values())
    refits += [] if accurate in refits else [accurate]
    kept = [r for r in refits if r is accurate or not dominates(accurate["validation"], r["validation"])]
    figures = (lambda r: r.get("cv", r["validation"])) if by == "cv" and len(kept) > 1 else (lambda r: r["validation"])
    chosen = max(kept, key=lambda r: ranking.weighted_score(figures(r)["accuracy_low"], figures(r)["fairness_low"],
                                                            alpha))
    return chosen["test"]


def as_fitted_row(results: list[dict], goal) -> str:
    """The fits as they were fitted (each at its budget, not refit): the same last step over all of them on
    validation, and the test oracle among them."""
    picks, best = [], []
    for result in results:
        fits = result["as_fitted"]
        val = [f["validation"] for f in fits]
        accurate = max(range(len(val)), key=lambda i: (val[i]["accuracy"], val[i]["fairness"]))
        picks.append(fits[_rule_pick(val, result["pick"]["alpha"], accurate)]["test"])
        best.append(max((f["test"]["fairness"] for f in fits if f["test"]["accuracy"] >= goal[0]),
                        default=float("nan")))
    mean = lambda key: _pct(statistics.mean(p[key] for p in picks))  # noqa: E731
    return (f"fits as fitted (at their budgets, no refit): the rule over all of them on validation gives test "
            f"{mean('accuracy')} / {mean('fairness')}; the test oracle's best ratio at the goal's accuracy "
            f"averages {_pct(statistics.mean(best))}")


def alpha_row(results: list[dict], alphas=(0.3, 0.4, 0.5, 0.6, 0.7, 0.8)) -> str:
    """The last step over every refit on validation bounds with a fixed alpha instead of FB-auto's: choosing
    alpha by these test figures would itself peek at the test rows, so the best of them is an upper bound."""
    cells = []
    for alpha in alphas:
        picks = []
        for result in results:
            val = [r["validation"] for r in result["refits"]]
            accurate = max(range(len(val)), key=lambda i: (val[i]["accuracy"], val[i]["fairness"]))
            picks.append(result["refits"][_rule_pick(val, alpha, accurate)]["test"])
        cells.append(f"alpha {alpha:g}: {_pct(statistics.mean(p['accuracy'] for p in picks))} / "
                     f"{_pct(statistics.mean(p['fairness'] for p in picks))}")
    return "the last step over every refit with a fixed alpha (test): " + "; ".join(cells)


def pool_table(results: list[dict], sizes=(3, 5, 10, 20, None)) -> str:
    """Mean test figures of the robust rule's choice for several refit pool sizes (see :func:`pool_pick`)."""
    lines = ["| refit pool (best k by lower-bound o + best k at full budget + most accurate) | choice on "
             "cross-validated bounds (test) | choice on validation bounds (test) |", "|---|---|---|"]
    for size in sizes:
        cells = []
        for by in ("cv", "validation"):
            picks = [pool_pick(r, size, by) for r in results]
            cells.append(f"{_pct(statistics.mean(p['accuracy'] for p in picks))} / "
                         f"{_pct(statistics.mean(p['fairness'] for p in picks))}")
        lines.append(f"| {'every configuration' if size is None else f'k = {size}'} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def _pct(value: float) -> str:
    return "none" if value != value else f"{100 * value:.1f}"


def report(work_dir: Path, dataset: str, decision: str, goal) -> str:
    from fairband_robust import ceilings
    from fairops.datasets import load_dataset

    data = load_dataset(dataset)
    found = sorted(work_dir.glob(f"{dataset}-{decision}-seed*.json"))
    rows, results = [], []
    for path in found:
        result = json.loads(path.read_text())
        results.append(result)
        with np.load(path.with_suffix(".npz")) as scores:
            row = analyse(result, dict(scores), data, goal)
        row["ceiling"] = ceilings(dataset, result["seed"])["test"]
        rows.append(row)
    lines = [f"goal on test: {data.task.metric} >= {_pct(goal[0])} at {data.task.fairness_label} >= {_pct(goal[1])}",
             "", "| seed | configs | at goal on test | best test ratio at the goal's accuracy | best test accuracy "
             "at the goal's ratio | robust pick (test) | its rank | rule over all refits (test) | permuted-group "
             "null (test) | Spearman val/test ratio | Spearman val/test accuracy | ceiling |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['seed']} | {r['configurations']} | {r['at_goal']} | {_pct(r['best_fair_at_precision'])} "
            f"({r['at_precision']} refits) | {_pct(r['best_precision_at_fairness'])} | {_pct(r['pick']['accuracy'])} / "
            f"{_pct(r['pick']['fairness'])} | {r['pick_rank']} | {_pct(r['rule_on_all']['accuracy'])} / "
            f"{_pct(r['rule_on_all']['fairness'])} | {_pct(r['null']['accuracy'])} / {_pct(r['null']['fairness'])} "
            f"| {r['rho_fairness']:.2f} | {r['rho_accuracy']:.2f} | {_pct(r['ceiling'])} |")
    if rows:
        mean = lambda f: statistics.mean(f(r) for r in rows)  # noqa: E731
        lines.append(
            f"| mean | {mean(lambda r: r['configurations']):.0f} | {mean(lambda r: r['at_goal']):.1f} | "
            f"{_pct(mean(lambda r: r['best_fair_at_precision']))} | "
            f"{_pct(np.nanmean([r['best_precision_at_fairness'] for r in rows]))} (where any) | "
            f"{_pct(mean(lambda r: r['pick']['accuracy']))} / {_pct(mean(lambda r: r['pick']['fairness']))} | | "
            f"{_pct(mean(lambda r: r['rule_on_all']['accuracy']))} / "
            f"{_pct(mean(lambda r: r['rule_on_all']['fairness']))} | "
            f"{_pct(mean(lambda r: r['null']['accuracy']))} / {_pct(mean(lambda r: r['null']['fairness']))} | "
            f"{mean(lambda r: r['rho_fairness']):.2f} | {mean(lambda r: r['rho_accuracy']):.2f} | "
            f"{_pct(mean(lambda r: r['ceiling']))} |")
    at_goal_cv = [pair for r in rows for pair in r["at_goal_cv"]]
    if at_goal_cv:
        lines += ["", f"the {len(at_goal_cv)} refits at the goal on test, cross-validated over train + validation "
                      f"(5 folds): {data.task.metric} {_pct(statistics.mean(p[0] for p in at_goal_cv))}, "
                      f"{data.task.fairness_label} {_pct(statistics.mean(p[1] for p in at_goal_cv))} on average "
                      f"(highest {_pct(max(p[1] for p in at_goal_cv))})"]
    if any("cv" in r["refits"][0] for r in results):
        found = [r["cv_at_goal"] for r in rows]
        lines += ["", f"refits at the goal by cross-validation: {', '.join(str(len(f)) for f in found)} per seed; "
                      f"at the goal on test too: {sum(sum(f) for f in found)} of {sum(len(f) for f in found)}"]
    if results and all("as_fitted" in r for r in results):
        lines += ["", as_fitted_row(results, goal), "", alpha_row(results)]
    if results and all("as_fitted" in r and "cv" in r["refits"][0] for r in results):
        lines += ["", pool_table(results)]
    return "\n".join(lines)


def per_group_ceiling(dataset: str, seeds, goal: float, draws: int = 20000) -> dict:
    """What ANY model scored with one threshold per group shows on test: each group's threshold is set on
    its validation rows to meet the target exactly, so on continuous scores its true rate is that of a
    point between two order statistics of the group's validation base (negatives for FPR, positives for
    TPR), whatever the model; the test rows then draw their events binomially. Returns the mean test
    ratio per seed and the chance that the mean over ``seeds`` reaches ``goal``."""
    from fairband_robust import _group_bases, _ratio
    from fairops.datasets import load_dataset, train_validation_test_split

    data = load_dataset(dataset)
    task, rng = data.task, np.random.default_rng(0)
    per_seed = []
    for seed in seeds:
        split = train_validation_test_split(data.y, data.sensitive[list(task.sensitive)], seed=seed)
        ratios = []
        for val_bases, test_bases in zip(_group_bases(data, split.validation), _group_bases(data, split.test)):
            rounded = np.floor if task.target == "fpr" else np.ceil
            kept = rounded(task.target_value * val_bases)
            kept = np.clip(kept, 1, val_bases - 1)
            above = rng.beta(kept, val_bases - kept + 1, size=(draws, len(val_bases)))  # the kept-th highest
            below = above + (1 - above) * rng.beta(1, val_bases - kept, size=(draws, len(val_bases)))  # the next
            events = rng.binomial(test_bases, (above + below) / 2)
            ratios.append(_ratio(events, test_bases))
        per_seed.append(np.min(ratios, axis=0))
    means = np.mean(per_seed, axis=0)  # one mean over the seeds per draw
    return {"per_seed": [float(r.mean()) for r in per_seed], "mean": float(means.mean()),
            "chance": float((means >= goal).mean())}


def run(dataset, seeds, decision, work_dir: Path, *, families=None, max_train_rows=None, cross_validate=False,
        s_max=4) -> None:
    import optuna

    from fairops.datasets import load_dataset

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore")
    work_dir.mkdir(parents=True, exist_ok=True)
    data = load_dataset(dataset)
    for seed in seeds:
        path = work_dir / f"{dataset}-{decision}-seed{seed}.json"
        if path.exists():
            continue
        result, scores = run_seed(data, seed, decision, families=families, max_train_rows=max_train_rows,
                                  cross_validate=cross_validate, s_max=s_max)
        np.savez_compressed(path.with_suffix(".npz"), **scores)
        path.write_text(json.dumps(result))
        print(f"{dataset} {decision} seed {seed}: {len(result['refits'])} configurations refit; pick test "
              f"{result['pick']['test']['accuracy']:.3f} / {result['pick']['test']['fairness']:.3f}", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", choices=["run", "report", "per-group-ceiling"], default="report")
    parser.add_argument("--dataset", default="compas")
    parser.add_argument("--decision", default="single", choices=["single", "per-group"])
    parser.add_argument("--seeds", default="0-4")
    parser.add_argument("--goal", nargs=2, type=float, default=[0.68, 0.78], metavar=("ACCURACY", "FAIRNESS"))
    parser.add_argument("--work-dir", default=str(Path(__file__).resolve().parent / "data" / "pick_oracle"))
    parser.add_argument("--cross-validate", action="store_true",
                        help="also score every configuration by 5-fold cross-validation over train + validation")
    parser.add_argument("--quick", action="store_true", help="smoke test on German, small, in a temporary folder")
    args = parser.parse_args(argv)
    if args.quick:
        with tempfile.TemporaryDirectory() as folder:
            run("german", [0], "single", Path(folder), families=["logistic_regression"], max_train_rows=300, s_max=2)
            print(report(Path(folder), "german", "single", args.goal))
        return 0
    if args.command == "per-group-ceiling":
        found = per_group_ceiling(args.dataset, _seeds(args.seeds), args.goal[1])
        print(f"{args.dataset}, one threshold per group set on validation, any model: mean test ratio "
              f"{_pct(found['mean'])} over seeds {args.seeds} (per seed {', '.join(map(_pct, found['per_seed']))}); "
              f"chance that the mean reaches {_pct(args.goal[1])}: {_pct(found['chance'])}%")
        return 0
    if args.command == "run":
        run(args.dataset, _seeds(args.seeds), args.decision, Path(args.work_dir), cross_validate=args.cross_validate)
    print(report(Path(args.work_dir), args.dataset, args.decision, args.goal))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
