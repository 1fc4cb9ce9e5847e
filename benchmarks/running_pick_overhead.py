"""The tracking callback's running pick after each trial: ranked from scratch against kept (RunningSelection).

A Fairband study (FB-auto, the default 206-fit schedule per iteration) runs with an objective that returns
accuracy and fairness from a few levels, so fits tie as the measured ones of a small validation set do, and
records the counts behind them as a fit of ``fairops tune`` does (one in ten decides one class: set aside).
The study is then replayed trial by trial in memory: after each trial the pick is made by ``select_best``
over every finished fit (what the callback did) and by one
:class:`~fairops.fairband._selection.RunningSelection` kept across the trials (what it does); every pick
must be the same (trial, score, alpha).

    python benchmarks/running_pick_overhead.py                 # 1 iteration (206 fits), alphas auto, 0.5, 1
    python benchmarks/running_pick_overhead.py --iterations 3  # 618 fits
    python benchmarks/running_pick_overhead.py --quick         # CI's smoke run: eta 3, s_max 2 (22 fits)
"""

import argparse
import time

import numpy as np
import optuna

from fairops.fairband import FairbandSampler, budget, iteration_size, select_best
from fairops.fairband._selection import RunningSelection

ONE_CLASS = {"decisions": {"rows": 100, "positive": 100, "positives": 70, "true_positives": 70}}


def _study(iterations: int, seed: int, s_max: int) -> optuna.Study:
    rng = np.random.default_rng(seed)
    study = optuna.create_study(directions=["maximize", "maximize"],
                                sampler=FairbandSampler(alpha="auto", seed=seed, iterations=iterations, s_max=s_max))

    def objective(trial):
        trial.suggest_float("x", 0, 1)
        budget(trial)
        positive = int(rng.integers(60, 100))
        counts = {"decisions": {"rows": 200, "positive": positive, "positives": 140,
                                "true_positives": int(0.9 * positive)}}
        trial.set_user_attr("counts", ONE_CLASS if rng.random() < 0.1 else counts)
        return tuple(float(v) for v in rng.choice(np.linspace(0.5, 1.0, 11), 2))

    study.optimize(objective, n_trials=iteration_size(3, s_max) * iterations)
    return study


def _replay(trials, alpha) -> tuple[float, float, int]:
    """Seconds from scratch, seconds kept, and how many of the picks after each trial agree."""
    replay = optuna.create_study(directions=["maximize", "maximize"])
    running, scratch, kept, same = RunningSelection(alpha), 0.0, 0.0, 0
    for trial in trials:
        replay.add_trial(trial)
        finished = [t for t in replay.get_trials(deepcopy=False) if t.state.is_finished()]
        start = time.perf_counter()
        expected = select_best(finished, alpha=alpha)
        middle = time.perf_counter()
        pick = running.select(finished)
        kept += time.perf_counter() - middle
        scratch += middle - start
        same += (pick.trial.number, pick.score, pick.alpha) == (expected.trial.number, expected.score, expected.alpha)
    return scratch, kept, same


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="the smaller schedule (s_max 2: 22 fits)")
    args = parser.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    trials = _study(args.iterations, args.seed, 2 if args.quick else 4).get_trials(deepcopy=False)
    print(f"{len(trials)} trials; the pick after each, summed over the trials\n")
    print("| alpha | from scratch (s) | kept (s) | speed-up | picks the same |")
    print("|---|---|---|---|---|")
    differing = 0
    for alpha in ("auto", 0.5, 1.0):
        scratch, kept, same = _replay(trials, alpha)
        differing += len(trials) - same
        print(f"| {alpha} | {scratch:.3f} | {kept:.3f} | {scratch / kept:.1f} | {same} of {len(trials)} |")
    if differing:
        print(f"{differing} picks differ from the from-scratch pick")
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
