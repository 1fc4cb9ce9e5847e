"""How busy Fairband's workers are: N worker processes on one study, synchronous schedule vs the
asynchronous pruner mode, each fit timed by the worker that ran it.

A worker is *busy* while its objective runs (fit + validation scoring); the rest of its time it waits
(at a rung's barrier in the synchronous schedule) or talks to the storage. Utilisation = busy time
summed over workers / (workers x wall time), wall time from the first fit's start to the last fit's
end. Workers are processes of one thread each (OMP_NUM_THREADS=1) on a shared Journal file storage by
default (``--storage`` takes any Optuna storage URL, e.g. PostgreSQL or ``grpc://host:port``).

Synchronous: one iteration of the paper's schedule, 206 fits. Asynchronous: FairbandSampler(mode="async")
+ FairbandPruner, 143 configurations (one iteration's), each trained up its bracket's rungs until pruned.

    fairops grpc-proxy --storage postgresql+psycopg://fairops:***@127.0.0.1/fairops --host 127.0.0.1 --port 13517 &
    python benchmarks/fairband_utilisation.py --workers 8 --max-train-rows 3000 --storage grpc://127.0.0.1:13517 \
        --json benchmarks/data/fairband_utilisation_8_workers.json
    python benchmarks/fairband_utilisation.py --quick     # smoke test: 2 workers, small data, s_max 2 (22 fits)
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from fairops.fairband import FairbandSettings

S_MAX = FairbandSettings().s_max  # the paper's schedule: 206 fits, 143 configurations per iteration


def n_configurations(s_max: int) -> int:
    """One iteration's configurations (the asynchronous run's trials) under the schedule of ``s_max``."""
    return FairbandSettings(s_max=s_max, mode="async").n_slots(1)


def _storage(url):
    if url.endswith((".log", ".journal")):
        from optuna.storages import JournalStorage
        from optuna.storages.journal import JournalFileBackend

        return JournalStorage(JournalFileBackend(url))
    from fairops.jobs._running import open_storage

    return open_storage(url)


def _worker(mode, url, study_name, families, max_train_rows, seed, s_max, log_path, start_event):
    """One worker process: joins the study, fits until the run is done, logs (trial, start, end) per fit."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    import warnings

    import optuna
    from sklearn.exceptions import ConvergenceWarning

    from fairops.datasets import load_dataset
    from fairops.fairband import FairbandPruner, FairbandSampler, RungProgress
    from fairops.jobs._running import refuse_trials_beyond
    from fairops.tuning import FairnessObjective
    from fairops.tuning._search_space import make_model

    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    warnings.filterwarnings("ignore", message=".*batch_size.*clipped.*")
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    data = load_dataset("adult")
    fair = FairnessObjective(data, families=families, seed=seed, max_train_rows=max_train_rows)
    fits = []

    def timed(call):
        def run(trial):
            started = time.time()
            try:
                values = call(trial)
            except optuna.TrialPruned:
                raise  # refused by the schedule before any fit: not work
            except Exception:
                fits.append((trial.number, started, time.time()))
                raise
            fits.append((trial.number, started, time.time()))
            return values
        return run

    def asynchronous(trial):
        make_model(trial, families=families, seed=seed, X_example=data.X,
                   sensitive_columns=data.task.sensitive)  # draws the configuration
        configuration = SimpleNamespace(params=dict(trial.params), number=trial.number)
        progress = RungProgress(trial)
        for fraction in progress:
            result = fair.evaluate(fair.refit(configuration, fraction), "validation")
            progress.report(result["accuracy"], result["fairness"])
        return progress.values

    storage = _storage(url)
    configurations = n_configurations(s_max)
    if mode == "sync":
        sampler, pruner = FairbandSampler(seed=seed, iterations=1, s_max=s_max), None
        objective, n_trials = timed(fair), None  # the sampler stops the loop after the iteration
    else:
        sampler, pruner = FairbandSampler(mode="async", seed=seed, s_max=s_max), FairbandPruner()
        objective = refuse_trials_beyond(timed(asynchronous), configurations)
        n_trials = None
    study = optuna.load_study(study_name=study_name, storage=storage, sampler=sampler, pruner=pruner)
    start_event.wait()
    if mode == "sync":
        study.optimize(objective, n_trials=n_trials, catch=(ValueError,))
    else:
        def enough(study, trial):
            if len(study.get_trials(deepcopy=False)) >= configurations:
                study.stop()
        study.optimize(objective, catch=(ValueError,), callbacks=[enough])
    Path(log_path).write_text(json.dumps({"pid": os.getpid(), "fits": fits}))


