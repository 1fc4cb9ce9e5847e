"""Nothing lost: Fairband workers that die at any point of their life, and workers racing for a freed slot.

Every scenario runs on a real storage with real processes where a process is what dies, and ends with
the study compared against the plain-Python reference run: one fit per slot, the same promotions and
the same pick as if nothing had happened.
"""

import os
import signal
import time
import uuid

import optuna
import pytest
from optuna.storages import JournalStorage, RDBStorage
from optuna.storages.journal import JournalFileBackend
from optuna.trial import TrialState

from fairops.fairband import FairbandConfigurationError, FairbandSampler, _schedule as schedule
from fairops.fairband._claims import holds_slot, slot_of_trial
from fairops.tuning._toy import ToyFitError
from tests.fairband.test_fairband_sync import FAIL_BELOW, NAN_ABOVE, _objective, check_against_reference
from tests.fairband_worker import spawn

optuna.logging.set_verbosity(optuna.logging.ERROR)
pytestmark = pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning",
                                        "ignore:Heartbeat of storage")
TOY = ("--fail-below", FAIL_BELOW, "--nan-above", NAN_ABOVE)


def _heartbeat_storage(url):
    return RDBStorage(url, heartbeat_interval=1, grace_period=2)


def _study(storage, s_max=2, **sampler_options):
    """A study whose sampler schedules one iteration (so ``optimize`` without n_trials finishes it)."""
    return optuna.create_study(directions=["maximize", "maximize"], storage=storage,
                               study_name=f"faults-{uuid.uuid4().hex[:8]}",
                               sampler=FairbandSampler(seed=7, s_max=s_max, iterations=1, **sampler_options))


def _wait_until(condition, timeout=180.0, what="condition"):
    # Generous: a spawned worker imports fairops, Optuna and its driver before it claims a slot, which took
    # over 60 s on a loaded 2-core machine; the wait ends as soon as the condition holds.
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _kill(process):
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _finish(study):
    """This process works on the study until its iteration is done (the sampler stops the loop)."""
    study.optimize(_objective(), catch=(ToyFitError,))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def heartbeat_url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'faults.db'}"
    else:
        yield request.getfixturevalue("postgres_url")


@pytest.mark.slow
def test_killed_mid_fit_and_while_waiting_at_the_rung_barrier(heartbeat_url):
    """One worker hangs in the fit of slot 5 while its second thread waits at the barrier for it; SIGKILL."""
    study = _study(_heartbeat_storage(heartbeat_url))
    victim = spawn("rdb-hb", heartbeat_url, study.study_name, "--s-max", 2, "--n-jobs", 2, "--hang", "2,0,5",
                   "--iterations", 1, *TOY)
    rung1 = schedule.rung_offset(2, 1, 3, 2)  # the first slot of bracket 2's rung 1 waits for slot 5
    _wait_until(lambda: {5, rung1} <= _running_slots(study),
                what="the victim hanging in slot 5 and waiting in the first rung-1 slot")
    time.sleep(1.5)  # a heartbeat or two for both
    _kill(victim)
    dead = [t.number for t in study.get_trials(deepcopy=False) if t.state == TrialState.RUNNING]
    _finish(study)
    trials = study.get_trials(deepcopy=False)
    assert {slot_of_trial(trials[n]) for n in dead} == {5, rung1}
    assert all(trials[n].state == TrialState.FAIL and holds_slot(trials[n]) is None for n in dead)
    check_against_reference(study, "auto", s_max=2)
    optuna.delete_study(study_name=study.study_name, storage=heartbeat_url)


@pytest.mark.slow
def test_a_worker_dead_before_its_first_write_is_failed_within_a_few_heartbeats(heartbeat_url):
    """A trial created by a worker that died before writing anything (no heartbeat, no claim)."""
    storage = _heartbeat_storage(heartbeat_url)
    study = _study(storage)
    silent = storage.create_new_trial(study._study_id)  # all a worker leaves if killed right after creating it
    started = time.monotonic()
    _finish(study)
    waited = time.monotonic() - started
    trials = study.get_trials(deepcopy=False)
    silent_trial = [t for t in trials if t._trial_id == silent][0]
    assert silent_trial.state == TrialState.FAIL and not silent_trial.system_attrs
    assert waited < 60  # a few heartbeat intervals (1 s each), not the hour-long wait_timeout
    check_against_reference(study, "auto", s_max=2)
    optuna.delete_study(study_name=study.study_name, storage=heartbeat_url)


@pytest.mark.slow  # over 5 s in the quick tier
def test_ctrl_c_while_waiting_frees_the_slot_at_once_without_heartbeats(tmp_path):
    """An exception outside the objective (Ctrl-C at the rung barrier), on a storage with no heartbeat."""
    path = str(tmp_path / "faults.journal")
    storage = JournalStorage(JournalFileBackend(path))
    study = _study(storage)
    hanging = spawn("journal", path, study.study_name, "--s-max", 2, "--hang", "2,0,5", *TOY)
    _wait_until(lambda: 5 in _running_slots(study), what="a worker hanging in slot 5")
    waiting = spawn("journal", path, study.study_name, "--s-max", 2, *TOY)
    rung1 = schedule.rung_offset(2, 1, 3, 2)  # the first rung-1 slot of bracket 2 waits for slot 5
    _wait_until(lambda: rung1 in _running_slots(study), what="a worker waiting at the rung barrier")
    os.killpg(waiting.pid, signal.SIGINT)
    _, err = waiting.communicate(timeout=120)
    assert "KeyboardInterrupt" in err
    waiter = [t for t in study.get_trials(deepcopy=False) if slot_of_trial(t) == rung1][0]
    assert waiter.state == TrialState.FAIL and holds_slot(waiter) is None  # freed at once, no heartbeat needed
    _kill(hanging)  # without heartbeats nobody can tell it died: fail its trial as fail_stale_trials would
    hung = [t for t in study.get_trials(deepcopy=False) if t.state == TrialState.RUNNING]
    assert [slot_of_trial(t) for t in hung] == [5]
    storage.set_trial_state_values(hung[0]._trial_id, state=TrialState.FAIL)
    _finish(study)
    check_against_reference(study, "auto", s_max=2)


