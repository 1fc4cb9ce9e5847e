"""A Fairband worker process for the multi-process tests: joins a study and runs the toy objective.

    python tests/fairband_worker.py KIND URL STUDY [--seed 7] [--s-max 4] [--n-trials N | --iterations I]
        [--n-jobs 1] [--sleep S] [--hang BRACKET,RUNG,POSITION] [--configuration JSON]

KIND is ``sqlite``/``postgres`` (RDB, no heartbeat), ``rdb-hb`` (RDB, heartbeat 1 s, grace 2 s) or
``journal``. ``--hang`` makes the fit of that slot sleep for an hour (a worker to kill mid-fit). A
worker refused for its configuration exits with status 3 and the message on stderr.
"""

import argparse
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def spawn(kind, url, study, *options, **popen):
    """Start this script as a process (own process group, so a test can kill it and its threads)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, __file__, kind, url, study, *map(str, options)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            **popen)


def _storage(kind, url):
    import optuna

    if kind == "journal":
        from optuna.storages import JournalStorage
        from optuna.storages.journal import JournalFileBackend

        return JournalStorage(JournalFileBackend(url))
    if kind == "rdb-hb":
        return optuna.storages.RDBStorage(url, heartbeat_interval=1, grace_period=2)
    return url


def _toy_module():
    """``fairops/tuning/_toy.py`` loaded on its own. Imported by its name it would import the ``fairops.tuning``
    package first (scikit-learn, pandas, SciPy: about 2 s of CPU, 7 s on a busy 2-core machine, per worker
    started), which the toy objective never uses; it needs ``fairops.fairband`` alone."""
    import fairops

    path = Path(fairops.__file__).parent / "tuning" / "_toy.py"
    spec = importlib.util.spec_from_file_location("fairband_worker_toy", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["sqlite", "postgres", "rdb-hb", "journal"])
    parser.add_argument("url")
    parser.add_argument("study")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--s-max", type=int, default=4)
    parser.add_argument("--n-trials", type=int)
    parser.add_argument("--iterations", type=int)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--fail-below", type=float, default=0.04)
    parser.add_argument("--nan-above", type=float, default=0.96)
    parser.add_argument("--hang")
    parser.add_argument("--configuration")
    args = parser.parse_args(argv)
    # Ctrl-C raises KeyboardInterrupt even if the parent ignored SIGINT when it started this process.
    signal.signal(signal.SIGINT, signal.default_int_handler)

    import optuna

    from fairops.fairband import FairbandConfigurationError, FairbandSampler

    toy_module = _toy_module()
    ToyFitError, make_toy_objective = toy_module.ToyFitError, toy_module.make_toy_objective

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    configuration = json.loads(args.configuration) if args.configuration else None
    sampler = FairbandSampler(seed=args.seed, s_max=args.s_max, iterations=args.iterations,
                              configuration=configuration)
    study = optuna.load_study(study_name=args.study, storage=_storage(args.kind, args.url), sampler=sampler)
    toy = make_toy_objective(fail_below=args.fail_below, nan_above=args.nan_above, sleep=args.sleep)
    hang = tuple(int(v) for v in args.hang.split(",")) if args.hang else None

    def objective(trial):
        slot = sampler.slot_of_trial(trial)
        if hang is not None and slot is not None and (slot.bracket, slot.rung, slot.position) == hang:
            trial.suggest_float("x", 0.0, 1.0)  # the fit has started when its parameters are there
            time.sleep(3600)
        return toy(trial)

    try:
        study.optimize(objective, n_trials=args.n_trials, n_jobs=args.n_jobs, catch=(ToyFitError,))
    except FairbandConfigurationError as error:
        print(error, file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
