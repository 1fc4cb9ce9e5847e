"""Synchronous Fairband in Optuna compared with the plain-Python reference run.

Every run here uses the instant toy objective; counts per rung, promotions, alphas and the final pick
must equal the reference for threads, processes and every storage.
"""

import math
import time
import uuid
from collections import defaultdict

import optuna
import pytest
from optuna.storages import JournalStorage, RDBStorage, RetryHeartbeatStaleTrialCallback
from optuna.storages.journal import JournalFileBackend
from optuna.trial import TrialState

from fairops.fairband import (
    FairbandSampler,
    FairbandScheduleError,
    FairbandWaitTimeout,
    _schedule as schedule,
    budget,
    select_best,
    slot_of,
)
from fairops.fairband._claims import claim_of, fits_of_run, holds_slot
from fairops.tuning._toy import ToyFitError, make_toy_objective, toy_values
from tests.fairband.fairband_reference import reference_run
from tests.fairband_worker import spawn

optuna.logging.set_verbosity(optuna.logging.ERROR)
FAIL_BELOW, NAN_ABOVE = 0.04, 0.96  # about 8% of configurations fail (exception or NaN)


def _objective():
    return make_toy_objective(fail_below=FAIL_BELOW, nan_above=NAN_ABOVE)


def _new_study(alpha="auto", seed=0, storage=None, name=None, **kw):
    return optuna.create_study(directions=["maximize", "maximize"], storage=storage, study_name=name,
                               sampler=FairbandSampler(alpha=alpha, seed=seed, **kw))


def check_against_reference(study, alpha, iterations=1, s_max=4):
    """Assert the study's fits equal the reference run; return {configuration id: params} of rung 0.

    Trials that hold no slot (a dead worker's, a refused or released one) may exist beside the fits;
    each slot must have exactly one fit, whatever happened on the way.
    """
    n_slots = schedule.iteration_size(3, s_max) * iterations
    trials = study.get_trials(deepcopy=False)
    assert all(t.state.is_finished() for t in trials)
    holders = defaultdict(list)
    for t in trials:
        if holds_slot(t) is not None:
            holders[holds_slot(t)].append(t.number)
    assert sorted(holders) == list(range(n_slots)) and all(len(v) == 1 for v in holders.values()), holders
    fits = fits_of_run(trials, n_slots)
    rung0 = {t.user_attrs["configuration_id"]: t.params for t in fits if t.user_attrs["rung"] == 0}
    assert sorted(rung0) == list(range(schedule.configurations_per_iteration(3, s_max) * iterations))

    def evaluate(c, b):
        try:
            return toy_values(rung0[c], b, fail_below=FAIL_BELOW, nan_above=NAN_ABOVE)
        except ToyFitError:
            return None

    ref = reference_run(evaluate, alpha, iterations=iterations, s_max=s_max)
    got = defaultdict(list)
    for index, t in enumerate(fits):
        slot = slot_of(index, 3, s_max)
        attrs = t.user_attrs
        assert (attrs["iteration"], attrs["bracket"], attrs["rung"]) == (slot.iteration, slot.bracket, slot.rung)
        assert attrs["budget"] == pytest.approx(slot.budget)
        got[(slot.iteration, slot.bracket, slot.rung)].append((slot.position, attrs["configuration_id"]))
        config = attrs["configuration_id"]
        assert t.params == rung0[config]  # promoted fits reuse the configuration's parameters
        expected = evaluate(config, slot.budget)
        if expected is None or any(math.isnan(v) for v in expected):
            assert t.state == TrialState.FAIL
        else:
            assert t.state == TrialState.COMPLETE and t.values == pytest.approx(expected)
        if slot.rung > 0:
            assert attrs["alpha"] == pytest.approx(ref.alphas[(slot.iteration, slot.bracket, slot.rung)])
    assert {k: [c for _, c in sorted(v)] for k, v in got.items()} == ref.promoted
    pick = select_best(study)
    assert (pick.trial.user_attrs["configuration_id"], pick.trial.user_attrs["budget"]) == pytest.approx(
        (ref.pick.configuration, ref.pick.budget))
    assert pick.alpha == pytest.approx(ref.pick_alpha)
    return rung0


@pytest.fixture(scope="module")
def serial_configs():
    study = _new_study("auto", seed=7)
    study.optimize(_objective(), n_trials=206, catch=(ToyFitError,))
    return check_against_reference(study, "auto")


@pytest.mark.parametrize("alpha", ["auto", 1.0, 0.5, 0.0])
def test_serial_run_equals_reference(alpha):
    study = _new_study(alpha, seed=3)
    study.optimize(_objective(), n_trials=206, catch=(ToyFitError,))
    check_against_reference(study, alpha)


def test_two_iterations_draw_new_configurations():
    study = _new_study("auto", seed=1)
    study.optimize(_objective(), n_trials=412, catch=(ToyFitError,))
    configs = check_against_reference(study, "auto", iterations=2)
    assert len({(p["x"], p["y"]) for p in configs.values()}) == 286


