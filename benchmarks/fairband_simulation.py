"""Wall time and worker utilisation of Fairband at 8 to 512 workers: a discrete-event simulation fed by
fit times measured on Adult (benchmarks/data/fairband_fit_times.csv, from fairband_fit_times.py).

Three ways to spend one iteration's configurations (143, drawn over the six `fairops tune` families):

- ``sync``: FairbandSampler's exact schedule, 206 fits. Workers take slots in order (rung 0 of every
  bracket first, then rung 1, ...); a worker that takes a slot of rung i waits, idle, until rung i-1 of
  its bracket has finished, exactly as the sampler's claims do.
- ``async``: FairbandSampler(mode="async") + FairbandPruner: one trial per configuration, brackets in
  blocks of 81/34/15/8/5, a trial goes on to the next rung iff it is in the top floor(m/eta) of the m
  trials of its bracket that reached the rung so far; a worker never waits.
- ``optuna-hb``: Optuna's HyperbandPruner (min_resource 1, max_resource 81, reduction_factor 3: the same
  five brackets and budgets), brackets drawn by a hash of the trial number in the same proportions, and
  its successive-halving rule: promoted iff in the top max(1, floor(m/eta)) (the best so far while m < eta).

Both asynchronous modes refit at each rung's budget (the budget is a share of the training rows, which
no model here can continue training on), so reaching rung r costs the fits of rungs 0..r. A
configuration is one measured configuration of its family (its fit times at the five budgets), drawn
at random; its score is a uniform draw (promotions depend only on ranks). ``--cores C`` shares C cores
among the running fits (processor sharing), as 8 worker processes on this 2-core machine do; without
it every worker has its own core.

Projections give every worker its own core and no per-trial overhead (storage and sampler calls), so
they are the schedules' own limits; ``--check`` replays a measured run with its cores and its overhead.

    python benchmarks/fairband_simulation.py --seeds 3 --picture docs/fairband_utilisation.png
    python benchmarks/fairband_simulation.py --check benchmarks/data/fairband_utilisation_8_workers.json --cores 1
    python benchmarks/fairband_simulation.py --quick
"""

from __future__ import annotations

import argparse
import csv
import heapq
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from fairops.fairband import _schedule as schedule  # noqa: E402

TABLE = HERE / "data" / "fairband_fit_times.csv"
ETA, S_MAX = schedule.ETA, schedule.S_MAX
POLICIES = ("sync", "async", "optuna-hb")
LONG_RUN = 4  # the long runs: one iteration per this many workers (about 36 configurations per worker)


class FitTimes:
    """Measured configurations per family: ``times[family]`` is an array (configurations x 5 budgets)."""

    def __init__(self, path: Path = TABLE, max_train_rows: int | None = None, families=None):
        with open(path, newline="") as handle:
            rows = list(csv.DictReader(handle))
        caps = sorted({int(r["max_train_rows"]) for r in rows})
        self.max_train_rows = caps[-1] if max_train_rows is None else max_train_rows
        if self.max_train_rows not in caps:
            raise ValueError(f"no fit times for max_train_rows={max_train_rows} in {path} (have {caps})")
        rows = [r for r in rows if int(r["max_train_rows"]) == self.max_train_rows]
        self.budgets = sorted({float(r["budget"]) for r in rows})
        by = defaultdict(dict)
        for r in rows:
            by[r["family"]][(int(r["sample"]), self.budgets.index(float(r["budget"])))] = float(r["seconds"])
        chosen = families or list(by)
        self.times = {}
        for family in chosen:
            samples = sorted({k for k, _ in by[family]})
            self.times[family] = np.array([[by[family][(k, b)] for b in range(len(self.budgets))] for k in samples])
        self.families = list(self.times)

    def seconds(self, configuration, budget: float) -> float:
        family, sample = configuration
        index = int(np.argmin([abs(budget - b) for b in self.budgets]))
        return float(self.times[family][sample, index])


