"""Every tuner on the same budget and the same objective: the paper's Table 3 comparison.

RS and RS-bal share one random-search run per seed (they differ only in the final pick). With
``selection="paper"`` each run's pick is refit at its budget and scored on the test rows at the threshold
set on the validation rows, as in the paper; with ``selection="robust"`` every fit gets at least the
small-data floor of rows (:data:`~fairops.tuning._objective.SMALL_DATA_FLOOR`), the pick ranks lower confidence
bounds and is chosen among refits on all training rows (:func:`~fairops.tuning._refit_choice`), and
its validation and test figures are those of that refit. Fits that failed (an error, or constant
validation scores) are counted per run. With a :class:`~fairops.metrics.FairnessRule` (``fairops compare``
passes its ``--fairness-line``, 0.8 by default, as ``fairops tune`` does) every tuner picks among the fits
(and refits) whose validation fairness meets the line (:func:`fairops.tuning._pick.choose_pick`).
"""

from __future__ import annotations

import statistics
import time
from typing import TYPE_CHECKING, Any, Literal

from fairops.fairband._selection import RULES, select_best

from ..errors import InputError
from ._baselines import TUNERS, make_study, pick_alpha, run_tuner, start_configurations, trials_per_iteration
from ._objective import SMALL_DATA_FLOOR, FairnessObjective, failure_reason
from ._refit_choice import dominates, refit_all, refit_choice

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    import optuna
    from optuna.trial import FrozenTrial

    from .._typing import Decision
    from ..datasets import Dataset
    from ..metrics import FairnessRule, Task

ROW_FIELDS = ("seed", "tuner", "selection", "val_acc", "val_fair", "val_fair_low", "val_fair_high", "test_acc",
              "test_fair", "dominated", "fits", "failed", "budget", "model", "seconds")


def _picked(objective, study, tuner, selection, refit_check, rule) -> dict:
    """The pick's figures under one selection rule (and whether the refit most accurate fit dominates it)."""
    alpha = pick_alpha(tuner)
    accurate = select_best(study, alpha=1.0)
    if selection == "robust":
        choice = refit_choice(objective, select_best(study, alpha=alpha, rule="robust", line=rule), accurate.trial,
                              rule=rule)
        chosen = choice.chosen
        return {"trial": chosen.trial, "val": chosen.validation, "test": chosen.test,
                "dominated": chosen.trial.number in choice.dominated}
    pick = select_best(study, alpha=alpha, line=rule)
    test_accuracy, test_fairness = objective.test(pick.trial)
    low, high = pick.trial.user_attrs.get("intervals", {}).get("fairness", [float("nan")] * 2)
    row = {"trial": pick.trial, "val": {"accuracy": pick.accuracy, "fairness": pick.fairness,
                                        "fairness_low": low, "fairness_high": high},
           "test": {"accuracy": test_accuracy, "fairness": test_fairness}, "dominated": ""}
    if refit_check:
        row["dominated"] = dominates(refit_all(objective, accurate.trial).validation,
                                     refit_all(objective, pick.trial).validation)
    return row


def _objective(dataset, seed: int, selection: str, rule, **options) -> FairnessObjective:
    """The objective of one seed: the small-data floor with the robust rule, intervals at the rule's level."""
    extra: dict[str, Any] = {**(SMALL_DATA_FLOOR if selection == "robust" else {}),
                             **({} if rule is None else {"level": rule.level})}
    return FairnessObjective(dataset, seed=seed, **options, **extra)