def _running_slots(study):
    return {slot_of_trial(t) for t in study.get_trials(deepcopy=False) if t.state == TrialState.RUNNING}


def _orphans(study, count):
    """Claim ``count`` slots with asked trials and fail them in the storage, as a stale heartbeat would."""
    storage = study._storage
    asked = [study.ask() for _ in range(count)]
    for trial in asked:
        storage.set_trial_state_values(trial._trial_id, state=TrialState.FAIL)
    return [slot_of_trial(study._storage.get_trial(t._trial_id)) for t in asked]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "journal", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_workers_racing_for_freed_slots_fit_each_exactly_once(kind, tmp_path, request):
    if kind == "sqlite":
        url = storage = f"sqlite:///{tmp_path / 'race.db'}"
    elif kind == "journal":
        url = str(tmp_path / "race.journal")
        storage = JournalStorage(JournalFileBackend(url))
    else:
        url = storage = request.getfixturevalue("postgres_url")
    study = _study(storage, s_max=4)
    study.optimize(_objective(), n_trials=40, catch=(ToyFitError,))
    freed = _orphans(study, 6)
    assert freed == list(range(40, 46))
    workers = [spawn(kind, url, study.study_name, "--s-max", 4, "--iterations", 1, "--n-jobs", 2, *TOY)
               for _ in range(3)]  # six claimers at once, in three processes
    for worker in workers:
        _, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err[-2000:]
    trials = study.get_trials(deepcopy=False)
    assert all(holds_slot(t) is None for t in trials if slot_of_trial(t) in freed and t.number < 46)
    check_against_reference(study, "auto")
    if kind == "postgres":
        optuna.delete_study(study_name=study.study_name, storage=url)


def test_threads_racing_for_freed_slots_fit_each_exactly_once():
    study = _study(None, s_max=4)
    study.optimize(_objective(), n_trials=100, catch=(ToyFitError,))
    _orphans(study, 8)
    study.optimize(_objective(), n_jobs=8, catch=(ToyFitError,))
    check_against_reference(study, "auto")


def test_a_worker_with_another_configuration_is_refused_naming_the_difference(tmp_path):
    url = f"sqlite:///{tmp_path / 'configuration.db'}"
    data = {"data": "german", "data_sha256": "ab12", "families": ["lr"], "max_train_rows": 300}
    study = _study(url, configuration=data)
    study.optimize(_objective(), n_trials=10, catch=(ToyFitError,))
    other = FairbandSampler(seed=7, s_max=2, configuration={**data, "max_train_rows": 500})
    joined = optuna.load_study(study_name=study.study_name, storage=url, sampler=other)
    with pytest.raises(FairbandConfigurationError, match=r"max_train_rows: 300 in the study, 500 here"):
        other.check_configuration(joined)
    with pytest.raises(FairbandConfigurationError, match="max_train_rows"):
        joined.optimize(_objective(), n_trials=1)
    refused = joined.get_trials(deepcopy=False)[-1]
    assert refused.number == 10 and refused.state == TrialState.FAIL and holds_slot(refused) is None
    other_seed = FairbandSampler(seed=8, s_max=2, configuration=data)
    with pytest.raises(FairbandConfigurationError, match="seed: 7 in the study, 8 here"):
        other_seed.check_configuration(optuna.load_study(study_name=study.study_name, storage=url,
                                                         sampler=other_seed))
    _finish(study)  # the study's own workers carry on undisturbed
    check_against_reference(study, "auto", s_max=2)


@pytest.mark.slow
def test_two_fresh_workers_with_different_configurations_one_is_refused(tmp_path):
    """Both start on an empty study at once; whoever claims the first slot defines the study."""
    url = f"sqlite:///{tmp_path / 'first.db'}"
    name = f"first-{uuid.uuid4().hex[:8]}"
    optuna.create_study(directions=["maximize", "maximize"], storage=url, study_name=name)
    workers = [spawn("sqlite", url, name, "--s-max", 2, "--iterations", 1, "--configuration",
                     f'{{"data": "{data}"}}', *TOY) for data in ("a", "b")]
    results = [(w.wait(timeout=120), w.stderr.read()) for w in workers]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 3], results
    message = [err for code, err in results if code == 3][0]
    assert "data: " in message and "in the study" in message
    study = optuna.load_study(study_name=name, storage=url)
    first = [w for w, (code, _) in zip(("a", "b"), results) if code == 0][0]
    configurations = {t.system_attrs["fairband:claim"]["configuration"] for t in study.get_trials(deepcopy=False)
                      if holds_slot(t) is not None}
    assert len(configurations) == 1
    assert study._storage.get_study_system_attrs(study._study_id)[
        f"fairband:configuration:{configurations.pop()}"]["data"] == first


def test_the_iterations_bound_stops_the_loop_with_few_refused_trials():
    study = _study(None, s_max=4)
    study.optimize(_objective(), n_jobs=4, catch=(ToyFitError,))
    trials = study.get_trials(deepcopy=False)
    refused = [t for t in trials if t.system_attrs["fairband:claim"]["status"] == "refused"]
    assert len(trials) == 206 + len(refused) and 1 <= len(refused) <= 4
    assert all(t.state == TrialState.PRUNED for t in refused)
    check_against_reference(study, "auto")