class Machine:
    """Workers sharing ``cores`` (None: one core each) by processor sharing; runs fits, tracks busy time.

    A worker can also spend ``overhead`` seconds before each trial (its storage and sampler calls): a
    plain delay, which neither counts as busy nor takes a share of the cores.
    """

    def __init__(self, workers: int, cores: int | None, overhead: float = 0.0):
        self.workers, self.cores, self.overhead = workers, cores, overhead
        self.now = 0.0
        self.virtual = 0.0  # work done by any one running fit since the start (all run at the same rate)
        self.heap = []  # (virtual finish, sequence, worker, started, callback)
        self.delays = []  # (real end, sequence, worker, callback)
        self.sequence = 0
        self.busy = np.zeros(workers)
        self.fits = 0

    def start(self, worker: int, seconds: float, done) -> None:
        self.sequence += 1
        heapq.heappush(self.heap, (self.virtual + seconds, self.sequence, worker, self.now, done))

    def before_trial(self, worker: int, then) -> None:
        """Run ``then(worker)`` after the per-trial overhead."""
        if self.overhead <= 0:
            then(worker)
            return
        self.sequence += 1
        heapq.heappush(self.delays, (self.now + self.overhead, self.sequence, worker, then))

    def _rate(self) -> float:
        running = len(self.heap)
        return 1.0 if self.cores is None or running <= self.cores else self.cores / running

    def run(self) -> None:
        while self.heap or self.delays:
            rate = self._rate()
            fit_end = self.now + (self.heap[0][0] - self.virtual) / rate if self.heap else float("inf")
            if self.delays and self.delays[0][0] < fit_end:
                end, _, worker, then = heapq.heappop(self.delays)
                self.virtual += (end - self.now) * rate
                self.now = end
                then(worker)
                continue
            finish, _, worker, started, done = heapq.heappop(self.heap)
            self.now, self.virtual = fit_end, finish
            self.busy[worker] += self.now - started
            self.fits += 1
            done(worker)


def _configurations(n, fit_times, rng):
    """``n`` configurations: a family drawn uniformly, then one of its measured configurations."""
    chosen = []
    for _ in range(n):
        family = fit_times.families[rng.integers(len(fit_times.families))]
        chosen.append((family, int(rng.integers(len(fit_times.times[family])))))
    return chosen


def simulate_sync(workers, fit_times, iterations=1, cores=None, seed=0, overhead=0.0):
    rng = np.random.default_rng(seed)
    per_iteration = schedule.iteration_size(ETA, S_MAX)
    slots = [schedule.slot_of(k, ETA, S_MAX) for k in range(iterations * per_iteration)]
    n_configurations = schedule.configurations_per_iteration(ETA, S_MAX)
    configurations = _configurations(iterations * n_configurations, fit_times, rng)
    score = rng.random(len(configurations))
    machine = Machine(workers, cores, overhead)
    finished = defaultdict(list)  # (iteration, bracket, rung) -> configurations fitted there
    waiting = defaultdict(list)  # (iteration, bracket, rung) -> (worker, slot) waiting for that rung
    next_slot = [0]

    def rung_done(key):
        return len(finished[key]) == schedule.rung_sizes(key[1], ETA, S_MAX)[key[2]]

    def promoted(slot):
        previous = finished[(slot.iteration, slot.bracket, slot.rung - 1)]
        ranked = sorted(previous, key=lambda c: -score[c])
        return ranked[slot.position]

    def fit(worker, slot, configuration):
        def done(worker):
            key = (slot.iteration, slot.bracket, slot.rung)
            finished[key].append(configuration)
            if rung_done(key):
                for waiter, later in waiting.pop(key, []):
                    fit(waiter, later, promoted(later))
            machine.before_trial(worker, take)
        machine.start(worker, fit_times.seconds(configurations[configuration], slot.budget), done)

    def take(worker):
        if next_slot[0] >= len(slots):
            return
        slot = slots[next_slot[0]]
        next_slot[0] += 1
        if slot.rung == 0:
            fit(worker, slot, slot.configuration)
        elif rung_done((slot.iteration, slot.bracket, slot.rung - 1)):
            fit(worker, slot, promoted(slot))
        else:
            waiting[(slot.iteration, slot.bracket, slot.rung - 1)].append((worker, slot))

    for worker in range(workers):
        machine.before_trial(worker, take)
    machine.run()
    assert machine.fits == len(slots) and not waiting
    return machine


