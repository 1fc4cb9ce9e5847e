"""Fairband sampler+pruner overhead per trial vs Optuna's HyperbandPruner + RandomSampler (same run).

Both sides run a no-op objective that suggests two floats. Optuna's side is a one-objective study that
reports once and asks ``should_prune`` (HyperbandPruner cannot run in two-objective studies); Fairband's
side is the two-objective (accuracy, fairness) study, every attribute written by one public storage call.
Also measures parallel efficiency at n_jobs=4 with a sleeping objective (sleep proportional to the
budget). With ``--repeats``, the sides run back to back in each round and the table shows medians (ratios:
the median of the rounds' ratios, the lowest and highest in brackets), so a change in the machine's load
between rounds does not decide the ratio.

    python benchmarks/fairband_overhead.py            # 206 and 2060 trials; memory, SQLite, Journal
    python benchmarks/fairband_overhead.py --postgres postgresql+psycopg://...   # PostgreSQL too
    python benchmarks/fairband_overhead.py --storages sqlite,postgres --postgres URL --trials 206 --repeats 3
    python benchmarks/fairband_overhead.py --storages postgres,grpc --postgres URL --grpc grpc://host:port --trials 206
    python benchmarks/fairband_overhead.py --storages grpc --grpc grpc://host:port --trials 206 --calls
    python benchmarks/fairband_overhead.py --quick    # 206 trials in memory (smoke test)

``--calls`` also counts, on the gRPC proxy, the storage calls each side makes per trial (every call of
Optuna's ``GrpcStorageProxy`` is one round trip to the proxy, ``get_all_trials`` included).
"""

import argparse
import collections
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import optuna
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend

from fairops.fairband import FairbandPruner, FairbandSampler, budget

CALLS = collections.Counter()  # storage calls by method, while counting (--calls)
_counting = [False]


def _counted(storage):
    """``storage`` with each of its proxy calls counted in :data:`CALLS` (one call, one round trip)."""
    from optuna.storages import GrpcStorageProxy

    def wrap(name, method):
        def call(*args, **kwargs):
            CALLS[name] += 1
            return method(*args, **kwargs)
        return call

    for name, member in vars(GrpcStorageProxy).items():
        if callable(member) and not name.startswith("_") and name not in ("wait_server_ready", "close"):
            setattr(storage, name, wrap(name, getattr(storage, name)))
    return storage


def _storage(kind, folder, url=None):
    """A fresh storage of ``kind``; ``url``: the PostgreSQL URL, or the grpc:// URL of a `fairops grpc-proxy`."""
    if kind == "memory":
        return None
    if kind == "sqlite":
        return f"sqlite:///{folder / (uuid.uuid4().hex + '.db')}"
    if kind == "postgres":
        return url
    if kind == "grpc":
        from fairops.jobs._running import open_storage

        storage = open_storage(url)  # what `fairops tune --storage grpc://...` uses, heartbeats included
        return _counted(storage) if _counting[0] else storage
    return JournalStorage(JournalFileBackend(str(folder / (uuid.uuid4().hex + ".journal"))))


def _drop(study, kind, url):
    if kind in ("postgres", "grpc"):
        optuna.delete_study(study_name=study.study_name, storage=study._storage)


def fairband_ms(kind, n_trials, folder, n_jobs=1, sleep=0.0, url=None):
    study = optuna.create_study(directions=["maximize", "maximize"], storage=_storage(kind, folder, url),
                                sampler=FairbandSampler(seed=0), pruner=FairbandPruner())

    def objective(trial):
        x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
        if sleep:
            time.sleep(sleep * budget(trial))
        return x, y

    start = time.perf_counter()
    study.optimize(objective, n_trials=n_trials, n_jobs=n_jobs)
    elapsed = time.perf_counter() - start
    _drop(study, kind, url)
    return 1000 * elapsed / n_trials


def optuna_hyperband_ms(kind, n_trials, folder, url=None):
    study = optuna.create_study(storage=_storage(kind, folder, url),
                                sampler=optuna.samplers.RandomSampler(seed=0),
                                pruner=optuna.pruners.HyperbandPruner(min_resource=1, max_resource=81,
                                                                      reduction_factor=3))

    def objective(trial):
        x, y = trial.suggest_float("x", 0, 1), trial.suggest_float("y", 0, 1)
        trial.report(x, 1)
        if trial.should_prune():
            raise optuna.TrialPruned()
        return x + y

    start = time.perf_counter()
    study.optimize(objective, n_trials=n_trials)
    elapsed = time.perf_counter() - start
    _drop(study, kind, url)
    return 1000 * elapsed / n_trials


