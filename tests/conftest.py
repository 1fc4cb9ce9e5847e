"""Shared test fixtures and paths."""

import os
import shutil
from pathlib import Path

# scikit-learn's estimator checks include array-API input checks that only run when SciPy's array
# API support is on; it must be set before SciPy is first imported, so it is set here.
os.environ.setdefault("SCIPY_ARRAY_API", "1")
# Every `mlflow server` and `mlflow ui` starts job runners for MLflow's GenAI jobs unless this is off: a Huey
# consumer per worker and a periodic-task consumer, each importing MLflow and polling for the server's
# lifetime (115 s of CPU over one run of the suite here). No test submits such a job; the servers the tests
# start inherit this.
os.environ.setdefault("MLFLOW_SERVER_ENABLE_JOB_EXECUTION", "false")
# The local Spark sessions of the tests (and of the benchmark smoke run) live for seconds: the JVM's optimising
# compiler and parallel collector cost more CPU than they save there (the spark_scoring benchmark's JVM: 29 s
# -> 17 s of CPU with these, the same answers). Spark reads the driver's JVM options from this variable.
os.environ.setdefault("PYSPARK_SUBMIT_ARGS",
                      '--driver-java-options "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC" pyspark-shell')

import pytest

from tests.scheduling import EXPENSIVE_SESSION_FIXTURES, make_scheduler

REPO = Path(__file__).resolve().parents[1]
MODEL_KEY = "champion-signing-key-of-32-bytes"  # FAIROPS_MODEL_KEY of the shared Adult tune (adult_tune)
RAM_FOLDER = Path("/dev/shm")
RAM_NEEDED = 4 * 2**30  # bytes free in RAM_FOLDER before the run's temporary folders go there


def _ram_temp_root():
    """``RAM_FOLDER`` when it is a writable folder with ``RAM_NEEDED`` bytes free, else None."""
    try:
        free = shutil.disk_usage(RAM_FOLDER).free
    except OSError:
        return None
    return RAM_FOLDER if free >= RAM_NEEDED and os.access(RAM_FOLDER, os.W_OK) else None


def pytest_configure(config):
    """The tests' temporary folders (``tmp_path``) in RAM when the machine has room for them.

    The slow tests' stores are SQLite files that commit after every trial, run and metric batch; on a
    virtual disk each commit waits for its fsync (about 7 ms here), in RAM it does not: one small German
    tune took 102 s with its project on disk and 42 s in ``/dev/shm``. pytest reads its temporary root from
    ``PYTEST_DEBUG_TEMPROOT``; a ``--basetemp`` or that variable given by the user is kept.
    """
    if config.option.basetemp is None and not os.environ.get("PYTEST_DEBUG_TEMPROOT"):
        root = _ram_temp_root()
        if root is not None:
            os.environ["PYTEST_DEBUG_TEMPROOT"] = str(root)


