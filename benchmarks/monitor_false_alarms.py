"""How often the monitor's alert rule cries wolf, and how soon it sees a real drop: the fairness line against the
version's own baseline.

    python benchmarks/monitor_false_alarms.py simulate [--windows 4000] [--positives 72 111]
    python benchmarks/monitor_false_alarms.py drift --data acs.csv --target PINCP --sensitive SEX,RAC1P \\
        --holdout is_test --attribute SEX --group 2.0 --model fairops-acs --tracking-uri sqlite:///.../mlflow.db

``simulate`` draws windows of two groups whose true TPRs have a given ratio (the other group at 50% TPR) and
scores each with :func:`fairops.metrics._intervals.exact_attribute_intervals`, the interval every fairops surface
shows, the level split over ``--attributes`` attributes as a task over that many attributes splits it:

- **line** (the monitor's rule): the window alerts when its interval at 95% lies below the fairness line 0.8.
  For a true ratio at or above the line this is a false alarm; by construction it happens at most
  ``(1 - level) / 2`` of the time at the line and less above it;
- **baseline** (the rule before it): the window's 97.5% upper bound under the lower bound of a 97.5% interval
  from the version's validation rows (``--validation-positives``), whose true ratio is ``--baseline-ratio``.
  Two intervals stacked: it misses drops that the line sees.

``drift`` reproduces a drift on real rows with a registered version: the rows (``--holdout``: only those the
column marks) are cut into windows of ``--window`` rows; from window ``--drift-from`` on, the positives of
``--group`` of ``--attribute`` take the features of that group's negatives in the same window (the model then
decides them as it decides negatives, so the group's TPR falls); the same rows without the drift make the calm
stream. Both streams go through :func:`fairops.registry.monitor` with the version's rule (the line) and with the
baseline rule (``fairness_line=0, against_baseline=True, level=0.975``: a window's 97.5% upper bound under the
lower bound the version records, at 95% for a version fairops tune registers now, so at least as quick to alert
as the 97.5% bound the rule used before), and the table shows each window's ratio with its 95% interval and which
rule alerted. ``--watch`` names the attributes watched (``fairops monitor --sensitive``): the level is split over
the attributes watched, so watching the drifting one alone narrows its interval.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

LINE, LEVEL, STACKED_LEVEL = 0.8, 0.95, 0.975
RATIOS = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3)


def _interval(events, bases, level: float, attributes: int) -> tuple[float, float]:
    """One attribute's exact interval, the level split over ``attributes`` attributes (the others: stand-ins)."""
    from fairops.metrics._intervals import exact_attribute_intervals

    others = [([1, 1], [2, 2])] * (attributes - 1)
    return exact_attribute_intervals([(list(events), list(bases)), *others], level=level)[0]


def alert_rates(ratio: float, positives, windows: int, rng, *, tpr: float = 0.5, attributes: int = 2,
                validation_positives=(612, 945), baseline_ratio: float = 0.9) -> tuple[float, float]:
    """``(line rule, baseline rule)``: the share of ``windows`` windows of a true TPR ratio ``ratio`` that alert."""
    bases = np.asarray(positives)
    rates = np.array([tpr * ratio, tpr])
    validation = np.asarray(validation_positives)
    line = baseline = 0
    for _ in range(windows):
        events = rng.binomial(bases, rates)
        line += _interval(events, bases, LEVEL, attributes)[1] < LINE
        seen = rng.binomial(validation, np.array([tpr * baseline_ratio, tpr]))
        lower = _interval(seen, validation, STACKED_LEVEL, attributes)[0]
        baseline += _interval(events, bases, STACKED_LEVEL, attributes)[1] < lower
    return line / windows, baseline / windows


def simulate(args) -> str:
    rng = np.random.default_rng(args.seed)
    lines = [f"windows of {args.positives[0]} / {args.positives[1]} positives per group, TPR {args.tpr:g} in the "
             f"higher group, {args.windows} windows per ratio, level split over {args.attributes} attributes; "
             f"baseline rule: validation {args.validation_positives[0]} / {args.validation_positives[1]} positives "
             f"at a true ratio of {args.baseline_ratio:g}", "",
             "| true TPR ratio | line 0.8, 95% interval: alert rate | baseline, 97.5% + 97.5%: alert rate |",
             "|---|---|---|"]
    for ratio in RATIOS:
        line, baseline = alert_rates(ratio, args.positives, args.windows, rng, tpr=args.tpr,
                                     attributes=args.attributes, validation_positives=args.validation_positives,
                                     baseline_ratio=args.baseline_ratio)
        lines.append(f"| {ratio:.1f} | {100 * line:.2f}% | {100 * baseline:.2f}% |")
    return "\n".join(lines)