def _cells(rounds):
    """Median ms/trial of each side, and Fairband's median ratio to Optuna with its spread."""
    ratios = sorted(fairband / optuna_side for optuna_side, fairband in rounds)
    spread = f" ({ratios[0]:.2f}-{ratios[-1]:.2f})" if len(ratios) > 1 else ""
    return [f"{statistics.median(r[0] for r in rounds):.2f}", f"{statistics.median(r[1] for r in rounds):.2f}",
            f"{statistics.median(ratios):.2f}{spread}"]


def call_table(folder, url, n_trials):
    """Storage calls per trial through the proxy, by method, for each side (one untimed run each)."""
    lines = [f"\nstorage calls per trial through the gRPC proxy ({n_trials} trials):",
             "| side | calls per trial | by method |", "|---|---|---|"]
    _counting[0] = True
    try:
        for side, measure in (("Optuna Hyperband+Random", lambda: optuna_hyperband_ms("grpc", n_trials, folder, url)),
                              ("Fairband", lambda: fairband_ms("grpc", n_trials, folder, url=url))):
            CALLS.clear()
            measure()
            CALLS.pop("delete_study", None), CALLS.pop("create_new_study", None)  # once per study, not per trial
            methods = ", ".join(f"{name} {count / n_trials:.2f}" for name, count in CALLS.most_common())
            lines.append(f"| {side} | {sum(CALLS.values()) / n_trials:.2f} | {methods} |")
    finally:
        _counting[0] = False
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--postgres", help="also measure on this PostgreSQL URL (one study each, deleted after)")
    parser.add_argument("--grpc", help="also measure through this gRPC storage proxy (grpc://host:port)")
    parser.add_argument("--storages", help="comma-separated subset of memory,sqlite,journal,postgres,grpc")
    parser.add_argument("--trials", type=int, nargs="+", help="study sizes (default: 206 2060)")
    parser.add_argument("--repeats", type=int, help="best of this many runs per figure (default: 3 in memory, 1 else)")
    parser.add_argument("--calls", action="store_true", help="also count storage calls per trial on the gRPC proxy")
    args = parser.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    sizes = args.trials or ([206] if args.quick else [206, 2060])
    kinds = ["memory"] if args.quick else (["memory", "sqlite", "journal"] + (["postgres"] if args.postgres else [])
                                           + (["grpc"] if args.grpc else []))
    if args.storages:
        kinds = args.storages.split(",")
        if "postgres" in kinds and not args.postgres:
            parser.error("--storages postgres needs --postgres URL")
        if "grpc" in kinds and not args.grpc:
            parser.error("--storages grpc needs --grpc URL")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        fairband_ms("memory", 30, folder)  # warm-up: imports and first-call costs on both sides
        optuna_hyperband_ms("memory", 30, folder)
        print("| storage | trials | Optuna Hyperband+Random ms/trial | Fairband ms/trial | ratio |")
        print("|---|---|---|---|---|")
        for kind in kinds:
            for n in sizes:
                url = args.grpc if kind == "grpc" else args.postgres
                if kind in ("postgres", "grpc") and n > 206 and not args.trials:
                    continue  # a networked store at 2060 trials takes minutes per side; 206 shows the ratio
                repeats = args.repeats or (3 if kind == "memory" else 1)
                # the sides back to back in each round, so a change of load hits both
                rounds = [(optuna_hyperband_ms(kind, n, folder, url), fairband_ms(kind, n, folder, url=url))
                          for _ in range(repeats)]
                print(f"| {kind} | {n} | " + " | ".join(_cells(rounds)) + " |", flush=True)
        if args.calls and "grpc" in kinds:
            print("\n".join(call_table(folder, args.grpc, sizes[0])))
        sleep = 0.02 if args.quick else 0.2  # seconds at full budget
        serial = fairband_ms("memory", 206, folder, n_jobs=1, sleep=sleep)
        parallel = fairband_ms("memory", 206, folder, n_jobs=4, sleep=sleep)
        print(f"\nparallel efficiency, one iteration, sleep {sleep} s x budget: serial {serial * 206 / 1000:.2f} s, "
              f"n_jobs=4 {parallel * 206 / 1000:.2f} s, speed-up {serial / parallel:.2f}x, "
              f"efficiency {serial / parallel / 4:.0%}")


if __name__ == "__main__":
    main()