@pytest.mark.parametrize("n_jobs", [4, 8])
def test_threads_give_the_serial_schedule(n_jobs, serial_configs):
    study = _new_study("auto", seed=7)
    study.optimize(_objective(), n_trials=206, n_jobs=n_jobs, catch=(ToyFitError,))
    assert check_against_reference(study, "auto") == serial_configs


def test_seed_changes_configurations(serial_configs):
    study = _new_study("auto", seed=8)
    study.optimize(_objective(), n_trials=143, catch=(ToyFitError,))
    other = {t.user_attrs["configuration_id"]: t.params for t in study.trials}
    assert all(other[c] != serial_configs[c] for c in range(143))


def _spawn(kind, url, name, n, seed=7, sleep=0.0, s_max=4):
    return spawn(kind, url, name, "--n-trials", n, "--seed", seed, "--sleep", sleep, "--s-max", s_max,
                 "--fail-below", FAIL_BELOW, "--nan-above", NAN_ABOVE)


def _run_processes(kind, url, storage, serial_configs, processes=2):
    name = f"fb-{uuid.uuid4().hex[:8]}"
    optuna.create_study(directions=["maximize", "maximize"], storage=storage, study_name=name)
    workers = [_spawn(kind, url, name, 206 // processes + (k < 206 % processes)) for k in range(processes)]
    for w in workers:
        _, err = w.communicate(timeout=150)
        assert w.returncode == 0, err[-2000:]
    study = optuna.load_study(study_name=name, storage=storage)
    assert check_against_reference(study, "auto") == serial_configs
    # every process really took part: the slots' claims name as many workers (host:pid) as were started
    claimants = {claim_of(t).worker for t in study.get_trials(deepcopy=False) if holds_slot(t) is not None}
    assert len(claimants) == processes and {w.pid for w in workers} == {int(c.rsplit(":", 1)[1]) for c in claimants}
    return study


@pytest.mark.slow
def test_two_processes_sqlite(tmp_path, serial_configs):
    url = f"sqlite:///{tmp_path / 'fb.db'}"
    _run_processes("sqlite", url, url, serial_configs)


@pytest.mark.slow
def test_two_processes_journal(tmp_path, serial_configs):
    path = str(tmp_path / "fb.journal")
    _run_processes("journal", path, JournalStorage(JournalFileBackend(path)), serial_configs)


@pytest.mark.slow  # about 14 s: three processes
@pytest.mark.postgres
def test_three_processes_postgres(postgres_url, serial_configs):
    study = _run_processes("postgres", postgres_url, postgres_url, serial_configs, processes=3)
    optuna.delete_study(study_name=study.study_name, storage=postgres_url)


@pytest.mark.slow  # about 7 s: waits out a dead worker's heartbeat
@pytest.mark.postgres
def test_killed_worker_postgres_heartbeat(postgres_url):
    _killed_worker_scenario("rdb-hb", postgres_url, RDBStorage(postgres_url, heartbeat_interval=1, grace_period=2))


@pytest.mark.slow
def test_killed_worker_sqlite_heartbeat(tmp_path):
    url = f"sqlite:///{tmp_path / 'hb.db'}"
    _killed_worker_scenario("rdb-hb", url, RDBStorage(url, heartbeat_interval=1, grace_period=2))


def _killed_worker_scenario(kind, url, storage):
    """A worker dies during trial 0 (SIGKILL); the heartbeat fails it and its slot is fitted again.

    Uses s_max=2 (22 fits per iteration) to keep the heartbeat-laden run short.
    """
    name = f"fb-hb-{uuid.uuid4().hex[:8]}"
    study = optuna.create_study(directions=["maximize", "maximize"], storage=storage, study_name=name,
                                sampler=FairbandSampler(seed=7, s_max=2, iterations=1))
    victim = _spawn(kind, url, name, 1, sleep=3600.0, s_max=2)  # trial 0 would sleep an hour
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        trials = study.get_trials(deepcopy=False)
        if trials and trials[0].state == TrialState.RUNNING and "x" in trials[0].params:
            break
        time.sleep(0.1)
    time.sleep(1.5)  # let at least one heartbeat land
    victim.kill()
    victim.wait()
    study.optimize(_objective(), catch=(ToyFitError,))  # the sampler stops the loop when the iteration is done
    trials = study.get_trials(deepcopy=False)
    assert trials[0].state == TrialState.FAIL and holds_slot(trials[0]) is None
    redone = [t for t in trials if holds_slot(t) == 0]
    assert len(redone) == 1 and redone[0].params == trials[0].params  # the same configuration, fitted again
    check_against_reference(study, "auto", s_max=2)  # as if nobody had died
    optuna.delete_study(study_name=name, storage=storage)


def test_wait_limit_raises_clear_error():
    study = _new_study(seed=0, wait_timeout=0.3, poll_interval=0.05)
    stuck = study.ask()  # trial 0 never finishes (its worker "died" without heartbeat)
    objective = _objective()
    for _ in range(142):
        trial = study.ask()
        try:
            study.tell(trial, objective(trial))
        except ToyFitError:
            study.tell(trial, state=TrialState.FAIL)
    with pytest.raises(FairbandWaitTimeout, match=r"trial 143 .*wait_timeout=0.3.*\[0\]"):
        study.ask()
    assert study.trials[143].state == TrialState.FAIL
    assert stuck.number == 0


def test_enqueued_trial_is_refused_and_the_worker_goes_on(caplog):
    study = _new_study(seed=7, iterations=1)
    study.enqueue_trial({"x": 0.5, "y": 0.5})
    study.optimize(_objective(), catch=(ToyFitError,))
    assert study.trials[0].state == TrialState.PRUNED and holds_slot(study.trials[0]) is None
    assert "study.enqueue_trial" in caplog.text and "refused" in caplog.text
    check_against_reference(study, "auto")


@pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")
@pytest.mark.filterwarnings("ignore:Heartbeat of storage")
def test_retried_trial_is_refused_and_the_worker_goes_on(tmp_path, caplog):
    url = f"sqlite:///{tmp_path / 'retry.db'}"
    storage = RDBStorage(url, heartbeat_interval=60,
                         heartbeat_stale_trial_callback=RetryHeartbeatStaleTrialCallback(max_retry=1))
    study = _new_study(seed=0, storage=storage, s_max=1, iterations=1)
    study.ask()
    # what the stale-trial path does: fail the trial in the storage, then run the retry callback on it
    storage.set_trial_state_values(study.trials[0]._trial_id, state=TrialState.FAIL)
    storage.get_heartbeat_stale_trial_callback()(study, study.trials[0])
    study.optimize(_objective())
    retried = study.trials[1]
    assert "failed_trial" in retried.system_attrs and retried.state == TrialState.PRUNED
    assert "retry callback" in caplog.text
    # the retry carried trial 0's claim; it is not taken for one, and slot 0 is fitted by a later trial
    n_slots = schedule.iteration_size(3, 1)
    assert holds_slot(retried) is None and len(fits_of_run(study.trials, n_slots)) == n_slots
    redone = [t for t in study.trials if holds_slot(t) == 0]
    assert [t.number for t in redone] == [2] and redone[0].user_attrs["configuration_id"] == 0


def test_wrong_directions_are_refused():
    study = optuna.create_study(directions=["maximize", "minimize"], sampler=FairbandSampler(seed=0))
    with pytest.raises(FairbandScheduleError, match="maximize"):
        study.ask()


def test_budget_and_attrs_visible_on_frozen_trials():
    study = _new_study(alpha=1.0, seed=0)
    study.optimize(_objective(), n_trials=206, catch=(ToyFitError,))
    budgets = sorted({round(budget(t), 6) for t in study.trials})
    assert budgets == [round(3.0 ** -k, 6) for k in (4, 3, 2, 1, 0)]
    assert set(study.trials[0].user_attrs) == {"iteration", "bracket", "rung", "budget", "configuration_id",
                                                "alpha"}


def test_tpe_base_sampler_keeps_the_schedule_and_sees_every_fit():
    seen = []

    class Spy(optuna.samplers.TPESampler):
        def sample_independent(self, study, trial, name, dist):
            seen.append(([t.number for t in study.get_trials()], trial.number))
            return super().sample_independent(study, trial, name, dist)

    study = _new_study(seed=0, base_sampler=Spy(seed=0, n_startup_trials=5))
    study.optimize(_objective(), n_trials=206, catch=(ToyFitError,))
    check_against_reference(study, "auto")
    # no trial was refused, so the view's numbers are the study's: every fit before the drawing one, any bracket
    assert seen and all(numbers == list(range(own + 1)) for numbers, own in seen)
    assert {slot_of(own).bracket for _, own in seen} == {4, 3, 2, 1, 0}


def test_bad_arguments():
    with pytest.raises(ValueError, match="alpha"):
        FairbandSampler(alpha="dynamic")
    with pytest.raises(ValueError, match="wait_timeout"):
        FairbandSampler(wait_timeout=0)
    with pytest.raises(TypeError, match="base_sampler"):
        FairbandSampler(base_sampler="tpe")


def test_an_objective_that_never_asks_its_budget_is_warned_about_once():
    import warnings

    study = optuna.create_study(directions=["maximize"] * 2, sampler=FairbandSampler(seed=0, eta=2, s_max=1))
    with pytest.warns(UserWarning, match=r"trial 0 finished without asking budget\(trial\)") as caught:
        study.optimize(lambda trial: (trial.suggest_float("x", 0, 1), 0.5), n_trials=3)
    assert sum("without asking" in str(w.message) for w in caught) == 1
    asking = optuna.create_study(directions=["maximize"] * 2, sampler=FairbandSampler(seed=0, eta=2, s_max=1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        asking.optimize(lambda trial: (trial.suggest_float("x", 0, 1) * budget(trial), 0.5), n_trials=3)
