"""Kill a tuning command's process while one of its fits is running (a worker dying mid-fit).

The fit is held, not caught: the command runs under ``tests/held_call.py``, which stops it inside its
``after + 1``-th fit until the test kills it, so the kill lands in a fit however loaded the machine is.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import optuna
from optuna.trial import TrialState

HELD_CALL = Path(__file__).resolve().parents[1] / "held_call.py"
#: where each command fits one trial's model (looked up in the module's globals, so holding it holds the fit)
FITS = {"tune": "fairops.tuning._objective:fit_model", "outliers": "fairops.jobs._outliers.tuning:fit_detector"}
HELD_WAIT = 900  # seconds: an upper bound for a loaded machine to reach the held fit, never a race


def held_command(argv: list[str], hold_file: Path, after: int, target: str | None = None) -> list[str]:
    """The command line running ``fairops *argv`` with its ``after + 1``-th fit (or call of ``target``) held."""
    return [sys.executable, str(HELD_CALL), str(hold_file), target or FITS[argv[0]], str(after), *argv]


def kill_when_held(command: list[str], hold_file: Path, **popen) -> subprocess.Popen:
    """Start ``command`` (a :func:`held_command`), wait until it is held, SIGKILL its process group."""
    worker = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              start_new_session=True, **popen)
    try:
        wait_held(worker, hold_file)
        os.killpg(worker.pid, signal.SIGKILL)
    finally:
        worker.kill()
        _, err = worker.communicate()
    assert worker.returncode == -signal.SIGKILL, f"exit status {worker.returncode}:\n{err[-3000:]}"
    return worker


def wait_held(worker: subprocess.Popen, hold_file: Path) -> None:
    """Return once ``worker`` is held (``hold_file`` exists); fail if it exits first."""
    deadline = time.monotonic() + HELD_WAIT
    while not Path(hold_file).exists():
        if worker.poll() is not None:
            raise AssertionError(f"exited with {worker.returncode} before the held call:\n"
                                 f"{worker.stderr.read()[-3000:] if worker.stderr else ''}")
        if time.monotonic() > deadline:
            raise AssertionError(f"not held after {HELD_WAIT} s")
        time.sleep(0.05)


def kill_mid_fit(argv: list[str], storage: str, study_name: str, *, after: int, hold_file: Path):
    """Run ``fairops *argv``, SIGKILL it inside its ``after + 1``-th fit; the killed trial (running, its
    parameters drawn)."""
    kill_when_held(held_command(argv, hold_file, after), hold_file)
    study = optuna.load_study(study_name=study_name, storage=storage)
    (killed,) = [t for t in study.get_trials(deepcopy=False) if t.state == TrialState.RUNNING and t.params]
    return killed