#: the small German tune (study german-fb-auto-eta3-smax2-fast-seed0, a 22-fit Hyperband) whose fits
#: ``german_fits`` makes once
GERMAN_TUNE = ["tune", "--dataset", "german", "--max-train-rows", "300", "--families", "logistic_regression",
               "--no-progress", "--s-max", "2"]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Under pytest-xdist's ``--dist loadgroup`` (pyproject.toml's), each test module runs on one worker, so its
    module-scoped fixtures are made once, as in a serial run; the modules using one of
    ``EXPENSIVE_SESSION_FIXTURES`` share a worker too, so each of those is made once per run
    (:mod:`tests.scheduling`). Another ``--dist`` given on the command line is kept."""
    return make_scheduler(config, log) if config.getvalue("dist") == "loadgroup" else None


def pytest_collection_modifyitems(config, items):
    """Refuse a run where a module uses an expensive session fixture but is not listed with it: its tests would
    make the fixture again on another worker."""
    unlisted = sorted({f"{item.nodeid.split('::', 1)[0]} uses {name}" for item in items
                       for name in getattr(item, "fixturenames", ()) if name in EXPENSIVE_SESSION_FIXTURES
                       and item.nodeid.split("::", 1)[0] not in EXPENSIVE_SESSION_FIXTURES[name]})
    if unlisted:
        raise pytest.UsageError(f"add to EXPENSIVE_SESSION_FIXTURES in tests/scheduling.py: {'; '.join(unlisted)}")


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """URL of the PostgreSQL server for distributed tests (``.ci/postgres.sh`` starts one).

    Missing locally: the test is skipped with the reason. In CI (``FAIROPS_REQUIRE_SERVICES=1``)
    a missing server fails the test instead, so nothing is silently left untested.
    """
    url = os.environ.get("FAIROPS_TEST_POSTGRES_URL")
    if not url:
        if os.environ.get("FAIROPS_REQUIRE_SERVICES"):
            pytest.fail("FAIROPS_TEST_POSTGRES_URL is not set but FAIROPS_REQUIRE_SERVICES requires it")
        pytest.skip("FAIROPS_TEST_POSTGRES_URL not set (run: export FAIROPS_TEST_POSTGRES_URL=$(bash .ci/postgres.sh))")
    return url


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory) -> Path:
    """Where the browser tests keep their screenshots: ``FAIROPS_SCREENSHOTS`` (the README's pictures come
    from ``FAIROPS_SCREENSHOTS=docs``), else the test's temporary folder."""
    folder = os.environ.get("FAIROPS_SCREENSHOTS")
    if not folder:
        return tmp_path_factory.mktemp("screenshots")
    Path(folder).mkdir(parents=True, exist_ok=True)
    return Path(folder)


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory):
    """A real `mlflow server` (SQLite backend, loopback) for the whole run; each test logs to experiments
    of its own (study names with a random part, or names no other test uses)."""
    from tests.services import mlflow_tracking_server

    with mlflow_tracking_server(tmp_path_factory.mktemp("mlflow-server")) as url:
        yield url


@pytest.fixture(scope="session")
def single(tmp_path_factory):
    """The distributed tests' run (``tests.jobs.test_distributed.FAST``) by one worker on SQLite: the schedule and
    pick every distributed run must equal, here and through the gRPC proxy. Made once: the tests only read it."""
    import optuna

    from fairops.cli import main
    from fairops.fairband._claims import fits_of_run
    from tests.jobs.test_distributed import FAST, FITS

    project = tmp_path_factory.mktemp("single")
    assert main(["tune", *FAST, "--project-dir", str(project)]) == 0
    study = optuna.load_study(study_name="german-fb-auto-eta3-smax2-fast-seed3",
                              storage=f"sqlite:///{project / 'optuna.db'}")
    return fits_of_run(study.get_trials(deepcopy=False), FITS)


@pytest.fixture(scope="session")
def adult_tune(tmp_path_factory) -> Path:
    """The project folder of one `fairops tune` on Adult (1500 training rows, logistic regression and
    LightGBM, a 22-fit Hyperband: eta 3, s_max 2) run with FAIROPS_MODEL_KEY set to ``MODEL_KEY``, so its
    champion is signed. Made once for the champion and Spark tests; each adds experiments and models, so each
    works on a ``copy_project``."""
    from fairops.cli import main
    from fairops.mlflow.sealing import KEY_ENV

    project = tmp_path_factory.mktemp("adult-tune")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY_ENV, MODEL_KEY)
        assert main(["tune", "--dataset", "adult", "--max-train-rows", "1500", "--families",
                     "logistic_regression,lightgbm", "--s-max", "2", "--no-progress", "--project-dir",
                     str(project)]) == 0
    return project


@pytest.fixture(scope="session")
def german_fits(tmp_path_factory) -> Path:
    """The project folder of ``GERMAN_TUNE`` run with ``--no-finalize``: all its fits done and tracked, nothing
    registered. Each test takes a ``copy_project`` and runs the same command, which joins the finished study,
    refits the pick and registers it (as any worker of a distributed tune may), on whatever registry the test
    set up; the fits, which are most of a tune's time, are made once."""
    from fairops.cli import main

    project = tmp_path_factory.mktemp("german-fits")
    assert main([*GERMAN_TUNE, "--project-dir", str(project), "--no-finalize"]) == 0
    return project


def copy_project(project: Path, target: Path) -> Path:
    """A copy of a finished project's stores (``target`` must not exist yet) for a test to add to. Its
    registered versions still point at the original's artifact files (absolute URIs): read them, never edit."""
    shutil.copytree(project, target)
    return target