def drifted(X, y, sensitive, *, attribute: str, group: str, window: int, drift_from: int, seed: int = 0):
    """``(X, y, sensitive)`` with the drift applied to the windows from ``drift_from`` (1-based) on: in each, the
    positives of ``group`` of ``attribute`` take the features of random negatives of that group."""
    rng = np.random.default_rng(seed)
    X = X.reset_index(drop=True).copy()
    labels, groups = np.asarray(y), np.asarray(sensitive[attribute]).astype(str)
    features = [c for c in X.columns if c not in sensitive.columns]
    for start in range(window * (drift_from - 1), len(X), window):
        rows = np.arange(start, min(start + window, len(X)))
        mine = rows[groups[rows] == str(group)]
        positives, negatives = mine[labels[mine] == 1], mine[labels[mine] == 0]
        if len(positives) and len(negatives):
            X.loc[positives, features] = X.loc[rng.choice(negatives, len(positives)), features].to_numpy()
    return X, labels, sensitive.reset_index(drop=True)


def _windows(X, y, sensitive, size: int):
    for start in range(0, len(X), size):
        rows = slice(start, start + size)
        yield X.iloc[rows], y[rows], sensitive.iloc[rows]


def drift(args) -> str:
    import io

    from fairops.datasets import load_table
    from fairops.registry import monitor

    columns = [c.strip() for c in args.sensitive.split(",")]
    loaded = load_table(args.data, target=args.target, sensitive=",".join(columns), holdout=args.holdout)
    rows = slice(None) if loaded.held_out is None else loaded.held_out
    X, y, sensitive = loaded.X.iloc[rows], np.asarray(loaded.y)[rows], loaded.sensitive.iloc[rows]
    streams = {"drift": drifted(X, y, sensitive, attribute=args.attribute, group=args.group, window=args.window,
                                drift_from=args.drift_from),
               "calm": (X.reset_index(drop=True), y, sensitive.reset_index(drop=True))}
    rules = {"line": {}, "baseline": {"fairness_line": 0, "against_baseline": True, "level": STACKED_LEVEL}}
    watched = None if args.watch is None else [c.strip() for c in args.watch.split(",")]
    results = {(stream, rule): monitor(args.model, _windows(*rows_of, args.window), tracking_uri=args.tracking_uri,
                                       out=io.StringIO(), params={"benchmark": f"{stream}, {rule} rule"},
                                       sensitive=watched, **options)
               for stream, rows_of in streams.items() for rule, options in rules.items()}
    lines = [f"{args.model}: windows of {args.window} rows; from window {args.drift_from} the positives of "
             f"{args.attribute} = {args.group} take the features of that group's negatives", "",
             f"| window | drift: {args.attribute} ratio [95%] | line alerts | baseline alerts "
             f"| calm: {args.attribute} ratio [95%] | line alerts | baseline alerts |", "|---|---|---|---|---|---|---|"]
    for number in range(1, len(results["drift", "line"].windows) + 1):
        cells = []
        for stream in streams:
            score = results[stream, "line"].windows[number - 1].attributes[args.attribute]
            cells += [f"{score.value:.3f} [{score.lower:.3f}, {score.upper:.3f}]",
                      *("ALERT" if number in results[stream, rule].alerts else "-" for rule in rules)]
        lines.append(f"| {number} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    sim = commands.add_parser("simulate", help="alert rates of both rules over simulated windows")
    sim.add_argument("--windows", type=int, default=4000)
    sim.add_argument("--positives", type=int, nargs=2, default=[72, 111],
                     help="positives per group in a window (default: ACS's test shares in 2,000 rows)")
    sim.add_argument("--validation-positives", type=int, nargs=2, default=[612, 945])
    sim.add_argument("--baseline-ratio", type=float, default=0.9)
    sim.add_argument("--tpr", type=float, default=0.5)
    sim.add_argument("--attributes", type=int, default=2)
    sim.add_argument("--seed", type=int, default=0)
    real = commands.add_parser("drift", help="a drift on real rows through fairops monitor")
    for name in ("--data", "--target", "--sensitive", "--attribute", "--group", "--model", "--tracking-uri"):
        real.add_argument(name, required=True)
    real.add_argument("--holdout")
    real.add_argument("--watch", help="the attributes to watch (fairops monitor --sensitive; default: the task's)")
    real.add_argument("--window", type=int, default=2000)
    real.add_argument("--drift-from", type=int, default=6)
    args = parser.parse_args(argv)
    print(simulate(args) if args.command == "simulate" else drift(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