def simulate_asynchronous(workers, fit_times, iterations=1, cores=None, seed=0, rule="async", overhead=0.0):
    """``rule``: "async" (FairbandPruner, brackets in blocks) or "optuna-hb" (HyperbandPruner)."""
    rng = np.random.default_rng(seed)
    n_trials = iterations * schedule.configurations_per_iteration(ETA, S_MAX)
    configurations = _configurations(n_trials, fit_times, rng)
    score = rng.random(n_trials)
    if rule == "async":
        brackets = [schedule.async_slot_of(n, ETA, S_MAX).bracket for n in range(n_trials)]
    else:
        weights = np.array([schedule.bracket_start(s, ETA, S_MAX) for s in range(S_MAX, -1, -1)], float)
        brackets = list(S_MAX - rng.choice(S_MAX + 1, size=n_trials, p=weights / weights.sum()))
    machine = Machine(workers, cores, overhead)
    reached = defaultdict(list)  # (bracket, rung) -> scores reported there
    next_trial = [0]

    def goes_on(number, bracket, rung):
        values = reached[(bracket, rung)]
        values.append(score[number])
        ranked = sorted(values, reverse=True)
        if rule == "async":
            keep = len(values) // ETA
            return keep > 0 and score[number] >= ranked[keep - 1]
        keep = max(1, len(values) // ETA)
        return score[number] >= ranked[keep - 1]

    def fit(worker, number, rung):
        bracket = brackets[number]
        budget = schedule.rung_budget(bracket, rung, ETA, S_MAX)

        def done(worker):
            if rung < bracket and goes_on(number, bracket, rung):
                fit(worker, number, rung + 1)
            else:
                machine.before_trial(worker, take)
        machine.start(worker, fit_times.seconds(configurations[number], budget), done)

    def take(worker):
        if next_trial[0] >= n_trials:
            return
        number = next_trial[0]
        next_trial[0] += 1
        fit(worker, number, 0)

    for worker in range(workers):
        machine.before_trial(worker, take)
    machine.run()
    return machine


def simulate(policy, workers, fit_times, iterations=1, cores=None, seed=0, overhead=0.0):
    if policy == "sync":
        machine = simulate_sync(workers, fit_times, iterations, cores, seed, overhead)
    elif policy in ("async", "optuna-hb"):
        machine = simulate_asynchronous(workers, fit_times, iterations, cores, seed, rule=policy, overhead=overhead)
    else:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    return {"policy": policy, "workers": workers, "iterations": iterations, "wall_seconds": machine.now,
            "fit_seconds": float(machine.busy.sum()), "fits": machine.fits,
            "utilisation": float(machine.busy.sum() / (workers * machine.now))}


def averaged(policy, workers, fit_times, iterations=1, cores=None, seeds=range(5), overhead=0.0):
    runs = [simulate(policy, workers, fit_times, iterations, cores, seed, overhead) for seed in seeds]
    keys = ("wall_seconds", "fit_seconds", "fits", "utilisation")
    return {**runs[0], **{k: float(np.mean([r[k] for r in runs])) for k in keys}}


def table(results) -> str:
    lines = ["| workers | iterations | " + " | ".join(f"{p} wall s | {p} util." for p in POLICIES) + " |",
             "|---:|---:|" + "---:|---:|" * len(POLICIES)]
    by = defaultdict(dict)
    for r in results:
        by[(r["workers"], r["iterations"])][r["policy"]] = r
    for (workers, iterations), row in by.items():
        cells = [f"{row[p]['wall_seconds']:.0f} | {row[p]['utilisation']:.0%}" for p in POLICIES]
        lines.append(f"| {workers} | {iterations} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def median_gap(fit_log) -> float:
    """Median time a worker spent between two of its fits in a measured run (its per-trial overhead)."""
    gaps = []
    for fits in fit_log:
        fits = sorted(fits, key=lambda fit: fit[1])
        gaps += [later[1] - earlier[2] for earlier, later in zip(fits, fits[1:])]
    return float(np.median(gaps))


def check(measured_path: Path, fit_times_path: Path = TABLE, cores: int | None = None) -> str:
    """The simulation of a measured fairband_utilisation run (same workers, rows, cores) beside it: the fits
    alone, then with each trial's overhead as measured in the run (median gap between a worker's fits)."""
    measured = json.loads(measured_path.read_text())
    notes = []
    lines = ["| mode | workers | measured wall s | simulated, fits only | simulated, + overhead | measured util. "
             "| simulated util., fits only | simulated util., + overhead | overhead s/trial |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for run in measured:
        fit_times = FitTimes(fit_times_path, run["max_train_rows"], run["families"])
        overhead = median_gap(run["fit_log"])
        alone = averaged(run["mode"], run["workers"], fit_times, 1, None)  # mean fit time without contention
        spans = [(start, end) for fits in run["fit_log"] for _, start, end in fits]
        concurrency = sum(end - start for start, end in spans) / run["wall_seconds"]
        stretch = (run["fit_seconds"] / run["fits"]) / (alone["fit_seconds"] / alone["fits"])
        notes.append(f"{run['mode']}: {concurrency:.1f} fits running on average, each {stretch:.1f}x its time alone: "
                     f"the fits had about {concurrency / stretch:.1f} cores")
        bare = averaged(run["mode"], run["workers"], fit_times, 1, cores)
        loaded = averaged(run["mode"], run["workers"], fit_times, 1, cores, overhead=overhead)
        lines.append(f"| {run['mode']} | {run['workers']} | {run['wall_seconds']:.1f} | {bare['wall_seconds']:.1f} "
                     f"| {loaded['wall_seconds']:.1f} | {run['utilisation']:.0%} | {bare['utilisation']:.0%} "
                     f"| {loaded['utilisation']:.0%} | {overhead:.2f} |")
    return "\n".join(lines + [""] + notes)


def picture(results, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for policy, marker, colour in zip(POLICIES, "osD", ("tab:blue", "tab:orange", "tab:green")):
        for iterations, line in ((1, "-"), ("scaled", "--")):
            chosen = [r for r in results if r["policy"] == policy and
                      ((iterations == 1 and r["iterations"] == 1) or (iterations == "scaled" and r["scaled"]))]
            if not chosen:
                continue
            x = [r["workers"] for r in chosen]
            label = f"{policy}, {'1 iteration' if iterations == 1 else f'workers/{LONG_RUN} iterations'}"
            left.plot(x, [r["utilisation"] for r in chosen], line, marker=marker, color=colour, label=label)
            right.plot(x, [r["wall_seconds"] / r["iterations"] for r in chosen], line, marker=marker, color=colour,
                       label=label)
    for axis in (left, right):
        axis.set_xscale("log", base=2)
        axis.set_xlabel("workers (one core each)")
        axis.grid(True, alpha=0.3)
    left.set_ylabel("utilisation (busy / (workers x wall))")
    left.set_ylim(0, 1.05)
    right.set_yscale("log")
    right.set_ylabel("wall seconds per iteration")
    left.legend(fontsize=7)
    fig.suptitle("Fairband on Adult (fit times measured, schedule simulated)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="8,32,128,512")
    parser.add_argument("--fit-times", type=Path, default=TABLE)
    parser.add_argument("--max-train-rows", type=int, help="which measured table (default: the largest, full Adult)")
    parser.add_argument("--cores", type=int, help="cores shared by all workers (default: one per worker)")
    parser.add_argument("--seeds", type=int, default=5, help="simulations averaged per cell")
    parser.add_argument("--check", type=Path, help="a fairband_utilisation --json file to compare against")
    parser.add_argument("--picture", type=Path, help="write the picture (PNG) here")
    parser.add_argument("--quick", action="store_true", help="8 and 32 workers, one seed")
    args = parser.parse_args(argv)
    if args.check:
        print(check(args.check, args.fit_times, args.cores))
        return 0
    fit_times = FitTimes(args.fit_times, args.max_train_rows)
    workers = [8, 32] if args.quick else [int(w) for w in args.workers.split(",")]
    seeds = range(1 if args.quick else args.seeds)
    results = []
    for scaled in (False, True):
        for count in workers:
            iterations = max(1, count // LONG_RUN) if scaled else 1
            if scaled and iterations == 1:
                continue
            for policy in POLICIES:
                results.append({**averaged(policy, count, fit_times, iterations, args.cores, seeds), "scaled": scaled})
    results.sort(key=lambda r: (r["iterations"] > 1, r["workers"]))
    print(f"fit times: Adult, {fit_times.max_train_rows} training rows, families {','.join(fit_times.families)}; "
          f"cores: {args.cores or 'one per worker'}; mean of {len(seeds)} simulations")
    print(table(results))
    work = {p: next(r for r in results if r["policy"] == p and r["iterations"] == 1) for p in POLICIES}
    print("per iteration: " + ", ".join(f"{p} {w['fits']:.0f} fits, {w['fit_seconds']:.0f} fit-seconds"
                                        for p, w in work.items()))
    if args.picture:
        picture(results, args.picture)
        print(f"picture: {args.picture}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