def compare_tuners(dataset: Dataset, seeds: Iterable[int], *, tuners: Sequence[str] = TUNERS, profile: str = "fast",
                   families: Sequence[str] | None = None, max_train_rows: int | None = None, n_jobs: int = 1,
                   on_row: Callable[[dict[str, Any]], object] | None = None,
                   progress: Callable[[int, str, int], Callable[[optuna.Study, FrozenTrial], None]] | None = None,
                   split_seed: int | None = None, selection: Literal["paper", "robust"] = "paper",
                   refit_check: bool = False, decision: Decision = "single", blind: bool = False,
                   rule: FairnessRule | None = None) -> list[dict[str, Any]]:
    """One row per (seed, tuner): the pick's validation and test accuracy and fairness.

    Parameters
    ----------
    dataset : Dataset
        The data and its task.
    seeds : iterable of int
        Each seeds the tuner and the models.
    tuners : sequence of str, default=TUNERS
        Tuners from ``TUNERS``.
    profile, families, max_train_rows : optional
        As in :class:`~fairops.tuning.FairnessObjective`.
    n_jobs, on_row, progress : optional
        Threads of ``study.optimize`` (default 1); ``on_row(row)`` gets each row as made (default None);
        ``progress(seed, tuner, n_trials)`` returns a run's Optuna callback (default None).
    split_seed : int or None, default=None
        Seeds the data split (the paper's protocol: one split, runs differing in the tuner's seed); None: the seed.
    selection : {"paper", "robust"}, default="paper"
        The selection rule (see the module).
    refit_check : bool, default=False
        Also know ``dominated`` for ``"paper"``, at two refits on all training rows per run.
    decision, blind : optional
        As in :class:`~fairops.tuning.FairnessObjective` (``"per-group"``: every fit and pick at per-group cuts).
    rule : FairnessRule or None, default=None
        Pick among the fits meeting its line, intervals at its level (None: no line, 95% intervals).

    Returns
    -------
    list of dict
        One row per (seed, tuner), keyed by ``ROW_FIELDS``; ``dominated``: whether the most accurate fit's
        refit dominates the pick's refit on validation (always known for ``"robust"``).

    Examples
    --------
    >>> from fairops.datasets import load_german
    >>> rows = compare_tuners(load_german(), [0], tuners=("RS", "RS-bal"), families=["logistic_regression"],
    ...                       max_train_rows=300)
    >>> [row["tuner"] for row in rows], rows[0]["fits"]
    (['RS', 'RS-bal'], 24)
    """
    if selection not in RULES:
        raise InputError(f"selection must be one of {RULES}, got {selection!r}")
    unknown = [t for t in tuners if t not in TUNERS]
    if unknown or not tuners:
        raise InputError(f"tuners must be a non-empty list from {TUNERS}, got unknown {unknown}")
    rows = []
    for seed in seeds:
        objective = _objective(dataset, seed, selection, rule, profile=profile, families=families,
                               max_train_rows=max_train_rows, split_seed=split_seed, decision=decision, blind=blind)
        runs: dict = {}
        for tuner in tuners:
            shared = "RS" if tuner == "RS-bal" else ("RS-bal" if tuner == "RS" else None)
            if shared in runs:
                runs[tuner] = runs[shared]
                continue
            start = time.perf_counter()
            callbacks = [] if progress is None else [progress(seed, tuner, trials_per_iteration(tuner))]
            study = make_study(tuner, seed=seed,
                               start_configurations=start_configurations(selection, families, profile))
            result = run_tuner(tuner, objective, seed=seed, study=study, n_jobs=n_jobs, catch=(Exception,),
                               callbacks=callbacks)
            runs[tuner] = (result.study, time.perf_counter() - start)
        for tuner in tuners:
            study, seconds = runs[tuner]
            picked = _picked(objective, study, tuner, selection, refit_check, rule)
            val, test, trial = picked["val"], picked["test"], picked["trial"]
            row = {"seed": seed, "tuner": tuner, "selection": selection, "val_acc": val["accuracy"],
                   "val_fair": val["fairness"], "val_fair_low": val["fairness_low"],
                   "val_fair_high": val["fairness_high"], "test_acc": test["accuracy"],
                   "test_fair": test["fairness"], "dominated": picked["dominated"], "fits": len(study.trials),
                   "failed": sum(failure_reason(t) is not None for t in study.trials),
                   "budget": 1.0 if selection == "robust" else float(trial.user_attrs.get("budget", 1.0)),
                   "model": trial.params.get("model", (families or ["?"])[0]), "seconds": seconds}
            rows.append(row)
            if on_row is not None:
                on_row(row)
    return rows


def summary(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per tuner: mean and standard deviation (in %) of validation and test accuracy and fairness.

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`compare_tuners`.

    Returns
    -------
    list of dict
        One entry per tuner, with the runs, failed fits, fairness loss and dominated picks.
    """
    result = []
    for tuner in dict.fromkeys(row["tuner"] for row in rows):
        subset = [row for row in rows if row["tuner"] == tuner]
        entry = {"tuner": tuner, "runs": len(subset),
                 "failed": statistics.mean(row.get("failed", 0) for row in subset)}
        for key in ("val_acc", "val_fair", "test_acc", "test_fair"):
            values = [100 * row[key] for row in subset]
            entry[key] = statistics.mean(values)
            entry[key + "_sd"] = statistics.stdev(values) if len(values) > 1 else 0.0
        entry["fair_loss"] = entry["val_fair"] - entry["test_fair"]
        checked = [row["dominated"] for row in subset if isinstance(row.get("dominated"), bool)]
        entry["dominated"] = f"{sum(checked)}/{len(checked)}" if checked else "-"
        result.append(entry)
    return result


def markdown_table(rows: Sequence[Mapping[str, Any]], task: Task | None = None) -> str:
    """The Table-3-style comparison as Markdown (mean ± sd over seeds, in %).

    With the mean validation-to-test fairness loss (pp), how many picks the most accurate fit's refit
    dominates on validation, and the mean number of failed fits per run.

    Parameters
    ----------
    rows : list of dict
        Rows of :func:`compare_tuners`.
    task : Task or None, default=None
        Names the columns by its metric and ratio.

    Returns
    -------
    str
        The table.

    Examples
    --------
    >>> print(markdown_table([{"tuner": "HB", "val_acc": .9, "val_fair": .5, "test_acc": .8, "test_fair": .6}]))
    | tuner | val accuracy | val fairness | test accuracy | test fairness | fairness loss | dominated | runs | failed fits |
    |---|---|---|---|---|---|---|---|---|
    | HB | 90.0 ± 0.0 | 50.0 ± 0.0 | 80.0 ± 0.0 | 60.0 ± 0.0 | -10.0 | - | 1 | 0.0 |
    """  # noqa: E501 - a doctest's expected output is one line
    accuracy, fairness = ("accuracy", "fairness") if task is None else (task.metric, task.fairness_label)
    lines = [f"| tuner | val {accuracy} | val {fairness} | test {accuracy} | test {fairness} | fairness loss "
             "| dominated | runs | failed fits |", "|---|---|---|---|---|---|---|---|---|"]
    for entry in summary(rows):
        cells = " | ".join(f"{entry[k]:.1f} ± {entry[k + '_sd']:.1f}"
                           for k in ("val_acc", "val_fair", "test_acc", "test_fair"))
        lines.append(f"| {entry['tuner']} | {cells} | {entry['fair_loss']:.1f} | {entry['dominated']} "
                     f"| {entry['runs']} | {entry['failed']:.1f} |")
    return "\n".join(lines)