def run(mode, workers, families, max_train_rows, seed=0, storage=None, folder=None, s_max=S_MAX):
    """Run ``workers`` processes on a fresh study; per-worker busy seconds, wall time and utilisation."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    folder = Path(folder or tempfile.mkdtemp(prefix="fairband-util-"))
    url = storage or str(folder / f"{mode}.journal")
    name = f"util-{mode}-{uuid.uuid4().hex[:8]}"
    optuna.create_study(study_name=name, storage=_storage(url), directions=["maximize", "maximize"])
    context = multiprocessing.get_context("spawn")
    start_event = context.Event()
    logs = [folder / f"{name}-{k}.json" for k in range(workers)]
    processes = [context.Process(target=_worker, args=(mode, url, name, families, max_train_rows, seed, s_max,
                                                       str(log), start_event)) for log in logs]
    for process in processes:
        process.start()
    time.sleep(2.0)
    start_event.set()
    for process in processes:
        process.join()
        if process.exitcode != 0:
            raise RuntimeError(f"a {mode} worker exited with {process.exitcode}")
    per_worker = [json.loads(log.read_text())["fits"] for log in logs]
    spans = [(s, e) for fits in per_worker for _, s, e in fits]
    begin, end = min(s for s, _ in spans), max(e for _, e in spans)
    wall = end - begin
    busy = [sum(e - s for _, s, e in fits) for fits in per_worker]
    study = optuna.load_study(study_name=name, storage=_storage(url))
    trials = study.get_trials(deepcopy=False)
    # rung fits: one per synchronous trial, rungs reached + 1 per asynchronous one
    rung_fits = len(spans) if mode == "sync" else sum(t.user_attrs.get("rung", 0) + 1 for t in trials
                                                      if t.number < n_configurations(s_max))
    if storage is not None:
        optuna.delete_study(study_name=name, storage=_storage(url))
    return {"mode": mode, "workers": workers, "wall_seconds": wall, "busy_seconds": busy,
            "utilisation": sum(busy) / (workers * wall), "fits": rung_fits,
            "trials": len(trials), "fit_seconds": sum(busy), "max_train_rows": max_train_rows,
            "families": families, "fit_log": per_worker}


def report(results) -> str:
    lines = ["| mode | workers | fits | wall s | busy s (sum) | utilisation "
             "| per-worker busy share (min / median / max) |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for r in results:
        shares = np.array(r["busy_seconds"]) / r["wall_seconds"]
        lines.append(f"| {r['mode']} | {r['workers']} | {r['fits']} | {r['wall_seconds']:.1f} | {r['fit_seconds']:.1f} "
                     f"| {r['utilisation']:.0%} | {shares.min():.0%} / {np.median(shares):.0%} / {shares.max():.0%} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--max-train-rows", type=int, default=3000)
    parser.add_argument("--families", help="comma-separated (default: the five paper families + scaff_forest)")
    parser.add_argument("--modes", default="sync,async")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--storage", help="Optuna storage URL (default: a Journal file in a temporary folder)")
    parser.add_argument("--json", type=Path, help="write the results (with every fit's start and end) here")
    parser.add_argument("--quick", action="store_true",
                        help="2 workers, 300 rows, decision trees only, the s_max 2 schedule (22 fits)")
    args = parser.parse_args(argv)
    from fairops.tuning._search_space import families_for

    s_max = S_MAX
    if args.quick:
        args.workers, args.max_train_rows, args.families, s_max = 2, 300, "decision_tree", 2
    families = args.families.split(",") if args.families else families_for()
    results = [run(mode, args.workers, families, args.max_train_rows, args.seed, args.storage, s_max=s_max)
               for mode in args.modes.split(",")]
    print(f"{args.workers} worker processes on {os.cpu_count()} cores, Adult capped at {args.max_train_rows} "
          f"training rows, families {','.join(families)}, schedule s_max {s_max}")
    print(report(results))
    if args.json:
        args.json.write_text(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
